// Session::Run into outputs the caller binds (ONNX Runtime's IOBinding): the values equal a
// normal run's and live in the caller's memory; what cannot be bound is refused with a message
// naming the output and both shapes; and an output bound to an input's own memory is written
// there only when no node can read that input afterwards (otherwise it is copied in after the
// last node, counted in the profile's output_bytes_copied). A decode loop with
// GroupQueryAttention's shared past/present buffer updates it in place and copies nothing.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
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

std::vector<float> FloatValues(const Tensor& t) {
  return std::vector<float>(t.data_as<float>(), t.data_as<float>() + t.element_count());
}

// The largest absolute difference of two float32 tensors of one shape (infinity otherwise).
double Compare(const Tensor& a, const Tensor& b) {
  if (a.dtype() != DataType::kFloat32 || b.dtype() != DataType::kFloat32 ||
      a.shape() != b.shape()) {
    return INFINITY;
  }
  double diff = 0;
  for (int64_t i = 0; i < a.element_count(); ++i) {
    diff = std::max(diff, std::abs(static_cast<double>(a.data_as<float>()[i]) -
                                   static_cast<double>(b.data_as<float>()[i])));
  }
  return diff;
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
      for (const Tensor& t : *out) values.push_back(FloatValues(t));
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
  EXPECT_EQ(FloatValues(outputs["z"]), expected[1]);
  // Only z, allocated; y not asked for.
  std::unordered_map<std::string, Tensor> only_z = {{"z", Tensor()}};
  s = session->Run(RunOptions(), {{"x", ViewOf(x, {2, 3})}}, only_z);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(only_z.size(), 1u);
  EXPECT_EQ(FloatValues(only_z["z"]), expected[1]);
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
  EXPECT_EQ(x, expected[0]);                          // y, in x's memory
  EXPECT_EQ(FloatValues(outputs["z"]), expected[1]);  // from the old x
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

// ---- A decode loop with GroupQueryAttention's shared past/present buffer ----

constexpr int64_t kHeads = 4, kKvHeads = 2, kHeadSize = 16, kMaxLength = 12;

// `layers` GroupQueryAttention nodes in a chain (each one's output the next one's query),
// sharing key and value, each with its past and present; outputs: output, then present_key_i
// and present_value_i.
std::string GqaDecoder(int layers) {
  std::string inputs = fmt::format(
      "float[1,1,{}] query, float[1,1,{}] key, float[1,1,{}] value, int32[1] seqlens_k, int32 "
      "total_sequence_length",
      kHeads * kHeadSize, kKvHeads * kHeadSize, kKvHeads * kHeadSize);
  std::string outputs = fmt::format("float[1,1,{}] output", kHeads * kHeadSize);
  std::string nodes;
  std::string query = "query";
  for (int i = 0; i < layers; ++i) {
    for (const char* kind : {"key", "value"}) {
      inputs += fmt::format(", float[1,{},past,{}] past_{}_{}", kKvHeads, kHeadSize, kind, i);
      outputs += fmt::format(", float[1,{},total,{}] present_{}_{}", kKvHeads, kHeadSize, kind, i);
    }
    const std::string out = i == layers - 1 ? "output" : fmt::format("hidden_{}", i);
    nodes += fmt::format(
        "  {0}, present_key_{1}, present_value_{1} = com.microsoft.GroupQueryAttention "
        "<num_heads = {2}, kv_num_heads = {3}> ({4}, key, value, past_key_{1}, past_value_{1}, "
        "seqlens_k, total_sequence_length)\n",
        out, i, kHeads, kKvHeads, query);
    query = out;
  }
  return fmt::format(
      "<ir_version: 8, opset_import: [\"\" : 17, \"com.microsoft\" : 1]>\ndecoder ({}) => ({}) "
      "{{\n{}}}\n",
      inputs, outputs, nodes);
}

struct Step {
  std::vector<float> query, key, value;
  std::vector<int32_t> seqlens, total;
};

std::vector<Step> RandomSteps(int steps) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<Step> out(static_cast<size_t>(steps));
  for (int t = 0; t < steps; ++t) {
    Step& s = out[static_cast<size_t>(t)];
    s.query.resize(kHeads * kHeadSize);
    s.key.resize(kKvHeads * kHeadSize);
    s.value.resize(kKvHeads * kHeadSize);
    for (auto* v : {&s.query, &s.key, &s.value}) {
      for (float& x : *v) x = u(rng);
    }
    s.seqlens = {t};
    s.total = {t + 1};
  }
  return out;
}

