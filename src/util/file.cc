#include "util/file.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <memory>
#include <random>
#include <string_view>
#include <tuple>

#include "util/status_macros.h"
#include "util/temporary_files.h"

namespace epctx {
namespace {

std::string ErrnoText(int err) {
  return std::strerror(err);
}

FileIdentity IdentityFromStat(const struct stat& st) {
  FileIdentity id;
  id.device = static_cast<uint64_t>(st.st_dev);
  id.inode = static_cast<uint64_t>(st.st_ino);
  id.size = static_cast<uint64_t>(st.st_size);
  id.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  return id;
}

constexpr size_t kHugePageSize = size_t{2} << 20;

// Maps `size` bytes of `fd` read-only with `flags`, starting at a 2 MiB boundary when the file
// spans one. Linux (6.x, ext4 and others with large folios) caches a file written in whole 2 MiB
// chunks, or read back through a mapping advised MADV_HUGEPAGE, in 2 MiB folios; a mapping whose
// addresses agree with the file offsets modulo 2 MiB maps each such folio with one page-table entry
// on its first touch instead of one fault per 64 KiB. For a 400 MiB blob that is most of a first
// run's fault cost.
void* MapAtHugePageBoundary(int fd, size_t size, int flags) {
  if (size < kHugePageSize) return ::mmap(nullptr, size, PROT_READ, flags, fd, 0);
  // Reserve the file's size plus one huge page of slack, map the file over the first boundary
  // inside the reservation, then give back the slack on both sides.
  const size_t reserve = size + kHugePageSize;
  void* raw =
      ::mmap(nullptr, reserve, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (raw == MAP_FAILED) return ::mmap(nullptr, size, PROT_READ, flags, fd, 0);
  auto* begin = static_cast<std::byte*>(raw);
  const size_t misalignment = reinterpret_cast<uintptr_t>(begin) % kHugePageSize;
  std::byte* aligned = begin + (misalignment == 0 ? 0 : kHugePageSize - misalignment);
  void* addr = ::mmap(aligned, size, PROT_READ, flags | MAP_FIXED, fd, 0);
  if (addr == MAP_FAILED) {
    int err = errno;
    ::munmap(raw, reserve);
    errno = err;
    return MAP_FAILED;
  }
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  std::byte* mapped_end = aligned + (size + page - 1) / page * page;
  if (aligned > begin) ::munmap(begin, static_cast<size_t>(aligned - begin));
  if (begin + reserve > mapped_end) {
    ::munmap(mapped_end, static_cast<size_t>(begin + reserve - mapped_end));
  }
  return addr;
}

}  // namespace

std::string EscapedPath(std::string_view path) {
  std::string out;
  out.reserve(path.size());
  for (char c : path) {
    const auto byte = static_cast<unsigned char>(c);
    switch (c) {
      case '\0':
        out += "\\0";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\\':
        out += "\\\\";
        break;
      default:
        if (byte < 0x20 || byte == 0x7F) {
          out += fmt::format("\\x{:02X}", byte);
        } else {
          out += c;
        }
    }
  }
  return out;
}

Status CheckPath(std::string_view path, std::string_view what) {
  const size_t nul = path.find('\0');
  if (nul == std::string_view::npos) return Status::Ok();
  return EPCTX_ERROR(kInvalidArgument,
                     "{} '{}' contains a NUL byte: the system would see only '{}'", what,
                     EscapedPath(path), EscapedPath(path.substr(0, nul)));
}

void UniqueFd::reset() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

bool FileIdentity::operator<(const FileIdentity& o) const {
  return std::tie(device, inode, size, mtime_ns) < std::tie(o.device, o.inode, o.size, o.mtime_ns);
}

Result<FileIdentity> StatFile(const std::string& path) {
  EPCTX_RETURN_IF_ERROR(CheckPath(path));
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    int err = errno;
    if (err == ENOENT) return EPCTX_ERROR(kNotFound, "'{}': file not found", path);
    return EPCTX_ERROR(kIoError, "'{}': stat failed: {}", path, ErrnoText(err));
  }
  return IdentityFromStat(st);
}

Result<FileIdentity> StatFd(const UniqueFd& fd, const std::string& path) {
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) {
    return EPCTX_ERROR(kIoError, "'{}': fstat failed: {}", path, ErrnoText(errno));
  }
  if (!S_ISREG(st.st_mode)) return EPCTX_ERROR(kIoError, "'{}': not a regular file", path);
  return IdentityFromStat(st);
}

