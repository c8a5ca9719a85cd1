// epctx.load_mode: mmap, populate, prefetch and read give the same bytes to the kernels, and each
// holds the blob the way it promises (read mode: no mapping, no fd; prefetch: a background thread
// that is stopped safely when the last session goes).
#include <dirent.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "epctx/epctx.h"
#include "epctx/tensor_io.h"
#include "format/blob_layout.h"
#include "format/blob_reader.h"
#include "loader/blob_prefetcher.h"
#include "loader/blob_registry.h"
#include "loader/blob_source.h"
#include "loader/engine_options.h"
#include "loader/loader_test_helpers.h"
#include "loader/page_residency.h"
#include "test_models.h"
#include "util/cpu_features.h"
#include "util/file.h"
#include "util/page_cache.h"

namespace epctx {
namespace {

namespace fs = std::filesystem;
using loadertest::CountMappings;
using loadertest::MappedResidentBytes;
using loadertest::TempDir;

const char* const kModes[] = {"mmap", "populate", "prefetch", "read"};

// Open fds of this process whose target is `path`.
int CountOpenFds(const std::string& path) {
  int count = 0;
  for (const auto& entry : fs::directory_iterator("/proc/self/fd")) {
    std::error_code ec;
    fs::path target = fs::read_symlink(entry.path(), ec);
    if (!ec && target.string().find(path) != std::string::npos) ++count;
  }
  return count;
}

SessionOptions WithMode(const std::string& mode) {
  SessionOptions o;
  o.AddConfigEntry("epctx.load_mode", mode);
  o.AddConfigEntry("epctx.fallback", "deny");  // a fallback would not exercise the load mode
  return o;
}

std::vector<Tensor> RunOnce(Session& session, const Tensor& input) {
  auto out = session.Run({{session.inputs()[0].name, input}});
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  return out.ok() ? std::move(*out) : std::vector<Tensor>();
}

bool SameBytes(const Tensor& a, const Tensor& b) {
  return a.byte_size() == b.byte_size() && std::memcmp(a.data(), b.data(), a.byte_size()) == 0;
}

struct ByteRange {
  uint64_t offset = 0;
  uint64_t size = 0;
};

ByteRange WeightsSection(std::span<const std::byte> blob) {
  format::BlobHeader header;
  std::memcpy(&header, blob.data(), sizeof header);
  for (uint32_t i = 0; i < header.section_count && i < format::kMaxSections; ++i) {
    if (header.sections[i].kind == static_cast<uint32_t>(format::SectionKind::kWeights)) {
      return {header.sections[i].offset, header.sections[i].size};
    }
  }
  return {};
}

// mobilenet_v2 compiled once for the whole suite.
class LoadModes : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    ctx_ = new std::string(*dir_ / "mobilenet_v2_ctx.onnx");
    auto report = ModelCompiler().CompileToFile(ModelsDir() + "/mobilenet_v2.onnx", *ctx_);
    ASSERT_TRUE(report.ok()) << report.status().ToString();
    blob_ = new std::string(report->blob_path);
    auto input = ReadNpy(ModelsDir() + "/mobilenet_v2.input.npy");
    ASSERT_TRUE(input.ok()) << input.status().ToString();
    input_ = new Tensor(*input);
  }
  static void TearDownTestSuite() {
    delete input_;
    delete blob_;
    delete ctx_;
    delete dir_;
  }
  static TempDir* dir_;
  static std::string* ctx_;
  static std::string* blob_;
  static Tensor* input_;
};
TempDir* LoadModes::dir_ = nullptr;
std::string* LoadModes::ctx_ = nullptr;
std::string* LoadModes::blob_ = nullptr;
Tensor* LoadModes::input_ = nullptr;

TEST(LoadModeOption, AcceptsTheFourModesAndAutoAndRefusesOthers) {
  auto defaults = loader::ParseEngineOptions(SessionOptions());
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->load_mode, loader::LoadMode::kAuto);
  for (const char* mode : {"auto", "mmap", "populate", "prefetch", "read"}) {
    SessionOptions o;
    o.AddConfigEntry("epctx.load_mode", mode);
    auto parsed = loader::ParseEngineOptions(o);
    ASSERT_TRUE(parsed.ok()) << mode << ": " << parsed.status().ToString();
    EXPECT_STREQ(loader::LoadModeName(parsed->load_mode), mode);
  }
  SessionOptions bad;
  bad.AddConfigEntry("epctx.load_mode", "mmap2");
  auto parsed = loader::ParseEngineOptions(bad);
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().message(),
            "option epctx.load_mode must be \"auto\", \"mmap\", \"populate\", \"prefetch\" or "
            "\"read\", got \"mmap2\"");
  EXPECT_EQ(parsed.status().message().find("not implemented"), std::string::npos);
}

