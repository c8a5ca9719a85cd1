// Systematic and random damage to a valid blob: every header-page byte flipped, truncation at every
// section boundary, and random byte flips (with and without re-signing). Open must refuse cleanly
// or yield data that is safe to read; under ASan/UBSan any out-of-range read fails the test.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <set>

#include "format/blob_helpers.h"
#include "util/hash.h"

namespace epctx::format {
namespace {

using blobtest::BlobContents;
using blobtest::Bytes;
using ::testing::AnyOf;
using ::testing::HasSubstr;

bool IsRefusal(StatusCode code) {
  return code == StatusCode::kCorrupt || code == StatusCode::kVersionMismatch ||
         code == StatusCode::kTargetMismatch;
}

class DamagedBlobTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(good_.empty());
    auto view = blobtest::OpenBlob(good_);
    ASSERT_TRUE(view.ok()) << view.status().ToString();
    contents_ = blobtest::ContentsOf(*view);
    ASSERT_EQ(contents_.models.size(), 2u);
    ASSERT_EQ(contents_.weights.size(), 7u);
  }

  const Bytes& good_ = blobtest::StandardBlob();
  BlobContents contents_;
};

// Which check a flipped header byte must trip, by the field it belongs to.
std::string ExpectedHeaderRefusal(size_t at) {
  if (at < offsetof(BlobHeader, format_version)) return "bad magic";
  if (at < offsetof(BlobHeader, header_size)) return "blob format version";
  if (at < offsetof(BlobHeader, engine_version)) return "header size";
  return "header checksum mismatch";
}

TEST_F(DamagedBlobTest, EveryHeaderPageByteFlipped) {
  Bytes blob = good_;
  size_t rejected_in_struct = 0;
  size_t accepted_after_struct = 0;
  for (size_t at = 0; at < kHeaderPageSize; ++at) {
    blob[at] ^= std::byte{0xff};
    auto view = blobtest::OpenBlob(blob);
    if (view.ok()) {
      EXPECT_GE(at, sizeof(BlobHeader)) << "flipping header byte " << at << " went unnoticed";
      EXPECT_EQ(blobtest::ContentsOf(*view), contents_) << "byte " << at;
      if (at >= sizeof(BlobHeader)) ++accepted_after_struct;
    } else {
      EXPECT_TRUE(IsRefusal(view.status().code())) << view.status().ToString();
      if (at < sizeof(BlobHeader)) {
        ++rejected_in_struct;
        EXPECT_THAT(view.status().message(), HasSubstr(ExpectedHeaderRefusal(at))) << "byte " << at;
        EXPECT_EQ(view.status().code(), at >= offsetof(BlobHeader, format_version) &&
                                                at < offsetof(BlobHeader, header_size)
                                            ? StatusCode::kVersionMismatch
                                            : StatusCode::kCorrupt);
      }
    }
    blob[at] ^= std::byte{0xff};
  }
  // Every byte of the struct, reserved fields and unused section slots included, is covered by
  // the magic, version, size or checksum checks; the zero padding after it is not read.
  EXPECT_EQ(rejected_in_struct, sizeof(BlobHeader));
  EXPECT_EQ(accepted_after_struct, kHeaderPageSize - sizeof(BlobHeader));
  EXPECT_EQ(blob, good_);
}

// Cut points: both ends of the header and of every section, one byte either side, plus random.
std::set<uint64_t> TruncationPoints(const Bytes& blob) {
  BlobHeader h = blobtest::ReadHeader(blob);
  std::set<uint64_t> points = {0,
                               1,
                               8,
                               sizeof(BlobHeader) - 1,
                               sizeof(BlobHeader),
                               kHeaderPageSize - 1,
                               kHeaderPageSize,
                               kHeaderPageSize + 1};
  for (uint32_t i = 0; i < h.section_count; ++i) {
    for (uint64_t edge : {h.sections[i].offset, h.sections[i].offset + h.sections[i].size}) {
      points.insert({edge - 1, edge, edge + 1});
    }
  }
  std::mt19937_64 rng(7);
  for (int i = 0; i < 40; ++i) points.insert(rng() % blob.size());
  std::erase_if(points, [&](uint64_t p) { return p >= blob.size(); });
  return points;
}

