// The ONNX backend test data on disk: suites of tests, each a model.onnx with test_data_set_*/
// directories holding input_<i>.pb and output_<i>.pb (Debian's libonnx-testdata layout).
#pragma once

#include <string>
#include <vector>

#include "epctx/status.h"

namespace epctx::cli::conformance {

inline constexpr const char* kDefaultDataDir = "/usr/share/libonnx-testdata/data";

// The suites `--suite all` runs, in that order.
inline constexpr const char* kSuites[] = {"node", "pytorch-converted", "pytorch-operator",
                                          "simple"};

struct TestCase {
  std::string suite;  // "node"
  std::string name;   // "test_add"
  std::string dir;    // holds model.onnx and test_data_set_*/

  std::string model_path() const { return dir + "/model.onnx"; }
};

// The tests of `suite` (a directory under `data_dir`) whose name contains `filter`, by name.
Result<std::vector<TestCase>> ListTests(const std::string& data_dir, const std::string& suite,
                                        const std::string& filter);

// The test_data_set_* directories of a test, sorted.
Result<std::vector<std::string>> ListDataSets(const std::string& test_dir);

// How many files "<prefix>*.pb" a data set has: ONNX's runner counts them this way and then reads
// <prefix>0.pb ... <prefix><n-1>.pb.
Result<size_t> CountTensorFiles(const std::string& data_set_dir, const std::string& prefix);

}  // namespace epctx::cli::conformance
