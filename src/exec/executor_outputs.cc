// Program outputs bound to the caller's memory (ONNX Runtime's IOBinding), apart from the loop
// that runs the nodes: which node may write a bound output into that memory, and how the run's
// outputs are handed out after its last node. The rule that keeps aliasing safe is in one place,
// PlanBoundOutputs: a caller may bind an output to an input's own memory (the shared past/present
// KV buffer of a decode loop), and the node making it may then read that input while writing.
#include <cstring>

#include "exec/executor.h"
#include "exec/output_bindings.h"
#include "program_generated.h"
#include "util/status_macros.h"

namespace epctx::exec {

std::string_view BoundProgram::ValueName(int32_t v) const {
  return slots_[static_cast<size_t>(v)].decl.name;
}

Status BoundProgram::BindOutputs(std::span<const Tensor> bound, OutputBindings& bindings) const {
  if (bound.size() != outputs_.size()) {
    return EPCTX_ERROR(kInternal, "{} bound outputs given for a program of {} outputs",
                       bound.size(), outputs_.size());
  }
  bindings.buffer.assign(slots_.size(), nullptr);
  bindings.in_place.assign(slots_.size(), 0);
  bindings.external.assign(inputs_.begin(), inputs_.end());
  for (size_t i = 0; i < bound.size(); ++i) {
    const Tensor& b = bound[i];
    if (b.empty()) continue;
    const int32_t v = outputs_[i];
    if (!b.is_tensor() || DataTypeSize(b.dtype()) == 0 ||
        (b.byte_size() > 0 && b.data() == nullptr)) {
      return EPCTX_ERROR(kInvalidArgument,
                         "output '{}' is bound to {} of {}; only numeric tensors of memory can "
                         "be bound",
                         ValueName(v), ValueKindName(b.kind()), DataTypeName(b.dtype()));
    }
    if (bindings.buffer[static_cast<size_t>(v)] != nullptr) {
      return EPCTX_ERROR(kInvalidArgument, "output '{}' is bound twice", ValueName(v));
    }
    for (size_t j = 0; j < i; ++j) {
      if (MemoryOverlaps(b, bound[j])) {
        return EPCTX_ERROR(kInvalidArgument,
                           "outputs '{}' and '{}' are bound to overlapping memory",
                           ValueName(outputs_[j]), ValueName(v));
      }
    }
    bindings.buffer[static_cast<size_t>(v)] = &b;
  }
  return Status::Ok();
}

// Node `k` may write a bound output straight into its bound memory B when nothing can see B's
// old contents change too early:
// - B overlaps no input's memory (nor a view of one): it is the caller's alone.
// - Otherwise every value viewing that memory must be read by no node after `k` and be no
//   program output (a read after the write would see the new contents, and an output returning
//   the input would return them). Then, when node `k` does not read that memory itself, B is
//   free once `k` runs; when it reads it as exactly one of its inputs, of exactly B's bytes, the
//   kernel decides (Kernel::WritesInPlace: GroupQueryAttention writes its presents over its
//   pasts, ONNX Runtime's shared KV buffer). Any other overlap is computed apart and copied.
void BoundProgram::PlanBoundOutputs(size_t k, const std::vector<Tensor>& values,
                                    OutputBindings& bindings) const {
  const BoundNode& n = nodes_[k];
  std::vector<int32_t> input_of_output(n.outputs.size(), -1);
  bool ask_kernel = false;
  for (size_t i = 0; i < n.outputs.size(); ++i) {
    const int32_t o = n.outputs[i];
    if (o < 0 || bindings.buffer[static_cast<size_t>(o)] == nullptr) continue;
    const Tensor& buffer = *bindings.buffer[static_cast<size_t>(o)];
    uint8_t& in_place = bindings.in_place[static_cast<size_t>(o)];
    in_place = 0;
    bool overlaps = false;
    bool seen_later = false;
    for (int32_t w : bindings.external) {
      if (!MemoryOverlaps(values[static_cast<size_t>(w)], buffer)) continue;
      overlaps = true;
      seen_later |= slots_[static_cast<size_t>(w)].last_use > static_cast<int>(k);
    }
    if (!overlaps) {
      in_place = 1;
      continue;
    }
    if (seen_later) continue;
    int32_t same = -1;
    bool other_overlap = false;
    for (size_t j = 0; j < n.inputs.size(); ++j) {
      const int32_t in = n.inputs[j];
      if (in < 0 || !MemoryOverlaps(values[static_cast<size_t>(in)], buffer)) continue;
      if (same < 0 && SameMemory(values[static_cast<size_t>(in)], buffer)) {
        same = static_cast<int32_t>(j);
      } else {
        other_overlap = true;
      }
    }
    if (other_overlap) continue;
    if (same < 0) {
      in_place = 1;
      continue;
    }
    input_of_output[i] = same;
    ask_kernel = true;
  }
  if (!ask_kernel || !n.kernel->WritesInPlace(input_of_output)) return;
  for (size_t i = 0; i < n.outputs.size(); ++i) {
    if (input_of_output[i] >= 0) bindings.in_place[static_cast<size_t>(n.outputs[i])] = 1;
  }
}

namespace {

// Sequence elements own their memory (kernels/sequence), except those of a sequence the caller
// gave as an input: views of the caller's arrays, which the caller may free once the run returns.
// `sequence` with every element that shares memory with such an element copied.
Result<Tensor> WithOwnElements(const Tensor& sequence, std::span<const Tensor* const> callers,
                               uint64_t& copied) {
  std::vector<Tensor> elements = sequence.elements();
  bool changed = false;
  for (Tensor& e : elements) {
    for (const Tensor* c : callers) {
      if (!MemoryOverlaps(e, *c)) continue;
      EPCTX_ASSIGN_OR_RETURN(e, e.Clone());
      copied += e.byte_size();
      changed = true;
      break;
    }
  }
  return changed ? Tensor::Sequence(sequence.dtype(), std::move(elements)) : sequence;
}

}  // namespace

Result<std::vector<Tensor>> BoundProgram::FinishOutputs(std::vector<Tensor>& values,
                                                        std::vector<uint8_t>& heap_owned,
                                                        const OutputBindings& bindings,
                                                        RunStats* stats) const {
  uint64_t copied = 0;
  auto bound_to = [&](int32_t o) -> const Tensor* {
    return bindings.empty() ? nullptr : bindings.buffer[static_cast<size_t>(o)];
  };
  // Bound outputs computed apart are copied into their memory below. A value that overlaps such
  // memory (the input it was bound over, or a view of it) is first copied out, so no copy reads
  // bytes another copy has written.
  if (!bindings.empty()) {
    std::vector<const Tensor*> pending;
    for (int32_t o : outputs_) {
      const Tensor* b = bound_to(o);
      if (b != nullptr && !SameMemory(values[static_cast<size_t>(o)], *b)) pending.push_back(b);
    }
    for (int32_t o : outputs_) {
      Tensor& t = values[static_cast<size_t>(o)];
      for (const Tensor* b : pending) {
        if (!MemoryOverlaps(t, *b)) continue;
        EPCTX_ASSIGN_OR_RETURN(Tensor copy, t.Clone());
        copied += copy.byte_size();
        t = std::move(copy);
        heap_owned[static_cast<size_t>(o)] = 1;
        break;
      }
    }
  }
  std::vector<const Tensor*> caller_elements;
  for (int32_t i : inputs_) {
    for (const Tensor& e : values[static_cast<size_t>(i)].elements()) caller_elements.push_back(&e);
  }
  std::vector<Tensor> outputs;
  outputs.reserve(outputs_.size());
  for (int32_t o : outputs_) {
    Tensor& t = values[static_cast<size_t>(o)];
    if (t.kind() == ValueKind::kSequence && !caller_elements.empty()) {
      EPCTX_ASSIGN_OR_RETURN(t, WithOwnElements(t, caller_elements, copied));
    }
    if (const Tensor* b = bound_to(o)) {
      if (!SameMemory(t, *b)) {
        if (!t.is_tensor() || t.dtype() != b->dtype() || t.shape() != b->shape()) {
          return EPCTX_ERROR(
              kInvalidArgument, "output '{}' is bound to {} {}, but the run made {} of {} {}",
              ValueName(o), DataTypeName(b->dtype()), ShapeToString(b->shape()),
              ValueKindName(t.kind()), DataTypeName(t.dtype()), ShapeToString(t.shape()));
        }
        std::memcpy(const_cast<Tensor*>(b)->mutable_data(), t.data(), t.byte_size());
        copied += t.byte_size();
      }
      outputs.push_back(*b);
      continue;
    }
    if (heap_owned[static_cast<size_t>(o)]) {
      outputs.push_back(t);
      continue;
    }
    // Weights, inputs and arena memory are not the caller's to keep: hand out a copy.
    EPCTX_ASSIGN_OR_RETURN(Tensor copy, t.Clone());
    copied += copy.byte_size();
    outputs.push_back(std::move(copy));
  }
  if (stats != nullptr) stats->output_bytes_copied = copied;
  return outputs;
}

}  // namespace epctx::exec
