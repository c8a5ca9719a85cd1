// A path holding a NUL byte is refused by every function of util/file.h that hands a path to the
// system (which would see only the part before the NUL, a silent other file), naming the path
// with the NUL escaped, and nothing is read, created or written.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "format/blob_helpers.h"
#include "util/file.h"

namespace epctx {
namespace {

using format::blobtest::TempDir;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

std::span<const std::byte> NulPathBytes(std::string_view s) {
  return std::as_bytes(std::span(s.data(), s.size()));
}

// "<dir>/a_ctx.onnx\0.json": the system would see "<dir>/a_ctx.onnx".
std::string WithNul(const TempDir& dir) {
  return dir.File("a_ctx.onnx") + std::string("\0.json", 6);
}

void ExpectRefused(const Status& status, const std::string& path) {
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << status.ToString();
  EXPECT_EQ(
      status.message(),
      "path '" + path + "\\0.json' contains a NUL byte: the system would see only '" + path + "'");
}

TEST(NulPaths, EscapedPathShowsWhatTheBytesAre) {
  EXPECT_EQ(EscapedPath(std::string("a\0b\n\t\r\\\x01\x7f\xc3\xa9", 11)),
            "a\\0b\\n\\t\\r\\\\\\x01\\x7F\xc3\xa9");
  EXPECT_EQ(EscapedPath("models/resnet50.onnx"), "models/resnet50.onnx");
  EXPECT_TRUE(CheckPath("models/resnet50.onnx").ok());
  EXPECT_TRUE(CheckPath("").ok());
  Status s = CheckPath(std::string("out\0/x", 6), "output folder");
  EXPECT_EQ(s.message(),
            "output folder 'out\\0/x' contains a NUL byte: the system would see only "
            "'out'");
}

TEST(NulPaths, WritesAreRefusedAndWriteNothing) {
  TempDir dir;
  const std::string path = WithNul(dir);
  auto writer = AtomicFileWriter::Create(path);
  ASSERT_FALSE(writer.ok());
  ExpectRefused(writer.status(), dir.File("a_ctx.onnx"));
  ExpectRefused(WriteFileAtomically(path, NulPathBytes("blob")), dir.File("a_ctx.onnx"));
  EXPECT_THAT(dir.List(), IsEmpty());
  // An existing file of the truncated name is neither replaced nor read.
  ASSERT_TRUE(WriteFileAtomically(dir.File("a_ctx.onnx"), NulPathBytes("old")).ok());
  ExpectRefused(WriteFileAtomically(path, NulPathBytes("new")), dir.File("a_ctx.onnx"));
  EXPECT_EQ(*ReadWholeFile(dir.File("a_ctx.onnx")), "old");
  EXPECT_THAT(dir.List(), ElementsAre("a_ctx.onnx"));
}

TEST(NulPaths, ReadsAreRefusedEvenWhenTheTruncatedFileExists) {
  TempDir dir;
  ASSERT_TRUE(WriteFileAtomically(dir.File("a_ctx.onnx"), NulPathBytes("old")).ok());
  const std::string path = WithNul(dir);
  ExpectRefused(OpenReadOnly(path).status(), dir.File("a_ctx.onnx"));
  ExpectRefused(ReadWholeFile(path).status(), dir.File("a_ctx.onnx"));
  ExpectRefused(MappedFile::Open(path).status(), dir.File("a_ctx.onnx"));
  ExpectRefused(StatFile(path).status(), dir.File("a_ctx.onnx"));
}

TEST(NulPaths, DirectoriesAreNotCreated) {
  TempDir dir;
  const std::string path = dir.File("out") + std::string("\0/sub", 5);
  Status s = CreateDirectories(path);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "path '" + dir.File("out") +
                             "\\0/sub' contains a NUL byte: the system would see only '" +
                             dir.File("out") + "'");
  EXPECT_THAT(dir.List(), IsEmpty());
  ASSERT_TRUE(CreateDirectories(dir.File("out/sub")).ok());
  EXPECT_TRUE(std::filesystem::is_directory(dir.File("out/sub")));
}

}  // namespace
}  // namespace epctx
