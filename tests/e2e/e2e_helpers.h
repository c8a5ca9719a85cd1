// Shared fixtures of the end-to-end tests: the exported torchvision models and their references.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "epctx/epctx.h"
#include "test_models.h"

namespace epctx::testing {

// "<models>/<name>.onnx"; the test fails (not skips) when the file is missing.
std::string ModelPath(const std::string& name);
Tensor LoadNpyOrDie(const std::string& path);

struct Comparison {
  double max_abs_diff = 0;
  double max_abs_ref = 0;
  size_t mismatches = 0;  // elements with |a - b| > atol + rtol * |b|
  size_t count = 0;
};
// `actual` vs `reference`, both float32 of the same shape (checked by the caller).
Comparison CompareFloat(const Tensor& actual, const Tensor& reference, double rtol, double atol);

// A fresh empty directory under the system temp dir, removed by the destructor.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::filesystem::path& path() const { return path_; }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

// Copies the model (and nothing else) into `dir`, returning the new path.
std::string CopyModelInto(const std::string& model_path, const std::filesystem::path& dir);

std::vector<char> ReadFileBytes(const std::string& path);

// Lines of /proc/self/maps naming `path`.
int CountMappings(const std::string& path);

// Writes the model given in ONNX's textual syntax to `dir`/`name`.onnx, returning the path.
std::string WriteModel(const TempDir& dir, const std::string& name, const char* text);

// While it lives, this process acts as a CPU without the features `removed` (util/cpu_features.h)
// by setting EPCTX_CPU_FEATURES_MASK.
class CpuFeaturesMask {
 public:
  explicit CpuFeaturesMask(uint64_t removed);
  ~CpuFeaturesMask();
  CpuFeaturesMask(const CpuFeaturesMask&) = delete;
  CpuFeaturesMask& operator=(const CpuFeaturesMask&) = delete;
};

// Compiles `model_path` and loads the context model with the fallback denied, so the blob runs;
// nullptr (and a test failure) when either fails.
std::unique_ptr<Session> CompileAndLoad(const TempDir& dir, const std::string& model_path,
                                        SessionOptions options = {});

}  // namespace epctx::testing
