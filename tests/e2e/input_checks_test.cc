// Run() refuses bad inputs with a message naming the input, the expected and the given.
#include <gtest/gtest.h>

#include <fstream>

#include "e2e/e2e_helpers.h"

namespace epctx::testing {
namespace {

class InputChecks : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    std::string ctx = *dir_ / "mobilenet_v2_ctx.onnx";
    auto report = ModelCompiler().CompileToFile(ModelPath("mobilenet_v2"), ctx);
    ASSERT_TRUE(report.ok()) << report.status().ToString();
    auto session = Session::Create(ctx);
    ASSERT_TRUE(session.ok()) << session.status().ToString();
    session_ = session->release();
  }
  static void TearDownTestSuite() {
    delete session_;
    delete dir_;
  }
  static std::string RunError(const std::unordered_map<std::string, Tensor>& inputs,
                              const std::vector<std::string>& outputs = {}) {
    auto r = session_->Run(inputs, outputs);
    EXPECT_FALSE(r.ok());
    return r.ok() ? "" : r.status().ToString();
  }
  static Tensor Make(DataType type, std::vector<int64_t> shape) {
    auto t = Tensor::Allocate(type, std::move(shape));
    EXPECT_TRUE(t.ok());
    return *t;
  }

  static TempDir* dir_;
  static Session* session_;
};
TempDir* InputChecks::dir_ = nullptr;
Session* InputChecks::session_ = nullptr;

TEST_F(InputChecks, DescribesTheModel) {
  ASSERT_EQ(session_->inputs().size(), 1u);
  EXPECT_EQ(session_->inputs()[0].name, "input");
  EXPECT_EQ(session_->inputs()[0].dtype, DataType::kFloat32);
  EXPECT_EQ(session_->inputs()[0].shape, (std::vector<int64_t>{1, 3, 224, 224}));
  ASSERT_EQ(session_->outputs().size(), 1u);
  EXPECT_EQ(session_->outputs()[0].name, "output");
}

TEST_F(InputChecks, UnknownInput) {
  EXPECT_EQ(RunError({{"input", Make(DataType::kFloat32, {1, 3, 224, 224})},
                      {"image", Make(DataType::kFloat32, {1})}}),
            "InvalidArgument: unknown input 'image'; the model's inputs are: input (float32 "
            "[1,3,224,224])");
}

TEST_F(InputChecks, MissingInput) {
  EXPECT_EQ(RunError({}), "InvalidArgument: missing input 'input' (float32 [1,3,224,224])");
}

TEST_F(InputChecks, WrongType) {
  EXPECT_EQ(RunError({{"input", Make(DataType::kInt64, {1, 3, 224, 224})}}),
            "InvalidArgument: input 'input' has type int64, expected float32");
}

TEST_F(InputChecks, WrongRank) {
  EXPECT_EQ(RunError({{"input", Make(DataType::kFloat32, {3, 224, 224})}}),
            "InvalidArgument: input 'input' has rank 3 (shape [3,224,224]), expected rank 4 "
            "(shape [1,3,224,224])");
}

TEST_F(InputChecks, WrongDims) {
  EXPECT_EQ(RunError({{"input", Make(DataType::kFloat32, {1, 3, 200, 224})}}),
            "InvalidArgument: input 'input' has shape [1,3,200,224], expected [1,3,224,224] (dim "
            "2 differs)");
}

TEST_F(InputChecks, UnknownOutput) {
  EXPECT_EQ(RunError({{"input", Make(DataType::kFloat32, {1, 3, 224, 224})}}, {"logits"}),
            "InvalidArgument: unknown output 'logits'; the model's outputs are: output (float32 "
            "[1,1000])");
}

TEST(Options, UnknownKeyIsRefused) {
  SessionOptions options;
  options.AddConfigEntry("ep.context_enabel", "1");
  auto session = Session::Create(ModelPath("mobilenet_v2"), options);
  ASSERT_FALSE(session.ok());
  EXPECT_NE(session.status().message().find("unknown option \"ep.context_enabel\""),
            std::string::npos)
      << session.status().message();
}

TEST(Options, BadModelFileNamesTheFile) {
  TempDir dir;
  std::string path = dir / "garbage.onnx";
  { std::ofstream(path) << "this is not a model"; }
  auto session = Session::Create(path);
  ASSERT_FALSE(session.ok());
  EXPECT_EQ(session.status().ToString(),
            "InvalidArgument: '" + path + "': not an ONNX model (protobuf parse failed)");
}

}  // namespace
}  // namespace epctx::testing
