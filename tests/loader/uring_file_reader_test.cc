// ReadFileWithUring on its own: whole files of sizes around its 1 MiB chunks and the 4 KiB direct
// I/O blocks, through the page cache and with O_DIRECT, byte for byte; a file shorter than the
// length asked for, and a buffer too small for the reads, each refused with its message.
#include "loader/uring_file_reader.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <memory>

#include "loader_test_helpers.h"

namespace epctx::loader {
namespace {

using loadertest::Bytes;
using loadertest::TempDir;

Bytes Pattern(size_t n) {
  Bytes bytes(n);
  for (size_t i = 0; i < n; ++i) bytes[i] = static_cast<std::byte>((i * 131 + i / 4093) & 0xff);
  return bytes;
}

// An fd that closes itself.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

// `path` holding Pattern(size), opened with `flags` (fd -1 if that fails; errno says why).
Fd WriteAndOpen(const std::string& path, size_t size, int flags) {
  loadertest::WriteBytes(path, Pattern(size));
  return Fd{::open(path.c_str(), flags)};
}

constexpr size_t kMiB = size_t{1} << 20;
const size_t kSizes[] = {
    1, 4095, 4096, 4097, kMiB - 1, kMiB, kMiB + 1, 3 * kMiB + 12345, 8 * kMiB + 4096};

TEST(UringFileReader, ReadsWholeFilesThroughThePageCache) {
  TempDir dir;
  for (size_t size : kSizes) {
    Fd f = WriteAndOpen(dir / "blob", size, O_RDONLY);
    ASSERT_GE(f.fd, 0);
    const Bytes want = Pattern(size);
    Bytes got(size);
    Status s = ReadFileWithUring(f.fd, size, got, /*direct=*/false, "blob");
    ASSERT_TRUE(s.ok()) << size << ": " << s.ToString();
    EXPECT_TRUE(got == want) << "size " << size;
  }
}

TEST(UringFileReader, ReadsWholeFilesWithDirectIo) {
  TempDir dir;
  for (size_t size : kSizes) {
    Fd f = WriteAndOpen(dir / "blob", size, O_RDONLY | O_DIRECT);
    const Bytes want = Pattern(size);
    if (f.fd < 0 && errno == EINVAL) GTEST_SKIP() << "this file system refuses O_DIRECT";
    ASSERT_GE(f.fd, 0);
    const size_t room = (size + kDirectIoAlignment - 1) / kDirectIoAlignment * kDirectIoAlignment;
    std::unique_ptr<std::byte, decltype(&std::free)> buffer(
        static_cast<std::byte*>(std::aligned_alloc(kDirectIoAlignment, room)), &std::free);
    ASSERT_NE(buffer, nullptr);
    Status s = ReadFileWithUring(f.fd, size, {buffer.get(), room}, /*direct=*/true, "blob");
    ASSERT_TRUE(s.ok()) << size << ": " << s.ToString();
    EXPECT_TRUE(Bytes(buffer.get(), buffer.get() + size) == want) << "size " << size;
  }
}

TEST(UringFileReader, AFileShorterThanAskedIsAnIoError) {
  TempDir dir;
  Fd f = WriteAndOpen(dir / "short", 5000, O_RDONLY);
  ASSERT_GE(f.fd, 0);
  Bytes got(15000);
  Status s = ReadFileWithUring(f.fd, 15000, got, /*direct=*/false, "short.epctx");
  EXPECT_EQ(s.code(), StatusCode::kIoError);
  EXPECT_EQ(s.message(), "'short.epctx': file ended at 5000 bytes, 15000 expected");
}

TEST(UringFileReader, ABufferTooSmallForTheReadsIsRefused) {
  TempDir dir;
  Fd f = WriteAndOpen(dir / "blob", 8192, O_RDONLY);
  ASSERT_GE(f.fd, 0);
  Bytes got(8191);
  Status s = ReadFileWithUring(f.fd, 8192, got, /*direct=*/false, "blob");
  EXPECT_EQ(s.code(), StatusCode::kInternal);
  EXPECT_EQ(s.message(), "'blob': 8191 bytes of buffer for 8192 bytes of reads");
  // With O_DIRECT the reads ask for whole 4 KiB blocks: 8193 bytes need 12288.
  Bytes small(12287);
  s = ReadFileWithUring(f.fd, 8193, small, /*direct=*/true, "blob");
  EXPECT_EQ(s.message(), "'blob': 12287 bytes of buffer for 12288 bytes of reads");
}

}  // namespace
}  // namespace epctx::loader
