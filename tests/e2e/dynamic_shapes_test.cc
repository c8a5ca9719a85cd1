// Models whose input shapes are known only at run time, through the context blob: operators
// the compiler folds when shapes are static (Size) run as kernels instead, in the main graph and
// in If and Loop bodies, and shapes computed from run-time dims give correct results for
// several input sizes. (tests/conformance/make_dynamic_suite.py does the same for every
// operator of the ONNX backend suites.)
#include <gtest/gtest.h>

#include <cstring>

#include "e2e/e2e_helpers.h"

namespace epctx::testing {
namespace {

Tensor Floats(std::vector<int64_t> shape) {
  auto t = Tensor::Allocate(DataType::kFloat32, std::move(shape));
  EXPECT_TRUE(t.ok());
  float* p = t->mutable_data_as<float>();
  for (int64_t i = 0; i < t->element_count(); ++i) p[i] = static_cast<float>(i);
  return *t;
}

template <typename T>
Tensor Scalar(DataType type, T value) {
  auto t = Tensor::Allocate(type, {});
  EXPECT_TRUE(t.ok());
  std::memcpy(t->mutable_data(), &value, sizeof value);
  return *t;
}

int64_t Int64Of(const Tensor& t) {
  EXPECT_EQ(t.dtype(), DataType::kInt64);
  EXPECT_EQ(t.element_count(), 1);
  return *t.data_as<int64_t>();
}

constexpr const char* kMainGraphModel = R"(
<ir_version: 8, opset_import: ["" : 17]>
agraph (float[N, M] x) => (int64 n, float[K] flat, float[A, B] halves)
<int64[1] zero = {0}, int64[1] two = {2}, int64[1] minus_one = {-1}>
{
  n = Size(x)
  count = Unsqueeze(n, zero)
  flat = Reshape(x, count)
  shape = Shape(x)
  rows = Gather <axis = 0> (shape, zero)
  twice = Mul(rows, two)
  target = Concat <axis = 0> (twice, minus_one)
  halves = Reshape(x, target)
}
)";

TEST(DynamicShapes, SizeAndComputedShapesInTheMainGraph) {
  TempDir dir;
  auto session = CompileAndLoad(dir, WriteModel(dir, "main", kMainGraphModel));
  ASSERT_NE(session, nullptr);
  for (auto [n, m] : {std::pair<int64_t, int64_t>{2, 6}, {3, 4}, {1, 2}}) {
    auto out = session->Run({{"x", Floats({n, m})}});
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_EQ(Int64Of((*out)[0]), n * m);
    EXPECT_EQ((*out)[1].shape(), (std::vector<int64_t>{n * m}));
    EXPECT_EQ((*out)[2].shape(), (std::vector<int64_t>{2 * n, m / 2}));
    EXPECT_EQ((*out)[2].data_as<float>()[n * m - 1], static_cast<float>(n * m - 1));
  }
}

// The branches count a captured value of run-time shape.
constexpr const char* kIfOfShapesModel = R"(
<ir_version: 8, opset_import: ["" : 17]>
agraph (float[N] x, bool c) => (int64 y)
{
  y = If(c) <
    then_branch = then_graph () => (int64 t) { t = Size(x) },
    else_branch = else_graph () => (int64 e) {
      d = Concat <axis = 0> (x, x)
      e = Size(d)
    }
  >
}
)";

TEST(DynamicShapes, SizeInIfBranches) {
  TempDir dir;
  auto session = CompileAndLoad(dir, WriteModel(dir, "if", kIfOfShapesModel));
  ASSERT_NE(session, nullptr);
  for (int64_t n : {3, 5}) {
    for (bool c : {true, false}) {
      auto out = session->Run({{"x", Floats({n})}, {"c", Scalar<uint8_t>(DataType::kBool, c)}});
      ASSERT_TRUE(out.ok()) << out.status().ToString();
      EXPECT_EQ(Int64Of((*out)[0]), c ? n : 2 * n) << "n=" << n << " c=" << c;
    }
  }
}

constexpr const char* kLoopModel = R"(
<ir_version: 8, opset_import: ["" : 17]>
agraph (float[N, M] x, int64 m) => (int64 total)
<int64 zero = {0}>
{
  total = Loop(m, , zero) <
    body = loop_body (int64 i, bool cond_in, int64 acc) => (bool cond_out, int64 acc_out) {
      cond_out = Identity(cond_in)
      n = Size(x)
      acc_out = Add(acc, n)
    }
  >
}
)";

TEST(DynamicShapes, SizeInALoopBody) {
  TempDir dir;
  auto session = CompileAndLoad(dir, WriteModel(dir, "loop", kLoopModel));
  ASSERT_NE(session, nullptr);
  for (auto [n, m] : {std::pair<int64_t, int64_t>{2, 3}, {4, 1}}) {
    auto out = session->Run({{"x", Floats({n, m})}, {"m", Scalar<int64_t>(DataType::kInt64, 3)}});
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_EQ(Int64Of((*out)[0]), 3 * n * m);
  }
}

}  // namespace
}  // namespace epctx::testing
