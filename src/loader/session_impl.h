// A bound program ready to run, and the blob it uses in place.
#pragma once

#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "epctx/session.h"
#include "exec/executor.h"
#include "exec/kernel_preparer.h"
#include "loader/blob_registry.h"
#include "loader/engine_options.h"
#include "loader/profiler.h"
#include "util/anonymous_memory.h"

namespace epctx {

class SessionImpl {
 public:
  // Binds model `partition_name` of `blob`: O(nodes), no weight bytes touched.
  // `prepare` says when the kernels' oneDNN primitives are made (Kernel::Prepare): by the
  // preparer's threads while the caller goes on (kBackground), here before returning, on every
  // core (kCreation), or by the first run that needs each (kFirstRun).
  static Result<std::unique_ptr<SessionImpl>> Bind(std::shared_ptr<const loader::LoadedBlob> blob,
                                                   const std::string& partition_name,
                                                   int num_threads, loader::PrepareKernels prepare);
  // epctx.max_loop_iterations (0: no limit).
  void set_max_loop_iterations(int64_t limit) { max_loop_iterations_ = limit; }
  // epctx.max_value_bytes (0: no limit).
  void set_max_value_bytes(int64_t limit) { max_value_bytes_ = limit; }

  const std::vector<ValueInfo>& inputs() const { return inputs_; }
  const std::vector<ValueInfo>& outputs() const { return outputs_; }
  SessionOrigin& origin() { return origin_; }
  ModelMetadata& metadata() { return metadata_; }

  // `run_options` may be null.
  Result<std::vector<Tensor>> Run(const std::unordered_map<std::string, Tensor>& inputs,
                                  const std::vector<std::string>& output_names,
                                  const RunOptions* run_options);
  // Session::Run into bound outputs.
  Status Run(const std::unordered_map<std::string, Tensor>& inputs,
             std::unordered_map<std::string, Tensor>& outputs, const RunOptions* run_options);

  // Profiling (epctx.profile_file): the profiler that recorded the creation takes the runs too.
  void SetProfiler(std::unique_ptr<loader::Profiler> profiler) { profiler_ = std::move(profiler); }
  // Creation is over: the background preparation may take the cores the caller's thread had
  // (exec::PrepareWorkers).
  void CreationDone();
  Result<std::string> EndProfiling();
  // Writes a profile not ended yet.
  ~SessionImpl();

 private:
  SessionImpl() = default;
  // The error of a run whose blob changed under it.
  Status Damaged(const Status& why) const;
  // `inputs` in the model's order, each checked (CheckInput); unknown and missing names refused.
  Result<std::vector<Tensor>> OrderInputs(
      const std::unordered_map<std::string, Tensor>& inputs) const;
  // The position of output `name`, or the error naming the model's outputs.
  Result<size_t> FindOutput(const std::string& name) const;
  // Runs the program (serialized), profiled when profiling: every output, in order.
  Result<std::vector<Tensor>> RunProgram(std::span<const Tensor> inputs,
                                         std::span<const Tensor> bound_outputs,
                                         const RunOptions* run_options);

  std::shared_ptr<const loader::LoadedBlob> blob_;
  std::unique_ptr<exec::BoundProgram> program_;
  std::vector<ValueInfo> inputs_;
  std::vector<ValueInfo> outputs_;
  SessionOrigin origin_;
  ModelMetadata metadata_;
  std::string partition_name_;
  int64_t max_loop_iterations_ = 0;
  int64_t max_value_bytes_ = 0;
  std::mutex run_mutex_;
  AnonymousMemory arena_;                       // allocated at creation, mapped ahead
  std::unique_ptr<loader::Profiler> profiler_;  // null unless profiling
  // The background preparation of program_'s kernels; cancelled (and waited for) first when the
  // session goes.
  std::unique_ptr<exec::PrepareTicket> preparing_;
  // The first run finishes preparing_'s nodes before it starts (PrepareWorkers); guarded by
  // run_mutex_.
  bool first_run_finishes_preparing_ = false;
};

}  // namespace epctx
