// AtomicFileWriter publishes whole files or nothing, and BlobWriter::WriteToFile relies on it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "format/blob_helpers.h"
#include "format/blob_writer.h"
#include "util/file.h"
#include "util/temporary_files.h"

namespace epctx {
namespace {

using format::blobtest::TempDir;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::StartsWith;

std::span<const std::byte> Text(std::string_view s) {
  return std::as_bytes(std::span(s.data(), s.size()));
}

std::string ReadOrDie(const std::string& path) {
  auto text = ReadWholeFile(path);
  EXPECT_TRUE(text.ok()) << text.status().ToString();
  return text.ok() ? *text : std::string();
}

TEST(AtomicFileWriterTest, CommitPublishesTheFileAndLeavesNoTemporary) {
  TempDir dir;
  std::string path = dir.File("out.bin");
  auto writer = AtomicFileWriter::Create(path);
  ASSERT_TRUE(writer.ok()) << writer.status().ToString();
  ASSERT_TRUE(writer->WriteAt(10, Text("world")).ok());
  ASSERT_TRUE(writer->WriteAt(0, Text("hello")).ok());
  // Until Commit the destination does not exist; only a hidden temporary beside it does.
  EXPECT_FALSE(std::filesystem::exists(path));
  std::vector<std::string> before = dir.List();
  ASSERT_EQ(before.size(), 1u);
  EXPECT_THAT(before[0], StartsWith(".out.bin.tmp"));
  ASSERT_TRUE(writer->Commit().ok());
  EXPECT_EQ(ReadOrDie(path), std::string("hello\0\0\0\0\0world", 15));
  EXPECT_THAT(dir.List(), ElementsAre("out.bin"));
}

TEST(AtomicFileWriterTest, DroppedWithoutCommitRemovesTheTemporaryAndKeepsTheOldFile) {
  TempDir dir;
  std::string path = dir.File("out.bin");
  ASSERT_TRUE(WriteFileAtomically(path, Text("old")).ok());
  {
    auto writer = AtomicFileWriter::Create(path);
    ASSERT_TRUE(writer.ok());
    ASSERT_TRUE(writer->WriteAt(0, Text("new and longer")).ok());
    EXPECT_EQ(dir.List().size(), 2u);
  }
  EXPECT_THAT(dir.List(), ElementsAre("out.bin"));
  EXPECT_EQ(ReadOrDie(path), "old");
}

// A compile killed while writing leaves its temporary; the next write into the folder removes it,
// but never the temporary of a process that is still alive, nor files that are not ours.
TEST(AtomicFileWriterTest, NextWriteRemovesTheTemporariesOfKilledWriters) {
  TempDir dir;
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto writer = AtomicFileWriter::Create(dir.File("blob.epctx"));
    if (writer.ok() && writer->WriteAt(0, Text("half a blob")).ok()) ::_exit(0);  // no cleanup
    ::_exit(1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  std::vector<std::string> left = dir.List();
  ASSERT_EQ(left.size(), 1u);
  EXPECT_THAT(left[0], StartsWith(".blob.epctx.tmp-" + std::to_string(child) + "-"));
  // A live process's temporary (pid 1 always exists) and look-alikes stay.
  for (const char* name : {".model_ctx.onnx.tmp-1-0123abcd", ".x.tmp-12ab-0123abcd", "notes.tmp"}) {
    std::ofstream(dir.File(name)) << "keep";
  }
  ASSERT_TRUE(WriteFileAtomically(dir.File("other.bin"), Text("x")).ok());
  EXPECT_THAT(dir.List(), ElementsAre(".model_ctx.onnx.tmp-1-0123abcd", ".x.tmp-12ab-0123abcd",
                                      "notes.tmp", "other.bin"));
}

// A command-line tool ended by SIGTERM or SIGHUP mid-write (RemoveTemporariesOnTerminationSignals)
// leaves no temporary, and still ends as the signal would; a committed file stays.
TEST(AtomicFileWriterTest, TerminationSignalRemovesTheTemporaries) {
  for (int signal : {SIGTERM, SIGHUP}) {
    TempDir dir;
    pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      RemoveTemporariesOnTerminationSignals();
      auto done = AtomicFileWriter::Create(dir.File("done.bin"));
      if (!done.ok() || !done->WriteAt(0, Text("whole")).ok() || !done->Commit().ok()) ::_exit(1);
      auto first = AtomicFileWriter::Create(dir.File("a.epctx"));
      auto second = AtomicFileWriter::Create(dir.File("b.onnx"));
      if (!first.ok() || !second.ok() || !first->WriteAt(0, Text("half")).ok()) ::_exit(1);
      ::raise(signal);
      ::_exit(2);  // not reached
    }
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFSIGNALED(status)) << "exit status " << status;
    EXPECT_EQ(WTERMSIG(status), signal);
    EXPECT_THAT(dir.List(), ElementsAre("done.bin"));
  }
}

TEST(AtomicFileWriterTest, CommitReplacesAtomicallyWhileTheOldFileIsMapped) {
  TempDir dir;
  std::string path = dir.File("blob");
  ASSERT_TRUE(WriteFileAtomically(path, Text("old contents")).ok());
  auto old_identity = StatFile(path);
  ASSERT_TRUE(old_identity.ok());
  auto mapped = MappedFile::Open(path);
  ASSERT_TRUE(mapped.ok()) << mapped.status().ToString();

  auto writer = AtomicFileWriter::Create(path);
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE(writer->WriteAt(0, Text("new contents, longer")).ok());
  EXPECT_EQ(ReadOrDie(path), "old contents") << "readers see the old file until Commit";
  ASSERT_TRUE(writer->Commit().ok());

  EXPECT_EQ(ReadOrDie(path), "new contents, longer");
  auto new_identity = StatFile(path);
  ASSERT_TRUE(new_identity.ok());
  EXPECT_NE(new_identity->inode, old_identity->inode) << "a new file, not an in-place rewrite";
  // The old mapping keeps the old bytes: the published file was never modified in place.
  std::string_view old_view(reinterpret_cast<const char*>(mapped->bytes().data()),
                            mapped->bytes().size());
  EXPECT_EQ(old_view, "old contents");
  EXPECT_THAT(dir.List(), ElementsAre("blob"));
}

TEST(AtomicFileWriterTest, FailedWriteReportsTheTemporaryAndLeavesNothing) {
  TempDir dir;
  std::string path = dir.File("out.bin");
  ASSERT_TRUE(WriteFileAtomically(path, Text("old")).ok());
  {
    auto writer = AtomicFileWriter::Create(path);
    ASSERT_TRUE(writer.ok());
    // An offset no file can have (negative as off_t): pwrite fails.
    Status s = writer->WriteAt(~uint64_t{0} - 16, Text("x"));
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.code(), StatusCode::kIoError);
    EXPECT_THAT(s.message(), HasSubstr("write failed"));
    EXPECT_THAT(s.message(), HasSubstr(dir.path() + "/.out.bin.tmp"));
  }
  EXPECT_THAT(dir.List(), ElementsAre("out.bin"));
  EXPECT_EQ(ReadOrDie(path), "old");
}

