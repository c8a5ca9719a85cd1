// Session::Run into outputs the caller binds (ONNX Runtime's IOBinding): the values equal a
// normal run's and live in the caller's memory; what cannot be bound is refused with a message
// naming the output and both shapes; and an output bound to an input's own memory is written
// there only when no node can read that input afterwards (otherwise it is copied in after the
// last node, counted in the profile's output_bytes_copied).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <vector>

#include "e2e/e2e_helpers.h"

namespace epctx::testing {
namespace {

using ::testing::HasSubstr;

// y = Relu(x), z = y + x, both [2,3].
constexpr const char* kTwoOutputs = R"(
<ir_version: 8, opset_import: ["" : 17]>
two (float[2,3] x) => (float[2,3] y, float[2,3] z) {
  y = Relu(x)
  z = Add(y, x)
}
)";

// n = Neg(x) (x's last reader), y = Relu(n): y may be written over x's memory.
constexpr const char* kInputReadFirst = R"(
<ir_version: 8, opset_import: ["" : 17]>
first (float[2,3] x) => (float[2,3] y) {
  n = Neg(x)
  y = Relu(n)
}
)";

// A symbolic batch: the node decides the shape.
constexpr const char* kSymbolic = R"(
<ir_version: 8, opset_import: ["" : 17]>
symbolic (float[batch,3] x) => (float[batch,3] y) {
  y = Relu(x)
}
)";

const float kX[6] = {-1.5f, 2.0f, -0.25f, 3.0f, 0.0f, -4.0f};

Tensor ViewOf(std::vector<float>& values, std::vector<int64_t> shape) {
  return Tensor::View(DataType::kFloat32, std::move(shape), values.data(), nullptr);
}

std::vector<float> Values(const Tensor& t) {
  return std::vector<float>(t.data_as<float>(), t.data_as<float>() + t.element_count());
}

std::vector<uint64_t> BytesCopiedPerRun(Session& session) {
  auto path = session.EndProfiling();
  EXPECT_TRUE(path.ok() && !path->empty());
  std::ifstream in(*path);
  nlohmann::json events = nlohmann::json::parse(in, nullptr, false);
  std::vector<uint64_t> copied;
  for (const auto& e : events) {
    if (e["name"] == "model_run") {
      copied.push_back(std::stoull(e["args"]["output_bytes_copied"].get<std::string>()));
    }
  }
  return copied;
}

class BoundOutputs : public ::testing::Test {
 protected:
  std::unique_ptr<Session> Load(const char* text, bool profile = false) {
    SessionOptions options;
    if (profile) options.AddConfigEntry("epctx.profile_file", dir_ / "profile.json");
    return CompileAndLoad(dir_, WriteModel(dir_, "model", text), options);
  }
  // What Run returns for x, by name.
  std::vector<std::vector<float>> Reference(Session& session, std::vector<float> x) {
    auto out = session.Run({{"x", ViewOf(x, {2, 3})}});
    EXPECT_TRUE(out.ok()) << out.status().ToString();
    std::vector<std::vector<float>> values;
    if (out.ok()) {
      for (const Tensor& t : *out) values.push_back(Values(t));
    }
    return values;
  }
  std::string RunError(Session& session, std::unordered_map<std::string, Tensor> outputs) {
    std::vector<float> x(kX, kX + 6);
    Status s = session.Run(RunOptions(), {{"x", ViewOf(x, {2, 3})}}, outputs);
    EXPECT_FALSE(s.ok());
    return s.ToString();
  }
  TempDir dir_;
};

