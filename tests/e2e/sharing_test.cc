// Sessions of one context model share one mapping of its blob, released with the last session.
#include <gtest/gtest.h>

#include "e2e/e2e_helpers.h"

namespace epctx::testing {
namespace {

TEST(Sharing, TwoSessionsMapTheBlobOnce) {
  TempDir dir;
  std::string ctx = dir / "mobilenet_v2_ctx.onnx";
  auto report = ModelCompiler().CompileToFile(ModelPath("mobilenet_v2"), ctx);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  ASSERT_EQ(CountMappings(report->blob_path), 0);
  size_t before = MappedBlobCount();

  auto first = Session::Create(ctx);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(CountMappings(report->blob_path), 1);
  auto second = Session::Create(ctx);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ(CountMappings(report->blob_path), 1);
  EXPECT_EQ(MappedBlobCount(), before + 1);

  // Both sessions run from the one mapping, and agree.
  Tensor input = LoadNpyOrDie(ModelsDir() + "/mobilenet_v2.input.npy");
  auto a = (*first)->Run({{"input", input}});
  auto b = (*second)->Run({{"input", input}});
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(CompareFloat((*a)[0], (*b)[0], 0, 0).mismatches, 0u);

  first->reset();
  EXPECT_EQ(CountMappings(report->blob_path), 1);
  second->reset();
  EXPECT_EQ(CountMappings(report->blob_path), 0);
  EXPECT_EQ(MappedBlobCount(), before);
}

TEST(Sharing, ReplacedBlobGetsANewMappingAndOldSessionsKeepWorking) {
  TempDir dir;
  std::string ctx = dir / "mobilenet_v2_ctx.onnx";
  ASSERT_TRUE(ModelCompiler().CompileToFile(ModelPath("mobilenet_v2"), ctx).ok());
  auto old_session = Session::Create(ctx);
  ASSERT_TRUE(old_session.ok());
  // Recompiling publishes a new file by rename; the old mapping stays valid.
  auto report = ModelCompiler().CompileToFile(ModelPath("mobilenet_v2"), ctx);
  ASSERT_TRUE(report.ok());
  auto new_session = Session::Create(ctx);
  ASSERT_TRUE(new_session.ok());
  Tensor input = LoadNpyOrDie(ModelsDir() + "/mobilenet_v2.input.npy");
  auto a = (*old_session)->Run({{"input", input}});
  auto b = (*new_session)->Run({{"input", input}});
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(CompareFloat((*a)[0], (*b)[0], 0, 0).mismatches, 0u);
}

}  // namespace
}  // namespace epctx::testing
