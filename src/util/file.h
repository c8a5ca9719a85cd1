// RAII for file descriptors and read-only mappings, and atomic file publication.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "epctx/status.h"

namespace epctx {

// `path` as a message shows it: bytes below 0x20, 0x7F and the backslash escaped (\0, \t, \n,
// \r, \\, \xNN), every other byte as it is, so that a path holding a NUL or a line break reads
// as what it is.
std::string EscapedPath(std::string_view path);

// Refuses a path holding a NUL byte (kInvalidArgument naming `what` and the path, escaped). The
// system calls take C strings and would see only the part before the NUL, so
// "a_ctx.onnx\0.json" would read or write "a_ctx.onnx": a silent wrong file. Every function here
// that hands a path to the system checks it first (so paths read from models are covered too),
// and the public entry points check theirs before any work, so such a call writes nothing.
Status CheckPath(std::string_view path, std::string_view what = "path");

class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd() { reset(); }
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) {
      reset();
      fd_ = other.release();
    }
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }
  void reset();

 private:
  int fd_ = -1;
};

// Identity of a file's current contents as the loader keys it: same key, same bytes (unless a
// writer modified the file in place, which epctx itself never does).
struct FileIdentity {
  uint64_t device = 0;
  uint64_t inode = 0;
  uint64_t size = 0;
  int64_t mtime_ns = 0;
  bool operator==(const FileIdentity&) const = default;
  bool operator<(const FileIdentity& o) const;
};

Result<FileIdentity> StatFile(const std::string& path);
// The identity of an open file.
Result<FileIdentity> StatFd(const UniqueFd& fd, const std::string& path);
// Opens `path` read-only (with extra `flags`, e.g. O_DIRECT); kNotFound or kIoError on failure,
// kInvalidArgument when it is not a regular file (a FIFO, device or directory is refused at once,
// without blocking: the open itself is non-blocking). Every read of a file named by a model, a
// context model or a user goes through it.
Result<UniqueFd> OpenReadOnly(const std::string& path, int flags = 0);

// A whole file mapped read-only and shared (MAP_SHARED), so the page cache backs it and other
// processes mapping the same file share its pages. Unmapped on destruction.
class MappedFile {
 public:
  enum class Populate { kNo, kYes };
  // kAdvise: MADV_HUGEPAGE on the mapping, so that pages the page cache lacks are read in 2 MiB
  // folios (the kernel's readahead for faults in such a mapping) and mapped with one page-table
  // entry each, by this process and by every later one that maps the file while they stay
  // cached. Without it, a blob read back after the page cache dropped it was cached in small
  // folios, and every process's first run faulted it in 64 KiB at a time (BERT-base's 414 MiB
  // blob: mapping it all took 33-45 ms from small folios, 0.3 ms from 2 MiB ones).
  enum class HugePages { kNo, kAdvise };
  static Result<MappedFile> Open(const std::string& path, Populate populate = Populate::kNo);
  // Maps the whole of the open file `fd` (named `path` in messages); `fd` stays the caller's.
  static Result<MappedFile> Map(const UniqueFd& fd, const std::string& path,
                                Populate populate = Populate::kNo,
                                HugePages huge_pages = HugePages::kNo);

  MappedFile() = default;
  ~MappedFile();
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  std::span<const std::byte> bytes() const { return {data_, size_}; }
  const FileIdentity& identity() const { return identity_; }
  // Drops the pages wholly inside `range` (a part of bytes()) from this process's page tables
  // (MADV_DONTNEED), so that a compile reading weight after weight is not charged for all of
  // them: the page cache keeps them, and a later read faults them back in. Ranges outside the
  // mapping are ignored.
  void ReleasePages(std::span<const std::byte> range) const;
  const std::string& path() const { return path_; }

 private:
  const std::byte* data_ = nullptr;
  size_t size_ = 0;
  FileIdentity identity_;
  std::string path_;
};

// A regular file's bytes (see OpenReadOnly).
Result<std::string> ReadWholeFile(const std::string& path);

// Publishes a file atomically: bytes go to a temporary file in the destination's directory, which
// is fsynced and renamed over `path`. Readers see the old file or the new one, never a mix; on
// failure the temporary is removed and `path` is untouched.
class AtomicFileWriter {
 public:
  static Result<AtomicFileWriter> Create(const std::string& path);
  ~AtomicFileWriter();  // removes the temporary unless Commit() succeeded
  AtomicFileWriter(AtomicFileWriter&& other) noexcept;
  AtomicFileWriter& operator=(AtomicFileWriter&&) = delete;
  AtomicFileWriter(const AtomicFileWriter&) = delete;

  // Writes at an absolute offset (the file grows as needed).
  Status WriteAt(uint64_t offset, std::span<const std::byte> bytes);
  // Reads back bytes written earlier (a streaming writer comparing a new piece with a stored one).
  Status ReadAt(uint64_t offset, std::span<std::byte> out) const;
  // Starts writing [offset, offset + length) to the disk without waiting, so that Commit's fsync
  // finds little left to do; a hint, failures are ignored.
  void StartWriteback(uint64_t offset, uint64_t length) const;
  Status Commit();
  const std::string& temp_path() const { return temp_path_; }

 private:
  AtomicFileWriter(std::string path, std::string temp_path, UniqueFd fd, int registered)
      : path_(std::move(path)),
        temp_path_(std::move(temp_path)),
        fd_(std::move(fd)),
        registered_(registered) {}
  std::string path_;
  std::string temp_path_;
  UniqueFd fd_;
  int registered_ = -1;  // the temporary's slot in util/temporary_files.h
  bool committed_ = false;
};

Status WriteFileAtomically(const std::string& path, std::span<const std::byte> bytes);

// Creates `dir` and any missing parents.
Status CreateDirectories(const std::string& dir);

// Removes from `dir` the temporaries AtomicFileWriter names ".<file>.tmp-<pid>-<random>" whose
// process no longer exists (a writer that was killed), and returns how many. AtomicFileWriter
// calls it before each write, so the next compile into a folder cleans up after a killed one.
// Writers sharing a folder are assumed to share a PID namespace.
size_t RemoveStaleTemporaries(const std::string& dir);

// Directory part of a path ("a/b/c.onnx" -> "a/b", "c.onnx" -> ".").
std::string DirName(const std::string& path);
// Final component ("a/b/c.onnx" -> "c.onnx").
std::string BaseName(const std::string& path);
// `relative` resolved against `dir` (returned unchanged when absolute).
std::string JoinPath(const std::string& dir, const std::string& relative);
// Whether `reference`, resolved against some folder, stays inside it: relative, not empty, and
// not climbing out with "..", judged lexically. A symlink inside the folder is followed (the
// references of a context model): whoever can write the folder can place any file there anyway.
// An original model's external data is checked after its links too (ResolvesInside): its bytes
// end up in a blob that may be shipped elsewhere.
bool StaysInsideFolder(const std::string& reference);
// `target` expressed relative to directory `from_dir` (both made absolute first).
std::string RelativePath(const std::string& target, const std::string& from_dir);
// Whether `path`, its symlinks resolved, lies inside directory `dir` (resolved too); false when
// either cannot be resolved.
bool ResolvesInside(const std::string& path, const std::string& dir);
// Whether the two paths name one file: the same file where both exist (hard links and symlinks
// included), else the same path once made absolute with symlinks of existing parents resolved.
bool SameFile(const std::string& a, const std::string& b);

}  // namespace epctx