TEST_F(BoundOutputs, WritesIntoTheCallersMemory) {
  auto session = Load(kTwoOutputs, /*profile=*/true);
  ASSERT_NE(session, nullptr);
  std::vector<float> x(kX, kX + 6);
  const auto expected = Reference(*session, x);
  ASSERT_EQ(expected.size(), 2u);
  ASSERT_NE(expected[0], std::vector<float>(6, 0.0f)) << "the fixture computes nothing";
  std::vector<float> y(6, -7.0f), z(6, -7.0f);
  std::unordered_map<std::string, Tensor> outputs = {{"y", ViewOf(y, {2, 3})},
                                                     {"z", ViewOf(z, {2, 3})}};
  for (int run = 0; run < 2; ++run) {
    Status s = session->Run(RunOptions(), {{"x", ViewOf(x, {2, 3})}}, outputs);
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(y, expected[0]);
    EXPECT_EQ(z, expected[1]);
    // The map still holds the caller's tensors.
    EXPECT_EQ(outputs["y"].data(), y.data());
    EXPECT_EQ(outputs["z"].data(), z.data());
  }
  // Nothing was copied after the last node: both were computed in place.
  EXPECT_EQ(BytesCopiedPerRun(*session), (std::vector<uint64_t>{0, 0, 0}));
}

