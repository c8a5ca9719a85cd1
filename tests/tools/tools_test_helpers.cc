#include "tools/tools_test_helpers.h"

#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>

namespace epctx::tools_testing {
namespace {

std::string ShellQuote(const std::string& arg) {
  std::string out = "'";
  for (char c : arg) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

}  // namespace

TempDir::TempDir() {
  std::random_device rd;
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::filesystem::path p =
        std::filesystem::temp_directory_path() / ("epctx_tools_test_" + std::to_string(rd()));
    if (std::filesystem::create_directory(p)) {
      path_ = p;
      return;
    }
  }
  throw std::runtime_error("cannot create a temporary directory");
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

CommandResult RunProgram(const std::string& program, const std::vector<std::string>& args,
                         const std::filesystem::path& cwd) {
  TempDir capture;
  std::string command;
  if (!cwd.empty()) command = "cd " + ShellQuote(cwd.string()) + " && ";
  command += ShellQuote(program);
  for (const std::string& arg : args) {
    command += ' ';
    command += ShellQuote(arg);
  }
  command += " >";
  command += ShellQuote(capture / "out");
  command += " 2>";
  command += ShellQuote(capture / "err");
  int status = std::system(command.c_str());
  CommandResult result;
  result.exit_code = (status != -1 && WIFEXITED(status)) ? WEXITSTATUS(status) : -1;
  result.out = ReadFileToString(capture / "out");
  result.err = ReadFileToString(capture / "err");
  return result;
}

CommandResult RunCli(const std::vector<std::string>& args) {
  return RunProgram(EPCTX_CLI_PATH, args);
}

CommandResult RunPython(const std::string& script, const std::filesystem::path& dir) {
  std::string path = (dir / "epctx_test_script.py").string();
  WriteStringToFile(path, script);
  return RunProgram("/usr/bin/python3", {path}, dir);
}

CommandResult SaveMatMulWithExternalData(const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  return RunPython(R"PY(
import numpy as np, onnx
from onnx import TensorProto, helper, numpy_helper
w = numpy_helper.from_array(np.arange(16, dtype=np.float32).reshape(4, 4), "w")
g = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "g",
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])], [w])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
onnx.save(m, "m.onnx", save_as_external_data=True, location="m.onnx.data", size_threshold=0)
)PY",
                   dir);
}

std::string ReadFileToString(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

void WriteStringToFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string OnnxAddTestDir() {
  return "/usr/share/libonnx-testdata/data/node/test_add";
}

}  // namespace epctx::tools_testing