TEST(AtomicFileWriterTest, MissingDirectoryFailsNamingThePath) {
  TempDir dir;
  std::string path = dir.File("missing/sub/out.bin");
  auto writer = AtomicFileWriter::Create(path);
  ASSERT_FALSE(writer.ok());
  EXPECT_EQ(writer.status().code(), StatusCode::kIoError);
  EXPECT_THAT(writer.status().message(), HasSubstr("'" + path + "'"));
  EXPECT_THAT(writer.status().message(), HasSubstr("No such file or directory"));

  Status s = WriteFileAtomically(path, Text("x"));
  EXPECT_EQ(s.code(), StatusCode::kIoError);
  EXPECT_THAT(s.message(), HasSubstr(path));
  EXPECT_THAT(dir.List(), IsEmpty());
}

TEST(AtomicFileWriterTest, FailedRenameRemovesTheTemporary) {
  TempDir dir;
  // The destination is a non-empty directory, which rename(2) cannot replace with a file.
  std::string path = dir.File("occupied");
  ASSERT_TRUE(std::filesystem::create_directory(path));
  ASSERT_TRUE(WriteFileAtomically(path + "/inside", Text("x")).ok());
  {
    auto writer = AtomicFileWriter::Create(path);
    ASSERT_TRUE(writer.ok());
    ASSERT_TRUE(writer->WriteAt(0, Text("data")).ok());
    Status s = writer->Commit();
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.code(), StatusCode::kIoError);
    EXPECT_THAT(s.message(), HasSubstr("'" + path + "': rename"));
  }
  EXPECT_THAT(dir.List(), ElementsAre("occupied"));
  EXPECT_TRUE(std::filesystem::is_directory(path));
}

TEST(AtomicFileWriterTest, MovedWriterCommitsOnceAndTheSourceDoesNotDelete) {
  TempDir dir;
  std::string path = dir.File("out.bin");
  auto created = AtomicFileWriter::Create(path);
  ASSERT_TRUE(created.ok());
  {
    AtomicFileWriter moved(std::move(*created));
    ASSERT_TRUE(moved.WriteAt(0, Text("moved")).ok());
    ASSERT_TRUE(moved.Commit().ok());
  }
  EXPECT_EQ(ReadOrDie(path), "moved");
  EXPECT_THAT(dir.List(), ElementsAre("out.bin"));
}

