#include "conformance/suite.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "util/status_macros.h"

namespace epctx::cli::conformance {
namespace {

namespace fs = std::filesystem;

// Names of the entries of `dir` for which `keep(entry)` holds, sorted.
template <typename Keep>
Result<std::vector<std::string>> ListDir(const std::string& dir, Keep keep) {
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec) return EPCTX_ERROR(kNotFound, "'{}': cannot list directory: {}", dir, ec.message());
  std::vector<std::string> names;
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    if (keep(*it)) names.push_back(it->path().filename().string());
  }
  if (ec) return EPCTX_ERROR(kIoError, "'{}': cannot list directory: {}", dir, ec.message());
  std::sort(names.begin(), names.end());
  return names;
}

bool IsDirectory(const fs::directory_entry& entry) {
  std::error_code ec;
  return entry.is_directory(ec);
}

}  // namespace

Result<std::vector<TestCase>> ListTests(const std::string& data_dir, const std::string& suite,
                                        const std::string& filter) {
  std::string suite_dir = data_dir + "/" + suite;
  EPCTX_ASSIGN_OR_RETURN(std::vector<std::string> names, ListDir(suite_dir, [](const auto& e) {
                           std::error_code ec;
                           return IsDirectory(e) && fs::exists(e.path() / "model.onnx", ec);
                         }));
  std::vector<TestCase> tests;
  for (std::string& name : names) {
    if (name.find(filter) == std::string::npos) continue;
    std::string dir = suite_dir + "/" + name;
    tests.push_back(TestCase{suite, std::move(name), std::move(dir)});
  }
  return tests;
}

Result<std::vector<std::string>> ListDataSets(const std::string& test_dir) {
  EPCTX_ASSIGN_OR_RETURN(std::vector<std::string> names, ListDir(test_dir, [](const auto& e) {
                           return IsDirectory(e) &&
                                  e.path().filename().string().starts_with("test_data_set");
                         }));
  for (std::string& name : names) name = test_dir + "/" + name;
  return names;
}

Result<size_t> CountTensorFiles(const std::string& data_set_dir, const std::string& prefix) {
  EPCTX_ASSIGN_OR_RETURN(std::vector<std::string> names,
                         ListDir(data_set_dir, [&prefix](const auto& e) {
                           std::string name = e.path().filename().string();
                           return name.starts_with(prefix) && name.ends_with(".pb");
                         }));
  return names.size();
}

}  // namespace epctx::cli::conformance
