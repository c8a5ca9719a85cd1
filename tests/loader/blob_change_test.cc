// A blob file changed under a live mapping (truncated, or written in place as `cp` does) never
// kills the process and never yields outputs as if nothing happened: the run reports the change,
// naming the blob, and a new session loads it again. Atomic replacement is not a change, and read
// mode holds a private copy.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "epctx/epctx.h"
#include "loader/blob_fault_guard.h"
#include "loader/loader_test_helpers.h"

namespace epctx {
namespace {

using loadertest::Bytes;
using loadertest::ReadBytes;
using loadertest::TempDir;
using ::testing::HasSubstr;

constexpr int64_t kWeightRows = 256;  // a 256 KiB weight: 64 pages

// y = x * W with W[i][j] = scale * (i + 1) / kWeightRows, written as `dir`/`name`.onnx and
// compiled.
std::string CompileScaled(const TempDir& dir, const std::string& name, float scale) {
  loadertest::WriteScaledMatMul(dir / (name + ".onnx"), kWeightRows, scale);
  auto report = ModelCompiler().CompileToFile(dir / (name + ".onnx"), dir / (name + "_ctx.onnx"));
  EXPECT_TRUE(report.ok()) << report.status().ToString();
  return dir / (name + "_ctx.onnx");
}

// y[0][0] for x = ones: sum over i of scale * (i + 1) / kWeightRows = scale * (kWeightRows + 1)
// / 2.
Result<float> RunOnes(Session& session) {
  auto x = Tensor::Allocate(DataType::kFloat32, {1, kWeightRows});
  for (int64_t i = 0; i < kWeightRows; ++i) x->mutable_data_as<float>()[i] = 1.0f;
  auto out = session.Run({{"x", *x}});
  if (!out.ok()) return out.status();
  return (*out)[0].data_as<float>()[0];
}

std::unique_ptr<Session> Load(const std::string& ctx, const std::string& mode) {
  SessionOptions options;
  options.AddConfigEntry("epctx.fallback", "deny");
  options.AddConfigEntry("epctx.load_mode", mode);
  auto session = Session::Create(ctx, options);
  EXPECT_TRUE(session.ok()) << session.status().ToString();
  if (!session.ok()) return nullptr;
  return std::move(*session);
}

// Writes `bytes` over the file in place, keeping its inode, as `cp` over an existing file does.
void WriteInPlace(const std::string& path, const Bytes& bytes, bool truncate_first) {
  int fd = ::open(path.c_str(), O_WRONLY | (truncate_first ? O_TRUNC : 0));
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::pwrite(fd, bytes.data(), bytes.size(), 0), static_cast<ssize_t>(bytes.size()));
  ::close(fd);
}

constexpr float kOnes = (kWeightRows + 1) / 2.0f;

class MappedModes : public ::testing::TestWithParam<std::string> {};

TEST_P(MappedModes, TruncatedBlobIsAnErrorNamingItNotACrash) {
  TempDir dir;
  std::string ctx = CompileScaled(dir, "model", 1.0f);
  auto session = Load(ctx, GetParam());
  ASSERT_NE(session, nullptr);
  auto first = RunOnes(*session);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_FLOAT_EQ(*first, kOnes);

  uint64_t faults_before = loader::FaultGuard::ContainedFaults();
  ASSERT_EQ(::truncate((dir / "model_ctx.epctx").c_str(), 4096), 0);
  auto damaged = RunOnes(*session);
  ASSERT_FALSE(damaged.ok()) << "outputs of a truncated blob were returned: " << *damaged;
  EXPECT_EQ(damaged.status().code(), StatusCode::kIoError);
  EXPECT_EQ(damaged.status().message(),
            "model 'model': blob '" + (dir / "model_ctx.epctx") +
                "' was truncated while in use: some of its pages read as zeros; this run's "
                "outputs are discarded, and a new session loads the blob again");
  EXPECT_GT(loader::FaultGuard::ContainedFaults(), faults_before);
  // Again, at once.
  EXPECT_FALSE(RunOnes(*session).ok());
  // A new session does not get the damaged copy: it loads the file again (and, it being
  // truncated, falls back to the original model).
  auto fresh = Session::Create(ctx);
  ASSERT_TRUE(fresh.ok()) << fresh.status().ToString();
  EXPECT_FALSE((*fresh)->origin().from_context_blob);
  auto again = RunOnes(**fresh);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_FLOAT_EQ(*again, kOnes);
}

TEST_P(MappedModes, BlobRewrittenInPlaceIsNoticedEvenWithItsOldMtime) {
  TempDir dir;
  std::string ctx = CompileScaled(dir, "model", 1.0f);
  std::string other_ctx = CompileScaled(dir, "other", -1.0f);
  Bytes mine = ReadBytes(dir / "model_ctx.epctx");
  Bytes other = ReadBytes(dir / "other_ctx.epctx");
  ASSERT_EQ(mine.size(), other.size());
  auto session = Load(ctx, GetParam());
  ASSERT_NE(session, nullptr);
  ASSERT_TRUE(RunOnes(*session).ok());

  struct stat before {};
  ASSERT_EQ(::stat((dir / "model_ctx.epctx").c_str(), &before), 0);
  // Another model's weights in place, and the old timestamps put back: only the watch sees it.
  ASSERT_NO_FATAL_FAILURE(WriteInPlace(dir / "model_ctx.epctx", other, /*truncate_first=*/false));
  struct timespec times[2] = {before.st_atim, before.st_mtim};
  ASSERT_EQ(::utimensat(AT_FDCWD, (dir / "model_ctx.epctx").c_str(), times, 0), 0);
  auto changed = RunOnes(*session);
  ASSERT_FALSE(changed.ok()) << "outputs of a rewritten blob were returned: " << *changed;
  EXPECT_EQ(changed.status().message(),
            "model 'model': blob '" + (dir / "model_ctx.epctx") +
                "' was written to while in use; this run's outputs are discarded, and a new "
                "session loads the blob again");

  // Written back as it was, like `cp` would (truncating first): a new session loads it again and
  // serves it; the old one keeps refusing.
  ASSERT_NO_FATAL_FAILURE(WriteInPlace(dir / "model_ctx.epctx", mine, /*truncate_first=*/true));
  auto reloaded = Load(ctx, GetParam());
  ASSERT_NE(reloaded, nullptr);
  auto fine = RunOnes(*reloaded);
  ASSERT_TRUE(fine.ok()) << fine.status().ToString();
  EXPECT_FLOAT_EQ(*fine, kOnes);
  EXPECT_FALSE(RunOnes(*session).ok());
}

TEST_P(MappedModes, AtomicReplacementIsNotAChange) {
  TempDir dir;
  std::string ctx = CompileScaled(dir, "model", 1.0f);
  auto session = Load(ctx, GetParam());
  ASSERT_NE(session, nullptr);
  // The compiler writes a new file and renames it over the old: the mapping keeps the old one.
  CompileScaled(dir, "model", 1.0f);
  auto out = RunOnes(*session);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_FLOAT_EQ(*out, kOnes);
}

INSTANTIATE_TEST_SUITE_P(LoadModes, MappedModes, ::testing::Values("mmap", "populate", "prefetch"));

TEST(ReadMode, HoldsItsOwnCopy) {
  TempDir dir;
  std::string ctx = CompileScaled(dir, "model", 1.0f);
  auto session = Load(ctx, "read");
  ASSERT_NE(session, nullptr);
  ASSERT_EQ(::truncate((dir / "model_ctx.epctx").c_str(), 4096), 0);
  auto out = RunOnes(*session);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_FLOAT_EQ(*out, kOnes);
}

}  // namespace
}  // namespace epctx
