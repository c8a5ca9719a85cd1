// Several models compiled into one blob: identical weights stored once, every context model
// serves its own outputs, and one process maps the shared blob once.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fstream>

#include "e2e/e2e_helpers.h"

namespace epctx::testing {
namespace {

// resnet18_cls and resnet18_reg share one seeded ResNet-18 trunk; their heads differ.
constexpr uint64_t kRegHeadBytes = (512 * 4 + 4) * sizeof(float);

// Resident set size of this process (VmRSS), for the figures the test prints.
uint64_t RssBytes() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stoull(line.substr(6)) * 1024;
  }
  return 0;
}

void ExpectReference(Session& session, const std::string& model) {
  Tensor input = LoadNpyOrDie(ModelsDir() + "/" + model + ".input.npy");
  Tensor reference = LoadNpyOrDie(ModelsDir() + "/" + model + ".output.npy");
  auto out = session.Run({{"input", input}});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_EQ((*out)[0].shape(), reference.shape());
  Comparison scale = CompareFloat((*out)[0], reference, 0, 0);
  Comparison c = CompareFloat((*out)[0], reference, 1e-4, 1e-4 * scale.max_abs_ref);
  EXPECT_EQ(c.mismatches, 0u) << model << ": max abs diff " << c.max_abs_diff;
}

TEST(WeightSharing, TrunkWithTwoHeadsIsStoredOnce) {
  TempDir dir;
  std::string cls = ModelPath("resnet18_cls");
  std::string reg = ModelPath("resnet18_reg");
  auto alone_cls = ModelCompiler().CompileToFile(cls, dir / "alone/resnet18_cls_ctx.onnx");
  ASSERT_FALSE(alone_cls.ok()) << "a missing output directory must be an error";
  std::filesystem::create_directories(dir / "alone");
  alone_cls = ModelCompiler().CompileToFile(cls, dir / "alone/resnet18_cls_ctx.onnx");
  auto alone_reg = ModelCompiler().CompileToFile(reg, dir / "alone/resnet18_reg_ctx.onnx");
  ASSERT_TRUE(alone_cls.ok() && alone_reg.ok());

  auto shared = ModelCompiler().CompileModels({cls, reg}, dir / "out");
  ASSERT_TRUE(shared.ok()) << shared.status().ToString();
  ASSERT_TRUE(shared->written);
  ASSERT_EQ(shared->models.size(), 2u);
  EXPECT_EQ(shared->models[0].context_model_path, dir / "out/resnet18_cls_ctx.onnx");
  EXPECT_EQ(shared->models[1].context_model_path, dir / "out/resnet18_reg_ctx.onnx");
  EXPECT_EQ(shared->blob_path, dir / "out/resnet18_cls_shared.epctx");
  EXPECT_GT(shared->dedup_hits, 0u);

  uint64_t trunk_and_heads = alone_cls->weight_bytes + kRegHeadBytes;
  std::cout << "separate blobs " << alone_cls->blob_size << " + " << alone_reg->blob_size
            << " bytes; shared blob " << shared->blob_size << " bytes; shared weight bytes "
            << shared->weight_bytes << " (trunk + both heads " << trunk_and_heads << ")\n";
  EXPECT_LE(static_cast<double>(shared->weight_bytes), 1.02 * static_cast<double>(trunk_and_heads));
  EXPECT_LT(static_cast<double>(shared->blob_size),
            0.6 * static_cast<double>(alone_cls->blob_size + alone_reg->blob_size));

  size_t before = MappedBlobCount();
  uint64_t rss0 = RssBytes();
  auto a = Session::Create(shared->models[0].context_model_path);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ExpectReference(**a, "resnet18_cls");
  uint64_t rss1 = RssBytes();
  auto b = Session::Create(shared->models[1].context_model_path);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  ExpectReference(**b, "resnet18_reg");
  uint64_t rss2 = RssBytes();
  std::cout << "RSS growth: first session + inference " << (rss1 - rss0) / 1024
            << " KiB, second model's session + inference " << (rss2 - rss1) / 1024 << " KiB\n";
  EXPECT_TRUE((*a)->origin().from_context_blob);
  EXPECT_TRUE((*b)->origin().from_context_blob);
  EXPECT_EQ(CountMappings(shared->blob_path), 1);
  EXPECT_EQ(MappedBlobCount(), before + 1);
}

TEST(WeightSharing, LoadingOneContextModelAloneWorks) {
  TempDir dir;
  auto shared = ModelCompiler().CompileModels(
      {ModelPath("resnet18_cls"), ModelPath("resnet18_reg")}, dir / "out");
  ASSERT_TRUE(shared.ok() && shared->written);
  auto b = Session::Create(shared->models[1].context_model_path);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_TRUE((*b)->origin().from_context_blob);
  ExpectReference(**b, "resnet18_reg");
}