Result<UniqueFd> OpenReadOnly(const std::string& path, int flags) {
  EPCTX_RETURN_IF_ERROR(CheckPath(path));
  // O_NONBLOCK: opening a FIFO would otherwise wait for a writer, forever.
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | flags));
  if (!fd.valid()) {
    int err = errno;
    if (err == ENOENT) return EPCTX_ERROR(kNotFound, "'{}': file not found", path);
    return EPCTX_ERROR(kIoError, "'{}': cannot open: {}", path, ErrnoText(err));
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) {
    return EPCTX_ERROR(kIoError, "'{}': fstat failed: {}", path, ErrnoText(errno));
  }
  if (!S_ISREG(st.st_mode)) {
    return EPCTX_ERROR(kInvalidArgument, "'{}' is not a regular file ({})", path,
                       S_ISDIR(st.st_mode)    ? "a directory"
                       : S_ISFIFO(st.st_mode) ? "a FIFO"
                       : S_ISCHR(st.st_mode)  ? "a character device"
                       : S_ISBLK(st.st_mode)  ? "a block device"
                                              : "a socket");
  }
  int status = ::fcntl(fd.get(), F_GETFL);
  if (status == -1 || ::fcntl(fd.get(), F_SETFL, status & ~O_NONBLOCK) == -1) {
    return EPCTX_ERROR(kIoError, "'{}': fcntl failed: {}", path, ErrnoText(errno));
  }
  return fd;
}

Result<MappedFile> MappedFile::Open(const std::string& path, Populate populate) {
  EPCTX_ASSIGN_OR_RETURN(UniqueFd fd, OpenReadOnly(path));
  return Map(fd, path, populate);
}

Result<MappedFile> MappedFile::Map(const UniqueFd& fd, const std::string& path, Populate populate,
                                   HugePages huge_pages) {
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) {
    return EPCTX_ERROR(kIoError, "'{}': fstat failed: {}", path, ErrnoText(errno));
  }
  if (!S_ISREG(st.st_mode)) return EPCTX_ERROR(kIoError, "'{}': not a regular file", path);
  if (st.st_size == 0) return EPCTX_ERROR(kCorrupt, "'{}': file is empty", path);
  const size_t size = static_cast<size_t>(st.st_size);
  const bool advise = huge_pages == HugePages::kAdvise;
  // Advised, the mapping is populated after the advice (MAP_POPULATE would read first).
  int flags = MAP_SHARED | (populate == Populate::kYes && !advise ? MAP_POPULATE : 0);
  void* addr = MapAtHugePageBoundary(fd.get(), size, flags);
  if (addr != MAP_FAILED && advise) {
    (void)::madvise(addr, size, MADV_HUGEPAGE);  // advice only: a kernel without THP ignores it
    if (populate == Populate::kYes && ::madvise(addr, size, MADV_POPULATE_READ) != 0) {
      // Before Linux 5.14 (EINVAL), or a range the file no longer covers: map it again the way
      // populate mode always did.
      ::munmap(addr, size);
      addr = MapAtHugePageBoundary(fd.get(), size, MAP_SHARED | MAP_POPULATE);
    }
  }
  if (addr == MAP_FAILED) {
    return EPCTX_ERROR(kIoError, "'{}': mmap of {} bytes failed: {}", path, st.st_size,
                       ErrnoText(errno));
  }
  MappedFile file;
  file.data_ = static_cast<const std::byte*>(addr);
  file.size_ = size;
  file.identity_ = IdentityFromStat(st);
  file.path_ = path;
  return file;
}

void MappedFile::ReleasePages(std::span<const std::byte> range) const {
  if (data_ == nullptr || range.empty() || range.data() < data_ ||
      static_cast<size_t>(range.data() - data_) > size_ ||
      range.size() > size_ - static_cast<size_t>(range.data() - data_)) {
    return;
  }
  const uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(range.data()) + page - 1) / page * page;
  const uintptr_t end = (reinterpret_cast<uintptr_t>(range.data()) + range.size()) / page * page;
  if (end > begin) {
    (void)::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
  }
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(const_cast<std::byte*>(data_), size_);
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      identity_(other.identity_),
      path_(std::move(other.path_)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    if (data_ != nullptr) ::munmap(const_cast<std::byte*>(data_), size_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    identity_ = other.identity_;
    path_ = std::move(other.path_);
  }
  return *this;
}