TEST_F(DamagedBlobTest, TruncatedAtEverySectionBoundary) {
  std::set<uint64_t> points = TruncationPoints(good_);
  ASSERT_GE(points.size(), 40u);
  for (uint64_t cut : points) {
    // A fresh allocation of exactly `cut` bytes, so that ASan sees any read past the end.
    Bytes truncated(good_.begin(), good_.begin() + static_cast<ptrdiff_t>(cut));
    auto view = blobtest::OpenBlob(truncated);
    ASSERT_FALSE(view.ok()) << "truncated at " << cut << " accepted";
    EXPECT_EQ(view.status().code(), StatusCode::kCorrupt) << view.status().ToString();
    EXPECT_THAT(view.status().message(), HasSubstr("truncated")) << "cut at " << cut;
  }
}

TEST_F(DamagedBlobTest, TruncatedWithAHeaderThatAgrees) {
  // The header is re-signed to claim the truncated size: now the section table must catch it.
  std::set<uint64_t> points = TruncationPoints(good_);
  size_t tried = 0;
  for (uint64_t cut : points) {
    if (cut < kHeaderPageSize) continue;
    Bytes truncated(good_.begin(), good_.begin() + static_cast<ptrdiff_t>(cut));
    BlobHeader h = blobtest::ReadHeader(truncated);
    h.file_size = cut;
    blobtest::WriteHeader(truncated, h);
    auto view = blobtest::OpenBlob(truncated);
    ASSERT_FALSE(view.ok()) << "truncated at " << cut << " accepted";
    EXPECT_EQ(view.status().code(), StatusCode::kCorrupt);
    EXPECT_THAT(view.status().message(), HasSubstr("exceeds the file size")) << "cut at " << cut;
    ++tried;
  }
  EXPECT_GE(tried, 15u);
}

TEST_F(DamagedBlobTest, EmptyInputIsRefused) {
  for (std::span<const std::byte> empty :
       {std::span<const std::byte>(), std::span<const std::byte>(good_.data(), 0)}) {
    auto view = blobtest::OpenBlob(empty);
    ASSERT_FALSE(view.ok());
    EXPECT_EQ(view.status().code(), StatusCode::kCorrupt);
    EXPECT_THAT(view.status().message(), HasSubstr("truncated: 0 bytes"));
  }
}

TEST_F(DamagedBlobTest, ZeroedHeaderPageOfAnInterruptedWriteIsRefused) {
  // BlobWriter writes an all-zero header page first and the real header last.
  Bytes blob = good_;
  std::fill(blob.begin(), blob.begin() + kHeaderPageSize, std::byte{0});
  auto view = blobtest::OpenBlob(blob);
  ASSERT_FALSE(view.ok());
  EXPECT_THAT(view.status().message(), HasSubstr("bad magic"));
}

TEST_F(DamagedBlobTest, MisalignedInputIsRefusedBeforeAnyRead) {
  // A valid blob 4 bytes off 8-byte alignment: every 64-bit field would be a misaligned read.
  Bytes storage(good_.size() + 8);
  std::copy(good_.begin(), good_.end(), storage.begin() + 4);
  std::span<const std::byte> shifted(storage.data() + 4, good_.size());
  ASSERT_NE(reinterpret_cast<uintptr_t>(shifted.data()) % 8, 0u);
  auto view = blobtest::OpenBlob(shifted);
  ASSERT_FALSE(view.ok());
  EXPECT_EQ(view.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(view.status().message(), HasSubstr("not 8-byte aligned"));
}

struct FuzzTally {
  int accepted = 0;
  int refused = 0;
};

// Opens `blob`; when accepted, reads everything it references (ASan checks the reads) and checks
// that the ranges the view hands out lie inside the blob.
void OpenAndTouch(const Bytes& blob, const OpenOptions& options, FuzzTally& tally) {
  auto view = blobtest::OpenBlob(blob, options);
  if (!view.ok()) {
    EXPECT_TRUE(IsRefusal(view.status().code())) << view.status().ToString();
    ++tally.refused;
    return;
  }
  ++tally.accepted;
  blobtest::TouchEverything(*view);
  const std::byte* begin = blob.data();
  const std::byte* end = blob.data() + blob.size();
  uint32_t weights = view->manifest().weights() ? view->manifest().weights()->size() : 0;
  for (uint32_t i = 0; i < weights; ++i) {
    auto bytes = view->WeightBytes(i);
    EXPECT_TRUE(bytes.empty() ||
                (bytes.data() >= begin + kHeaderPageSize && bytes.data() + bytes.size() <= end));
    EXPECT_EQ((bytes.data() - begin) % kTensorAlignment, 0);
  }
}

TEST_F(DamagedBlobTest, RandomByteFlipsAnywhere) {
  std::mt19937_64 rng(20240601);
  FuzzTally tally;
  for (int iteration = 0; iteration < 2000; ++iteration) {
    Bytes blob = good_;
    int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; ++f) {
      blob[rng() % blob.size()] ^= static_cast<std::byte>(1 + rng() % 255);
    }
    OpenOptions options = blobtest::DefaultOptions();
    options.verify_weight_checksums = iteration % 2 == 1;
    OpenAndTouch(blob, options, tally);
    if (HasFatalFailure()) return;
  }
  EXPECT_GT(tally.accepted, 0) << "flips in padding and (unverified) weights are harmless";
  EXPECT_GT(tally.refused, 0);
}

