#include "conformance/execute.h"

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "epctx/compiler.h"
#include "epctx/session.h"
#include "epctx/tensor_io.h"
#include "util/file.h"
#include "util/status_macros.h"

namespace epctx::cli::conformance {
namespace {

// `context`: what was being done. Paths inside `work_dir` (removed after the test) are
// shortened to their file names.
TestOutcome OutcomeOf(const Status& status, const std::string& context,
                      const std::string& work_dir) {
  if (status.ok()) return {TestStatus::kPassed, {}};
  TestStatus s =
      status.code() == StatusCode::kUnsupported ? TestStatus::kUnsupported : TestStatus::kFailed;
  std::string message = context + ": " + status.message();
  std::string prefix = work_dir + "/";
  for (size_t at = message.find(prefix); at != std::string::npos; at = message.find(prefix, at)) {
    message.erase(at, prefix.size());
  }
  return {s, std::move(message)};
}

// ONNX's test data holds bfloat16 values as uint16 tensors (numpy has no bfloat16); where the
// model declares bfloat16, their bits are taken as bfloat16.
Tensor AsDeclaredType(Tensor tensor, const std::vector<DataType>& declared, size_t index) {
  if (index >= declared.size() || declared[index] != DataType::kBFloat16 ||
      tensor.dtype() != DataType::kUint16) {
    return tensor;
  }
  auto owner = std::make_shared<Tensor>(std::move(tensor));
  return Tensor::View(DataType::kBFloat16, owner->shape(), owner->data(), owner);
}

// input_<i>.pb goes to graph input i, as in ONNX's runner.
Result<std::unordered_map<std::string, Tensor>> ReadInputs(const ModelInfo& info,
                                                           const std::string& data_set) {
  EPCTX_ASSIGN_OR_RETURN(size_t count, CountTensorFiles(data_set, "input_"));
  if (count > info.input_names.size()) {
    return EPCTX_ERROR(kInvalidArgument, "{} input files for a model with {} inputs", count,
                       info.input_names.size());
  }
  std::unordered_map<std::string, Tensor> inputs;
  for (size_t i = 0; i < count; ++i) {
    std::string path = fmt::format("{}/input_{}.pb", data_set, i);
    EPCTX_ASSIGN_OR_RETURN(Tensor t, ReadValueProto(path, info.input_files[i]));
    inputs.emplace(info.input_names[i], AsDeclaredType(std::move(t), info.input_dtypes, i));
  }
  return inputs;
}

Status RunDataSet(Session& session, const ModelInfo& info, const std::string& data_set,
                  const Tolerance& tolerance) {
  EPCTX_ASSIGN_OR_RETURN(auto inputs, ReadInputs(info, data_set));
  EPCTX_ASSIGN_OR_RETURN(size_t expected_count, CountTensorFiles(data_set, "output_"));
  auto outputs = session.Run(inputs);
  EPCTX_RETURN_IF_ERROR_CTX(outputs.status(), "run");
  if (outputs->size() != expected_count) {
    return EPCTX_ERROR(kFailedPrecondition, "the session returned {} outputs, the data set has {}",
                       outputs->size(), expected_count);
  }
  const std::vector<ValueInfo>& infos = session.outputs();
  for (size_t i = 0; i < expected_count; ++i) {
    std::string name = i < infos.size() ? infos[i].name : std::to_string(i);
    EPCTX_ASSIGN_OR_RETURN(
        Tensor expected,
        ReadValueProto(fmt::format("{}/output_{}.pb", data_set, i),
                       i < info.output_files.size() ? info.output_files[i] : ValueKind::kTensor));
    expected = AsDeclaredType(std::move(expected), info.output_dtypes, i);
    EPCTX_RETURN_IF_ERROR_CTX(CompareTensors((*outputs)[i], expected, tolerance), "output '{}'",
                              name);
  }
  return Status::Ok();
}

}  // namespace

TestOutcome ExecuteTest(const TestCase& test, const ModelInfo& info, const std::string& work_dir,
                        const ExecuteOptions& options) {
  std::string context_model = work_dir + "/model_ctx.onnx";
  auto compiled = ModelCompiler().CompileToFile(test.model_path(), context_model);
  if (!compiled.ok()) return OutcomeOf(compiled.status(), "compile", work_dir);

  SessionOptions session_options;
  session_options.AddConfigEntry("epctx.fallback", "deny");
  session_options.AddConfigEntry("session.intra_op_num_threads", std::to_string(options.threads));
  auto session = Session::Create(context_model, session_options);
  if (!session.ok()) return OutcomeOf(session.status(), "load", work_dir);
  if (!(*session)->origin().from_context_blob) {
    return {TestStatus::kFailed, "load: the session was not created from the context blob"};
  }

  auto data_sets = ListDataSets(test.dir);
  if (!data_sets.ok()) return OutcomeOf(data_sets.status(), "test data", work_dir);
  if (data_sets->empty()) return {TestStatus::kFailed, "test data: no test_data_set_* directory"};
  for (const std::string& data_set : *data_sets) {
    Status s = RunDataSet(**session, info, data_set, options.tolerance);
    if (!s.ok()) return OutcomeOf(s, BaseName(data_set), work_dir);
  }
  return {TestStatus::kPassed, {}};
}

}  // namespace epctx::cli::conformance
