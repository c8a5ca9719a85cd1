// BlobWriter::ToFile streams each weight into the blob's temporary file as it is added: the file
// it publishes is the one the in-memory writer makes of the same calls, duplicates are confirmed
// against the bytes read back from the file, and nothing loadable exists before Finish.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

#include "format/blob_helpers.h"
#include "format/blob_writer.h"
#include "format/target.h"
#include "util/file.h"

namespace epctx::format {
namespace {

using blobtest::BlobSpec;
using blobtest::Bytes;
using blobtest::PatternBytes;
using blobtest::TempDir;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// Larger than the writer's 2 MiB chunk and its 1 MiB read-back piece, and not a multiple of
// either, so a weight spans chunks and is compared in several pieces.
constexpr size_t kLargeWeight = (size_t{5} << 20) + 12345;

WeightInput Weight(const Bytes& bytes, uint32_t layout = 0) {
  WeightInput w;
  w.dtype = DataType::kUint8;
  w.shape = {static_cast<int64_t>(bytes.size())};
  w.layout = layout;
  w.bytes = bytes;
  return w;
}

Status AddSpecChecked(BlobWriter& writer, const BlobSpec& spec) {
  for (const blobtest::WeightSpec& w : spec.weights) {
    WeightInput input;
    input.dtype = w.dtype;
    input.shape = w.shape;
    input.layout = w.layout;
    input.bytes = w.bytes;
    auto index = writer.AddWeight(std::move(input));
    if (!index.ok()) return index.status();
  }
  for (const blobtest::ModelSpec& m : spec.models) {
    std::vector<std::vector<uint8_t>> programs;
    for (const blobtest::ProgramSpec& p : m.programs) programs.push_back(BuildProgram(p));
    Status s = writer.AddModel(m.name, std::move(programs), m.source_size, m.source_hash);
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

Bytes ReadFileBytes(const std::string& path) {
  auto text = ReadWholeFile(path);
  EXPECT_TRUE(text.ok()) << text.status().ToString();
  if (!text.ok()) return {};
  auto bytes = std::as_bytes(std::span(*text));
  return Bytes(bytes.begin(), bytes.end());
}

// The standard spec plus a large weight, a duplicate of it and a duplicate of a small one.
BlobSpec SpecWithDuplicates() {
  BlobSpec spec = blobtest::StandardSpec();
  blobtest::WeightSpec large;
  large.dtype = DataType::kUint8;
  large.shape = {static_cast<int64_t>(kLargeWeight)};
  large.bytes = PatternBytes(kLargeWeight, 91);
  spec.weights.push_back(large);
  spec.weights.push_back(large);
  spec.weights.push_back(spec.weights[0]);
  return spec;
}

TEST(BlobStreamingTest, PublishesTheFileTheInMemoryWriterMakes) {
  TempDir dir;
  const BlobSpec spec = SpecWithDuplicates();
  BlobWriter memory;
  ASSERT_TRUE(AddSpecChecked(memory, spec).ok());
  auto expected = memory.WriteToMemory();
  ASSERT_TRUE(expected.ok()) << expected.status().ToString();

  const std::string path = dir.File("streamed.epctx");
  auto streaming = BlobWriter::ToFile(CurrentTarget(), path);
  ASSERT_TRUE(streaming.ok()) << streaming.status().ToString();
  ASSERT_TRUE(AddSpecChecked(*streaming, spec).ok());
  EXPECT_EQ(streaming->weight_count(), memory.weight_count());
  EXPECT_EQ(streaming->dedup_hits(), 2u);
  EXPECT_EQ(streaming->unique_weight_bytes(), memory.unique_weight_bytes());
  uint64_t identity = 0;
  ASSERT_TRUE(streaming->Finish(&identity).ok());

  const Bytes written = ReadFileBytes(path);
  ASSERT_EQ(written.size(), expected->size());
  EXPECT_TRUE(std::equal(written.begin(), written.end(), expected->bytes().begin()));
  EXPECT_EQ(identity, blobtest::ReadHeader(written).header_checksum);
  auto view = blobtest::OpenBlob(written);
  ASSERT_TRUE(view.ok()) << view.status().ToString();
  EXPECT_THAT(dir.List(), ElementsAre("streamed.epctx"));
}

TEST(BlobStreamingTest, AWeightLargerThanTheChunkReadsBackWhole) {
  TempDir dir;
  const std::string path = dir.File("large.epctx");
  const BlobSpec spec = SpecWithDuplicates();
  const size_t large_index = blobtest::StandardSpec().weights.size();
  const Bytes& large = spec.weights[large_index].bytes;
  ASSERT_EQ(large.size(), kLargeWeight);
  auto writer = BlobWriter::ToFile(CurrentTarget(), path);
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE(AddSpecChecked(*writer, spec).ok());
  // Nothing of the weights is kept: the writer counts them as handed to the file.
  EXPECT_GE(writer->bytes_written(), kHeaderPageSize + writer->unique_weight_bytes());
  ASSERT_TRUE(writer->Finish().ok());
  const Bytes written = ReadFileBytes(path);
  OpenOptions options = blobtest::DefaultOptions();
  options.verify_weight_checksums = true;
  auto view = blobtest::OpenBlob(written, options);
  ASSERT_TRUE(view.ok()) << view.status().ToString();
  std::span<const std::byte> got = view->WeightBytes(static_cast<uint32_t>(large_index));
  ASSERT_EQ(got.size(), large.size());
  EXPECT_TRUE(std::equal(got.begin(), got.end(), large.begin()));
}

// Duplicates are confirmed against what the file holds, not against a hash: bytes changed in the
// temporary file behind the writer's back make an identical weight a new one.
TEST(BlobStreamingTest, DuplicatesAreConfirmedAgainstTheBytesInTheFile) {
  TempDir dir;
  auto writer = BlobWriter::ToFile(CurrentTarget(), dir.File("dedup.epctx"));
  ASSERT_TRUE(writer.ok());
  const Bytes large = PatternBytes(kLargeWeight, 5);
  const Bytes other = PatternBytes(kLargeWeight, 6);
  ASSERT_EQ(*writer->AddWeight(Weight(large)), 0u);
  ASSERT_EQ(*writer->AddWeight(Weight(other)), 1u);  // pushes weight 0 out of the chunk buffer
  ASSERT_EQ(*writer->AddWeight(Weight(large)), 0u);
  EXPECT_EQ(writer->dedup_hits(), 1u);
  // Same bytes in another layout are another weight.
  ASSERT_EQ(*writer->AddWeight(Weight(large, 7)), 2u);

  // One byte of weight 0, near its end (read back in the last piece), changed in the file.
  {
    UniqueFd fd(::open(writer->temp_path().c_str(), O_WRONLY | O_CLOEXEC));
    ASSERT_TRUE(fd.valid());
    const std::byte changed{0x5a};
    ASSERT_NE(large[kLargeWeight - 2], changed);
    ASSERT_EQ(::pwrite(fd.get(), &changed, 1, kHeaderPageSize + kLargeWeight - 2), 1);
  }
  auto again = writer->AddWeight(Weight(large));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, 3u) << "a hash match whose bytes differ is not a duplicate";
  EXPECT_EQ(writer->dedup_hits(), 1u);
  // Weight 2 lies in the file by now; weight 3, just added, partly in the chunk not yet written.
  EXPECT_EQ(*writer->AddWeight(Weight(large, 7)), 2u);
  EXPECT_EQ(*writer->AddWeight(Weight(large)), 3u);
  EXPECT_EQ(writer->dedup_hits(), 3u);
}

TEST(BlobStreamingTest, DroppedBeforeFinishLeavesNothing) {
  TempDir dir;
  const std::string path = dir.File("dropped.epctx");
  {
    auto writer = BlobWriter::ToFile(CurrentTarget(), path);
    ASSERT_TRUE(writer.ok());
    ASSERT_TRUE(writer->AddWeight(Weight(PatternBytes(kLargeWeight, 8))).ok());
    ASSERT_TRUE(
        writer->AddModel("m", {blobtest::BuildProgram(blobtest::ProgramSpec{"main"})}, 0, 0).ok());
    EXPECT_THAT(dir.List(), ElementsAre(StartsWith(".dropped.epctx.tmp-")));
  }
  EXPECT_TRUE(dir.List().empty());
}

// A compile killed mid-write leaves a temporary whose header page is still zeros: no reader takes
// it for a blob, and the next write into the folder removes it.
TEST(BlobStreamingTest, AnInterruptedWriteIsNeverLoadable) {
  TempDir dir;
  const std::string path = dir.File("killed.epctx");
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto writer = BlobWriter::ToFile(CurrentTarget(), path);
    if (!writer.ok()) ::_exit(1);
    for (uint8_t seed = 0; seed < 3; ++seed) {
      if (!writer->AddWeight(Weight(PatternBytes(kLargeWeight, seed))).ok()) ::_exit(1);
    }
    if (!writer->AddModel("m", {blobtest::BuildProgram(blobtest::ProgramSpec{"main"})}, 0, 0).ok())
      ::_exit(1);
    ::_exit(0);  // killed before Finish: no destructor runs
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  std::vector<std::string> left = dir.List();
  ASSERT_EQ(left.size(), 1u);
  EXPECT_THAT(left[0], StartsWith(".killed.epctx.tmp-" + std::to_string(child) + "-"));
  const Bytes partial = ReadFileBytes(dir.File(left[0]));
  // The weights reached the file as they came, in whole chunks (the last one was still buffered).
  ASSERT_GE(partial.size(), 2 * kLargeWeight);
  EXPECT_TRUE(std::all_of(partial.begin(), partial.begin() + kHeaderPageSize,
                          [](std::byte b) { return b == std::byte{0}; }));
  auto view = blobtest::OpenBlob(partial);
  ASSERT_FALSE(view.ok());
  EXPECT_THAT(view.status().message(), HasSubstr("magic"));

  auto next = BlobWriter::ToFile(CurrentTarget(), path);
  ASSERT_TRUE(next.ok());
  EXPECT_THAT(dir.List(),
              ElementsAre(StartsWith(".killed.epctx.tmp-" + std::to_string(::getpid()))));
}

TEST(BlobStreamingTest, TheInMemoryWaysOfWritingAreRefused) {
  TempDir dir;
  auto writer = BlobWriter::ToFile(CurrentTarget(), dir.File("s.epctx"));
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE(
      writer->AddModel("m", {blobtest::BuildProgram(blobtest::ProgramSpec{"main"})}, 0, 0).ok());
  EXPECT_THAT(writer->WriteToMemory().status().message(), HasSubstr("use Finish"));
  EXPECT_THAT(writer->WriteToFile(dir.File("other.epctx")).message(), HasSubstr("use Finish"));
  BlobWriter memory;
  EXPECT_THAT(memory.Finish().message(), HasSubstr("BlobWriter::ToFile"));
  ASSERT_TRUE(writer->Finish().ok());
  EXPECT_THAT(writer->AddWeight(Weight(PatternBytes(8, 1))).status().message(),
              HasSubstr("after Finish"));
}

}  // namespace
}  // namespace epctx::format