// Limits the size of files this process may write, for one scope; writes past the limit fail
// with EFBIG instead of raising SIGXFSZ.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    old_handler_ = ::signal(SIGXFSZ, SIG_IGN);
    ok_ = ::getrlimit(RLIMIT_FSIZE, &old_) == 0;
    rlimit limit = old_;
    limit.rlim_cur = bytes;
    ok_ = ok_ && ::setrlimit(RLIMIT_FSIZE, &limit) == 0;
  }
  ~FileSizeLimit() {
    ::setrlimit(RLIMIT_FSIZE, &old_);
    ::signal(SIGXFSZ, old_handler_);
  }
  bool ok() const { return ok_; }

 private:
  rlimit old_{};
  sighandler_t old_handler_ = SIG_DFL;
  bool ok_ = false;
};

TEST(BlobWriterFileTest, WriteThatRunsOutOfSpaceLeavesTheOldBlobAndNoTemporary) {
  TempDir dir;
  std::string path = dir.File("model.blob");
  ASSERT_TRUE(WriteFileAtomically(path, Text("previous blob")).ok());
  const format::blobtest::Bytes& blob = format::blobtest::StandardBlob();
  ASSERT_GT(blob.size(), 3 * format::kHeaderPageSize);

  format::blobtest::BlobSpec spec = format::blobtest::StandardSpec();
  format::BlobWriter writer;
  for (const auto& w : spec.weights) {
    ASSERT_TRUE(writer.AddWeight({w.dtype, w.shape, w.layout, w.bytes, nullptr}).ok());
  }
  for (const auto& m : spec.models) {
    std::vector<std::vector<uint8_t>> programs;
    for (const auto& p : m.programs) programs.push_back(format::blobtest::BuildProgram(p));
    ASSERT_TRUE(writer.AddModel(m.name, std::move(programs), m.source_size, m.source_hash).ok());
  }
  Status s;
  {
    FileSizeLimit limit(2 * format::kHeaderPageSize);
    ASSERT_TRUE(limit.ok());
    s = writer.WriteToFile(path);
  }
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kIoError);
  EXPECT_THAT(s.message(), HasSubstr("write failed"));
  EXPECT_THAT(dir.List(), ElementsAre("model.blob"));
  EXPECT_EQ(ReadOrDie(path), "previous blob");

  // Without the limit the same writer succeeds and replaces the old file.
  ASSERT_TRUE(writer.WriteToFile(path).ok());
  std::string written = ReadOrDie(path);
  ASSERT_EQ(written.size(), blob.size());
  EXPECT_EQ(std::memcmp(written.data(), blob.data(), blob.size()), 0);
}

TEST(BlobWriterFileTest, MissingDirectoryFailsNamingThePath) {
  TempDir dir;
  std::string path = dir.File("no/such/dir/model.blob");
  format::BlobWriter writer;
  ASSERT_TRUE(writer.AddModel("m", {format::blobtest::BuildProgram({.name = "p"})}, 0, 0).ok());
  Status s = writer.WriteToFile(path);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kIoError);
  EXPECT_THAT(s.message(), HasSubstr("'" + path + "'"));
  EXPECT_THAT(dir.List(), IsEmpty());
}

// A file of 2 MiB or more is mapped from a 2 MiB boundary, so large page-cache folios can be
// mapped whole; the mapping still holds exactly the file's bytes.
TEST(MappedFileTest, ALargeFileIsMappedFromAHugePageBoundary) {
  TempDir dir;
  std::string path = dir.File("large");
  std::string bytes((size_t{5} << 20) + 123, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 31 + i / 4096);
  ASSERT_TRUE(WriteFileAtomically(path, Text(bytes)).ok());
  for (int i = 0; i < 3; ++i) {  // mappings made one after another each land on a boundary
    auto mapped = MappedFile::Open(path);
    ASSERT_TRUE(mapped.ok()) << mapped.status().ToString();
    EXPECT_EQ(reinterpret_cast<uintptr_t>(mapped->bytes().data()) % (uintptr_t{2} << 20), 0u);
    ASSERT_EQ(mapped->bytes().size(), bytes.size());
    EXPECT_EQ(std::memcmp(mapped->bytes().data(), bytes.data(), bytes.size()), 0);
  }
}

TEST(MappedFileTest, EmptyFileIsCorruptNotACrash) {
  TempDir dir;
  std::string path = dir.File("empty.blob");
  { std::ofstream(path).flush(); }
  auto mapped = MappedFile::Open(path);
  ASSERT_FALSE(mapped.ok());
  EXPECT_EQ(mapped.status().code(), StatusCode::kCorrupt);
  EXPECT_THAT(mapped.status().message(), HasSubstr(path));
}

}  // namespace
}  // namespace epctx
