// Int8 products go to oneDNN's int8 kernels only where those compute them exactly, and a blob
// whose int8 weights only VNNI multiplies exactly says so in its target fingerprint: a CPU
// without VNNI refuses it (a logged fallback to the original model) instead of saturating. A
// MatMulInteger with weights within [-64, 64] (exact on every CPU) and one with weights out to
// -128 and 127 (exact only with VNNI), compiled to a context model on this CPU, then loaded as
// this CPU and as this CPU without VNNI (EPCTX_CPU_FEATURES_MASK); every run gives the exact
// integer product.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "e2e/e2e_helpers.h"
#include "epctx/compiler.h"
#include "epctx/inspect.h"
#include "exec/kernels/onednn/isa.h"
#include "util/cpu_features.h"

namespace epctx::testing {
namespace {

// x uint8 [3, 4] times w int8 [4, 2] with x's zero point 7: y int32 [3, 2].
std::string MatMulIntegerModel(const std::vector<int>& w) {
  std::string values;
  for (size_t i = 0; i < w.size(); ++i) values += (i > 0 ? ", " : "") + std::to_string(w[i]);
  return R"(
<ir_version: 8, opset_import: ["" : 17]>
agraph (uint8[3, 4] x) => (int32[3, 2] y)
<int8[4, 2] w = {)" +
         values + R"(}, uint8 x_zero = {7}>
{
  y = MatMulInteger(x, w, x_zero)
}
)";
}

std::vector<int32_t> ExactProduct(const std::vector<uint8_t>& x, const std::vector<int>& w) {
  std::vector<int32_t> y(6, 0);
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 2; ++j) {
      for (int k = 0; k < 4; ++k) y[i * 2 + j] += (x[i * 4 + k] - 7) * w[k * 2 + j];
    }
  }
  return y;
}

struct Int8Case {
  const char* name;
  std::vector<int> w;
  bool needs_vnni;  // some weight beyond [-64, 64]
};

void PrintTo(const Int8Case& c, std::ostream* os) {
  *os << c.name;
}

class Int8Target : public ::testing::TestWithParam<Int8Case> {};

TEST_P(Int8Target, FingerprintRequiresVnniExactlyWhenTheKernelsDo) {
  const Int8Case& c = GetParam();
  const bool vnni = exec::kernels::onednn::Int8KernelsHaveVnni();
  const bool on_onednn = vnni || !c.needs_vnni;
  TempDir dir;
  const std::string model = WriteModel(dir, c.name, MatMulIntegerModel(c.w).c_str());
  const std::string ctx = dir / (std::string(c.name) + "_ctx.onnx");
  auto report = ModelCompiler().CompileToFile(model, ctx);
  ASSERT_TRUE(report.ok()) << report.status().ToString();

  auto info = InspectModel(ctx);
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  ASSERT_EQ(info->blob.models.size(), 1u);
  const auto& ops = info->blob.models[0].programs.at(0).op_counts;
  EXPECT_EQ(ops.count("com.epctx.DnnlMatMulInteger"), on_onednn ? 1u : 0u);
  EXPECT_EQ(ops.count("MatMulInteger"), on_onednn ? 0u : 1u);
  const bool requires_vnni =
      info->blob.hardware_architecture.find("avx512vnni") != std::string::npos;
  EXPECT_EQ(requires_vnni, c.needs_vnni && vnni) << info->blob.hardware_architecture;

  const std::vector<uint8_t> x{0, 255, 255, 7, 255, 255, 0, 0, 100, 3, 200, 255};
  const std::vector<int32_t> want = ExactProduct(x, c.w);
  auto input = Tensor::Allocate(DataType::kUint8, {3, 4});
  ASSERT_TRUE(input.ok());
  std::copy(x.begin(), x.end(), input->mutable_data_as<uint8_t>());
  auto check_run = [&](Session& s, const std::string& what) {
    auto out = s.Run({{"x", *input}});
    ASSERT_TRUE(out.ok()) << what << ": " << out.status().ToString();
    ASSERT_EQ(out->size(), 1u) << what;
    const Tensor& y = (*out)[0];
    ASSERT_EQ(y.dtype(), DataType::kInt32) << what;
    EXPECT_EQ(std::vector<int32_t>(y.data_as<int32_t>(), y.data_as<int32_t>() + 6), want) << what;
  };

  {
    SessionOptions deny;
    deny.AddConfigEntry("epctx.fallback", "deny");
    auto session = Session::Create(ctx, deny);
    ASSERT_TRUE(session.ok()) << session.status().ToString();
    check_run(**session, "from the blob");
  }
  // This CPU without VNNI: the blob loads unless it requires VNNI.
  CpuFeaturesMask no_vnni(cpu::kAvx512Vnni);
  auto session = Session::Create(ctx);
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  EXPECT_EQ((*session)->origin().from_context_blob, !requires_vnni);
  if (requires_vnni) {
    EXPECT_NE((*session)->origin().fallback_reason.find(
                  "packed for CPU features this CPU lacks: avx512vnni"),
              std::string::npos)
        << (*session)->origin().fallback_reason;
  }
  check_run(**session, "without VNNI");
}

INSTANTIATE_TEST_SUITE_P(
    Weights, Int8Target,
    ::testing::Values(Int8Case{"within_64", {64, -64, 64, -64, -64, 64, 64, 1}, false},
                      Int8Case{"full_range", {127, -128, 127, -128, 127, -128, 120, 1}, true}),
    [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace epctx::testing
