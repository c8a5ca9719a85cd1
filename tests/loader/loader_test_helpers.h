// What the loader tests share: a temporary folder, whole-file reads and writes of blob bytes,
// and counting this process's mappings of a file.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

namespace epctx::loadertest {

using Bytes = std::vector<std::byte>;

// A fresh folder under the system's temporary directory, removed with everything in it.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

// The file's bytes (empty when it cannot be read).
Bytes ReadBytes(const std::string& path);

// Replaces the file's content with `bytes` (truncating it, same inode).
void WriteBytes(const std::string& path, const Bytes& bytes);

// Lines of /proc/self/maps naming `path` (a deleted file's line ends in " (deleted)").
int CountMappings(const std::string& path);

}  // namespace epctx::loadertest
