// DnnlMatMul with one row (a decode step), which reads oneDNN's packed float32 and bfloat16
// layouts (on AVX2, float32's 8-column panels, or plain rows for weights panels would pad by
// more than a quarter) itself (blocked_gemv.cc): the product against a reference and against two
// rows of the same weight (oneDNN's primitive; on AVX2 these small products go row by row), with
// and without bias, on 1 and 2 threads; post-ops against oneDNN's primitive.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "exec/kernels/onednn/blocked_gemv.h"
#include "exec/kernels/onednn/compute_type.h"
#include "exec/kernels/onednn/weight_packing.h"
#include "kernel_test_helpers.h"

namespace epctx::exec::testing {
namespace {

float RoundToBf16(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, 4);
  bits += 0x7fff + ((bits >> 16) & 1);  // to nearest even (finite values)
  bits &= 0xffff0000u;
  std::memcpy(&v, &bits, 4);
  return v;
}

void CheckOneRow(int64_t k, int64_t n, bool bf16, std::mt19937& rng) {
  SCOPED_TRACE(::testing::Message() << "K " << k << " N " << n << (bf16 ? " bf16" : " f32"));
  std::vector<float> w(static_cast<size_t>(k * n)), bias(static_cast<size_t>(n));
  std::uniform_real_distribution<float> u(-1, 1);
  for (float& v : w) v = u(rng);
  for (float& v : bias) v = u(rng);
  kernels::onednn::MatMulConfig config;
  config.bf16 = bf16;
  config.has_bias = true;
  // Packed for a prompt's shape, as the compiler packs a decode graph's weights.
  auto packed = kernels::onednn::PackMatMulWeights({128, k, n}, config, w.data(), false, 1.f);
  ASSERT_TRUE(packed.ok()) << packed.status().ToString();
#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__F16C__) && defined(__FMA__))
  // Not a vacuous pass through oneDNN: this build reads the layout itself (on AVX2, float32's
  // panels or plain rows; bfloat16 runs on AVX-512 only).
  EXPECT_NE(kernels::onednn::GemvLayoutOf(packed->format, k, n), kernels::onednn::GemvLayout::kNone)
      << kernels::onednn::DescribeWeightFormat(packed->format);
#endif
  AttrBuilder attrs;
  attrs.Ints("weights_shape", {k, n}).Ints("weights_format", packed->format);
  if (bf16) attrs.String("compute_type", "bf16");
  const Tensor b = FloatTensor({n}, bias);
  for (int threads : {1, 2}) {
    for (bool with_bias : {false, true}) {
      SCOPED_TRACE(::testing::Message() << threads << " threads, bias " << with_bias);
      // Two rows (A [2, K]: oneDNN's primitive, or row by row), then the first alone (A [1, K]).
      std::vector<float> a(static_cast<size_t>(2 * k));
      for (float& v : a) v = u(rng);
      NodeSpec spec("DnnlMatMul", 1, "com.epctx");
      spec.threads = threads;
      const Tensor a2 = FloatTensor({2, k}, a);
      const Tensor a1 = FloatTensor({1, k}, std::vector<float>(a.begin(), a.begin() + k));
      auto two = RunNode(spec, attrs, {&a2, &packed->bytes, with_bias ? &b : nullptr});
      auto one = RunNode(spec, attrs, {&a1, &packed->bytes, with_bias ? &b : nullptr});
      ASSERT_TRUE(two.ok()) << two.status().ToString();
      ASSERT_TRUE(one.ok()) << one.status().ToString();
      std::vector<double> ref(static_cast<size_t>(n));
      for (int64_t j = 0; j < n; ++j) {
        double acc = with_bias ? bias[static_cast<size_t>(j)] : 0.0;
        for (int64_t i = 0; i < k; ++i) {
          const float x = a[static_cast<size_t>(i)], wv = w[static_cast<size_t>(i * n + j)];
          acc += static_cast<double>(bf16 ? RoundToBf16(x) : x) * (bf16 ? RoundToBf16(wv) : wv);
        }
        ref[static_cast<size_t>(j)] = acc;
      }
      ExpectClose((*one)[0], {1, n}, ref, 1e-4, 1e-5, "one row against the reference");
      const float* first = (*two)[0].data_as<float>();
      ExpectClose((*one)[0], {1, n}, std::vector<double>(first, first + n), 1e-4, 1e-5,
                  "one row against oneDNN's first row");
    }
  }
}

// Post-ops the primitive would fuse (a residual addition, LeakyRelu, Clip, Linear) and one it
// leaves to the kernel (GELU), applied after the one-row product and, on AVX2, after a small
// product taken row by row: as oneDNN's primitive applies them to a product of 160 rows (above
// the kernel's 4 Mi multiply-adds for row by row).
void CheckPostOps(bool bf16, std::mt19937& rng) {
  SCOPED_TRACE(bf16 ? "bf16" : "f32");
  const int64_t k = 200, n = 150, m = 160;
  std::vector<float> w(static_cast<size_t>(k * n)), a(static_cast<size_t>(m * k)),
      r(static_cast<size_t>(m * n));
  std::uniform_real_distribution<float> u(-1, 1);
  for (auto* v : {&w, &a, &r}) {
    for (float& x : *v) x = u(rng);
  }
  kernels::onednn::MatMulConfig config;
  config.bf16 = bf16;
  auto packed = kernels::onednn::PackMatMulWeights({128, k, n}, config, w.data(), false, 1.f);
  ASSERT_TRUE(packed.ok()) << packed.status().ToString();
  AttrBuilder attrs;
  attrs.Ints("weights_shape", {k, n}).Ints("weights_format", packed->format);
  attrs.Ints("post_ops", {9, 1, 2, 10, 7});
  attrs.Floats("post_op_alpha", {0, 0.1f, -0.5f, 2.f, 0});
  attrs.Floats("post_op_beta", {0, 0, 0.7f, 0.1f, 0});
  if (bf16) attrs.String("compute_type", "bf16");
  auto first_rows = [](const std::vector<float>& v, int64_t rows, int64_t width) {
    return std::vector<float>(v.begin(), v.begin() + rows * width);
  };
  const Tensor a_all = FloatTensor({m, k}, a), r_all = FloatTensor({m, n}, r);
  for (int threads : {1, 2}) {
    SCOPED_TRACE(::testing::Message() << threads << " threads");
    NodeSpec spec("DnnlMatMul", 1, "com.epctx");
    spec.threads = threads;
    auto all = RunNode(spec, attrs, {&a_all, &packed->bytes, nullptr, &r_all});
    ASSERT_TRUE(all.ok()) << all.status().ToString();
    const float* primitive = (*all)[0].data_as<float>();
    for (int64_t rows : {1, 3}) {
      const Tensor a_rows = FloatTensor({rows, k}, first_rows(a, rows, k));
      const Tensor r_rows = FloatTensor({rows, n}, first_rows(r, rows, n));
      auto some = RunNode(spec, attrs, {&a_rows, &packed->bytes, nullptr, &r_rows});
      ASSERT_TRUE(some.ok()) << some.status().ToString();
      ExpectClose((*some)[0], {rows, n}, std::vector<double>(primitive, primitive + rows * n), 1e-4,
                  1e-5, "first rows with post-ops against oneDNN's product of all rows");
      // Without its residual the node is refused, as the primitive's run is.
      ExpectError(RunNode(spec, attrs, {&a_rows, &packed->bytes, nullptr, nullptr}).status(),
                  StatusCode::kInvalidArgument, "residual");
    }
  }
}

TEST(DnnlMatMulOneRow, PostOpsAfterTheProductAsThePrimitiveAppliesThem) {
  std::mt19937 rng(5);
  CheckPostOps(false, rng);
  if (kernels::onednn::HasBf16Kernels()) CheckPostOps(true, rng);
}

TEST(DnnlMatMulOneRow, Float32LayoutMatchesTheReferenceAndOneDnn) {
  std::mt19937 rng(3);
  // Whole blocks; K and N padded inside the layout; weights split over two threads (>= 128 KiB).
  // On AVX2, panels ([3, 37], [17, 130] and [3, 256] stay plain rows: panels would pad them by
  // more than a quarter; [3, 256]'s rows, 1 KiB, are stored 16 floats longer): N not a multiple
  // of 8, whole groups of 8 panels and not; K below 8 and not a multiple of the 2 rows summed at
  // a time.
  for (auto [k, n] : std::vector<std::pair<int64_t, int64_t>>{{576, 192},
                                                              {70, 33},
                                                              {17, 130},
                                                              {1536, 130},
                                                              {576, 1000},
                                                              {42, 2100},
                                                              {42, 4212},
                                                              {3, 37},
                                                              {45, 512},
                                                              {576, 1536},
                                                              {3, 256}}) {
    CheckOneRow(k, n, false, rng);
  }
}

// A decode step's logits are the same bits at any thread count: each column is summed in an
// order the split between threads does not change (on AVX2, each panel's column summed in row
// order, whichever thread reads it).
TEST(DnnlMatMulOneRow, SumsDoNotDependOnTheThreadCount) {
  std::mt19937 rng(6);
  for (auto [k, n] : std::vector<std::pair<int64_t, int64_t>>{{1536, 1000}, {577, 4212}}) {
    SCOPED_TRACE(::testing::Message() << "K " << k << " N " << n);
    std::vector<float> w(static_cast<size_t>(k * n)), a(static_cast<size_t>(k));
    std::uniform_real_distribution<float> u(-1, 1);
    for (float& v : w) v = u(rng);
    for (float& v : a) v = u(rng);
    kernels::onednn::MatMulConfig config;
    auto packed = kernels::onednn::PackMatMulWeights({128, k, n}, config, w.data(), false, 1.f);
    ASSERT_TRUE(packed.ok()) << packed.status().ToString();
    AttrBuilder attrs;
    attrs.Ints("weights_shape", {k, n}).Ints("weights_format", packed->format);
    const Tensor a1 = FloatTensor({1, k}, a);
    std::vector<float> at_one_thread;
    for (int threads : {1, 2, 3, 4}) {
      SCOPED_TRACE(::testing::Message() << threads << " threads");
      NodeSpec spec("DnnlMatMul", 1, "com.epctx");
      spec.threads = threads;
      auto y = RunNode(spec, attrs, {&a1, &packed->bytes});
      ASSERT_TRUE(y.ok()) << y.status().ToString();
      const float* out = (*y)[0].data_as<float>();
      if (threads == 1) {
        at_one_thread.assign(out, out + n);
        continue;
      }
      for (int64_t c = 0; c < n; ++c) {
        ASSERT_EQ(out[c], at_one_thread[static_cast<size_t>(c)]) << "column " << c;
      }
    }
  }
}

TEST(DnnlMatMulOneRow, Bf16LayoutMatchesTheReferenceAndOneDnn) {
  if (!kernels::onednn::HasBf16Kernels()) GTEST_SKIP() << "this CPU has no avx512_bf16";
  std::mt19937 rng(4);
  for (auto [k, n] : std::vector<std::pair<int64_t, int64_t>>{
           {576, 192}, {71, 33}, {17, 130}, {1535, 130}, {576, 1000}}) {
    CheckOneRow(k, n, true, rng);
  }
}

}  // namespace
}  // namespace epctx::exec::testing
