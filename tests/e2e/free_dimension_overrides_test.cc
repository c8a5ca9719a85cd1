// epctx.free_dimension_overrides (ONNX Runtime's AddFreeDimensionOverrideByName): a model whose
// inputs have symbolic dims compiles with the named dims fixed. The context model declares the
// fixed shapes, runs them with the results of the symbolic compile, and refuses other sizes.
#include <gtest/gtest.h>

#include <cstring>

#include "e2e/e2e_helpers.h"
#include "epctx/compiler.h"

namespace epctx::testing {
namespace {

// Rows of x times a constant matrix, then a Reshape whose target comes from x's shape: with
// `seq` fixed the Shape folds away at compile time.
constexpr const char* kRowsModel = R"(
<ir_version: 8, opset_import: ["" : 17]>
agraph (float[batch, seq, 3] x) => (float[batch, seq, 2] y, float[batch, flat] z)
<float[3, 2] w = {1.0, -2.0, 0.5, 3.0, -1.5, 0.25}, int64[1] zero = {0}, int64[1] minus_one = {-1}>
{
  y = MatMul(x, w)
  shape = Shape(x)
  rows = Gather <axis = 0> (shape, zero)
  target = Concat <axis = 0> (rows, minus_one)
  z = Reshape(y, target)
}
)";

Tensor RowsInput(std::vector<int64_t> shape) {
  auto t = Tensor::Allocate(DataType::kFloat32, std::move(shape));
  EXPECT_TRUE(t.ok());
  float* p = t->mutable_data_as<float>();
  for (int64_t i = 0; i < t->element_count(); ++i) p[i] = 0.25f * static_cast<float>(i % 7) - 0.5f;
  return *t;
}

std::unique_ptr<Session> CompileWithOverrides(const TempDir& dir, const std::string& model,
                                              const std::string& name,
                                              const std::string& overrides) {
  SessionOptions options;
  if (!overrides.empty()) options.AddConfigEntry("epctx.free_dimension_overrides", overrides);
  const std::string ctx = dir / (name + "_ctx.onnx");
  auto report = ModelCompiler(options).CompileToFile(model, ctx);
  EXPECT_TRUE(report.ok()) << report.status().ToString();
  if (!report.ok()) return nullptr;
  SessionOptions load;
  load.AddConfigEntry("epctx.fallback", "deny");
  auto session = Session::Create(ctx, load);
  EXPECT_TRUE(session.ok()) << session.status().ToString();
  return session.ok() ? std::move(*session) : nullptr;
}

TEST(FreeDimensionOverrides, FixedShapesAreDeclaredAndRunAsTheSymbolicCompile) {
  TempDir dir;
  const std::string model = WriteModel(dir, "rows", kRowsModel);
  auto fixed = CompileWithOverrides(dir, model, "fixed", "seq:4,batch:2");
  auto symbolic = CompileWithOverrides(dir, model, "symbolic", "");
  ASSERT_NE(fixed, nullptr);
  ASSERT_NE(symbolic, nullptr);
  EXPECT_EQ(fixed->inputs()[0].shape, (std::vector<int64_t>{2, 4, 3}));
  EXPECT_EQ(fixed->outputs()[0].shape, (std::vector<int64_t>{2, 4, 2}));
  EXPECT_EQ(symbolic->inputs()[0].shape, (std::vector<int64_t>{-1, -1, 3}));
  EXPECT_EQ(symbolic->inputs()[0].dim_names[1], "seq");

  auto got = fixed->Run({{"x", RowsInput({2, 4, 3})}});
  auto want = symbolic->Run({{"x", RowsInput({2, 4, 3})}});
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_TRUE(want.ok()) << want.status().ToString();
  for (size_t i = 0; i < 2; ++i) {
    ASSERT_EQ((*got)[i].shape(), (*want)[i].shape());
    EXPECT_EQ(std::memcmp((*got)[i].data(), (*want)[i].data(), (*want)[i].byte_size()), 0)
        << "output " << i;
  }
  EXPECT_EQ((*got)[1].shape(), (std::vector<int64_t>{2, 8}));

  auto other = fixed->Run({{"x", RowsInput({2, 5, 3})}});
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.status().message(),
            "input 'x' has shape [2,5,3], expected [2,4,3] (dim 1 differs)");
  EXPECT_TRUE(symbolic->Run({{"x", RowsInput({2, 5, 3})}}).ok());
}

TEST(FreeDimensionOverrides, BadOverridesAreRefusedNamingTheItem) {
  TempDir dir;
  const std::string model = WriteModel(dir, "rows", kRowsModel);
  struct Case {
    const char* value;
    const char* message;
  };
  for (const Case& c : {
           Case{"seq:0",
                "option epctx.free_dimension_overrides: free dimension override 'seq:0' "
                "is not NAME:SIZE with a size of 1 or more"},
           Case{"seq",
                "option epctx.free_dimension_overrides: free dimension override 'seq' is "
                "not NAME:SIZE with a size of 1 or more"},
           Case{"seq:4,",
                "option epctx.free_dimension_overrides: free dimension override '' is "
                "not NAME:SIZE with a size of 1 or more"},
           Case{"seq:4x",
                "option epctx.free_dimension_overrides: free dimension override "
                "'seq:4x' is not NAME:SIZE with a size of 1 or more"},
           Case{"seq:4,seq:5",
                "option epctx.free_dimension_overrides: free dimension 'seq' is "
                "given two sizes, 4 and 5"},
       }) {
    SessionOptions options;
    options.AddConfigEntry("epctx.free_dimension_overrides", c.value);
    auto report = ModelCompiler(options).CompileToFile(model, dir / "bad_ctx.onnx");
    ASSERT_FALSE(report.ok()) << c.value;
    EXPECT_EQ(report.status().message(), c.message);
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "bad_ctx.onnx"));
}

// A session made from the original model takes the overrides too.
TEST(FreeDimensionOverrides, ASessionOfTheOriginalModelFixesTheDims) {
  TempDir dir;
  SessionOptions options;
  options.AddConfigEntry("epctx.free_dimension_overrides", "batch:1,seq:6,unused:3");
  auto session = Session::Create(WriteModel(dir, "rows", kRowsModel), options);
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  EXPECT_EQ((*session)->inputs()[0].shape, (std::vector<int64_t>{1, 6, 3}));
  auto out = (*session)->Run({{"x", RowsInput({1, 6, 3})}});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[1].shape(), (std::vector<int64_t>{1, 12}));
}

}  // namespace
}  // namespace epctx::testing