TEST_F(BoundOutputs, EmptyTensorsAreAllocatedAndUnnamedOutputsLeftOut) {
  auto session = Load(kTwoOutputs);
  ASSERT_NE(session, nullptr);
  std::vector<float> x(kX, kX + 6);
  const auto expected = Reference(*session, x);
  std::vector<float> y(6, -7.0f);
  std::unordered_map<std::string, Tensor> outputs = {{"y", ViewOf(y, {2, 3})}, {"z", Tensor()}};
  Status s = session->Run(RunOptions(), {{"x", ViewOf(x, {2, 3})}}, outputs);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(y, expected[0]);
  ASSERT_TRUE(outputs["z"].is_tensor());
  EXPECT_EQ(outputs["z"].shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(Values(outputs["z"]), expected[1]);
  // Only z, allocated; y not asked for.
  std::unordered_map<std::string, Tensor> only_z = {{"z", Tensor()}};
  s = session->Run(RunOptions(), {{"x", ViewOf(x, {2, 3})}}, only_z);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(only_z.size(), 1u);
  EXPECT_EQ(Values(only_z["z"]), expected[1]);
}

TEST_F(BoundOutputs, RefusesWhatCannotBeBound) {
  auto session = Load(kTwoOutputs);
  ASSERT_NE(session, nullptr);
  std::vector<float> a(6), b(12);
  std::vector<int64_t> ints(6);
  EXPECT_EQ(RunError(*session, {{"w", Tensor()}}),
            "InvalidArgument: unknown output 'w'; the model's outputs are: y (float32 [2,3]), z "
            "(float32 [2,3])");
  EXPECT_EQ(
      RunError(*session, {{"y", Tensor::View(DataType::kInt64, {2, 3}, ints.data(), nullptr)}}),
      "InvalidArgument: output 'y' has type int64, expected float32");
  EXPECT_EQ(RunError(*session, {{"y", ViewOf(a, {3, 2})}}),
            "InvalidArgument: output 'y' has shape [3,2], expected [2,3] (dims 0 and 1 differ)");
  EXPECT_EQ(RunError(*session, {{"y", ViewOf(a, {6})}}),
            "InvalidArgument: output 'y' has rank 1 (shape [6]), expected rank 2 (shape [2,3])");
  EXPECT_EQ(
      RunError(*session, {{"y", ViewOf(b, {2, 3})},
                          {"z", Tensor::View(DataType::kFloat32, {2, 3}, b.data() + 3, nullptr)}}),
      "InvalidArgument: model 'model': outputs 'y' and 'z' are bound to overlapping memory");
  EXPECT_EQ(RunError(*session, {{"y", Tensor::Sequence(DataType::kFloat32, {})}}),
            "InvalidArgument: output 'y' is bound to a sequence of float32; only tensors of a "
            "numeric type can be bound (bind an empty Tensor to have the run allocate it)");
  EXPECT_EQ(RunError(*session, {{"y", Tensor::View(DataType::kFloat32, {2, 3}, nullptr, nullptr)}}),
            "InvalidArgument: output 'y' is bound to a tensor without memory");
}

TEST_F(BoundOutputs, ShapeTheNodeMakesMustBeTheBoundShape) {
  auto session = Load(kSymbolic);
  ASSERT_NE(session, nullptr);
  std::vector<float> x(kX, kX + 6), y(12);
  std::unordered_map<std::string, Tensor> outputs = {{"y", ViewOf(y, {4, 3})}};
  Status s = session->Run(RunOptions(), {{"x", ViewOf(x, {2, 3})}}, outputs);
  EXPECT_EQ(s.ToString(),
            "InvalidArgument: model 'model': Relu node 'Relu_0': output 'y' is bound to float32 "
            "[4,3], but the node makes float32 [2,3]");
  outputs = {{"y", ViewOf(y, {2, 3})}};
  s = session->Run(RunOptions(), {{"x", ViewOf(x, {2, 3})}}, outputs);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(std::vector<float>(y.begin(), y.begin() + 6),
            (std::vector<float>{0.0f, 2.0f, 0.0f, 3.0f, 0.0f, 0.0f}));
}

// y bound over x, which z = y + x reads after Relu wrote y: Relu computes y apart, and y is
// copied over x only after z has read the old x.
TEST_F(BoundOutputs, OutputOverAnInputReadLaterIsCopiedAfterTheLastNode) {
  auto session = Load(kTwoOutputs, /*profile=*/true);
  ASSERT_NE(session, nullptr);
  const auto expected = Reference(*session, std::vector<float>(kX, kX + 6));
  std::vector<float> x(kX, kX + 6);
  std::unordered_map<std::string, Tensor> outputs = {{"y", ViewOf(x, {2, 3})}, {"z", Tensor()}};
  Status s = session->Run(RunOptions(), {{"x", ViewOf(x, {2, 3})}}, outputs);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(x, expected[0]);                     // y, in x's memory
  EXPECT_EQ(Values(outputs["z"]), expected[1]);  // from the old x
  EXPECT_EQ(BytesCopiedPerRun(*session), (std::vector<uint64_t>{0, 24}));
}

// An output over an input the node itself reads, by a kernel that does not write in place
// (Relu): copied after the last node too.
TEST_F(BoundOutputs, OutputOverTheNodesOwnInputIsCopiedUnlessItsKernelWritesInPlace) {
  auto session = Load(kSymbolic, /*profile=*/true);
  ASSERT_NE(session, nullptr);
  std::vector<float> x(kX, kX + 6);
  std::unordered_map<std::string, Tensor> outputs = {{"y", ViewOf(x, {2, 3})}};
  Status s = session->Run(RunOptions(), {{"x", ViewOf(x, {2, 3})}}, outputs);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(x, (std::vector<float>{0.0f, 2.0f, 0.0f, 3.0f, 0.0f, 0.0f}));
  EXPECT_EQ(BytesCopiedPerRun(*session), (std::vector<uint64_t>{24}));
}

// x's only reader runs before the node making y: y is written over x directly.
TEST_F(BoundOutputs, OutputOverAnInputNoLaterNodeReadsIsWrittenInPlace) {
  auto session = Load(kInputReadFirst, /*profile=*/true);
  ASSERT_NE(session, nullptr);
  std::vector<float> x(kX, kX + 6);
  std::unordered_map<std::string, Tensor> outputs = {{"y", ViewOf(x, {2, 3})}};
  Status s = session->Run(RunOptions(), {{"x", ViewOf(x, {2, 3})}}, outputs);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(x, (std::vector<float>{1.5f, 0.0f, 0.25f, 0.0f, 0.0f, 4.0f}));
  EXPECT_EQ(outputs["y"].data(), x.data());
  EXPECT_EQ(BytesCopiedPerRun(*session), (std::vector<uint64_t>{0}));
}

}  // namespace
}  // namespace epctx::testing
