// The frame of one run of a BoundProgram: the values of the run, where each output's memory comes
// from (its planned arena place, the caller's bound memory, or a pooled heap buffer) and when an
// output may share its input's memory; the KernelContext its kernels see. Included by the run
// loop (executor.cc) only.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "exec/executor.h"
#include "exec/output_bindings.h"
#include "exec/program_views.h"
#include "util/overflow.h"
#include "util/status_macros.h"

namespace epctx::exec {

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
    // Its arena place when it has one and fits there; a bad shape goes to Allocate, which
    // reports it.
    uint64_t bytes = 0;
    if (slot.arena_offset >= 0 && DataTypeSize(type) > 0 &&
        CheckedByteSize(shape, DataTypeSize(type), &bytes) &&
        bytes <= static_cast<uint64_t>(slot.arena_bytes)) {
      values_[v] = Tensor::View(type, std::move(shape), arena_.data() + slot.arena_offset, nullptr);
      heap_owned_[v] = 0;
    } else {
      if (control_.max_value_bytes > 0 && DataTypeSize(type) > 0 &&
          CheckedByteSize(shape, DataTypeSize(type), &bytes) &&
          bytes > static_cast<uint64_t>(control_.max_value_bytes)) {
        return EPCTX_ERROR(kCancelled,
                           "output '{}' of shape {} would take {} bytes, more than the {} "
                           "epctx.max_value_bytes allows",
                           program_.ValueName(static_cast<int32_t>(v)), ShapeToString(shape), bytes,
                           control_.max_value_bytes);
      }
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

}  // namespace epctx::exec
