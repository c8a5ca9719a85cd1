// Binding a program (BoundProgram::Bind): its values' declarations and weights, a kernel for each
// node (and, through control-flow nodes, its bodies), within limits a blob cannot talk its way
// past; and preparing those kernels ahead of the first run (Prepare).
#include <algorithm>

#include "exec/executor.h"
#include "exec/program_views.h"
#include "util/status_macros.h"
#include "util/usable_cores.h"

namespace epctx::exec {

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
  // The declared dims, copied side by side: the executor compares every output with them, and
  // where they lie in the blob, scattered between the rest of the program, a decode step's
  // stream of weights has pushed them out of the caches by the next check (one miss each).
  size_t dim_count = 0;
  for (const Slot& slot : bound->slots_) dim_count += slot.decl.shape.size();
  bound->declared_dims_.reserve(dim_count);
  for (Slot& slot : bound->slots_) {
    const size_t at = bound->declared_dims_.size();
    bound->declared_dims_.insert(bound->declared_dims_.end(), slot.decl.shape.begin(),
                                 slot.decl.shape.end());
    slot.decl.shape =
        std::span<const int64_t>(bound->declared_dims_.data() + at, slot.decl.shape.size());
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

}  // namespace epctx::exec
