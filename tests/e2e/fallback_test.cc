// A context blob that cannot serve (missing, truncated, corrupt, another format version or
// target, stale) gives one warning naming the reason and a session from the original model that
// still produces PyTorch's output; epctx.fallback=deny turns that into an error.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "e2e/e2e_helpers.h"
#include "util/logging.h"

namespace epctx::testing {
namespace {

// Captures the epctx logger's output for the lifetime of the object.
class LogCapture {
 public:
  LogCapture() : sink_(std::make_shared<spdlog::sinks::ostream_sink_mt>(stream_)) {
    Logger().sinks().push_back(sink_);
  }
  ~LogCapture() {
    auto& sinks = Logger().sinks();
    sinks.erase(std::remove(sinks.begin(), sinks.end(), sink_), sinks.end());
  }
  std::vector<std::string> Warnings() const {
    std::vector<std::string> out;
    std::istringstream in(stream_.str());
    for (std::string line; std::getline(in, line);) {
      if (line.find("[warning]") != std::string::npos) out.push_back(line);
    }
    return out;
  }

 private:
  std::ostringstream stream_;
  std::shared_ptr<spdlog::sinks::ostream_sink_mt> sink_;
};

void PatchFile(const std::string& path, uint64_t offset, const void* bytes, size_t size) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  ASSERT_TRUE(f.good());
  f.seekp(static_cast<std::streamoff>(offset));
  f.write(static_cast<const char*>(bytes), static_cast<std::streamsize>(size));
}

enum class Breakage {
  kBlobMissing,
  kTruncated,
  kBadMagic,
  kManifestByteFlipped,
  kFormatVersion,
  kCpuFeatureMissing,
  kOriginalTouched,
};

struct Case {
  Breakage breakage;
  const char* name;
  const char* expected_reason;  // substring of the warning
};

class FallbackTest : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    original_ = CopyModelInto(ModelPath("mobilenet_v2"), dir_.path());
    ctx_ = dir_ / "mobilenet_v2_ctx.onnx";
    auto report = ModelCompiler().CompileToFile(original_, ctx_);
    ASSERT_TRUE(report.ok()) << report.status().ToString();
    blob_ = report->blob_path;
    // The fixture must be a working cache before it is broken.
    auto session = Session::Create(ctx_);
    ASSERT_TRUE(session.ok());
    ASSERT_TRUE((*session)->origin().from_context_blob);
  }
  void TearDown() override { ::unsetenv("EPCTX_CPU_FEATURES_MASK"); }

  void Break(Breakage b) {
    switch (b) {
      case Breakage::kBlobMissing:
        std::filesystem::remove(blob_);
        break;
      case Breakage::kTruncated:
        std::filesystem::resize_file(blob_, std::filesystem::file_size(blob_) / 2);
        break;
      case Breakage::kBadMagic:
        PatchFile(blob_, 0, "X", 1);
        break;
      case Breakage::kManifestByteFlipped: {
        uint64_t last = std::filesystem::file_size(blob_) - 1;
        std::ifstream in(blob_, std::ios::binary);
        in.seekg(static_cast<std::streamoff>(last));
        char c = static_cast<char>(in.get() ^ 0x5a);
        in.close();
        PatchFile(blob_, last, &c, 1);
        break;
      }
      case Breakage::kFormatVersion: {
        uint32_t version = 99;
        PatchFile(blob_, 8, &version, sizeof version);
        break;
      }
      case Breakage::kCpuFeatureMissing:
        ::setenv("EPCTX_CPU_FEATURES_MASK", "4", 1);  // the avx2 bit
        break;
      case Breakage::kOriginalTouched: {
        struct timespec times[2] = {{0, UTIME_OMIT}, {1000000000, 0}};
        ASSERT_EQ(::utimensat(AT_FDCWD, original_.c_str(), times, 0), 0);
        break;
      }
    }
  }

  TempDir dir_;
  std::string original_, ctx_, blob_;
};

TEST_P(FallbackTest, WarnsOnceAndRunsTheOriginal) {
  const Case& c = GetParam();
  Break(c.breakage);
  LogCapture log;
  auto session = Session::Create(ctx_);
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  EXPECT_FALSE((*session)->origin().from_context_blob);
  EXPECT_NE((*session)->origin().fallback_reason.find(c.expected_reason), std::string::npos)
      << (*session)->origin().fallback_reason;
  auto warnings = log.Warnings();
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find(c.expected_reason), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find("falling back to the original model '" + original_ + "'"),
            std::string::npos)
      << warnings[0];

  Tensor input = LoadNpyOrDie(ModelsDir() + "/mobilenet_v2.input.npy");
  Tensor reference = LoadNpyOrDie(ModelsDir() + "/mobilenet_v2.output.npy");
  auto out = (*session)->Run({{"input", input}});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  Comparison scale = CompareFloat((*out)[0], reference, 0, 0);
  EXPECT_EQ(CompareFloat((*out)[0], reference, 1e-4, 1e-4 * scale.max_abs_ref).mismatches, 0u);
}

TEST_P(FallbackTest, DenyTurnsTheFallbackIntoAnError) {
  const Case& c = GetParam();
  Break(c.breakage);
  SessionOptions options;
  options.AddConfigEntry("epctx.fallback", "deny");
  auto session = Session::Create(ctx_, options);
  ASSERT_FALSE(session.ok());
  const std::string message = session.status().message();
  EXPECT_NE(message.find("epctx.fallback=deny"), std::string::npos) << message;
  EXPECT_NE(message.find(c.expected_reason), std::string::npos) << message;
  EXPECT_NE(message.find(ctx_), std::string::npos) << message;
}

INSTANTIATE_TEST_SUITE_P(
    Breakages, FallbackTest,
    ::testing::Values(
        Case{Breakage::kBlobMissing, "BlobMissing", "file not found"},
        Case{Breakage::kTruncated, "Truncated", "truncated"},
        Case{Breakage::kBadMagic, "BadMagic", "not an epctx blob (bad magic)"},
        Case{Breakage::kManifestByteFlipped, "ManifestByteFlipped", "MANIFEST checksum mismatch"},
        Case{Breakage::kFormatVersion, "FormatVersion", "blob format version 99"},
        Case{Breakage::kCpuFeatureMissing, "CpuFeatureMissing",
             "packed for CPU features this CPU lacks: avx2"},
        Case{Breakage::kOriginalTouched, "OriginalTouched", "changed since it was compiled"}),
    [](const ::testing::TestParamInfo<Case>& info) { return info.param.name; });

TEST(FallbackErrors, NeitherBlobNorOriginalNamesBothPathsAndReasons) {
  TempDir dir;
  std::string original = CopyModelInto(ModelPath("mobilenet_v2"), dir.path());
  std::string ctx = dir / "mobilenet_v2_ctx.onnx";
  auto report = ModelCompiler().CompileToFile(original, ctx);
  ASSERT_TRUE(report.ok());
  PatchFile(report->blob_path, 0, "X", 1);
  std::filesystem::remove(original);
  auto session = Session::Create(ctx);
  ASSERT_FALSE(session.ok());
  EXPECT_EQ(session.status().message(), "'" + ctx + "' cannot be loaded: context blob '" +
                                            report->blob_path + "': '" + report->blob_path +
                                            "': not an epctx blob (bad magic); original model '" +
                                            original + "': '" + original + "': file not found");
}

}  // namespace
}  // namespace epctx::testing
