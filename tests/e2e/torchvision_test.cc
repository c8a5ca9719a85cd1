// torchvision models exported by PyTorch: the context path and the in-memory path must both match
// PyTorch's own output.
#include <gtest/gtest.h>

#include "e2e/e2e_helpers.h"

namespace epctx::testing {
namespace {

constexpr double kClassifierRtol = 1e-4;

class TorchvisionTest : public ::testing::TestWithParam<std::string> {
 protected:
  void ExpectMatchesReference(Session& session, const std::string& what) {
    const std::string& name = GetParam();
    Tensor input = LoadNpyOrDie(ModelsDir() + "/" + name + ".input.npy");
    Tensor reference = LoadNpyOrDie(ModelsDir() + "/" + name + ".output.npy");
    ASSERT_EQ(reference.dtype(), DataType::kFloat32);
    ASSERT_GT(reference.element_count(), 0);
    auto outputs = session.Run({{"input", input}});
    ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
    ASSERT_EQ(outputs->size(), 1u);
    const Tensor& out = (*outputs)[0];
    ASSERT_EQ(out.shape(), reference.shape());
    // Tolerance relative to the output's scale: logits near zero carry the accumulated absolute
    // error of the whole network, not a relative one.
    Comparison first = CompareFloat(out, reference, 0, 0);
    Comparison c =
        CompareFloat(out, reference, kClassifierRtol, kClassifierRtol * first.max_abs_ref);
    std::cout << "[ " << name << " / " << what << " ] max abs diff " << c.max_abs_diff
              << ", max |reference| " << c.max_abs_ref << ", relative "
              << c.max_abs_diff / c.max_abs_ref << "\n";
    EXPECT_GT(c.max_abs_ref, 1e-3) << "reference output is degenerate";
    EXPECT_EQ(c.mismatches, 0u) << "of " << c.count << " elements; max abs diff " << c.max_abs_diff;
  }
};

TEST_P(TorchvisionTest, ContextModelMatchesPyTorch) {
  TempDir dir;
  std::string original = ModelPath(GetParam());
  std::string ctx = dir / (GetParam() + "_ctx.onnx");
  auto report = ModelCompiler().CompileToFile(original, ctx);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_TRUE(std::filesystem::exists(report->blob_path));
  EXPECT_EQ(report->blob_path, dir / (GetParam() + "_ctx.epctx"));

  auto session = Session::Create(ctx);
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  EXPECT_TRUE((*session)->origin().from_context_blob);
  EXPECT_EQ((*session)->origin().fallback_reason, "");
  ExpectMatchesReference(**session, "context model");
}

TEST_P(TorchvisionTest, OriginalModelCompiledInMemoryMatchesPyTorch) {
  auto session = Session::Create(ModelPath(GetParam()));
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  EXPECT_FALSE((*session)->origin().from_context_blob);
  ExpectMatchesReference(**session, "original model, in memory");
}

TEST_P(TorchvisionTest, ContextModelFromMemoryWithContextFilePath) {
  TempDir dir;
  std::string ctx = dir / (GetParam() + "_ctx.onnx");
  ASSERT_TRUE(ModelCompiler().CompileToFile(ModelPath(GetParam()), ctx).ok());
  auto bytes = ReadFileBytes(ctx);
  SessionOptions options;
  options.AddConfigEntry("ep.context_file_path", ctx);
  auto session = Session::CreateFromMemory(std::as_bytes(std::span(bytes)), options);
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  EXPECT_TRUE((*session)->origin().from_context_blob);
  ExpectMatchesReference(**session, "context model from memory");
}

INSTANTIATE_TEST_SUITE_P(Models, TorchvisionTest,
                         ::testing::Values("resnet50", "mobilenet_v2", "efficientnet_b0",
                                           "squeezenet1_1"));

}  // namespace
}  // namespace epctx::testing
