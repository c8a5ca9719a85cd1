#include "exec/executor.h"

#include <algorithm>
#include <cstring>
#include <optional>

#include "exec/output_bindings.h"
#include "program_generated.h"
#include "util/status_macros.h"
#include "util/usable_cores.h"

namespace epctx::exec {
namespace {

template <typename T>
std::span<const T> SpanOf(const flatbuffers::Vector<T>* v) {
  if (v == nullptr) return {};
  return {v->data(), v->size()};
}

std::string_view ViewOf(const flatbuffers::String* s) {
  return s == nullptr ? std::string_view() : s->string_view();
}

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

Attributes AttributesFromNode(const fb::Node& node) {
  Attributes attrs;
  if (node.attributes() == nullptr) return attrs;
  for (const fb::Attribute* a : *node.attributes()) {
    AttributeValue v;
    v.name = a->name()->string_view();
    v.type = static_cast<AttrType>(a->type());
    v.i = a->i();
    v.f = a->f();
    if (a->s() != nullptr) {
      v.s = std::string_view(reinterpret_cast<const char*>(a->s()->data()), a->s()->size());
    }
    v.ints = SpanOf(a->ints());
    v.floats = SpanOf(a->floats());
    if (a->strings() != nullptr) {
      for (const flatbuffers::String* s : *a->strings()) v.strings.push_back(s->string_view());
    }
    if (v.type == AttrType::kTensor) {
      std::vector<int64_t> dims(v.ints.begin(), v.ints.end());
      v.tensor = Tensor::View(static_cast<DataType>(a->tensor_dtype()), std::move(dims),
                              a->s() ? a->s()->data() : nullptr, nullptr);
    }
    v.graph = a->graph();
    attrs.Add(std::move(v));
  }
  return attrs;
}

Result<std::unique_ptr<BoundProgram>> BoundProgram::Bind(const fb::Program& program,
                                                         const WeightResolver& weights,
                                                         int num_threads) {
  const fb::Program* programs[] = {&program};
  return Bind(programs, 0, weights, num_threads);
}

// One Bind() call over a model's programs: bodies are bound recursively, within limits a blob
// cannot talk its way past (forward references alone still allow deep chains, and a body used by
// several nodes is bound once per use, so sharing could multiply the work).
struct BoundProgram::BindState {
  std::span<const fb::Program* const> programs;
  const WeightResolver& weights;
  int num_threads;
  size_t bound = 0;  // programs bound so far, bodies included
  // Shared by the program and its bodies: a body's outputs become its user's values.
  std::shared_ptr<ValueBufferPool> buffers = ValueBufferPool::Create(kMaxRetainedValueBytes);
};

Result<std::unique_ptr<BoundProgram>> BoundProgram::Bind(
    std::span<const fb::Program* const> programs, uint32_t index, const WeightResolver& weights,
    int num_threads) {
  BindState state{programs, weights, num_threads};
  return BindAt(state, index, 0);
}

Result<std::unique_ptr<BoundProgram>> BoundProgram::BindAt(BindState& state, uint32_t index,
                                                           int depth) {
  const std::span<const fb::Program* const> programs = state.programs;
  const WeightResolver& weights = state.weights;
  const int num_threads = state.num_threads;
  if (index >= programs.size()) {
    return EPCTX_ERROR(kInternal, "program {} of {} does not exist", index, programs.size());
  }
  if (depth > kMaxBodyDepth) {
    return EPCTX_ERROR(kUnsupported, "control-flow bodies are nested more than {} deep",
                       kMaxBodyDepth);
  }
  if (++state.bound > kMaxBoundPrograms) {
    return EPCTX_ERROR(kUnsupported, "binding the model takes more than {} program bindings",
                       kMaxBoundPrograms);
  }
  const fb::Program& program = *programs[index];
  BodyBinder bind_body = [&](int32_t body) -> Result<std::unique_ptr<BoundProgram>> {
    // ValidateProgram guarantees this; checked again because recursion depends on it.
    if (body <= static_cast<int32_t>(index) || static_cast<size_t>(body) >= programs.size()) {
      return EPCTX_ERROR(kCorrupt, "program {} uses body program {}, which does not follow it",
                         index, body);
    }
    return BindAt(state, static_cast<uint32_t>(body), depth + 1);
  };
  auto bound = std::unique_ptr<BoundProgram>(new BoundProgram());
  bound->arena_bytes_ = static_cast<uint64_t>(program.arena_bytes());
  bound->buffers_ = state.buffers;
  bound->num_threads_ = num_threads > 0 ? num_threads : UsableCores();
  size_t value_count = program.values() ? program.values()->size() : 0;
  bound->slots_.resize(value_count);
  bound->weights_.resize(value_count);
  for (size_t i = 0; i < value_count; ++i) {
    const fb::Value* v = program.values()->Get(static_cast<uint32_t>(i));
    bound->slots_[i].arena_offset = v->arena_offset();
    bound->slots_[i].arena_bytes = v->arena_bytes();
    bound->slots_[i].decl = DecodeValue(*v);
    if (v->weight() >= 0) {
      EPCTX_ASSIGN_OR_RETURN(bound->weights_[i], weights(static_cast<uint32_t>(v->weight())));
    }
  }
  auto opset_of = [&](std::string_view domain) -> int64_t {
    if (program.opsets() != nullptr) {
      for (const fb::OpsetImport* op : *program.opsets()) {
        if (ViewOf(op->domain()) == domain) return op->version();
      }
    }
    return 1;
  };
  auto describe = [&](int32_t index, bool is_input) {
    ValueDesc d;
    if (index < 0) {
      d.present = false;
      return d;
    }
    const ValueDecl& decl = bound->slots_[static_cast<size_t>(index)].decl;
    d.kind = decl.kind;
    d.optional = decl.optional;
    d.dtype = decl.dtype;
    d.shape_known = decl.shape_known;
    d.shape.assign(decl.shape.begin(), decl.shape.end());
    if (is_input && !bound->weights_[static_cast<size_t>(index)].empty()) {
      d.constant = &bound->weights_[static_cast<size_t>(index)];
    }
    return d;
  };

  const KernelRegistry& registry = KernelRegistry::Global();
  size_t node_count = program.nodes() ? program.nodes()->size() : 0;
  bound->nodes_.reserve(node_count);
  for (size_t k = 0; k < node_count; ++k) {
    const fb::Node* n = program.nodes()->Get(static_cast<uint32_t>(k));
    Attributes attrs = AttributesFromNode(*n);
    NodeInfo info;
    info.name = ViewOf(n->name());
    info.op_type = n->op_type()->string_view();
    info.domain = ViewOf(n->domain());
    info.opset = opset_of(info.domain);
    info.attrs = &attrs;
    info.implicit_inputs = static_cast<size_t>(n->implicit_inputs());
    info.bind_body = &bind_body;
    BoundNode b;
    b.node = n;
    for (int32_t i : SpanOf(n->inputs())) {
      info.inputs.push_back(describe(i, true));
      b.inputs.push_back(i);
      if (i >= 0) bound->slots_[static_cast<size_t>(i)].last_use = static_cast<int>(k);
    }
    for (int32_t o : SpanOf(n->outputs())) {
      info.outputs.push_back(describe(o, false));
      b.outputs.push_back(o);
    }
    EPCTX_ASSIGN_OR_RETURN(b.kernel, registry.Create(info));
    bound->nodes_.push_back(std::move(b));
  }
  auto ins = SpanOf(program.inputs());
  auto outs = SpanOf(program.outputs());
  bound->inputs_.assign(ins.begin(), ins.end());
  bound->outputs_.assign(outs.begin(), outs.end());
  // Graph outputs live to the end of the run.
  for (int32_t o : bound->outputs_) bound->slots_[static_cast<size_t>(o)].last_use = INT32_MAX;
  return bound;
}

void BoundProgram::Prepare(const std::atomic<bool>& stop, std::atomic<size_t>& next_node) const {
  // The fully static declared shapes, as Kernel::Prepare takes them.
  std::vector<std::vector<int64_t>> shapes(slots_.size());
  std::vector<bool> known(slots_.size(), false);
  for (size_t i = 0; i < slots_.size(); ++i) {
    const Slot& slot = slots_[i];
    known[i] = slot.decl.shape_known && std::all_of(slot.decl.shape.begin(), slot.decl.shape.end(),
                                                    [](int64_t d) { return d >= 0; });
    if (known[i]) shapes[i].assign(slot.decl.shape.begin(), slot.decl.shape.end());
  }
  std::vector<const std::vector<int64_t>*> inputs;
  for (;;) {
    if (stop.load(std::memory_order_relaxed)) return;
    const size_t k = next_node.fetch_add(1, std::memory_order_relaxed);
    if (k >= nodes_.size()) return;
    const BoundNode& n = nodes_[k];
    inputs.clear();
    for (int32_t i : n.inputs) {
      inputs.push_back(i >= 0 && known[static_cast<size_t>(i)] ? &shapes[static_cast<size_t>(i)]
                                                               : nullptr);
    }
    n.kernel->Prepare(inputs, num_threads_);
  }
}

class BoundProgram::RunContext final : public KernelContext {
 public:
  // `shapes_as_declared`: the run's inputs have their declared shapes, so every value must too.
  // `bindings` is null when no output is bound.
  RunContext(const BoundProgram& program, std::vector<Tensor>& values,
             std::vector<uint8_t>& heap_owned, std::span<std::byte> arena,
             const RunControl& control, bool shapes_as_declared, OutputBindings* bindings)
      : program_(program),
        values_(values),
        heap_owned_(heap_owned),
        arena_(arena),
        control_(control),
        shapes_as_declared_(shapes_as_declared),
        bindings_(bindings) {}