Result<std::string> ReadWholeFile(const std::string& path) {
  EPCTX_ASSIGN_OR_RETURN(UniqueFd fd, OpenReadOnly(path));
  std::string out;
  char buf[1 << 16];
  while (true) {
    ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      return EPCTX_ERROR(kIoError, "'{}': read failed: {}", path, ErrnoText(errno));
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

namespace {

// The process that made temporary `name` (".<file>.tmp-<pid>-<random>"), or 0 when the name is
// not one of ours.
pid_t TemporaryOwner(std::string_view name) {
  size_t at = name.rfind(".tmp-");
  if (name.empty() || name[0] != '.' || at == std::string_view::npos) return 0;
  std::string_view rest = name.substr(at + 5);
  size_t dash = rest.find('-');
  if (dash == std::string_view::npos || rest.size() - dash - 1 != 8) return 0;
  pid_t pid = 0;
  auto [end, ec] = std::from_chars(rest.data(), rest.data() + dash, pid);
  if (ec != std::errc() || end != rest.data() + dash || pid <= 0) return 0;
  return pid;
}

}  // namespace

size_t RemoveStaleTemporaries(const std::string& dir) {
  size_t removed = 0;
  if (!CheckPath(dir).ok()) return 0;
  std::unique_ptr<DIR, int (*)(DIR*)> d(::opendir(dir.c_str()), ::closedir);
  if (!d) return 0;
  while (const dirent* e = ::readdir(d.get())) {
    pid_t owner = TemporaryOwner(e->d_name);
    // Only the temporaries of processes that no longer exist: a live writer keeps its own.
    if (owner == 0 || owner == ::getpid() || ::kill(owner, 0) == 0 || errno != ESRCH) continue;
    if (::unlinkat(::dirfd(d.get()), e->d_name, 0) == 0) ++removed;
  }
  return removed;
}

Result<AtomicFileWriter> AtomicFileWriter::Create(const std::string& path) {
  EPCTX_RETURN_IF_ERROR(CheckPath(path));
  RemoveStaleTemporaries(DirName(path));
  std::random_device rd;
  std::string temp =
      fmt::format("{}/.{}.tmp-{}-{:08x}", DirName(path), BaseName(path), ::getpid(), rd());
  // Read and write: a streaming blob writer reads back what it stored to confirm duplicates.
  UniqueFd fd(::open(temp.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
  if (!fd.valid()) {
    return EPCTX_ERROR(kIoError, "'{}': cannot create temporary file '{}': {}", path, temp,
                       ErrnoText(errno));
  }
  const int registered = RegisterTemporary(temp);
  return AtomicFileWriter(path, temp, std::move(fd), registered);
}

AtomicFileWriter::AtomicFileWriter(AtomicFileWriter&& other) noexcept
    : path_(std::move(other.path_)),
      temp_path_(std::move(other.temp_path_)),
      fd_(std::move(other.fd_)),
      registered_(std::exchange(other.registered_, -1)),
      committed_(std::exchange(other.committed_, true)) {}

AtomicFileWriter::~AtomicFileWriter() {
  if (!committed_ && !temp_path_.empty()) {
    fd_.reset();
    ::unlink(temp_path_.c_str());
  }
  UnregisterTemporary(registered_);
}

Status AtomicFileWriter::WriteAt(uint64_t offset, std::span<const std::byte> bytes) {
  const std::byte* p = bytes.data();
  size_t left = bytes.size();
  while (left > 0) {
    ssize_t n = ::pwrite(fd_.get(), p, left, static_cast<off_t>(offset));
    if (n < 0) {
      if (errno == EINTR) continue;
      return EPCTX_ERROR(kIoError, "'{}': write failed: {}", temp_path_, ErrnoText(errno));
    }
    p += n;
    left -= static_cast<size_t>(n);
    offset += static_cast<uint64_t>(n);
  }
  return Status::Ok();
}

Status AtomicFileWriter::ReadAt(uint64_t offset, std::span<std::byte> out) const {
  std::byte* p = out.data();
  size_t left = out.size();
  while (left > 0) {
    ssize_t n = ::pread(fd_.get(), p, left, static_cast<off_t>(offset));
    if (n < 0) {
      if (errno == EINTR) continue;
      return EPCTX_ERROR(kIoError, "'{}': read failed: {}", temp_path_, ErrnoText(errno));
    }
    if (n == 0) {
      return EPCTX_ERROR(kIoError, "'{}': read at {} ends early ({} bytes missing)", temp_path_,
                         offset, left);
    }
    p += n;
    left -= static_cast<size_t>(n);
    offset += static_cast<uint64_t>(n);
  }
  return Status::Ok();
}

void AtomicFileWriter::StartWriteback(uint64_t offset, uint64_t length) const {
  (void)::sync_file_range(fd_.get(), static_cast<off64_t>(offset), static_cast<off64_t>(length),
                          SYNC_FILE_RANGE_WRITE);
}

Status AtomicFileWriter::Commit() {
  if (::fsync(fd_.get()) != 0) {
    return EPCTX_ERROR(kIoError, "'{}': fsync failed: {}", temp_path_, ErrnoText(errno));
  }
  fd_.reset();
  if (::rename(temp_path_.c_str(), path_.c_str()) != 0) {
    return EPCTX_ERROR(kIoError, "'{}': rename from '{}' failed: {}", path_, temp_path_,
                       ErrnoText(errno));
  }
  committed_ = true;
  UnregisterTemporary(std::exchange(registered_, -1));
  // Make the rename itself durable.
  UniqueFd dir(::open(DirName(path_).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir.valid()) ::fsync(dir.get());
  return Status::Ok();
}

Status WriteFileAtomically(const std::string& path, std::span<const std::byte> bytes) {
  EPCTX_ASSIGN_OR_RETURN(AtomicFileWriter writer, AtomicFileWriter::Create(path));
  EPCTX_RETURN_IF_ERROR(writer.WriteAt(0, bytes));
  return writer.Commit();
}

Status CreateDirectories(const std::string& dir) {
  EPCTX_RETURN_IF_ERROR(CheckPath(dir));
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return EPCTX_ERROR(kIoError, "'{}': cannot create directory: {}", dir, ec.message());
  return Status::Ok();
}

std::string DirName(const std::string& path) {
  std::filesystem::path p(path);
  std::string parent = p.parent_path().string();
  return parent.empty() ? "." : parent;
}

std::string BaseName(const std::string& path) {
  return std::filesystem::path(path).filename().string();
}

std::string JoinPath(const std::string& dir, const std::string& relative) {
  std::filesystem::path rel(relative);
  if (rel.is_absolute()) return relative;
  return (std::filesystem::path(dir) / rel).lexically_normal().string();
}

bool StaysInsideFolder(const std::string& reference) {
  std::filesystem::path p(reference);
  if (reference.empty() || p.is_absolute()) return false;
  std::filesystem::path normal = p.lexically_normal();
  return normal.empty() || *normal.begin() != "..";
}

std::string RelativePath(const std::string& target, const std::string& from_dir) {
  std::error_code ec;
  auto abs_target = std::filesystem::absolute(target, ec);
  auto abs_dir = std::filesystem::absolute(from_dir, ec);
  return abs_target.lexically_normal().lexically_relative(abs_dir.lexically_normal()).string();
}

bool ResolvesInside(const std::string& path, const std::string& dir) {
  std::error_code ec;
  const auto resolved = std::filesystem::weakly_canonical(path, ec);
  if (ec) return false;
  const auto root = std::filesystem::weakly_canonical(dir, ec);
  if (ec) return false;
  auto r = resolved.begin();
  for (const auto& part : root) {
    if (part.empty()) continue;  // a trailing separator
    if (r == resolved.end() || *r != part) return false;
    ++r;
  }
  return true;
}

bool SameFile(const std::string& a, const std::string& b) {
  std::error_code ec;
  if (std::filesystem::equivalent(a, b, ec)) return true;
  auto ca = std::filesystem::weakly_canonical(a, ec);
  if (ec) return false;
  auto cb = std::filesystem::weakly_canonical(b, ec);
  return !ec && ca == cb;
}

}  // namespace epctx