TEST_F(LoadModes, AllFourGiveBitIdenticalOutputs) {
  std::vector<Tensor> expected;
  for (const char* mode : kModes) {
    SCOPED_TRACE(mode);
    auto session = Session::Create(*ctx_, WithMode(mode));
    ASSERT_TRUE(session.ok()) << session.status().ToString();
    EXPECT_TRUE((*session)->origin().from_context_blob);
    // Twice: the first run faults pages in (or races the prefetcher), the second does not.
    for (int run = 0; run < 2; ++run) {
      std::vector<Tensor> out = RunOnce(**session, *input_);
      ASSERT_FALSE(out.empty());
      if (expected.empty()) {
        expected = std::move(out);
        continue;
      }
      ASSERT_EQ(out.size(), expected.size());
      for (size_t i = 0; i < out.size(); ++i) EXPECT_TRUE(SameBytes(out[i], expected[i]));
    }
  }
}

TEST_F(LoadModes, EachModeHasItsOwnCopyAndSessionsOfOneModeShareIt) {
  size_t before = MappedBlobCount();
  auto a = Session::Create(*ctx_, WithMode("mmap"));
  auto b = Session::Create(*ctx_, WithMode("mmap"));
  auto c = Session::Create(*ctx_, WithMode("read"));
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ(MappedBlobCount(), before + 2);
  EXPECT_EQ(CountMappings(*blob_), 1);  // the read-mode copy is not a mapping
  a->reset();
  b->reset();
  EXPECT_EQ(CountMappings(*blob_), 0);
  c->reset();
  EXPECT_EQ(MappedBlobCount(), before);
}

TEST_F(LoadModes, SessionsCreatedConcurrentlyShareOneLoad) {
  size_t before = MappedBlobCount();
  constexpr int kThreads = 4;
  std::vector<Result<std::unique_ptr<Session>>> sessions;
  for (int i = 0; i < kThreads; ++i) {
    sessions.emplace_back(Status(StatusCode::kInternal, "not created"));
  }
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] { sessions[i] = Session::Create(*ctx_, WithMode("read")); });
  }
  for (std::thread& t : threads) t.join();
  for (auto& s : sessions) ASSERT_TRUE(s.ok()) << s.status().ToString();
  // One read-mode copy of the blob for all four, whichever thread loaded it.
  EXPECT_EQ(MappedBlobCount(), before + 1);
  std::vector<Tensor> first = RunOnce(**sessions[0], *input_);
  std::vector<Tensor> last = RunOnce(**sessions[kThreads - 1], *input_);
  ASSERT_EQ(first.size(), last.size());
  for (size_t i = 0; i < first.size(); ++i) EXPECT_TRUE(SameBytes(first[i], last[i]));
  sessions.clear();
  EXPECT_EQ(MappedBlobCount(), before);
}

TEST_F(LoadModes, ReadModeHoldsNoMappingNorFdAndSurvivesDeletion) {
  TempDir dir;
  std::string ctx = dir / "m_ctx.onnx";
  auto report = ModelCompiler().CompileToFile(ModelsDir() + "/mobilenet_v2.onnx", ctx);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  std::vector<Tensor> expected;
  {
    auto reference = Session::Create(ctx, WithMode("mmap"));
    ASSERT_TRUE(reference.ok()) << reference.status().ToString();
    expected = RunOnce(**reference, *input_);
  }
  auto session = Session::Create(ctx, WithMode("read"));
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  EXPECT_EQ(CountMappings(report->blob_path), 0);
  EXPECT_EQ(CountOpenFds(report->blob_path), 0);

  ASSERT_TRUE(fs::remove(report->blob_path));
  ASSERT_TRUE(fs::remove(ctx));
  std::vector<Tensor> out = RunOnce(**session, *input_);
  ASSERT_EQ(out.size(), expected.size());
  for (size_t i = 0; i < out.size(); ++i) EXPECT_TRUE(SameBytes(out[i], expected[i]));
}