TEST(WeightSharing, SameFileNamesGetSuffixesAndAWarning) {
  TempDir dir;
  std::filesystem::create_directories(dir.path() / "a");
  std::filesystem::create_directories(dir.path() / "b");
  std::string a = CopyModelInto(ModelPath("mobilenet_v2"), dir.path() / "a");
  std::string b = CopyModelInto(ModelPath("mobilenet_v2"), dir.path() / "b");
  auto report = ModelCompiler().CompileModels({a, b}, dir / "out");
  ASSERT_TRUE(report.ok() && report->written);
  EXPECT_EQ(report->models[0].context_model_path, dir / "out/mobilenet_v2_ctx.onnx");
  EXPECT_EQ(report->models[1].context_model_path, dir / "out/mobilenet_v2_1_ctx.onnx");
  // The originals lie outside out/: each context model says so.
  ASSERT_EQ(report->models[0].warnings.size(), 1u);
  EXPECT_EQ(report->models[0].warnings[0],
            fmt::format("'{}' names the original model '../a/mobilenet_v2.onnx', outside its "
                        "folder: loads read it only with epctx.allow_external_paths=1",
                        dir / "out/mobilenet_v2_ctx.onnx"));
  ASSERT_EQ(report->models[1].warnings.size(), 2u);
  EXPECT_EQ(report->models[1].warnings[0], "another model is also named 'mobilenet_v2': '" + b +
                                               "' is written as '" +
                                               (dir / "out/mobilenet_v2_1_ctx.onnx") + "'");
  // Identical models: every weight of the second is a dedup hit.
  EXPECT_EQ(report->dedup_hits, report->weight_count);
}

TEST(WeightSharing, OneFailingModelIsReportedAndNothingIsWritten) {
  TempDir dir;
  std::string bad = dir / "broken.onnx";
  { std::ofstream(bad) << "broken"; }
  auto report = ModelCompiler().CompileModels({ModelPath("mobilenet_v2"), bad}, dir / "out");
  ASSERT_TRUE(report.ok());
  EXPECT_FALSE(report->written);
  ASSERT_EQ(report->models.size(), 2u);
  EXPECT_TRUE(report->models[0].compiled);
  EXPECT_FALSE(report->models[1].compiled);
  EXPECT_NE(report->models[1].error.find("not an ONNX model"), std::string::npos);
  EXPECT_TRUE(std::filesystem::is_empty(dir.path() / "out"));
}

TEST(WeightSharing, ShareOptionsAcrossCallsGiveTheSameBlob) {
  TempDir dir;
  std::string cls = ModelPath("resnet18_cls");
  std::string reg = ModelPath("resnet18_reg");
  auto one_command = ModelCompiler().CompileModels({cls, reg}, dir / "cmd");
  ASSERT_TRUE(one_command.ok() && one_command->written);

  std::filesystem::create_directories(dir.path() / "calls");
  SessionOptions share;
  share.AddConfigEntry("ep.share_ep_contexts", "1");
  auto first = ModelCompiler(share).CompileToFile(cls, dir / "calls/resnet18_cls_ctx.onnx");
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_TRUE(first->blob_pending);
  SessionOptions stop = share;
  stop.AddConfigEntry("ep.stop_share_ep_contexts", "1");
  auto last = ModelCompiler(stop).CompileToFile(reg, dir / "calls/resnet18_reg_ctx.onnx");
  ASSERT_TRUE(last.ok()) << last.status().ToString();
  EXPECT_FALSE(last->blob_pending);
  EXPECT_EQ(last->blob_path, dir / "calls/resnet18_cls_shared.epctx");

  EXPECT_EQ(ReadFileBytes(last->blob_path), ReadFileBytes(one_command->blob_path));
  auto b = Session::Create(dir / "calls/resnet18_reg_ctx.onnx");
  ASSERT_TRUE(b.ok());
  EXPECT_TRUE((*b)->origin().from_context_blob);
  ExpectReference(**b, "resnet18_reg");
}

// The context models of a shared group are rewritten with the blob's identity once the last
// model writes the blob; bytes already handed back could not be, so sharing needs files.
TEST(WeightSharing, SharingRefusesCompilingToBytes) {
  TempDir dir;
  SessionOptions share;
  share.AddConfigEntry("ep.share_ep_contexts", "1");
  share.AddConfigEntry("ep.context_file_path", dir / "resnet18_cls_ctx.onnx");
  auto bytes = ModelCompiler(share).CompileToBytes(ModelPath("resnet18_cls"));
  ASSERT_FALSE(bytes.ok());
  EXPECT_EQ(bytes.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bytes.status().message(),
            "ep.share_ep_contexts needs the context models written to files: each records the "
            "shared blob's identity, known only when the last model (ep.stop_share_ep_contexts) "
            "writes the blob, and is then rewritten");
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

}  // namespace
}  // namespace epctx::testing
