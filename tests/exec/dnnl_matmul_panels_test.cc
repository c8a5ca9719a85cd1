// Float32 matmul weights in the 1x1 convolution's 8-column panels (panel_matmul.h): where the
// compiler stores them so, that the bytes are the convolution's filter layout, and that the
// products through the convolution (and, for one row, through our own pass) match a reference.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "exec/kernels/onednn/blocked_gemv.h"
#include "exec/kernels/onednn/isa.h"
#include "exec/kernels/onednn/panel_matmul.h"
#include "exec/kernels/onednn/runtime.h"
#include "exec/kernels/onednn/weight_format.h"
#include "exec/kernels/onednn/weight_packing.h"
#include "format/target.h"
#include "kernel_test_helpers.h"

namespace epctx::exec::testing {
namespace {

namespace onednn = kernels::onednn;

std::vector<float> Uniform(int64_t count, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> v(static_cast<size_t>(count));
  for (float& x : v) x = u(rng);
  return v;
}

bool StoredInPanels(const onednn::PackedWeightPlan& plan, int64_t k, int64_t n) {
  auto panels = onednn::EncodeWeightFormat(onednn::PanelWeightDesc(k, n));
  return panels.ok() && plan.format == *panels;
}

// On the AVX2 tier (oneDNN's matmul reads plain rows there) a float32 weight goes into panels
// unless padding K and N to 8 would add more than a quarter; on AVX-512 oneDNN's matmul packs
// its own layout and no weight does.
TEST(DnnlMatMulPanels, WeightsTakePanelsWhereTheMatMulReadsPlainRows) {
  const bool avx2 = onednn::PackingIsa() == format::KernelIsa::kAvx2;
  struct Case {
    int64_t k, n;
    bool padded_by_a_quarter_at_most;
  };
  for (const Case& c : {Case{576, 1536, true}, Case{70, 33, true}, Case{3, 37, false},
                        Case{17, 130, false}, Case{4096, 5, false}}) {
    SCOPED_TRACE(::testing::Message() << "K " << c.k << " N " << c.n);
    auto plan = onednn::PlanMatMulWeights({128, c.k, c.n}, onednn::MatMulConfig{});
    ASSERT_TRUE(plan.ok()) << plan.status().ToString();
    const bool panels = avx2 && c.padded_by_a_quarter_at_most;
    EXPECT_EQ(StoredInPanels(*plan, c.k, c.n), panels)
        << onednn::DescribeWeightFormat(plan->format) << " for " << plan->implementation;
    if (panels) {
      EXPECT_EQ(plan->implementation, "onednn:jit_1x1:avx2");
      EXPECT_EQ(onednn::GemvLayoutOf(plan->format, c.k, c.n), onednn::GemvLayout::kFloat32Panels);
      EXPECT_EQ(plan->elements, 8 * ((c.k + 7) / 8) * ((c.n + 7) / 8) * 8);
    }
  }
}

// The panels of W [K, N] are, byte for byte, oneDNN's OIhw8i8o filter of W's transpose (the
// convolution reads them as that), padding zero.
TEST(DnnlMatMulPanels, PanelsAreTheConvolutionsFilterLayout) {
  std::mt19937 rng(11);
  const int64_t k = 70, n = 33;
  const std::vector<float> w = Uniform(k * n, rng);
  std::vector<float> oihw(w.size());
  for (int64_t i = 0; i < k; ++i) {
    for (int64_t j = 0; j < n; ++j)
      oihw[static_cast<size_t>(j * k + i)] = w[static_cast<size_t>(i * n + j)];
  }
  using tag = dnnl::memory::format_tag;
  auto reorder = [](const dnnl::memory::desc& from, const float* data,
                    const dnnl::memory::desc& to) {
    std::vector<float> out(to.get_size() / sizeof(float), 0.f);
    dnnl::memory src = onednn::Wrap(from, data), dst = onednn::Wrap(to, out.data());
    dnnl::reorder(src, dst).execute(onednn::ThreadStream(), src, dst);
    return out;
  };
  const std::vector<float> panels =
      reorder(onednn::PlainDesc({k, n}, tag::ab), w.data(), onednn::PanelWeightDesc(k, n));
  const std::vector<float> filter =
      reorder(onednn::PlainDesc({n, k, 1, 1}, tag::oihw), oihw.data(),
              dnnl::memory::desc({n, k, 1, 1}, dnnl::memory::data_type::f32, tag::OIhw8i8o));
  ASSERT_EQ(panels.size(), static_cast<size_t>(72 * 40));
  ASSERT_EQ(panels.size(), filter.size());
  EXPECT_EQ(std::memcmp(panels.data(), filter.data(), panels.size() * sizeof(float)), 0);
  // Row 69, column 32: panel 4, rows 64-71's block, row 5 of it, column 0.
  EXPECT_EQ(panels[static_cast<size_t>(4 * 72 * 8 + 69 * 8 + 0)],
            w[static_cast<size_t>(69 * n + 32)]);
  EXPECT_EQ(panels[static_cast<size_t>(4 * 72 * 8 + 69 * 8 + 1)], 0.f);  // column 33: padding
}

// DnnlMatMul over panels: products of 7 to 2000 rows (the convolution; below 4 Mi multiply-adds
// the kernel takes them row by row) and of one row (our pass), with bias, a residual and
// LeakyRelu, against a float64 reference, on 1 and 2 threads.
TEST(DnnlMatMulPanels, ProductsMatchTheReference) {
  if (onednn::PackingIsa() != format::KernelIsa::kAvx2) {
    GTEST_SKIP() << "weights take panels on the AVX2 tier only; this CPU packs for "
                 << format::KernelIsaName(onednn::PackingIsa());
  }
  std::mt19937 rng(12);
  struct Case {
    int64_t m, k, n;
  };
  for (const Case& c : {Case{7, 576, 1536}, Case{160, 200, 150}, Case{2000, 70, 33},
                        Case{1, 576, 1000}, Case{1, 70, 33}}) {
    SCOPED_TRACE(::testing::Message() << "M " << c.m << " K " << c.k << " N " << c.n);
    const std::vector<float> w = Uniform(c.k * c.n, rng), a = Uniform(c.m * c.k, rng),
                             bias = Uniform(c.n, rng), r = Uniform(c.m * c.n, rng);
    onednn::MatMulConfig config;
    config.has_bias = true;
    auto packed = onednn::PackMatMulWeights({128, c.k, c.n}, config, w.data(), false, 1.f);
    ASSERT_TRUE(packed.ok()) << packed.status().ToString();
    ASSERT_EQ(onednn::GemvLayoutOf(packed->format, c.k, c.n), onednn::GemvLayout::kFloat32Panels);
    AttrBuilder attrs;
    attrs.Ints("weights_shape", {c.k, c.n}).Ints("weights_format", packed->format);
    attrs.Ints("post_ops", {9, 1})
        .Floats("post_op_alpha", {0, 0.1f})
        .Floats("post_op_beta", {0, 0});
    std::vector<double> ref(static_cast<size_t>(c.m * c.n));
    for (int64_t i = 0; i < c.m; ++i) {
      for (int64_t j = 0; j < c.n; ++j) {
        double acc = bias[static_cast<size_t>(j)];
        for (int64_t l = 0; l < c.k; ++l) {
          acc += static_cast<double>(a[static_cast<size_t>(i * c.k + l)]) *
                 w[static_cast<size_t>(l * c.n + j)];
        }
        acc += r[static_cast<size_t>(i * c.n + j)];
        ref[static_cast<size_t>(i * c.n + j)] = acc < 0 ? 0.1 * acc : acc;
      }
    }
    const Tensor a_t = FloatTensor({c.m, c.k}, a), b_t = FloatTensor({c.n}, bias),
                 r_t = FloatTensor({c.m, c.n}, r);
    for (int threads : {1, 2}) {
      SCOPED_TRACE(::testing::Message() << threads << " threads");
      NodeSpec spec("DnnlMatMul", 1, "com.epctx");
      spec.threads = threads;
      auto y = RunNode(spec, attrs, {&a_t, &packed->bytes, &b_t, &r_t});
      ASSERT_TRUE(y.ok()) << y.status().ToString();
      ExpectClose((*y)[0], {c.m, c.n}, ref, 1e-4, 1e-5, "the product through panels");
    }
  }
}

}  // namespace
}  // namespace epctx::exec::testing