// In mmap mode the session's kernel-preparation job maps the blob's weights ahead of the first
// run (BlobSource::MapAhead), so that the run does not fault them in; with
// epctx.prepare_kernels=first_run nothing is done ahead of the run.
TEST_F(LoadModes, MmapSessionsMapTheWeightsAheadOfTheFirstRun) {
  const int64_t weights = static_cast<int64_t>(WeightsSection(loadertest::ReadBytes(*blob_)).size);
  ASSERT_GT(weights, 1 << 20);
  auto session = Session::Create(*ctx_, WithMode("mmap"));
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  int64_t resident = 0;
  for (int i = 0; i < 500 && resident < weights; ++i) {  // up to 10 s on a busy machine
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    resident = MappedResidentBytes(*blob_);
  }
  EXPECT_GE(resident, weights) << "of the " << weights << "-byte WEIGHTS section, without a run";
}

// Once a run has started (leave_cached), the map-ahead leaves chunks wholly in the page cache to
// it and still maps those it would read from the disk.
// The blob's mappings are advised for huge pages (MappedFile::HugePages), so that weights read
// from the disk are cached in 2 MiB folios; populate mode still maps them all at creation.
TEST_F(LoadModes, MappedModesAdviseHugePagesAndPopulateStillMapsAtCreation) {
  const int64_t weights = static_cast<int64_t>(WeightsSection(loadertest::ReadBytes(*blob_)).size);
  for (const char* mode : {"mmap", "populate", "prefetch"}) {
    SCOPED_TRACE(mode);
    SessionOptions options = WithMode(mode);
    options.AddConfigEntry("epctx.prepare_kernels", "first_run");  // nothing mapped ahead
    auto session = Session::Create(*ctx_, options);
    ASSERT_TRUE(session.ok()) << session.status().ToString();
    std::vector<std::string> flags = loadertest::SmapsFieldOfMappings(*blob_, "VmFlags:");
    ASSERT_FALSE(flags.empty());
    for (const std::string& f : flags) EXPECT_NE((f + " ").find(" hg "), std::string::npos) << f;
    // Most of it (MAP_POPULATE too left 12.0 of MobileNetV2's 14.1 MB resident); a lazy mapping
    // without map-ahead holds under a tenth (FirstRunPreparationMapsNothingAhead).
    if (std::string(mode) == "populate") {
      EXPECT_GE(MappedResidentBytes(*blob_), weights * 3 / 4);
    }
  }
}

TEST_F(LoadModes, MapAheadLeavesCachedChunksToTheRunOnceAsked) {
  const int64_t weights = static_cast<int64_t>(WeightsSection(loadertest::ReadBytes(*blob_)).size);
  auto cached = PageCacheResidency(*blob_);  // just read whole: in the page cache
  ASSERT_TRUE(cached.ok());
  ASSERT_EQ(cached->resident_pages, cached->total_pages);
  std::atomic<bool> stop{false};
  std::atomic<bool> leave_cached{true};
  {
    auto source = loader::OpenMappedBlobSource(*blob_, /*populate=*/false);
    ASSERT_TRUE(source.ok()) << source.status().ToString();
    EXPECT_FALSE((*source)->MapAhead(stop, leave_cached));
    EXPECT_LT(MappedResidentBytes(*blob_), weights / 10);
    leave_cached = false;
    EXPECT_TRUE((*source)->MapAhead(stop, leave_cached));
    EXPECT_GE(MappedResidentBytes(*blob_), weights);
  }
  ASSERT_TRUE(EvictFromPageCache(*blob_).ok());
  auto residency = PageCacheResidency(*blob_);
  ASSERT_TRUE(residency.ok());
  if (residency->resident_pages > residency->total_pages / 10) {
    GTEST_SKIP() << "the file system keeps the blob cached despite POSIX_FADV_DONTNEED";
  }
  leave_cached = true;
  auto source = loader::OpenMappedBlobSource(*blob_, /*populate=*/false);
  ASSERT_TRUE(source.ok()) << source.status().ToString();
  EXPECT_TRUE((*source)->MapAhead(stop, leave_cached));
  EXPECT_GE(MappedResidentBytes(*blob_), weights);
}