std::unordered_map<std::string, Tensor> StepInputs(Step& s) {
  return {{"query", ViewOf(s.query, {1, 1, kHeads * kHeadSize})},
          {"key", ViewOf(s.key, {1, 1, kKvHeads * kHeadSize})},
          {"value", ViewOf(s.value, {1, 1, kKvHeads * kHeadSize})},
          {"seqlens_k", Tensor::View(DataType::kInt32, {1}, s.seqlens.data(), nullptr)},
          {"total_sequence_length", Tensor::View(DataType::kInt32, {1}, s.total.data(), nullptr)}};
}

// The classic loop: every run's presents (allocated by the run) are the next run's pasts.
// Returns each step's outputs in model order.
std::vector<std::vector<Tensor>> DecodeUnshared(Session& session, std::vector<Step>& steps,
                                                int layers) {
  std::vector<Tensor> pasts;
  for (int i = 0; i < 2 * layers; ++i) {
    pasts.push_back(*Tensor::Allocate(DataType::kFloat32, {1, kKvHeads, 0, kHeadSize}));
  }
  std::vector<std::vector<Tensor>> all;
  for (Step& s : steps) {
    auto inputs = StepInputs(s);
    for (int i = 0; i < layers; ++i) {
      inputs[fmt::format("past_key_{}", i)] = pasts[static_cast<size_t>(2 * i)];
      inputs[fmt::format("past_value_{}", i)] = pasts[static_cast<size_t>(2 * i + 1)];
    }
    auto out = session.Run(inputs);
    EXPECT_TRUE(out.ok()) << out.status().ToString();
    if (!out.ok()) break;
    pasts.assign(out->begin() + 1, out->end());
    all.push_back(std::move(*out));
  }
  return all;
}

constexpr float kUntouched = -777.0f;

TEST_F(BoundOutputs, SharedKvBufferIsUpdatedInPlaceAndNothingIsCopied) {
  constexpr int kLayers = 2, kSteps = 9;
  auto session = Load(GqaDecoder(kLayers).c_str(), /*profile=*/true);
  ASSERT_NE(session, nullptr);
  std::vector<Step> steps = RandomSteps(kSteps);
  const auto unshared = DecodeUnshared(*session, steps, kLayers);
  ASSERT_EQ(unshared.size(), static_cast<size_t>(kSteps));

  // One buffer of kMaxLength rows per layer and kind, bound as both past and present.
  const std::vector<int64_t> cache = {1, kKvHeads, kMaxLength, kHeadSize};
  std::vector<std::vector<float>> buffers(
      2 * kLayers, std::vector<float>(kKvHeads * kMaxLength * kHeadSize, kUntouched));
  double max_diff = 0, max_out = 0;
  for (int t = 0; t < kSteps; ++t) {
    auto inputs = StepInputs(steps[static_cast<size_t>(t)]);
    std::unordered_map<std::string, Tensor> outputs = {{"output", Tensor()}};
    for (int i = 0; i < 2 * kLayers; ++i) {
      const std::string name = fmt::format("{}_{}", i % 2 == 0 ? "key" : "value", i / 2);
      inputs["past_" + name] = ViewOf(buffers[static_cast<size_t>(i)], cache);
      outputs["present_" + name] = ViewOf(buffers[static_cast<size_t>(i)], cache);
    }
    Status s = session->Run(RunOptions(), inputs, outputs);
    ASSERT_TRUE(s.ok()) << "step " << t << ": " << s.ToString();
    const Tensor& want = unshared[static_cast<size_t>(t)][0];
    for (int64_t e = 0; e < want.element_count(); ++e) {
      const double d = std::abs(outputs["output"].data_as<float>()[e] - want.data_as<float>()[e]);
      max_diff = std::max(max_diff, d);
      max_out = std::max(max_out, std::abs(static_cast<double>(want.data_as<float>()[e])));
    }
    // Each buffer holds the rows so far, as the unshared present does, and the rows after them
    // were never written (the kernel wrote only the new row: no zero-fill, no copy).
    for (int i = 0; i < 2 * kLayers; ++i) {
      EXPECT_EQ(outputs[fmt::format("present_{}_{}", i % 2 == 0 ? "key" : "value", i / 2)].data(),
                buffers[static_cast<size_t>(i)].data());
      const Tensor& present = unshared[static_cast<size_t>(t)][static_cast<size_t>(1 + i)];
      ASSERT_EQ(present.shape(), (std::vector<int64_t>{1, kKvHeads, t + 1, kHeadSize}));
      for (int64_t h = 0; h < kKvHeads; ++h) {
        const float* row = buffers[static_cast<size_t>(i)].data() + h * kMaxLength * kHeadSize;
        const float* rows_so_far = present.data_as<float>() + h * (t + 1) * kHeadSize;
        EXPECT_TRUE(std::equal(row, row + (t + 1) * kHeadSize, rows_so_far))
            << "step " << t << ", cache " << i << ", head " << h;
        EXPECT_TRUE(std::all_of(row + (t + 1) * kHeadSize, row + kMaxLength * kHeadSize,
                                [](float x) { return x == kUntouched; }))
            << "step " << t << ", cache " << i << ", head " << h;
      }
    }
  }
  EXPECT_GT(max_out, 0.1) << "the fixture computes nothing";
  EXPECT_LE(max_diff, 1e-6) << "the shared buffer's outputs differ from the unshared run's";
  const std::vector<uint64_t> copied = BytesCopiedPerRun(*session);
  EXPECT_EQ(copied, std::vector<uint64_t>(2 * kSteps, 0));
}

