// Processes reading a context model while another process keeps rewriting its blob: in place with
// another model's weights or its own (truncating first, as `cp` does), and atomically. No reader
// may crash, and no run may return anything but the context model's own outputs: a run that read
// a changed blob fails, and later sessions load the blob again or fall back to the original.
//
// The parent compiles the models, then starts this binary again in the writer and reader roles
// (fresh processes: forking after OpenMP has started is not safe).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "epctx/epctx.h"
#include "loader/loader_test_helpers.h"
#include "util/file.h"

extern char** environ;

namespace epctx {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kWeightSide = 512;  // a 1 MiB weight
constexpr const char* kDirVar = "EPCTX_WRITER_TEST_DIR";
constexpr int kSeconds = 6;

std::string Dir() {
  const char* dir = std::getenv(kDirVar);
  return dir != nullptr ? dir : "";
}

Tensor Ones() {
  auto x = Tensor::Allocate(DataType::kFloat32, {1, kWeightSide});
  for (int64_t i = 0; i < kWeightSide; ++i) x->mutable_data_as<float>()[i] = 1.0f;
  return *x;
}

// The writer's role: keep rewriting the blob for kSeconds.
TEST(BlobWriterProcess, WriterRole) {
  if (Dir().empty()) GTEST_SKIP() << "started by ReadersNeverCrashNorSeeAnotherModelsOutputs";
  const std::string blob = Dir() + "/a_ctx.epctx";
  auto mine = ReadWholeFile(Dir() + "/a_copy.epctx");
  auto other = ReadWholeFile(Dir() + "/b/b_ctx.epctx");
  ASSERT_TRUE(mine.ok() && other.ok());
  std::mt19937 rng(7);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(kSeconds);
  while (std::chrono::steady_clock::now() < deadline) {
    int what = static_cast<int>(rng() % 3);
    if (what == 2) {
      ASSERT_TRUE(WriteFileAtomically(blob, std::as_bytes(std::span(*mine))).ok());
    } else {
      const std::string& bytes = what == 0 ? *other : *mine;
      std::ofstream(blob, std::ios::binary | std::ios::trunc) << bytes;  // in place, as cp
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(rng() % 20));
  }
}

// A reader's role: sessions of a_ctx.onnx for kSeconds; writes "<runs> <failed runs> <wrong>".
TEST(BlobWriterProcess, ReaderRole) {
  if (Dir().empty()) GTEST_SKIP() << "started by ReadersNeverCrashNorSeeAnotherModelsOutputs";
  SetLogLevel(LogLevel::kError);  // a warning per fallback would flood the test's output
  const float want = (kWeightSide + 1) / 2.0f;  // sum over i of (i + 1) / kWeightSide
  long runs = 0, failed = 0, wrong = 0;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(kSeconds);
  while (std::chrono::steady_clock::now() < deadline) {
    auto session = Session::Create(Dir() + "/a_ctx.onnx");
    if (!session.ok()) {
      ++failed;
      continue;
    }
    for (int r = 0; r < 5; ++r) {
      auto out = (*session)->Run({{"x", Ones()}});
      ++runs;
      if (!out.ok()) {
        ++failed;
        continue;
      }
      const float* y = (*out)[0].data_as<float>();
      for (int64_t j = 0; j < kWeightSide; ++j) {
        if (std::fabs(y[j] - want) > 1e-3f * want) {
          ++wrong;
          break;
        }
      }
    }
  }
  std::ofstream(fmt::format("{}/reader_{}.txt", Dir(), ::getpid()))
      << runs << " " << failed << " " << wrong << "\n";
  EXPECT_EQ(wrong, 0);
}

pid_t Spawn(const std::string& role, const std::string& dir) {
  std::string filter = fmt::format("--gtest_filter=BlobWriterProcess.{}", role);
  std::string exe = fs::read_symlink("/proc/self/exe").string();
  std::vector<std::string> env_strings = {fmt::format("{}={}", kDirVar, dir)};
  for (char** e = environ; *e != nullptr; ++e) env_strings.emplace_back(*e);
  std::vector<char*> env;
  for (std::string& s : env_strings) env.push_back(s.data());
  env.push_back(nullptr);
  char* argv[] = {exe.data(), filter.data(), nullptr};
  pid_t pid = -1;
  EXPECT_EQ(::posix_spawn(&pid, exe.c_str(), nullptr, nullptr, argv, env.data()), 0);
  return pid;
}

TEST(BlobWriterProcess, ReadersNeverCrashNorSeeAnotherModelsOutputs) {
  if (!Dir().empty()) GTEST_SKIP() << "a role process";
  loadertest::TempDir temp;
  const fs::path& dir = temp.path();
  fs::create_directories(dir / "b");
  loadertest::WriteScaledMatMul(dir / "a.onnx", kWeightSide, 1.0f);
  loadertest::WriteScaledMatMul(dir / "b" / "b.onnx", kWeightSide, -1.0f);
  ASSERT_TRUE(ModelCompiler().CompileToFile(dir / "a.onnx", dir / "a_ctx.onnx").ok());
  ASSERT_TRUE(ModelCompiler().CompileToFile(dir / "b" / "b.onnx", dir / "b" / "b_ctx.onnx").ok());
  fs::copy_file(dir / "a_ctx.epctx", dir / "a_copy.epctx");
  ASSERT_EQ(fs::file_size(dir / "a_ctx.epctx"), fs::file_size(dir / "b" / "b_ctx.epctx"));

  std::vector<pid_t> pids = {Spawn("WriterRole", dir), Spawn("ReaderRole", dir),
                             Spawn("ReaderRole", dir)};
  for (pid_t pid : pids) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status)) << "process " << pid << " was killed by signal "
                                   << (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    EXPECT_EQ(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 0) << "process " << pid;
  }
  long runs = 0, failed = 0, wrong = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().filename().string().rfind("reader_", 0) != 0) continue;
    long r = 0, f = 0, w = 0;
    std::ifstream(e.path()) >> r >> f >> w;
    runs += r, failed += f, wrong += w;
  }
  std::printf(
      "[ writer ] readers made %ld runs: %ld failed (the blob changed under them), %ld "
      "wrong\n",
      runs, failed, wrong);
  EXPECT_GT(runs, 0);
  EXPECT_EQ(wrong, 0);
}

}  // namespace
}  // namespace epctx
