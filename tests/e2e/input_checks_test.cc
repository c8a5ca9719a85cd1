// Run() refuses bad inputs with a message naming the input, the expected and the given, and
// accepts what ONNX Runtime accepts: its InferenceSession::ValidateInputs checks the shape only
// against a declaration of rank 1 or more, so a scalar input also takes a [1] tensor.
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

template <typename T>
Tensor Filled(DataType type, std::vector<int64_t> shape, T value) {
  auto t = Tensor::Allocate(type, std::move(shape));
  EXPECT_TRUE(t.ok());
  for (int64_t i = 0; i < t->element_count(); ++i) t->mutable_data_as<T>()[i] = value;
  return *t;
}

// A voice-activity-style model: the sample rate is declared a scalar and chooses a branch.
constexpr const char* kRateModel = R"(
<ir_version: 8, opset_import: ["" : 17]>
agraph (float[N, 4] x, int64 sr, float[2, 3] fixed) => (float[N, 4] y, float[2, 3] f)
<int64 k = {16000}>
{
  is16k = Equal(sr, k)
  y = If(is16k) <
    then_branch = then_graph () => (float[N, 4] t) { t = Identity(x) },
    else_branch = else_graph () => (float[N, 4] e) { e = Neg(x) }
  >
  f = Identity(fixed)
}
)";

class OrtInputRules : public ::testing::Test {
 protected:
  void SetUp() override {
    session_ = CompileAndLoad(dir_, WriteModel(dir_, "rate", kRateModel));
    ASSERT_NE(session_, nullptr);
  }
  std::unordered_map<std::string, Tensor> Feed() const {
    return {{"x", Filled<float>(DataType::kFloat32, {2, 4}, 1.0f)},
            {"sr", Filled<int64_t>(DataType::kInt64, {}, 16000)},
            {"fixed", Filled<float>(DataType::kFloat32, {2, 3}, 3.0f)}};
  }
  std::string Error(const std::unordered_map<std::string, Tensor>& feed) {
    auto r = session_->Run(feed);
    EXPECT_FALSE(r.ok());
    return r.ok() ? "" : r.status().ToString();
  }
  TempDir dir_;
  std::unique_ptr<Session> session_;
};

TEST_F(OrtInputRules, ScalarInputTakesOneElementTensors) {
  for (int64_t rate : {16000, 8000}) {
    for (const std::vector<int64_t>& shape :
         {std::vector<int64_t>{}, std::vector<int64_t>{1}, std::vector<int64_t>{1, 1}}) {
      auto feed = Feed();
      feed["sr"] = Filled<int64_t>(DataType::kInt64, shape, rate);
      auto out = session_->Run(feed);
      ASSERT_TRUE(out.ok()) << out.status().ToString();
      EXPECT_EQ((*out)[0].data_as<float>()[0], rate == 16000 ? 1.0f : -1.0f)
          << "sr " << ShapeToString(shape);
    }
  }
}

TEST_F(OrtInputRules, ScalarInputShapeIsNotChecked) {
  // As in ONNX Runtime, a scalar declaration checks no shape: what the model does with a
  // tensor of another size decides (here If refuses a condition of two elements).
  auto feed = Feed();
  feed["sr"] = Filled<int64_t>(DataType::kInt64, {2}, 16000);
  EXPECT_EQ(Error(feed),
            "InvalidArgument: model 'rate': If node 'If_1': cond must be one bool, got bool [2]");
}

TEST_F(OrtInputRules, SymbolicDimsTakeAnySize) {
  for (int64_t n : {1, 7, 0}) {
    auto feed = Feed();
    feed["x"] = Filled<float>(DataType::kFloat32, {n, 4}, 1.0f);
    auto out = session_->Run(feed);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_EQ((*out)[0].shape(), (std::vector<int64_t>{n, 4}));
  }
}

TEST_F(OrtInputRules, ErrorsNameTheInputTheExpectedAndTheGiven) {
  auto feed = Feed();
  feed["sr"] = Filled<int32_t>(DataType::kInt32, {}, 16000);
  EXPECT_EQ(Error(feed), "InvalidArgument: input 'sr' has type int32, expected int64");
  feed = Feed();
  feed["x"] = Filled<float>(DataType::kFloat32, {1, 2, 4}, 1.0f);
  EXPECT_EQ(Error(feed),
            "InvalidArgument: input 'x' has rank 3 (shape [1,2,4]), expected rank 2 (shape [N,4])");
  feed = Feed();
  feed["x"] = Filled<float>(DataType::kFloat32, {2, 5}, 1.0f);
  EXPECT_EQ(Error(feed),
            "InvalidArgument: input 'x' has shape [2,5], expected [N,4] (dim 1 differs)");
  // Every dim that differs is listed, as ONNX Runtime lists every index.
  feed = Feed();
  feed["fixed"] = Filled<float>(DataType::kFloat32, {4, 1}, 1.0f);
  EXPECT_EQ(Error(feed),
            "InvalidArgument: input 'fixed' has shape [4,1], expected [2,3] (dims 0 and 1 differ)");
  feed = Feed();
  feed["fixed"] = Filled<float>(DataType::kFloat32, {6}, 1.0f);
  EXPECT_EQ(Error(feed),
            "InvalidArgument: input 'fixed' has rank 1 (shape [6]), expected rank 2 (shape [2,3])");
  feed = Feed();
  feed.erase("sr");
  EXPECT_EQ(Error(feed), "InvalidArgument: missing input 'sr' (int64 [])");
}

TEST(CheckInput, TheRuleOnItsOwn) {
  ValueInfo declared;
  declared.name = "x";
  declared.dtype = DataType::kFloat32;
  declared.shape = {-1, 3, -1, 2};
  declared.dim_names = {"batch", "", "", ""};
  EXPECT_EQ(ShapeToString(declared), "[batch,3,?,2]");
  EXPECT_TRUE(CheckInput(declared, Filled<float>(DataType::kFloat32, {0, 3, 9, 2}, 0.0f)).ok());
  EXPECT_EQ(CheckInput(declared, Filled<float>(DataType::kFloat32, {1, 4, 1, 3}, 0.0f), "x.npy")
                .ToString(),
            "InvalidArgument: x.npy has shape [1,4,1,3], expected [batch,3,?,2] (dims 1 and 3 "
            "differ)");
  EXPECT_EQ(CheckInput(declared, Tensor()).ToString(),
            "InvalidArgument: input 'x' is an empty tensor");
  // A scalar declaration, and no declaration (which ONNX's checker refuses for graph inputs, but
  // ONNX Runtime takes): both have no dims, and any shape passes.
  ValueInfo scalar;
  scalar.name = "s";
  scalar.dtype = DataType::kInt64;
  EXPECT_TRUE(CheckInput(scalar, Filled<int64_t>(DataType::kInt64, {1}, 0)).ok());
  EXPECT_TRUE(CheckInput(scalar, Filled<int64_t>(DataType::kInt64, {3, 2}, 0)).ok());
  EXPECT_EQ(CheckInput(scalar, Filled<float>(DataType::kFloat32, {1}, 0.0f)).ToString(),
            "InvalidArgument: input 's' has type float32, expected int64");
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
