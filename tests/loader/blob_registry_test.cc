// The blob registry on its own: one verified copy per file and load mode, shared while held and
// loaded again once nobody holds it, a replaced file loaded as the new file, concurrent callers
// served by one load, and failures neither cached nor shared.
#include "loader/blob_registry.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <thread>
#include <vector>

#include "epctx/compiler.h"
#include "loader/loader_test_helpers.h"

namespace epctx::loader {
namespace {

using loadertest::TempDir;
using ::testing::HasSubstr;

// Compiles a small MatMul model in `dir` and returns its blob's path.
std::string CompileBlob(const TempDir& dir, const std::string& name, float scale) {
  loadertest::WriteScaledMatMul(dir / (name + ".onnx"), 16, scale);
  auto report = ModelCompiler().CompileToFile(dir / (name + ".onnx"), dir / (name + "_ctx.onnx"));
  EXPECT_TRUE(report.ok()) << report.status().ToString();
  return DefaultBlobPathFor(dir / (name + "_ctx.onnx"));
}

BlobLoadOptions Mode(LoadMode mode) {
  BlobLoadOptions o;
  o.load_mode = mode;
  return o;
}

TEST(BlobRegistry, OneCopyPerFileAndLoadModeWhileHeld) {
  TempDir dir;
  std::string blob = CompileBlob(dir, "m", 1.0f);
  BlobRegistry registry;
  auto a = registry.Acquire(blob, Mode(LoadMode::kMmap));
  auto b = registry.Acquire(blob, Mode(LoadMode::kMmap));
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(a->get(), b->get());
  EXPECT_EQ(registry.MappedCount(), 1u);

  auto read = registry.Acquire(blob, Mode(LoadMode::kRead));
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_NE(read->get(), a->get());
  EXPECT_EQ(registry.MappedCount(), 2u);
  EXPECT_EQ(loadertest::CountMappings(blob), 1);  // read mode keeps no mapping of the file

  a->reset();
  b->reset();
  EXPECT_EQ(registry.MappedCount(), 1u);
  EXPECT_EQ(loadertest::CountMappings(blob), 0);
  auto again = registry.Acquire(blob, Mode(LoadMode::kMmap));
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(registry.MappedCount(), 2u);
}

// An atomically replaced file is a different file: the next caller gets the new blob, the holder
// of the old one keeps it.
TEST(BlobRegistry, ReplacedFileIsLoadedAsTheNewFile) {
  TempDir dir;
  std::string blob = CompileBlob(dir, "m", 1.0f);
  std::string other = CompileBlob(dir, "n", 3.0f);
  BlobRegistry registry;
  auto old_blob = registry.Acquire(blob, Mode(LoadMode::kMmap));
  ASSERT_TRUE(old_blob.ok()) << old_blob.status().ToString();
  std::filesystem::rename(other, blob);
  auto new_blob = registry.Acquire(blob, Mode(LoadMode::kMmap));
  ASSERT_TRUE(new_blob.ok()) << new_blob.status().ToString();
  EXPECT_NE(old_blob->get(), new_blob->get());
  EXPECT_NE((*old_blob)->view().header().header_checksum,
            (*new_blob)->view().header().header_checksum);
  EXPECT_EQ(registry.MappedCount(), 2u);
}

TEST(BlobRegistry, ConcurrentCallersShareOneLoad) {
  TempDir dir;
  std::string blob = CompileBlob(dir, "m", 1.0f);
  BlobRegistry registry;
  constexpr int kThreads = 8;
  std::vector<std::shared_ptr<const LoadedBlob>> got(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      auto r = registry.Acquire(blob, Mode(LoadMode::kRead));
      if (r.ok()) got[t] = *r;
    });
  }
  for (std::thread& t : threads) t.join();
  for (int t = 0; t < kThreads; ++t) {
    ASSERT_NE(got[t], nullptr) << t;
    EXPECT_EQ(got[t].get(), got[0].get()) << t;
  }
  EXPECT_EQ(registry.MappedCount(), 1u);
}

// A failed load is not remembered: the same path loads once the file is good.
TEST(BlobRegistry, FailuresNameTheFileAndAreNotCached) {
  TempDir dir;
  std::string blob = CompileBlob(dir, "m", 1.0f);
  loadertest::Bytes good = loadertest::ReadBytes(blob);
  BlobRegistry registry;

  auto missing = registry.Acquire(dir / "none.epctx", Mode(LoadMode::kMmap));
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(), HasSubstr(dir / "none.epctx"));

  loadertest::Bytes bad = good;
  bad[0] = std::byte{'X'};  // the magic
  loadertest::WriteBytes(blob, bad);
  auto refused = registry.Acquire(blob, Mode(LoadMode::kMmap));
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr(blob));
  EXPECT_EQ(registry.MappedCount(), 0u);

  loadertest::WriteBytes(blob, good);
  auto loaded = registry.Acquire(blob, Mode(LoadMode::kMmap));
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(registry.MappedCount(), 1u);
}

}  // namespace
}  // namespace epctx::loader
