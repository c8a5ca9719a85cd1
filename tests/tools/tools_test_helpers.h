// Fixtures of the tools tests: temp directories, running the `epctx` binary and python3 snippets.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace epctx::tools_testing {

// A fresh empty directory under the system temp dir, removed by the destructor.
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

struct CommandResult {
  int exit_code = -1;  // -1 when the process did not exit normally
  std::string out;
  std::string err;
};

// Runs `program args...` in `cwd` (the current directory when empty), with stdout and stderr
// captured. The arguments are passed as they are, without shell interpretation.
CommandResult RunProgram(const std::string& program, const std::vector<std::string>& args,
                         const std::filesystem::path& cwd = {});
// Runs bin/epctx.
CommandResult RunCli(const std::vector<std::string>& args);
// Runs `script` with /usr/bin/python3 (which has numpy and onnx) in `dir`; returns the result.
CommandResult RunPython(const std::string& script, const std::filesystem::path& dir);

// Writes dir/m.onnx (y = MatMul(x [1, 4], w [4, 4]), w = 0..15) with w in dir/m.onnx.data,
// creating `dir`.
CommandResult SaveMatMulWithExternalData(const std::filesystem::path& dir);

std::string ReadFileToString(const std::string& path);
void WriteStringToFile(const std::string& path, const std::string& bytes);

// ONNX's test data for the Add operator: model.onnx and
// test_data_set_0/{input_0,input_1,output_0}.pb.
std::string OnnxAddTestDir();

}  // namespace epctx::tools_testing