  void SetNode(const BoundNode* node) { node_ = node; }

  size_t input_count() const override { return node_->inputs.size(); }
  const Tensor* input(size_t index) const override {
    if (index >= node_->inputs.size()) return nullptr;
    int32_t v = node_->inputs[index];
    if (v < 0) return nullptr;
    const Tensor& t = values_[static_cast<size_t>(v)];
    return t.empty() ? nullptr : &t;
  }
  size_t output_count() const override { return node_->outputs.size(); }
  Result<Tensor*> AllocateOutput(size_t index, DataType type, std::vector<int64_t> shape) override {
    if (index >= node_->outputs.size() || node_->outputs[index] < 0) {
      return EPCTX_ERROR(kInternal, "node '{}' allocated output {} that the program omits",
                         ViewOf(node_->node->name()), index);
    }
    size_t v = static_cast<size_t>(node_->outputs[index]);
    const Slot& slot = program_.slots_[v];
    if (bindings_ != nullptr && bindings_->in_place[v]) return BoundMemory(v, type, shape);
    // Refused before any memory is taken rather than after the node ran (Run checks every output
    // against its declaration): a forged program's attributes must not make a tensor of any size
    // first (a Convolution of a forged blob asked for 4.8 GB).
    if (shapes_as_declared_ && slot.decl.kind == ValueKind::kTensor && !slot.decl.optional &&
        !program_.HasDeclaredShape(static_cast<int32_t>(v), shape)) {
      return program_.DeclarationMismatch(static_cast<int32_t>(v), type, shape);
    }
    uint64_t bytes = 0;
    int64_t count = 1;
    bool fits = slot.arena_offset >= 0;
    for (int64_t d : shape) {
      if (d < 0 || __builtin_mul_overflow(count, d, &count)) fits = false;
    }
    if (fits && !__builtin_mul_overflow(static_cast<uint64_t>(count), DataTypeSize(type), &bytes) &&
        bytes <= static_cast<uint64_t>(slot.arena_bytes) && DataTypeSize(type) > 0) {
      values_[v] = Tensor::View(type, std::move(shape), arena_.data() + slot.arena_offset, nullptr);
      heap_owned_[v] = 0;
    } else {
      EPCTX_ASSIGN_OR_RETURN(values_[v], program_.buffers_->Allocate(type, std::move(shape)));
      heap_owned_[v] = 1;
    }
    return &values_[v];
  }
  Status SetOutput(size_t index, Tensor value) override {
    if (index >= node_->outputs.size() || node_->outputs[index] < 0) {
      return EPCTX_ERROR(kInternal, "node '{}' set output {} that the program omits",
                         ViewOf(node_->node->name()), index);
    }
    const size_t v = static_cast<size_t>(node_->outputs[index]);
    values_[v] = std::move(value);
    // Owned (or outliving the run) by the contract of SetOutput: handed out as it is.
    heap_owned_[v] = 1;
    return Status::Ok();
  }
  int num_threads() const override { return program_.num_threads_; }
  const RunControl& run_control() const override { return control_; }