// A map-ahead that left chunks to a run is asked again by the next session's job, which maps
// them; one that mapped everything is not.
TEST_F(LoadModes, MapAheadOnceIsAskedAgainAfterLeavingChunksToARun) {
  const int64_t weights = static_cast<int64_t>(WeightsSection(loadertest::ReadBytes(*blob_)).size);
  auto source = loader::OpenMappedBlobSource(*blob_, /*populate=*/false);
  ASSERT_TRUE(source.ok()) << source.status().ToString();
  format::OpenOptions options;
  options.available_cpu_features = DetectedCpuFeatures();
  auto view = format::BlobView::Open((*source)->bytes(), *blob_, options);
  ASSERT_TRUE(view.ok()) << view.status().ToString();
  loader::LoadedBlob blob(std::move(*source), std::move(*view));
  std::atomic<bool> stop{false};
  std::atomic<bool> run_started{true};
  std::atomic<bool> no_run{false};
  EXPECT_FALSE(blob.MapAheadOnce(stop, run_started));  // cached: left to the run
  EXPECT_LT(MappedResidentBytes(*blob_), weights / 10);
  EXPECT_TRUE(blob.MapAheadOnce(stop, no_run));
  EXPECT_GE(MappedResidentBytes(*blob_), weights);
  EXPECT_FALSE(blob.MapAheadOnce(stop, no_run));  // done once: not asked again
}

TEST_F(LoadModes, FirstRunPreparationMapsNothingAhead) {
  const int64_t weights = static_cast<int64_t>(WeightsSection(loadertest::ReadBytes(*blob_)).size);
  SessionOptions options = WithMode("mmap");
  options.AddConfigEntry("epctx.prepare_kernels", "first_run");
  auto session = Session::Create(*ctx_, options);
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_LT(MappedResidentBytes(*blob_), weights / 10);
  RunOnce(**session, *input_);  // the run faults the weights in itself
  EXPECT_GE(MappedResidentBytes(*blob_), weights * 9 / 10);
}

TEST_F(LoadModes, PrefetchSessionsDestroyedWhilePrefetchingAreSafe) {
  using Clock = std::chrono::steady_clock;
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(EvictFromPageCache(*blob_).ok());
    Clock::time_point start = Clock::now();
    {
      auto session = Session::Create(*ctx_, WithMode("prefetch"));
      ASSERT_TRUE(session.ok()) << session.status().ToString();
      if (i % 2 == 1) RunOnce(**session, *input_);  // run alongside the prefetch, then go
    }
    // Destruction waits only for the chunks in flight, never for the whole section.
    EXPECT_LT(std::chrono::duration<double>(Clock::now() - start).count(), 5.0);
    EXPECT_EQ(CountMappings(*blob_), 0);
  }
}

TEST_F(LoadModes, PrefetcherCancelledInFlightStopsAndJoins) {
  ASSERT_TRUE(EvictFromPageCache(*blob_).ok());
  auto residency = PageCacheResidency(*blob_);
  ASSERT_TRUE(residency.ok());
  if (residency->resident_pages > residency->total_pages / 10) {
    GTEST_SKIP() << "the file system keeps the blob cached despite POSIX_FADV_DONTNEED";
  }
  auto fd = OpenReadOnly(*blob_);
  ASSERT_TRUE(fd.ok());
  auto file = MappedFile::Map(*fd, *blob_);
  ASSERT_TRUE(file.ok());
  ByteRange weights = WeightsSection(file->bytes());
  ASSERT_GT(weights.size, 0u);
  loader::BlobPrefetcher::Progress seen;
  {
    loader::BlobPrefetcher prefetcher(file->bytes(), weights.offset, weights.size, fd->get(),
                                      *blob_);
    seen = prefetcher.progress();
  }  // destroyed at once: stops issuing, drains what is in flight, joins
  EXPECT_EQ(seen.bytes_total, weights.size);
  EXPECT_FALSE(seen.finished) << "the prefetch of a cold " << weights.size
                              << "-byte section finished before the first look";
}

