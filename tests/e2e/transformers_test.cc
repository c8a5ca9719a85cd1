// The models of tests/models/export_transformers.py: small BERT and GPT-2 variants exported by
// PyTorch with dynamic batch/sequence axes (int64 token ids, attention mask, shape arithmetic,
// LayerNormalization, Erf/Tanh GELUs, causal Where), and the log-mel front end (STFT). Each is
// compiled to a context model + blob and loaded with epctx.fallback=deny, so a model the blob
// cannot serve fails instead of silently running the in-memory path; the in-memory path (the
// original .onnx) is checked once too.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <unordered_map>
#include <vector>

#include "e2e/e2e_helpers.h"

namespace epctx::testing {
namespace {

// Relative to max |reference|, as in torchvision_test.cc: an element's error is the error
// accumulated through the whole network, so it is measured against the output's scale, not
// its own magnitude. The references are PyTorch's float32 outputs (logmel: NumPy in float64);
// float32 engines agree to ~1e-6 of that scale, so 1e-4 leaves room for a different summation
// order but not for a wrong mask, head split or window.
constexpr double kRtol = 1e-4;

struct ExportedModel {
  std::string name;
  std::vector<std::string> inputs;  // graph input names: files <name>.<input>.npy
  std::string output;               // the graph output: file <name>.<output>.npy
};

void PrintTo(const ExportedModel& m, std::ostream* os) {
  *os << m.name;
}

// Compiles <name>.onnx into `dir` and loads the context model with epctx.fallback=deny.
std::unique_ptr<Session> CompileAndLoad(const std::string& name, const TempDir& dir) {
  std::string ctx = dir / (name + "_ctx.onnx");
  auto report = ModelCompiler().CompileToFile(ModelPath(name), ctx);
  EXPECT_TRUE(report.ok()) << report.status().ToString();
  if (!report.ok()) return nullptr;
  EXPECT_TRUE(std::filesystem::exists(report->blob_path));
  SessionOptions options;
  options.AddConfigEntry("epctx.fallback", "deny");
  auto session = Session::Create(ctx, options);
  EXPECT_TRUE(session.ok()) << session.status().ToString();
  if (!session.ok()) return nullptr;
  EXPECT_TRUE((*session)->origin().from_context_blob);
  return std::move(*session);
}

// The first elements of `t` (batch 1, row-major) as a tensor of `shape`: for [1, S, ...] cut
// to [1, S', ...] with S' <= S, those are exactly the first S' rows.
Tensor Prefix(const Tensor& t, std::vector<int64_t> shape) {
  auto out = Tensor::Allocate(t.dtype(), std::move(shape));
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_LE(out->byte_size(), t.byte_size());
  std::memcpy(out->mutable_data(), t.data(), out->byte_size());
  return *out;
}

// `t` ([1, ...]) stacked `times` times along the batch axis.
Tensor RepeatBatch(const Tensor& t, int64_t times) {
  std::vector<int64_t> shape = t.shape();
  shape[0] *= times;
  auto out = Tensor::Allocate(t.dtype(), shape);
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  for (int64_t i = 0; i < times; ++i) {
    std::memcpy(static_cast<char*>(out->mutable_data()) + i * t.byte_size(), t.data(),
                t.byte_size());
  }
  return *out;
}

// `actual` against `reference` with the tolerance above; `what` names the case in messages.
void ExpectClose(const Tensor& actual, const Tensor& reference, const std::string& what) {
  ASSERT_EQ(actual.dtype(), DataType::kFloat32) << what;
  ASSERT_EQ(actual.shape(), reference.shape()) << what;
  Comparison scale = CompareFloat(actual, reference, 0, 0);
  Comparison c = CompareFloat(actual, reference, kRtol, kRtol * scale.max_abs_ref);
  std::cout << "[ " << what << " ] max abs diff " << c.max_abs_diff << ", max |reference| "
            << c.max_abs_ref << ", relative " << c.max_abs_diff / c.max_abs_ref << "\n";
  EXPECT_GT(c.max_abs_ref, 1e-3) << what << ": reference output is degenerate";
  EXPECT_EQ(c.mismatches, 0u) << what << ": of " << c.count << " elements; max abs diff "
                              << c.max_abs_diff;
}

class TransformersTest : public ::testing::TestWithParam<ExportedModel> {
 protected:
  void ExpectMatchesReference(Session& session, const std::string& what) {
    const ExportedModel& m = GetParam();
    std::unordered_map<std::string, Tensor> feeds;
    for (const std::string& input : m.inputs) {
      feeds.emplace(input, LoadNpyOrDie(ModelsDir() + "/" + m.name + "." + input + ".npy"));
    }
    Tensor reference = LoadNpyOrDie(ModelsDir() + "/" + m.name + "." + m.output + ".npy");
    ASSERT_GT(reference.element_count(), 0);
    ASSERT_EQ(session.outputs().size(), 1u);
    EXPECT_EQ(session.outputs()[0].name, m.output);
    auto outputs = session.Run(feeds);
    ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
    ASSERT_EQ(outputs->size(), 1u);
    ExpectClose((*outputs)[0], reference, m.name + " / " + what);
  }
};

TEST_P(TransformersTest, ContextModelMatchesReference) {
  TempDir dir;
  std::unique_ptr<Session> session = CompileAndLoad(GetParam().name, dir);
  ASSERT_NE(session, nullptr);
  ExpectMatchesReference(*session, "context model");
}

TEST_P(TransformersTest, OriginalModelCompiledInMemoryMatchesReference) {
  auto session = Session::Create(ModelPath(GetParam().name));
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  EXPECT_FALSE((*session)->origin().from_context_blob);
  ExpectMatchesReference(**session, "original model, in memory");
}

INSTANTIATE_TEST_SUITE_P(Models, TransformersTest,
                         ::testing::Values(ExportedModel{"bert_tiny",
                                                         {"input_ids", "attention_mask"},
                                                         "last_hidden_state"},
                                           ExportedModel{"gpt2_tiny", {"input_ids"}, "logits"}),
                         [](const ::testing::TestParamInfo<ExportedModel>& info) {
                           return info.param.name;
                         });

// STFT of the 16400 reflect-padded samples, frame length 400 and step 160: 101 frames. (onnx
// 1.12's own STFT shape inference said 102, and the import refused the model until it replaced
// that inference; see src/compile/onnx_shape_fixes.h.)
INSTANTIATE_TEST_SUITE_P(Logmel, TransformersTest,
                         ::testing::Values(ExportedModel{"logmel", {"audio"}, "log_mel"}),
                         [](const ::testing::TestParamInfo<ExportedModel>& info) {
                           return info.param.name;
                         });

// The sequence axis is dynamic: GPT-2 is causal, so the logits of the first 8 tokens alone are
// the first 8 rows of the logits of all 16.
TEST(TransformersDynamicShapeTest, Gpt2TinyShorterSequenceGivesReferencePrefix) {
  TempDir dir;
  std::unique_ptr<Session> session = CompileAndLoad("gpt2_tiny", dir);
  ASSERT_NE(session, nullptr);
  Tensor ids = LoadNpyOrDie(ModelsDir() + "/gpt2_tiny.input_ids.npy");
  Tensor logits = LoadNpyOrDie(ModelsDir() + "/gpt2_tiny.logits.npy");
  ASSERT_EQ(ids.shape(), (std::vector<int64_t>{1, 16}));
  ASSERT_EQ(logits.shape(), (std::vector<int64_t>{1, 16, 500}));
  auto outputs = session->Run({{"input_ids", Prefix(ids, {1, 8})}});
  ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
  ExpectClose((*outputs)[0], Prefix(logits, {1, 8, 500}), "gpt2_tiny, 8 of 16 tokens");
}

// The batch axis is dynamic: a batch of two copies gives the reference twice.
TEST(TransformersDynamicShapeTest, BertTinyBatchOfTwoRepeatsReference) {
  TempDir dir;
  std::unique_ptr<Session> session = CompileAndLoad("bert_tiny", dir);
  ASSERT_NE(session, nullptr);
  Tensor ids = LoadNpyOrDie(ModelsDir() + "/bert_tiny.input_ids.npy");
  Tensor mask = LoadNpyOrDie(ModelsDir() + "/bert_tiny.attention_mask.npy");
  Tensor hidden = LoadNpyOrDie(ModelsDir() + "/bert_tiny.last_hidden_state.npy");
  ASSERT_EQ(hidden.shape(), (std::vector<int64_t>{1, 16, 128}));
  auto outputs =
      session->Run({{"input_ids", RepeatBatch(ids, 2)}, {"attention_mask", RepeatBatch(mask, 2)}});
  ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
  ExpectClose((*outputs)[0], RepeatBatch(hidden, 2), "bert_tiny, batch of 2");
}

// The padded positions matter: with the mask all ones the output moves away from the reference
// by far more than the tolerance (the fixture masks its last 4 positions), so an engine that
// ignored the mask could not pass the tests above.
TEST(TransformersDynamicShapeTest, BertTinyMaskChangesOutput) {
  TempDir dir;
  std::unique_ptr<Session> session = CompileAndLoad("bert_tiny", dir);
  ASSERT_NE(session, nullptr);
  Tensor ids = LoadNpyOrDie(ModelsDir() + "/bert_tiny.input_ids.npy");
  Tensor mask = LoadNpyOrDie(ModelsDir() + "/bert_tiny.attention_mask.npy");
  Tensor hidden = LoadNpyOrDie(ModelsDir() + "/bert_tiny.last_hidden_state.npy");
  ASSERT_EQ(mask.dtype(), DataType::kInt64);
  ASSERT_EQ(mask.data_as<int64_t>()[15], 0) << "the fixture's last position should be padding";
  Tensor ones = Prefix(mask, mask.shape());
  for (int64_t i = 0; i < ones.element_count(); ++i) ones.mutable_data_as<int64_t>()[i] = 1;
  auto outputs = session->Run({{"input_ids", ids}, {"attention_mask", ones}});
  ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
  ASSERT_EQ((*outputs)[0].shape(), hidden.shape());
  Comparison c = CompareFloat((*outputs)[0], hidden, 0, 0);
  EXPECT_GT(c.max_abs_diff, 10 * kRtol * c.max_abs_ref)
      << "unmasking the padding left the output (nearly) unchanged";
}

}  // namespace
}  // namespace epctx::testing
