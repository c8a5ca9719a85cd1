// epctx.precision=bf16: a convolution and a matmul with constant weights, compiled so, multiply
// their inputs and weights rounded to bfloat16 and sum in float32. The reference is the same
// model with its weights rounded to bfloat16 beforehand, run in float32 on the rounded inputs:
// products of bfloat16 values are exact in float32, so the two differ only by the order of the
// sums. A CPU without avx512_bf16 (EPCTX_CPU_FEATURES_MASK) refuses such a blob and falls back to
// the original model in float32, refuses such a compile, and runs a session asking for bf16 in
// float32.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "e2e/e2e_helpers.h"
#include "epctx/compiler.h"
#include "epctx/inspect.h"
#include "exec/kernels/onednn/compute_type.h"
#include "util/cpu_features.h"

namespace epctx::testing {
namespace {

float RoundToBf16(float f) {
  uint32_t u = std::bit_cast<uint32_t>(f);
  u += 0x7fff + ((u >> 16) & 1);  // to nearest, ties to even
  return std::bit_cast<float>(u & 0xffff0000u);
}

// Values in [-1, 1) from a fixed sequence, rounded to bfloat16 when `bf16`.
std::vector<float> Values(size_t count, uint32_t seed, bool bf16) {
  std::vector<float> out(count);
  uint32_t s = seed;
  for (float& v : out) {
    s = s * 1664525u + 1013904223u;
    v = static_cast<float>(s >> 8) / static_cast<float>(1u << 23) - 1.0f;
    if (bf16) v = RoundToBf16(v);
  }
  return out;
}

std::string List(const std::vector<float>& v) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += fmt::format("{}{:.9g}", i > 0 ? ", " : "", v[i]);
  return out;
}

// c = Conv(x, w, b) (16 -> 32 channels, 3x3, padded), m = a [4, 64] times v [64, 48] plus vb.
std::string ModelText(bool bf16_weights) {
  return fmt::format(R"(
<ir_version: 8, opset_import: ["" : 17]>
agraph (float[1, 16, 8, 8] x, float[4, 64] a) => (float[1, 32, 8, 8] c, float[4, 48] m)
<float[32, 16, 3, 3] w = {{{}}}, float[32] b = {{{}}}, float[64, 48] v = {{{}}},
 float[48] vb = {{{}}}>
{{
  c = Conv <pads = [1, 1, 1, 1]> (x, w, b)
  p = MatMul(a, v)
  m = Add(p, vb)
}}
)",
                     List(Values(32 * 16 * 9, 1, bf16_weights)), List(Values(32, 2, false)),
                     List(Values(64 * 48, 3, bf16_weights)), List(Values(48, 4, false)));
}

Tensor FloatTensor(std::vector<int64_t> shape, const std::vector<float>& values) {
  auto t = Tensor::Allocate(DataType::kFloat32, std::move(shape));
  EXPECT_TRUE(t.ok());
  std::copy(values.begin(), values.end(), t->mutable_data_as<float>());
  return std::move(*t);
}

// The outputs c and m of `session` on the fixed inputs (rounded to bfloat16 when `bf16`).
std::vector<Tensor> RunOn(Session& session, bool bf16_inputs) {
  auto out = session.Run({{"x", FloatTensor({1, 16, 8, 8}, Values(16 * 64, 5, bf16_inputs))},
                          {"a", FloatTensor({4, 64}, Values(4 * 64, 6, bf16_inputs))}});
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  if (!out.ok()) return {};
  EXPECT_EQ(out->size(), 2u);
  return std::move(*out);
}

// Max |a - b| over both outputs, relative to the largest |b|.
double RelativeDiff(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  EXPECT_EQ(a.size(), b.size());
  double worst = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    EXPECT_EQ(a[i].shape(), b[i].shape());
    const Comparison c = CompareFloat(a[i], b[i], 0, 0);
    worst = std::max(worst, c.max_abs_diff / std::max(c.max_abs_ref, 1e-30));
  }
  return worst;
}

std::unique_ptr<Session> OriginalSession(const std::string& model, const char* precision) {
  SessionOptions options;
  options.AddConfigEntry("epctx.precision", precision);
  auto session = Session::Create(model, options);
  EXPECT_TRUE(session.ok()) << session.status().ToString();
  return session.ok() ? std::move(*session) : nullptr;
}

SessionOptions Bf16Options() {
  SessionOptions options;
  options.AddConfigEntry("epctx.precision", "bf16");
  return options;
}

// Summing 144 products in another order: a few float32 roundings of the largest output.
constexpr double kSumOrderTolerance = 1e-5;