// Flips inside the manifest or a program, then re-signs every checksum, so that the FlatBuffers
// Verifier and the meaning-level validation (not the checksums) face the damage.
TEST_F(DamagedBlobTest, RandomFlipsBehindValidChecksums) {
  std::mt19937_64 rng(42);
  FuzzTally manifest_tally;
  FuzzTally program_tally;
  BlobHeader h = blobtest::ReadHeader(good_);
  const SectionEntry& manifest = h.sections[blobtest::SectionIndex(h, SectionKind::kManifest)];
  const SectionEntry& programs = h.sections[blobtest::SectionIndex(h, SectionKind::kPrograms)];
  for (int iteration = 0; iteration < 1500; ++iteration) {
    Bytes blob = good_;
    bool in_manifest = iteration % 2 == 0;
    const SectionEntry& target = in_manifest ? manifest : programs;
    int flips = 1 + static_cast<int>(rng() % 3);
    for (int f = 0; f < flips; ++f) {
      uint64_t at = target.offset + rng() % target.size;
      // Mostly single-bit flips; sometimes a whole byte of an offset or length goes bad.
      blob[at] ^= rng() % 4 == 0 ? std::byte{0xff} : static_cast<std::byte>(1u << (rng() % 8));
    }
    if (in_manifest) {
      blobtest::ResignAll(blob);
    } else {
      blobtest::RefreshProgramChecksums(blob);
    }
    ASSERT_FALSE(HasFailure()) << "re-signing failed at iteration " << iteration;
    OpenOptions options = blobtest::DefaultOptions();
    options.verify_weight_checksums = iteration % 3 == 0;
    OpenAndTouch(blob, options, in_manifest ? manifest_tally : program_tally);
    if (HasFatalFailure()) return;
  }
  EXPECT_GT(manifest_tally.accepted, 0);
  EXPECT_GT(manifest_tally.refused, 0);
  EXPECT_GT(program_tally.accepted, 0);
  EXPECT_GT(program_tally.refused, 0);
}

// Random edits of the header struct, re-signed, with values chosen to hit the section-table checks
// (zero, page multiples, the file size, values that wrap).
TEST_F(DamagedBlobTest, RandomHeaderFieldsBehindAValidChecksum) {
  std::mt19937_64 rng(99);
  FuzzTally tally;
  const uint64_t interesting[] = {0,
                                  1,
                                  63,
                                  64,
                                  kHeaderPageSize,
                                  2 * kHeaderPageSize,
                                  good_.size(),
                                  good_.size() - 1,
                                  good_.size() + 1,
                                  uint64_t{1} << 32,
                                  uint64_t{1} << 63,
                                  ~uint64_t{0} - kHeaderPageSize + 1,
                                  ~uint64_t{0}};
  constexpr size_t kTableStart = offsetof(BlobHeader, file_size);
  constexpr size_t kTableEnd = offsetof(BlobHeader, header_checksum);
  for (int iteration = 0; iteration < 1500; ++iteration) {
    Bytes blob = good_;
    BlobHeader header = blobtest::ReadHeader(blob);
    auto* raw = reinterpret_cast<unsigned char*>(&header);
    int edits = 1 + static_cast<int>(rng() % 3);
    for (int e = 0; e < edits; ++e) {
      size_t at = kTableStart + (rng() % ((kTableEnd - kTableStart) / 8)) * 8;
      if (rng() % 2 == 0) {
        uint64_t value = interesting[rng() % std::size(interesting)];
        std::memcpy(raw + at, &value, sizeof value);
      } else {
        raw[at + rng() % 8] ^= static_cast<unsigned char>(1u << (rng() % 8));
      }
    }
    blobtest::WriteHeader(blob, header);
    OpenAndTouch(blob, blobtest::DefaultOptions(), tally);
    if (HasFatalFailure()) return;
  }
  EXPECT_GT(tally.refused, 0);
}

}  // namespace
}  // namespace epctx::format