TEST_F(LoadModes, PrefetcherBringsTheWeightsIntoThePageCache) {
  ASSERT_TRUE(EvictFromPageCache(*blob_).ok());
  auto fd = OpenReadOnly(*blob_);
  ASSERT_TRUE(fd.ok());
  auto file = MappedFile::Map(*fd, *blob_);
  ASSERT_TRUE(file.ok());
  ByteRange weights = WeightsSection(file->bytes());
  loader::BlobPrefetcher prefetcher(file->bytes(), weights.offset, weights.size, fd->get(), *blob_);
  prefetcher.WaitUntilFinished();
  loader::BlobPrefetcher::Progress p = prefetcher.progress();
  EXPECT_TRUE(p.finished);
  EXPECT_FALSE(p.cancelled);
  EXPECT_EQ(p.bytes_done, weights.size) << p.method;
  // MADV_POPULATE_READ and reads are done when they complete; readahead advice may still be
  // landing, so give it a moment.
  double fraction = 0;
  for (int i = 0; i < 50 && fraction < 0.99; ++i) {
    auto r = PageCacheResidency(*blob_, weights.offset, weights.size);
    ASSERT_TRUE(r.ok());
    fraction = r->fraction();
    if (fraction < 0.99) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_GE(fraction, 0.99) << "via " << p.method;
}

// auto's rule: at least 90% of the sampled pages in the page cache is warm.
TEST(LoadModeOption, AutoMapsWhatIsResidentAndPrefetchesWhatIsNot) {
  using loader::LoadMode;
  using loader::LoadModeForResidency;
  EXPECT_EQ(LoadModeForResidency(64, 64), LoadMode::kMmap);
  EXPECT_EQ(LoadModeForResidency(58, 64), LoadMode::kMmap);      // 90.6%
  EXPECT_EQ(LoadModeForResidency(57, 64), LoadMode::kPrefetch);  // 89.1%
  EXPECT_EQ(LoadModeForResidency(0, 64), LoadMode::kPrefetch);
  EXPECT_EQ(LoadModeForResidency(0, 0), LoadMode::kMmap);  // an empty file
}

// The default (auto) maps a blob whose pages are in the page cache and prefetches one that is
// not; a session created while another holds the blob shares that copy, as it was loaded; a mode
// set by the user is used as it is. Each says in its origin which mode it got.
TEST_F(LoadModes, AutoChoosesByWhatThePageCacheHolds) {
  SessionOptions automatic;
  automatic.AddConfigEntry("epctx.fallback", "deny");
  {
    std::ifstream warm(*blob_, std::ios::binary);
    std::vector<char> chunk(1 << 20);
    while (warm.read(chunk.data(), static_cast<std::streamsize>(chunk.size()))) {
    }
  }
  auto sampled = SampledPageCacheResidency(*blob_, loader::kResidencySamples);
  ASSERT_TRUE(sampled.ok()) << sampled.status().ToString();
  EXPECT_EQ(sampled->resident_pages, sampled->total_pages);
  EXPECT_EQ(sampled->total_pages, loader::kResidencySamples);
  std::vector<Tensor> reference;
  {
    auto warm = Session::Create(*ctx_, automatic);
    ASSERT_TRUE(warm.ok()) << warm.status().ToString();
    EXPECT_EQ((*warm)->origin().load_mode, "mmap");
    reference = RunOnce(**warm, *input_);
  }
  auto explicit_read = Session::Create(*ctx_, WithMode("read"));
  ASSERT_TRUE(explicit_read.ok()) << explicit_read.status().ToString();
  EXPECT_EQ((*explicit_read)->origin().load_mode, "read");
  explicit_read->reset();

  ASSERT_TRUE(EvictFromPageCache(*blob_).ok());
  sampled = SampledPageCacheResidency(*blob_, loader::kResidencySamples);
  ASSERT_TRUE(sampled.ok());
  if (sampled->resident_pages > sampled->total_pages / 10) {
    GTEST_SKIP() << "the file system keeps the blob cached despite POSIX_FADV_DONTNEED";
  }
  auto cold = Session::Create(*ctx_, automatic);
  ASSERT_TRUE(cold.ok()) << cold.status().ToString();
  EXPECT_EQ((*cold)->origin().load_mode, "prefetch");
  std::vector<Tensor> out = RunOnce(**cold, *input_);
  ASSERT_EQ(out.size(), reference.size());
  for (size_t i = 0; i < out.size(); ++i) EXPECT_TRUE(SameBytes(out[i], reference[i]));
  // Warm by now, but the blob is held in prefetch mode: a new auto session shares it.
  auto second = Session::Create(*ctx_, automatic);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ((*second)->origin().load_mode, "prefetch");
}

}  // namespace
}  // namespace epctx