TEST(Bf16Precision, ContextBlobMultipliesInBf16AndSumsInFloat32) {
  if (!exec::kernels::onednn::HasBf16Kernels()) {
    GTEST_SKIP() << "this CPU has no avx512_bf16; the tests below cover that case";
  }
  TempDir dir;
  const std::string model = WriteModel(dir, "convmm", ModelText(false).c_str());
  const std::string rounded = WriteModel(dir, "convmm_rounded", ModelText(true).c_str());
  const std::string ctx = dir / "convmm_ctx.onnx";
  auto report = ModelCompiler(Bf16Options()).CompileToFile(model, ctx);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  auto info = InspectModel(ctx);
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_NE(info->blob.hardware_architecture.find("avx512bf16"), std::string::npos)
      << info->blob.hardware_architecture;

  std::vector<Tensor> bf16;
  {
    // Closed before the CPU "changes" below: sessions of a process share the loaded blob.
    SessionOptions deny;
    deny.AddConfigEntry("epctx.fallback", "deny");
    auto session = Session::Create(ctx, deny);
    ASSERT_TRUE(session.ok()) << session.status().ToString();
    bf16 = RunOn(**session, false);
  }

  auto reference = OriginalSession(rounded, "fp32");
  ASSERT_NE(reference, nullptr);
  EXPECT_LE(RelativeDiff(bf16, RunOn(*reference, true)), kSumOrderTolerance);
  // And the rounding happened: float32 throughout differs by far more.
  auto fp32 = OriginalSession(model, "fp32");
  ASSERT_NE(fp32, nullptr);
  const std::vector<Tensor> exact = RunOn(*fp32, false);
  EXPECT_GT(RelativeDiff(bf16, exact), 1e-4);
  EXPECT_LT(RelativeDiff(bf16, exact), 2e-2);

  // A session of the original model asking for bf16 computes the same.
  auto in_memory = Session::Create(model, Bf16Options());
  ASSERT_TRUE(in_memory.ok()) << in_memory.status().ToString();
  EXPECT_LE(RelativeDiff(RunOn(**in_memory, false), bf16), kSumOrderTolerance);

  // As a CPU without avx512_bf16: the blob is refused, the original model runs in float32.
  CpuFeaturesMask no_bf16(cpu::kAvx512Bf16);
  auto fallback = Session::Create(ctx);
  ASSERT_TRUE(fallback.ok()) << fallback.status().ToString();
  EXPECT_FALSE((*fallback)->origin().from_context_blob);
  EXPECT_NE((*fallback)->origin().fallback_reason.find(
                "packed for CPU features this CPU lacks: avx512bf16"),
            std::string::npos)
      << (*fallback)->origin().fallback_reason;
  EXPECT_LE(RelativeDiff(RunOn(**fallback, false), exact), kSumOrderTolerance);
}

TEST(Bf16Precision, CompileRefusedWithoutBf16Instructions) {
  CpuFeaturesMask no_bf16(cpu::kAvx512Bf16);
  TempDir dir;
  const std::string model = WriteModel(dir, "convmm", ModelText(false).c_str());
  auto report = ModelCompiler(Bf16Options()).CompileToFile(model, dir / "convmm_ctx.onnx");
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(report.status().message().find(
                "epctx.precision=bf16 needs oneDNN kernels with bf16 instructions (a CPU with "
                "avx512_bf16, and epctx.target_isa native); this process has none"),
            std::string::npos)
      << report.status().ToString();
  EXPECT_FALSE(std::filesystem::exists(dir / "convmm_ctx.onnx"));
}

TEST(Bf16Precision, SessionWithoutBf16InstructionsComputesInFloat32) {
  CpuFeaturesMask no_bf16(cpu::kAvx512Bf16);
  TempDir dir;
  const std::string model = WriteModel(dir, "convmm", ModelText(false).c_str());
  auto asked_bf16 = OriginalSession(model, "bf16");
  auto fp32 = OriginalSession(model, "fp32");
  ASSERT_NE(asked_bf16, nullptr);
  ASSERT_NE(fp32, nullptr);
  EXPECT_LE(RelativeDiff(RunOn(*asked_bf16, false), RunOn(*fp32, false)), kSumOrderTolerance);
}

TEST(Bf16Precision, UnknownPrecisionIsRefused) {
  TempDir dir;
  const std::string model = WriteModel(dir, "convmm", ModelText(false).c_str());
  SessionOptions options;
  options.AddConfigEntry("epctx.precision", "fp16");
  auto session = Session::Create(model, options);
  ASSERT_FALSE(session.ok());
  EXPECT_NE(session.status().message().find(
                "option epctx.precision must be \"fp32\" or \"bf16\", got \"fp16\""),
            std::string::npos)
      << session.status().ToString();
}

}  // namespace
}  // namespace epctx::testing
