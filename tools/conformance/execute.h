// Running one conformance test in this process: compile, load from the blob, run, compare.
#pragma once

#include <string>

#include "conformance/compare.h"
#include "conformance/model_info.h"
#include "conformance/outcome.h"
#include "conformance/suite.h"

namespace epctx::cli::conformance {

struct ExecuteOptions {
  Tolerance tolerance;
  int threads = 1;  // session.intra_op_num_threads
};

// Compiles the test's model.onnx into a context model and blob in `work_dir`
// (ModelCompiler::CompileToFile), loads the context model with epctx.fallback=deny, so that the
// session comes from the blob or not at all, runs every data set and compares every output.
// An error with StatusCode::kUnsupported (the engine does not implement an op, attribute or type)
// makes the test unsupported; any other error, and any wrong output, makes it failed.
TestOutcome ExecuteTest(const TestCase& test, const ModelInfo& info, const std::string& work_dir,
                        const ExecuteOptions& options);

}  // namespace epctx::cli::conformance