  bool ShareInput(size_t output, size_t input, const std::vector<int64_t>& shape) override {
    if (output >= node_->outputs.size() || input >= node_->inputs.size()) return false;
    const int32_t in = node_->inputs[input];
    const int32_t out = node_->outputs[output];
    if (in < 0 || out < 0) return false;
    // The kernel copies into the bound memory instead.
    if (bindings_ != nullptr && bindings_->in_place[static_cast<size_t>(out)]) return false;
    const Tensor& x = values_[static_cast<size_t>(in)];
    if (x.empty()) return false;
    Tensor view = x.Reshaped(shape);
    if (view.empty()) return false;
    const Slot& from = program_.slots_[static_cast<size_t>(in)];
    const Slot& to = program_.slots_[static_cast<size_t>(out)];
    if (heap_owned_[static_cast<size_t>(in)]) {
      // Heap memory stays alive, unchanged, as long as any tensor refers to it.
      heap_owned_[static_cast<size_t>(out)] = 1;
    } else if (from.arena_offset >= 0 && to.arena_offset != from.arena_offset) {
      // Arena memory is reused after the input's last reader; only an output the memory plan
      // placed at the same offset (planned as one lifetime) may share it.
      return false;
    } else {
      // The input's own arena place, or memory that outlives the run (a weight, a graph input):
      // handed out as a copy if the output is a graph output.
      heap_owned_[static_cast<size_t>(out)] = 0;
      if (bindings_ != nullptr && from.arena_offset < 0) bindings_->external.push_back(out);
    }
    values_[static_cast<size_t>(out)] = std::move(view);
    return true;
  }

