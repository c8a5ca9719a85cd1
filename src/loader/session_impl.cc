#include "loader/session_impl.h"

#include "exec/kernel_runtime.h"
#include "program_generated.h"
#include "util/logging.h"
#include "util/status_macros.h"

namespace epctx {
namespace {

// Inputs show their declared dim names; outputs do not (ONNX's inference may have named their
// open dims, unk__0, ...).
std::string NamesOf(const std::vector<ValueInfo>& values, bool dim_names) {
  std::string out;
  for (const ValueInfo& v : values) {
    out += fmt::format("{}{} ({} {})", out.empty() ? "" : ", ", v.name, DataTypeName(v.dtype),
                       dim_names ? ShapeToString(v) : ShapeToString(v.shape));
  }
  return out;
}

}  // namespace

Result<std::unique_ptr<SessionImpl>> SessionImpl::Bind(
    std::shared_ptr<const loader::LoadedBlob> blob, const std::string& partition_name,
    int num_threads, loader::PrepareKernels prepare) {
  const format::BlobView& view = blob->view();
  EPCTX_ASSIGN_OR_RETURN(const fb::Model* model, view.FindModel(partition_name));
  auto impl = std::unique_ptr<SessionImpl>(new SessionImpl());
  const loader::LoadedBlob* raw = blob.get();
  // The weights are views of the blob's bytes: the session holds the blob while they exist.
  EPCTX_ASSIGN_OR_RETURN(impl->program_, exec::BoundProgram::BindModel(view, *model, num_threads));
  for (size_t i = 0; i < impl->program_->input_count(); ++i) {
    impl->inputs_.push_back(impl->program_->input_decl(i).ToValueInfo());
  }
  for (size_t i = 0; i < impl->program_->output_count(); ++i) {
    impl->outputs_.push_back(impl->program_->output_decl(i).ToValueInfo());
  }
  impl->blob_ = std::move(blob);
  // The arena's pages cost nothing until touched: mapping them is part of the preparation.
  if (impl->program_->arena_bytes() > 0) {
    // Huge pages: one fault per 2 MiB instead of one per 4 KiB page, and fewer TLB misses.
    auto arena = AnonymousMemory::Allocate(impl->program_->arena_bytes(),
                                           AnonymousMemory::kHugePageSize, /*huge_pages=*/true);
    if (!arena.ok()) {
      return EPCTX_ERROR(kInternal, "out of memory for a {}-byte activation arena: {}",
                         impl->program_->arena_bytes(), arena.status().message());
    }
    impl->arena_ = std::move(*arena);
  }
  // Beside the kernels, the arena and the weights are mapped ahead of the first run, which would
  // otherwise fault them in as it goes: zero-filling ResNet-50's 6.9 MiB arena cost its first run
  // 2.8 ms on a 1-thread run, and its 123 MB of weights 3-4 ms from the page cache, far more from
  // the disk. The weights first: with the arena first, the first creation in a process took
  // 3.8 ms instead of 1.7 (median of 8), as zero-filling competed with the rest of creation.
  // Then a scratchpad for the run's thread to adopt, likewise (a no-op once a thread has one).
  // The session outlives the job (its destructor cancels it first), so the blob and arena do.
  AnonymousMemory* arena = &impl->arena_;
  // Once a first run that takes every core starts, weights in the page cache are left to it (it
  // faults in what it reads), not those on the disk nor the arena: see docs/KERNELS.md,
  // "Weights mapped ahead".
  auto map_ahead = [raw, arena](const exec::AlsoStop& stop) {
    raw->MapAheadOnce(stop.cancelled, stop.run_started);
    arena->MapAheadForWriting(stop.cancelled);
    exec::WarmUpKernelMemory(stop.cancelled);
  };
  switch (prepare) {
    case loader::PrepareKernels::kBackground: {
      const exec::PrepareWorkers workers = exec::WorkersFor(num_threads);
      impl->preparing_ = exec::PrepareInBackground(impl->program_.get(), workers, map_ahead);
      impl->first_run_finishes_preparing_ = workers.first_run_finishes;
      break;
    }
    case loader::PrepareKernels::kCreation:
      exec::PrepareNow(impl->program_.get(), map_ahead);
      break;
    case loader::PrepareKernels::kFirstRun:
      break;
  }
  impl->partition_name_ = partition_name;
  return impl;
}

Status SessionImpl::Damaged(const Status& why) const {
  return Status(why.code(), fmt::format("model '{}': {}; this run's outputs are discarded, and a "
                                        "new session loads the blob again",
                                        partition_name_, why.message()));
}

Result<std::vector<Tensor>> SessionImpl::OrderInputs(
    const std::unordered_map<std::string, Tensor>& inputs) const {
  for (const auto& [name, tensor] : inputs) {
    bool known = false;
    for (const ValueInfo& v : inputs_) known |= v.name == name;
    if (!known) {
      return EPCTX_ERROR(kInvalidArgument, "unknown input '{}'; the model's inputs are: {}", name,
                         NamesOf(inputs_, true));
    }
  }
  std::vector<Tensor> ordered;
  ordered.reserve(inputs_.size());
  for (const ValueInfo& v : inputs_) {
    auto it = inputs.find(v.name);
    if (it == inputs.end()) {
      return EPCTX_ERROR(kInvalidArgument, "missing input '{}' ({} {})", v.name,
                         DataTypeName(v.dtype), ShapeToString(v));
    }
    EPCTX_RETURN_IF_ERROR(CheckInput(v, it->second));
    ordered.push_back(it->second);
  }
  return ordered;
}

Result<size_t> SessionImpl::FindOutput(const std::string& name) const {
  for (size_t i = 0; i < outputs_.size(); ++i) {
    if (outputs_[i].name == name) return i;
  }
  return EPCTX_ERROR(kInvalidArgument, "unknown output '{}'; the model's outputs are: {}", name,
                     NamesOf(outputs_, false));
}

Result<std::vector<Tensor>> SessionImpl::Run(const std::unordered_map<std::string, Tensor>& inputs,
                                             const std::vector<std::string>& output_names,
                                             const RunOptions* run_options) {
  EPCTX_ASSIGN_OR_RETURN(std::vector<Tensor> ordered, OrderInputs(inputs));
  std::vector<size_t> selected;
  for (const std::string& name : output_names) {
    EPCTX_ASSIGN_OR_RETURN(size_t pos, FindOutput(name));
    selected.push_back(pos);
  }
  EPCTX_ASSIGN_OR_RETURN(std::vector<Tensor> all, RunProgram(ordered, {}, run_options));
  if (output_names.empty()) return all;
  std::vector<Tensor> out;
  for (size_t pos : selected) out.push_back(all[pos]);
  return out;
}

Status SessionImpl::Run(const std::unordered_map<std::string, Tensor>& inputs,
                        std::unordered_map<std::string, Tensor>& outputs,
                        const RunOptions* run_options) {
  EPCTX_ASSIGN_OR_RETURN(std::vector<Tensor> ordered, OrderInputs(inputs));
  std::vector<Tensor> bound(outputs_.size());
  for (const auto& [name, tensor] : outputs) {
    EPCTX_ASSIGN_OR_RETURN(size_t pos, FindOutput(name));
    if (tensor.empty()) continue;  // the run allocates it
    const std::string who = fmt::format("output '{}'", name);
    if (!tensor.is_tensor() || tensor.dtype() == DataType::kString ||
        DataTypeSize(tensor.dtype()) == 0) {
      return EPCTX_ERROR(kInvalidArgument,
                         "{} is bound to {} of {}; only tensors of a numeric type can be bound "
                         "(bind an empty Tensor to have the run allocate it)",
                         who, ValueKindName(tensor.kind()), DataTypeName(tensor.dtype()));
    }
    if (outputs_[pos].kind != ValueKind::kTensor) {
      return EPCTX_ERROR(kInvalidArgument,
                         "{} is {}{}; only tensor outputs can be bound to memory (bind an empty "
                         "Tensor to have the run allocate it)",
                         who, outputs_[pos].optional ? "an optional of " : "",
                         ValueKindName(outputs_[pos].kind));
    }
    if (tensor.byte_size() > 0 && tensor.data() == nullptr) {
      return EPCTX_ERROR(kInvalidArgument, "{} is bound to a tensor without memory", who);
    }
    EPCTX_RETURN_IF_ERROR(CheckInput(outputs_[pos], tensor, who));
    bound[pos] = tensor;
  }
  EPCTX_ASSIGN_OR_RETURN(std::vector<Tensor> all, RunProgram(ordered, bound, run_options));
  for (auto& [name, tensor] : outputs) {
    if (tensor.empty()) tensor = all[*FindOutput(name)];
  }
  return Status::Ok();
}

Result<std::vector<Tensor>> SessionImpl::RunProgram(std::span<const Tensor> inputs,
                                                    std::span<const Tensor> bound_outputs,
                                                    const RunOptions* run_options) {
  std::lock_guard<std::mutex> lock(run_mutex_);
  if (blob_->known_damaged()) return Damaged(blob_->CheckIntact());
  exec::RunControl control;
  control.max_loop_iterations = max_loop_iterations_;
  control.max_value_bytes = max_value_bytes_;
  if (run_options != nullptr) control.terminate = run_options->terminate_.get();
  std::span<std::byte> arena = arena_.mutable_bytes();
  loader::Profiler::Clock::time_point start = loader::Profiler::Clock::now();
  if (first_run_finishes_preparing_) {
    first_run_finishes_preparing_ = false;
    preparing_->FinishNodes();
    if (profiler_ != nullptr) profiler_->RecordSession("finish_preparing", start);
  }
  // Once per thread (and team size): in creation it cost 3-7 ms at 2 threads, waiting for the
  // new thread to be scheduled, where the session creation benchmark sees it.
  const loader::Profiler::Clock::time_point team_start =
      profiler_ != nullptr ? loader::Profiler::Clock::now() : start;
  if (exec::StartThreadTeam(program_->num_threads()) && profiler_ != nullptr) {
    profiler_->RecordSession("thread_team_start", team_start);
  }
  exec::RunStats stats;
  auto all = program_->Run(inputs, arena, control, profiler_.get(), bound_outputs, &stats);
  if (profiler_ != nullptr) {
    profiler_->RecordSession("model_run", start,
                             {{"output_bytes_copied", std::to_string(stats.output_bytes_copied)}});
  }
  // Whatever the run computed, from a blob that changed under it, is not an answer; a kernel
  // error seen meanwhile may be the change's doing too.
  Status intact = blob_->CheckIntact();
  if (!intact.ok()) return Damaged(intact);
  if (!all.ok()) {
    return Status(all.status().code(),
                  fmt::format("model '{}': {}", partition_name_, all.status().message()));
  }
  return std::move(all).value();
}

Result<std::string> SessionImpl::EndProfiling() {
  std::lock_guard<std::mutex> lock(run_mutex_);
  if (profiler_ == nullptr) return std::string();
  return profiler_->End();
}

void SessionImpl::CreationDone() {
  if (preparing_ != nullptr) preparing_->CreationDone();
}

SessionImpl::~SessionImpl() {
  preparing_.reset();  // before the program it prepares
  if (profiler_ == nullptr) return;
  auto written = profiler_->End();
  if (!written.ok()) {
    Logger().warn("profile '{}' not written: {}", profiler_->path(), written.status().message());
  }
}

}  // namespace epctx
