// com.epctx DnnlBatchMatMul against the reference kernels: ONNX MatMul of the same operands after
// the Transposes the compiler folded into it (a_perm, b_perm, out_perm), with broadcast batch
// dims, a fused scale, and its refusals. On the AVX2 tier products of at most 4 Mi multiply-adds
// are our own (small_batch_gemm.h), larger ones oneDNN's.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "kernel_test_helpers.h"

namespace epctx::exec::testing {
namespace {

Tensor OutputOf(const NodeSpec& spec, const AttrBuilder& a, const std::vector<const Tensor*>& in) {
  auto out = RunNode(spec, a, in);
  EXPECT_TRUE(out.ok()) << spec.op_type << ": " << out.status().ToString();
  return out.ok() ? (*out)[0] : Tensor();
}

Tensor Transpose(const Tensor& x, const std::vector<int64_t>& perm) {
  if (perm.empty()) return x;
  AttrBuilder a;
  a.Ints("perm", perm);
  return OutputOf(NodeSpec("Transpose"), a, {&x});
}

void ExpectSameWithinRounding(const Tensor& got, const Tensor& want) {
  ASSERT_EQ(got.shape(), want.shape());
  const std::vector<float> g = FloatsOf(got), w = FloatsOf(want);
  double scale = 0;
  for (float v : w) scale = std::max(scale, double{std::fabs(v)});
  ASSERT_GT(scale, 0);
  for (size_t i = 0; i < g.size(); ++i) ASSERT_NEAR(g[i], w[i], 1e-5 * scale) << "element " << i;
}

struct BatchMatMulCase {
  std::string name;
  std::vector<int64_t> a, b;  // stored shapes
  std::vector<int64_t> a_perm, b_perm, out_perm;
};

class DnnlBatchMatMul : public ::testing::TestWithParam<BatchMatMulCase> {};

TEST_P(DnnlBatchMatMul, MatchesTransposeAndMatMul) {
  const BatchMatMulCase& c = GetParam();
  std::mt19937 rng(11);
  const Tensor a = RandomFloats(c.a, rng), b = RandomFloats(c.b, rng);
  const Tensor ta = Transpose(a, c.a_perm), tb = Transpose(b, c.b_perm);
  const Tensor want =
      Transpose(OutputOf(NodeSpec("MatMul"), AttrBuilder(), {&ta, &tb}), c.out_perm);
  for (int threads : {1, 2}) {
    AttrBuilder attrs;
    if (!c.a_perm.empty()) attrs.Ints("a_perm", c.a_perm);
    if (!c.b_perm.empty()) attrs.Ints("b_perm", c.b_perm);
    if (!c.out_perm.empty()) attrs.Ints("out_perm", c.out_perm);
    NodeSpec spec("DnnlBatchMatMul", 1, "com.epctx");
    spec.threads = threads;
    ExpectSameWithinRounding(OutputOf(spec, attrs, {&a, &b}), want);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, DnnlBatchMatMul,
    ::testing::Values(
        BatchMatMulCase{"plain2d", {5, 7}, {7, 3}, {}, {}, {}},
        BatchMatMulCase{"batched", {2, 3, 5, 7}, {2, 3, 7, 4}, {}, {}, {}},
        BatchMatMulCase{"broadcast_a", {1, 3, 5, 7}, {2, 3, 7, 4}, {}, {}, {}},
        BatchMatMulCase{"broadcast_b_rank", {2, 3, 5, 7}, {7, 4}, {}, {}, {}},
        // Attention as BERT exports it: heads split by Transpose.
        BatchMatMulCase{"qk", {2, 16, 4, 8}, {2, 16, 4, 8}, {0, 2, 1, 3}, {0, 2, 3, 1}, {}},
        BatchMatMulCase{"pv", {2, 4, 16, 16}, {2, 16, 4, 8}, {}, {0, 2, 1, 3}, {0, 2, 1, 3}},
        BatchMatMulCase{"transposed_b_2d", {5, 7}, {3, 7}, {}, {1, 0}, {}},
        // Rows not a multiple of the 6 summed at a time, columns of three 16-column groups, the
        // last partial; 3 heads on 2 threads.
        BatchMatMulCase{
            "qk_rows_and_groups", {1, 37, 3, 65}, {1, 40, 3, 65}, {0, 2, 1, 3}, {0, 2, 3, 1}, {}},
        // One product, its rows split between 2 threads (25 and 25).
        BatchMatMulCase{"one_product_split_by_rows", {50, 33}, {33, 70}, {}, {}, {}},
        // Above 4 Mi multiply-adds: oneDNN's matmul on every tier.
        BatchMatMulCase{"large", {300, 128}, {128, 120}, {}, {}, {1, 0}}),
    [](const auto& info) { return info.param.name; });

TEST(DnnlBatchMatMulKernel, ScalePostOp) {
  std::mt19937 rng(3);
  const Tensor a = RandomFloats({2, 6, 5}, rng), b = RandomFloats({2, 5, 4}, rng);
  const Tensor want = OutputOf(NodeSpec("MatMul"), AttrBuilder(), {&a, &b});
  std::vector<float> scaled = FloatsOf(want);
  for (float& v : scaled) v *= 0.125f;
  AttrBuilder attrs;
  attrs.Ints("post_ops", {10}).Floats("post_op_alpha", {0.125f}).Floats("post_op_beta", {0.0f});
  ExpectSameWithinRounding(OutputOf(NodeSpec("DnnlBatchMatMul", 1, "com.epctx"), attrs, {&a, &b}),
                           FloatTensor(want.shape(), scaled));
}

// A product over an empty inner dimension is zeros, the fused ops applied (oneDNN 2.x raised
// SIGFPE making that matmul); one over empty rows is empty, with no product made.
TEST(DnnlBatchMatMulKernel, EmptyDimensions) {
  const Tensor a = FloatTensor({2, 2, 0}, {}), b = FloatTensor({2, 0, 3}, {});
  const Tensor zeros =
      OutputOf(NodeSpec("DnnlBatchMatMul", 1, "com.epctx"), AttrBuilder(), {&a, &b});
  EXPECT_EQ(zeros.shape(), (std::vector<int64_t>{2, 2, 3}));
  EXPECT_EQ(FloatsOf(zeros), std::vector<float>(12, 0.0f));
  AttrBuilder plus_one;  // Linear: alpha * x + beta
  plus_one.Ints("post_ops", {10}).Floats("post_op_alpha", {2.0f}).Floats("post_op_beta", {1.0f});
  const Tensor ones = OutputOf(NodeSpec("DnnlBatchMatMul", 1, "com.epctx"), plus_one, {&a, &b});
  EXPECT_EQ(FloatsOf(ones), std::vector<float>(12, 1.0f));
  const Tensor no_rows = FloatTensor({2, 0, 4}, {}),
               c = FloatTensor({2, 4, 3}, std::vector<float>(24, 1.0f));
  EXPECT_EQ(
      OutputOf(NodeSpec("DnnlBatchMatMul", 1, "com.epctx"), AttrBuilder(), {&no_rows, &c}).shape(),
      (std::vector<int64_t>{2, 0, 3}));
}

TEST(DnnlBatchMatMulKernel, Refusals) {
  std::mt19937 rng(4);
  const Tensor a = RandomFloats({2, 3, 5}, rng), b = RandomFloats({2, 4, 6}, rng);
  const Tensor v = RandomFloats({5}, rng), c = RandomFloats({3, 5, 2}, rng);
  auto run = [](const AttrBuilder& attrs, const Tensor& x, const Tensor& y) {
    return RunNode(NodeSpec("DnnlBatchMatMul", 1, "com.epctx"), attrs, {&x, &y}).status();
  };
  EXPECT_EQ(run(AttrBuilder(), a, b).message(), "cannot multiply [..., 3, 5] by [..., 4, 6]");
  EXPECT_EQ(run(AttrBuilder(), v, b).message(),
            "inputs of shapes [5] and [2,4,6]: ranks 2 to 8 only");
  EXPECT_EQ(run(AttrBuilder(), a, c).message(), "batch dims [2,3,5] and [3,5,2] do not broadcast");
  AttrBuilder bad_perm;
  bad_perm.Ints("a_perm", {0, 0, 1});
  EXPECT_EQ(run(bad_perm, a, c).message(),
            "a_perm [0,0,1] is not a permutation of a rank-3 tensor");
  AttrBuilder residual;
  residual.Ints("post_ops", {9}).Floats("post_op_alpha", {0}).Floats("post_op_beta", {0});
  EXPECT_EQ(run(residual, a, c).message(),
            "DnnlBatchMatMul node 'n': DnnlBatchMatMul adds no residual");
}

}  // namespace
}  // namespace epctx::exec::testing
