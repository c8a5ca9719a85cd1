// DnnlMatMul with float16 weights (a float16 model's, kept float16 by the compiler): one row
// through blocked_gemv.cc, more rows through chunked_weight_gemm.cc (chunks widened to float32 for
// oneDNN's matmul). Against a reference in double and against the same values packed as float32
// (oneDNN's own primitive), with bias and post-ops, on 1 and 2 threads; and the refusals.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "exec/kernels/elementwise/element_types.h"
#include "exec/kernels/onednn/blocked_gemv.h"
#include "exec/kernels/onednn/weight_format.h"
#include "exec/kernels/onednn/weight_packing.h"
#include "kernel_test_helpers.h"

namespace epctx::exec::testing {
namespace {

namespace onednn = kernels::onednn;
namespace elementwise = kernels::elementwise;

// Values in [-1, 1] that float16 holds exactly.
std::vector<float> ValuesFloat16Holds(size_t count, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> v(count);
  for (float& x : v) x = elementwise::HalfToFloat(elementwise::FloatToHalf(u(rng)));
  return v;
}

struct BothForms {
  onednn::PackedWeight f32;
  onednn::PackedWeight f16;
};

// `w` [k, n] packed as float32 for a prompt's shape (as the compiler packs: oneDNN's blocked
// layout on AVX-512, its plain one on AVX2), and its float16 form (the blocked layout on both).
BothForms PackBothForms(const std::vector<float>& w, int64_t k, int64_t n) {
  onednn::MatMulConfig config;
  auto f32 = onednn::PackMatMulWeights({128, k, n}, config, w.data(), false, 1.f);
  EXPECT_TRUE(f32.ok()) << f32.status().ToString();
  auto plan = onednn::PlanMatMulWeights({128, k, n}, config);
  EXPECT_TRUE(plan.ok()) << plan.status().ToString();
  auto half_plan = onednn::Float16FormOf(*plan, k, n);
  EXPECT_TRUE(half_plan.ok()) << half_plan.status().ToString();
  auto f16 = onednn::PackFloat16MatMulWeights(*half_plan, k, n, w.data());
  EXPECT_TRUE(f16.ok()) << f16.status().ToString();
  // What the compiler plans is what the packing makes.
  EXPECT_EQ(f16->format, half_plan->format);
  EXPECT_EQ(f16->bytes.dtype(), DataType::kFloat16);
  EXPECT_EQ(f16->bytes.element_count(), half_plan->elements);
  EXPECT_EQ(f16->required_cpu_features, half_plan->required_cpu_features);
  EXPECT_EQ(onednn::GemvLayoutOf(f16->format, k, n), onednn::GemvLayout::kFloat16Blocked);
  if (onednn::GemvLayoutOf(f32->format, k, n) == onednn::GemvLayout::kFloat32Blocked) {
    // oneDNN's own blocked layout: the float16 form is its float32 bytes narrowed.
    auto narrowed = onednn::NarrowToFloat16(*f32);
    EXPECT_TRUE(narrowed.ok()) << narrowed.status().ToString();
    EXPECT_EQ(narrowed->format, f16->format);
    EXPECT_EQ(std::memcmp(narrowed->bytes.data(), f16->bytes.data(), f16->bytes.byte_size()), 0);
  }
  return {*std::move(f32), *std::move(f16)};
}

AttrBuilder PackedMatMulAttrs(const onednn::PackedWeight& packed, int64_t k, int64_t n) {
  AttrBuilder attrs;
  attrs.Ints("weights_shape", {k, n}).Ints("weights_format", packed.format);
  return attrs;
}

bool Float16WeightsRead() {
  onednn::MatMulConfig config;
  auto plan = onednn::PlanMatMulWeights({128, 64, 64}, config);
  return plan.ok() && onednn::Float16FormOf(*plan, 64, 64).ok();
}

void CheckFloat16Rows(int64_t m, int64_t k, int64_t n, std::mt19937& rng) {
  SCOPED_TRACE(::testing::Message() << "M " << m << " K " << k << " N " << n);
  const std::vector<float> w = ValuesFloat16Holds(static_cast<size_t>(k * n), rng);
  const std::vector<float> bias = ValuesFloat16Holds(static_cast<size_t>(n), rng);
  const BothForms packed = PackBothForms(w, k, n);
  const Tensor b = FloatTensor({n}, bias);
  for (int threads : {1, 2}) {
    for (bool with_bias : {false, true}) {
      SCOPED_TRACE(::testing::Message() << threads << " threads, bias " << with_bias);
      const std::vector<float> a = ValuesFloat16Holds(static_cast<size_t>(m * k), rng);
      const Tensor at = FloatTensor({m, k}, a);
      NodeSpec spec("DnnlMatMul", 1, "com.epctx");
      spec.threads = threads;
      auto half = RunNode(spec, PackedMatMulAttrs(packed.f16, k, n),
                          {&at, &packed.f16.bytes, with_bias ? &b : nullptr});
      auto full = RunNode(spec, PackedMatMulAttrs(packed.f32, k, n),
                          {&at, &packed.f32.bytes, with_bias ? &b : nullptr});
      ASSERT_TRUE(half.ok()) << half.status().ToString();
      ASSERT_TRUE(full.ok()) << full.status().ToString();
      std::vector<double> ref(static_cast<size_t>(m * n));
      for (int64_t r = 0; r < m; ++r) {
        for (int64_t j = 0; j < n; ++j) {
          double acc = with_bias ? bias[static_cast<size_t>(j)] : 0.0;
          for (int64_t i = 0; i < k; ++i) {
            acc += static_cast<double>(a[static_cast<size_t>(r * k + i)]) *
                   w[static_cast<size_t>(i * n + j)];
          }
          ref[static_cast<size_t>(r * n + j)] = acc;
        }
      }
      ExpectClose((*half)[0], {m, n}, ref, 1e-4, 1e-5, "float16 weights against the reference");
      ExpectNear((*half)[0], (*full)[0], "float16 weights against the float32 primitive");
    }
  }
}

TEST(DnnlMatMulFloat16, OneRowMatchesTheReferenceAndTheFloat32Primitive) {
  if (!Float16WeightsRead()) GTEST_SKIP() << "this build reads no float16 weights";
  std::mt19937 rng(11);
  // Whole blocks; K and N padded inside the layout; weights split over two threads (>= 128 KiB).
  for (auto [k, n] : std::vector<std::pair<int64_t, int64_t>>{
           {576, 192}, {70, 33}, {17, 130}, {1536, 130}, {576, 1000}}) {
    CheckFloat16Rows(1, k, n, rng);
  }
}

TEST(DnnlMatMulFloat16, RowsMatchTheReferenceAndTheFloat32Primitive) {
  if (!Float16WeightsRead()) GTEST_SKIP() << "this build reads no float16 weights";
  std::mt19937 rng(12);
  // One chunk; chunks of several blocks, the last one partial (576 x 2550: 40 blocks, 8 chunks);
  // one block a chunk (K 1536); fewer blocks than threads. Then chunks of 256 columns at 1
  // thread, whose rows 1 KiB long are written 16 floats apart where the AVX2 product reads rows:
  // BERT-base's [768, 768] over 128 rows, and 760 columns, whose last chunk of 248 is not
  // lengthened.
  CheckFloat16Rows(2, 70, 33, rng);
  CheckFloat16Rows(7, 576, 2550, rng);
  CheckFloat16Rows(5, 1536, 130, rng);
  CheckFloat16Rows(128, 576, 192, rng);
  CheckFloat16Rows(128, 768, 768, rng);
  CheckFloat16Rows(7, 768, 760, rng);
}

// Post-ops the primitive would fuse (a residual addition, LeakyRelu, Clip, Linear) and one the
// kernel applies after it (GELU): the same outputs as the float32 primitive's, for 1 and 3 rows.
TEST(DnnlMatMulFloat16, PostOpsAsTheFloat32PrimitiveAppliesThem) {
  if (!Float16WeightsRead()) GTEST_SKIP() << "this build reads no float16 weights";
  std::mt19937 rng(13);
  const int64_t k = 200, n = 150;
  const BothForms packed = PackBothForms(ValuesFloat16Holds(static_cast<size_t>(k * n), rng), k, n);
  for (int64_t m : {1, 3}) {
    SCOPED_TRACE(::testing::Message() << m << " rows");
    const Tensor a = FloatTensor({m, k}, ValuesFloat16Holds(static_cast<size_t>(m * k), rng));
    const Tensor r = FloatTensor({m, n}, ValuesFloat16Holds(static_cast<size_t>(m * n), rng));
    NodeSpec spec("DnnlMatMul", 1, "com.epctx");
    spec.threads = 2;
    auto with_post_ops = [&](const onednn::PackedWeight& p) {
      AttrBuilder attrs = PackedMatMulAttrs(p, k, n);
      attrs.Ints("post_ops", {9, 1, 2, 10, 7});
      attrs.Floats("post_op_alpha", {0, 0.1f, -0.5f, 2.f, 0});
      attrs.Floats("post_op_beta", {0, 0, 0.7f, 0.1f, 0});
      return attrs;
    };
    auto half = RunNode(spec, with_post_ops(packed.f16), {&a, &packed.f16.bytes, nullptr, &r});
    auto full = RunNode(spec, with_post_ops(packed.f32), {&a, &packed.f32.bytes, nullptr, &r});
    ASSERT_TRUE(half.ok()) << half.status().ToString();
    ASSERT_TRUE(full.ok()) << full.status().ToString();
    ExpectNear((*half)[0], (*full)[0], "float16 weights with post-ops");
    // Without its residual the node is refused.
    ExpectError(RunNode(spec, with_post_ops(packed.f16), {&a, &packed.f16.bytes, nullptr, nullptr})
                    .status(),
                StatusCode::kInvalidArgument, "residual");
  }
}

TEST(DnnlMatMulFloat16, RefusesWhatItCannotRun) {
  if (!Float16WeightsRead()) GTEST_SKIP() << "this build reads no float16 weights";
  std::mt19937 rng(14);
  const int64_t k = 64, n = 64;
  const BothForms packed = PackBothForms(ValuesFloat16Holds(static_cast<size_t>(k * n), rng), k, n);
  const Tensor a = FloatTensor({1, k}, ValuesFloat16Holds(static_cast<size_t>(k), rng));
  NodeSpec spec("DnnlMatMul", 1, "com.epctx");
  AttrBuilder bf16 = PackedMatMulAttrs(packed.f16, k, n);
  bf16.String("compute_type", "bf16");
  ExpectError(RunNode(spec, bf16, {&a, &packed.f16.bytes}).status(), StatusCode::kInvalidArgument,
              "float16 weights with compute_type bf16");
  // Float32 bytes given for a float16 layout: refused by the dtype check, not read past the end.
  ExpectError(RunNode(spec, PackedMatMulAttrs(packed.f16, k, n), {&a, &packed.f32.bytes}).status(),
              StatusCode::kUnsupported, "input W has type float32, expected float16");
  // A weight whose values float16 does not hold is not narrowed.
  onednn::MatMulConfig config;
  std::vector<float> w(static_cast<size_t>(k * n), 0.5f);
  w[7] = 0.1f;
  auto plan = onednn::PlanMatMulWeights({128, k, n}, config);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  auto half_plan = onednn::Float16FormOf(*plan, k, n);
  ASSERT_TRUE(half_plan.ok()) << half_plan.status().ToString();
  ExpectError(onednn::PackFloat16MatMulWeights(*half_plan, k, n, w.data()).status(),
              StatusCode::kInternal, "(0.1) is not a float16 value");
  // Only a float16 plan packs so.
  ExpectError(onednn::PackFloat16MatMulWeights(*plan, k, n, w.data()).status(),
              StatusCode::kInternal, "not a float16 weight plan");
}

}  // namespace
}  // namespace epctx::exec::testing
