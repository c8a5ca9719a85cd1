// The run loop of a BoundProgram (Run): inputs checked and placed, each node run in its frame
// (run_frame.h) and its outputs checked against their declarations, the outputs handed out; and
// what observers of a run see (ObservedNode).
#include "exec/executor.h"

#include <algorithm>
#include <optional>

#include "exec/output_bindings.h"
#include "exec/program_views.h"
#include "exec/run_frame.h"
#include "util/status_macros.h"

namespace epctx::exec {
namespace {

// The observer of the observed run this thread is inside, for the bodies its kernels run.
struct ActiveObserver {
  NodeObserver* observer = nullptr;
  int depth = 0;
};
thread_local ActiveObserver t_active;

class ActiveObserverScope {
 public:
  explicit ActiveObserverScope(ActiveObserver now) : saved_(t_active) { t_active = now; }
  ~ActiveObserverScope() { t_active = saved_; }
  ActiveObserverScope(const ActiveObserverScope&) = delete;
  ActiveObserverScope& operator=(const ActiveObserverScope&) = delete;

 private:
  ActiveObserver saved_;
};

}  // namespace

std::string_view ObservedNode::name() const {
  return ViewOf(program_.nodes_[index_].node->name());
}
std::string_view ObservedNode::op_type() const {
  return ViewOf(program_.nodes_[index_].node->op_type());
}
const Kernel& ObservedNode::kernel() const {
  return *program_.nodes_[index_].kernel;
}
size_t ObservedNode::input_count() const {
  return program_.nodes_[index_].inputs.size();
}
size_t ObservedNode::output_count() const {
  return program_.nodes_[index_].outputs.size();
}
const Tensor* ObservedNode::value(int32_t v) const {
  if (v < 0) return nullptr;
  const Tensor& t = values_[static_cast<size_t>(v)];
  return t.empty() ? nullptr : &t;
}
const Tensor* ObservedNode::input(size_t i) const {
  return value(program_.nodes_[index_].inputs[i]);
}
bool ObservedNode::input_is_weight(size_t i) const {
  int32_t v = program_.nodes_[index_].inputs[i];
  return v >= 0 && !program_.weights_[static_cast<size_t>(v)].empty();
}
const Tensor* ObservedNode::output(size_t i) const {
  return value(program_.nodes_[index_].outputs[i]);
}

Status RunControl::CheckTerminate(std::string_view where) const {
  if (!terminated()) return Status::Ok();
  return EPCTX_ERROR(kCancelled,
                     "the run was terminated (its RunOptions' terminate flag is set), {}", where);
}

Result<std::vector<Tensor>> BoundProgram::Run(std::span<const Tensor> inputs,
                                              std::span<std::byte> arena, const RunControl& control,
                                              NodeObserver* observer,
                                              std::span<const Tensor> bound_outputs,
                                              RunStats* stats) const {
  if (inputs.size() != inputs_.size()) {
    return EPCTX_ERROR(kInvalidArgument, "program takes {} inputs, {} given", inputs_.size(),
                       inputs.size());
  }
  if (arena.size() < arena_bytes_) {
    return EPCTX_ERROR(kInternal, "arena of {} bytes is smaller than the planned {}", arena.size(),
                       arena_bytes_);
  }
  // However the run ends, the pool's idle buffers are aged (ValueBufferPool::EndRun).
  struct EndOfRun {
    ValueBufferPool* pool;
    ~EndOfRun() {
      if (pool != nullptr) pool->EndRun();
    }
  } end_of_run{buffers_.get()};
  std::vector<Tensor> values(weights_);
  std::vector<uint8_t> heap_owned(values.size(), 0);
  bool shapes_as_declared = true;
  for (size_t i = 0; i < inputs.size(); ++i) {
    // Bodies get their inputs from the node running them, not from a checked session input.
    const Slot& slot = slots_[static_cast<size_t>(inputs_[i])];
    if (!inputs[i].is_tensor() || slot.decl.kind != ValueKind::kTensor || slot.decl.optional) {
      EPCTX_RETURN_IF_ERROR(CheckKindAndType(inputs_[i], inputs[i]));
    } else if (!slot.decl.AcceptsType(inputs[i].dtype())) {
      return EPCTX_ERROR(kInvalidArgument, "input {} is {}, but the program declares {}", i,
                         DataTypeName(inputs[i].dtype()), DataTypeName(slot.decl.dtype));
    }
    values[static_cast<size_t>(inputs_[i])] = inputs[i];
    // ONNX Runtime takes a tensor of any shape for an input declared as a scalar (a [1] sample
    // rate): the shapes computed from it then differ from those inferred at compile time, so
    // this run checks only element types. Kernels check the shapes they are given either way,
    // and an output larger than its planned arena range goes to the heap.
    if (inputs[i].is_tensor() && !HasDeclaredShape(inputs_[i], inputs[i])) {
      shapes_as_declared = false;
    }
  }

  ActiveObserver active = observer != nullptr ? ActiveObserver{observer, 0}
                          : t_active.observer != nullptr
                              ? ActiveObserver{t_active.observer, t_active.depth + 1}
                              : ActiveObserver{};
  std::optional<ActiveObserverScope> scope;
  if (active.observer != nullptr) scope.emplace(active);

  OutputBindings bindings;
  if (!bound_outputs.empty()) EPCTX_RETURN_IF_ERROR(BindOutputs(bound_outputs, bindings));
  RunContext ctx(*this, values, heap_owned, arena, control, shapes_as_declared,
                 bindings.empty() ? nullptr : &bindings);
  for (size_t k = 0; k < nodes_.size(); ++k) {
    const BoundNode& n = nodes_[k];
    if (control.terminated()) {
      return control.CheckTerminate(fmt::format(
          "before {} node '{}'", n.node->op_type()->string_view(), ViewOf(n.node->name())));
    }
    if (!bindings.empty()) PlanBoundOutputs(k, values, bindings);
    ctx.SetNode(&n);
    if (active.observer != nullptr) {
      active.observer->BeforeNode(ObservedNode(*this, k, active.depth, values));
    }
    Status s = n.kernel->Run(ctx);
    if (active.observer != nullptr && s.ok()) {
      active.observer->AfterNode(ObservedNode(*this, k, active.depth, values));
    }
    if (!s.ok()) {
      return Status(s.code(), fmt::format("{} node '{}': {}", n.node->op_type()->string_view(),
                                          ViewOf(n.node->name()), s.message()));
    }
    for (int32_t o : n.outputs) {
      if (o >= 0 && values[static_cast<size_t>(o)].empty()) {
        return EPCTX_ERROR(kInternal, "{} node '{}' did not produce output '{}'",
                           n.node->op_type()->string_view(), ViewOf(n.node->name()), ValueName(o));
      }
      if (o >= 0) {
        Status declared = CheckDeclared(o, values[static_cast<size_t>(o)], shapes_as_declared);
        if (!declared.ok()) {
          return Status(declared.code(),
                        fmt::format("{} node '{}': {}", n.node->op_type()->string_view(),
                                    ViewOf(n.node->name()), declared.message()));
        }
      }
    }
    // Release heap intermediates after their last reader.
    for (int32_t i : n.inputs) {
      if (i >= 0 && slots_[static_cast<size_t>(i)].last_use == static_cast<int>(k) &&
          heap_owned[static_cast<size_t>(i)]) {
        values[static_cast<size_t>(i)] = Tensor();
      }
    }
  }
  return FinishOutputs(values, heap_owned, bindings, stats);
}

}  // namespace epctx::exec