 private:
  // Value `v`, bound to the caller's memory and to be written there: that memory, when the
  // kernel asks for exactly its type and shape (as ONNX Runtime, which refuses a pre-allocated
  // output of another shape rather than reallocating it).
  Result<Tensor*> BoundMemory(size_t v, DataType type, const std::vector<int64_t>& shape) {
    const Tensor& bound = *bindings_->buffer[v];
    if (type != bound.dtype() || shape != bound.shape()) {
      return EPCTX_ERROR(kInvalidArgument,
                         "output '{}' is bound to {} {}, but the node makes {} {}",
                         program_.ValueName(static_cast<int32_t>(v)), DataTypeName(bound.dtype()),
                         ShapeToString(bound.shape()), DataTypeName(type), ShapeToString(shape));
    }
    values_[v] = bound;
    heap_owned_[v] = 0;
    return &values_[v];
  }

  const BoundProgram& program_;
  std::vector<Tensor>& values_;
  std::vector<uint8_t>& heap_owned_;
  std::span<std::byte> arena_;
  const RunControl& control_;
  const bool shapes_as_declared_;
  OutputBindings* const bindings_;
  const BoundNode* node_ = nullptr;
};

Status RunControl::CheckTerminate(std::string_view where) const {
  if (!terminated()) return Status::Ok();
  return EPCTX_ERROR(kCancelled, "the run was terminated (RunOptions::SetTerminate), {}", where);
}

bool BoundProgram::HasDeclaredShape(int32_t v, const Tensor& t) const {
  return HasDeclaredShape(v, t.shape());
}

bool BoundProgram::HasDeclaredShape(int32_t v, std::span<const int64_t> shape) const {
  return slots_[static_cast<size_t>(v)].decl.HasShape(shape);
}

namespace {

// A value of `given` type may fill a slot declared `declared`: the same type, or any numeric type
// where the compiler did not know it (a string never reaches a kernel not bound for strings).
bool TypeFits(DataType declared, DataType given) {
  return given == declared || (declared == DataType::kUndefined && given != DataType::kString);
}

}  // namespace

Status BoundProgram::CheckKindAndType(int32_t v, const Tensor& t) const {
  const Slot& slot = slots_[static_cast<size_t>(v)];
  const std::string_view name = slot.decl.name;
  if (t.kind() == ValueKind::kNone) {
    if (slot.decl.optional) return Status::Ok();
    return EPCTX_ERROR(kInvalidArgument,
                       "value '{}' is an empty optional, but the program "
                       "declares {} that is not optional",
                       name, ValueKindName(slot.decl.kind));
  }
  if (t.kind() != slot.decl.kind) {
    return EPCTX_ERROR(kInvalidArgument, "value '{}' is {}, but the program declares {}{}", name,
                       ValueKindName(t.kind()), slot.decl.optional ? "an optional of " : "",
                       ValueKindName(slot.decl.kind));
  }
  if (!TypeFits(slot.decl.dtype, t.dtype()) &&
      !(t.kind() == ValueKind::kSequence && t.dtype() == DataType::kUndefined &&
        t.elements().empty())) {
    return EPCTX_ERROR(kInvalidArgument, "value '{}' is {} of {}, but the program declares {}",
                       name, ValueKindName(t.kind()), DataTypeName(t.dtype()),
                       DataTypeName(slot.decl.dtype));
  }
  return Status::Ok();
}

Status BoundProgram::CheckDeclared(int32_t v, const Tensor& t, bool check_shape) const {
  const Slot& slot = slots_[static_cast<size_t>(v)];
  if (!t.is_tensor() || slot.decl.kind != ValueKind::kTensor || slot.decl.optional) {
    return CheckKindAndType(v, t);
  }
  const bool type_fits = TypeFits(slot.decl.dtype, t.dtype());
  if (type_fits && (!check_shape || HasDeclaredShape(v, t))) return Status::Ok();
  return DeclarationMismatch(v, t.dtype(), t.shape());
}

Status BoundProgram::DeclarationMismatch(int32_t v, DataType type,
                                         const std::vector<int64_t>& shape) const {
  const Slot& slot = slots_[static_cast<size_t>(v)];
  std::vector<int64_t> declared(slot.decl.shape.begin(), slot.decl.shape.end());
  return EPCTX_ERROR(kInvalidArgument, "value '{}' is {} {}, but the program declares {} {}",
                     slot.decl.name, DataTypeName(type), ShapeToString(shape),
                     DataTypeName(slot.decl.dtype),
                     slot.decl.shape_known ? ShapeToString(declared) : "of any shape");
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
  std::vector<Tensor> values(weights_);
  std::vector<uint8_t> heap_owned(values.size(), 0);
  bool shapes_as_declared = true;
  for (size_t i = 0; i < inputs.size(); ++i) {
    // Bodies get their inputs from the node running them, not from a checked session input.
    const Slot& slot = slots_[static_cast<size_t>(inputs_[i])];
    if (!inputs[i].is_tensor() || slot.decl.kind != ValueKind::kTensor || slot.decl.optional) {
      EPCTX_RETURN_IF_ERROR(CheckKindAndType(inputs_[i], inputs[i]));
    } else if (!TypeFits(slot.decl.dtype, inputs[i].dtype())) {
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
