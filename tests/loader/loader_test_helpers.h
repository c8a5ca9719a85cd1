// What the loader tests share: a temporary folder, whole-file reads and writes of blob bytes,
// and counting this process's mappings of a file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace onnx {
class GraphProto;
}

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

// Declares the graph's float input "x" and output "y", both of shape [1, width].
void DeclareRowInputAndOutput(onnx::GraphProto& g, int64_t width);

// Writes the ONNX model y = x * W (x: [1, width], W[i][j] = scale * (i + 1) / width) to `path`:
// for x = ones, y[0][0] = scale * (width + 1) / 2, so a run tells which scale's blob it used.
void WriteScaledMatMul(const std::string& path, int64_t width, float scale);

// Lines of /proc/self/maps naming `path` (a deleted file's line ends in " (deleted)").
int CountMappings(const std::string& path);

// The text after `field` (e.g. "Rss:", "VmFlags:") in /proc/self/smaps, one per mapping of
// `path`.
std::vector<std::string> SmapsFieldOfMappings(const std::string& path, const std::string& field);

// Bytes of this process's mappings of `path` that are resident through them (Rss in
// /proc/self/smaps): the pages a kernel could read without a page fault.
int64_t MappedResidentBytes(const std::string& path);

}  // namespace epctx::loadertest