// Only the key cache bound over its past: GroupQueryAttention writes in place only with both,
// so its present_key is computed apart and copied into the buffer after the run (its zeros
// after the rows so far included).
TEST_F(BoundOutputs, OneKvBufferAloneIsCopiedAfterTheRun) {
  constexpr int kSteps = 5;
  auto session = Load(GqaDecoder(1).c_str(), /*profile=*/true);
  ASSERT_NE(session, nullptr);
  std::vector<Step> steps = RandomSteps(kSteps);
  const auto unshared = DecodeUnshared(*session, steps, 1);
  ASSERT_EQ(unshared.size(), static_cast<size_t>(kSteps));
  const std::vector<int64_t> cache = {1, kKvHeads, kMaxLength, kHeadSize};
  std::vector<float> keys(kKvHeads * kMaxLength * kHeadSize, kUntouched);
  Tensor past_value = *Tensor::Allocate(DataType::kFloat32, cache);
  std::fill_n(past_value.mutable_data_as<float>(), past_value.element_count(), 0.0f);
  for (int t = 0; t < kSteps; ++t) {
    auto inputs = StepInputs(steps[static_cast<size_t>(t)]);
    inputs["past_key_0"] = ViewOf(keys, cache);
    inputs["past_value_0"] = past_value;
    std::unordered_map<std::string, Tensor> outputs = {{"output", Tensor()},
                                                       {"present_key_0", ViewOf(keys, cache)},
                                                       {"present_value_0", Tensor()}};
    Status s = session->Run(RunOptions(), inputs, outputs);
    ASSERT_TRUE(s.ok()) << "step " << t << ": " << s.ToString();
    EXPECT_LE(Compare(outputs["output"], unshared[static_cast<size_t>(t)][0]), 1e-6);
    past_value = outputs["present_value_0"];
    for (int64_t h = 0; h < kKvHeads; ++h) {
      const float* row = keys.data() + h * kMaxLength * kHeadSize;
      EXPECT_TRUE(std::all_of(row + (t + 1) * kHeadSize, row + kMaxLength * kHeadSize,
                              [](float x) { return x == 0.0f; }))
          << "step " << t << ": the present computed apart has zeros after its rows";
    }
  }
  const uint64_t buffer_bytes = sizeof(float) * kKvHeads * kMaxLength * kHeadSize;
  std::vector<uint64_t> expected(kSteps, 0);
  expected.resize(2 * kSteps, buffer_bytes);
  EXPECT_EQ(BytesCopiedPerRun(*session), expected);
}

}  // namespace
}  // namespace epctx::testing
