// Concat along `axis` (negative from the end) for any fixed-size element type (moved as bytes)
// or strings.
#include <algorithm>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "exec/kernels/common/shape.h"
#include "exec/kernels/families.h"
#include "exec/kernels/tensor/concat.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

// For each of `outer` rows, every input's block of its extent on the axis times `inner` elements.
// An input already at its place in the output (written there by its producer, as the memory
// plan arranges when each input is one block of the output) is not copied.
template <typename T>
void ConcatBlocks(const std::vector<const Tensor*>& inputs, size_t axis, int64_t outer,
                  size_t inner, T* out) {
  for (int64_t o = 0; o < outer; ++o) {
    for (const Tensor* t : inputs) {
      const size_t block = static_cast<size_t>(t->shape()[axis]) * inner;
      const T* from = t->data_as<T>() + static_cast<size_t>(o) * block;
      if (from != out) std::copy_n(from, block, out);
      out += block;
    }
  }
}

// Inputs that share memory with the output must be exactly at their place in it (one block
// each, outer == 1): a copy would otherwise overwrite an input before it is read.
Status CheckSharedInputs(const std::vector<const Tensor*>& inputs, size_t axis, int64_t outer,
                         size_t inner, const Tensor& y) {
  const auto* out = static_cast<const std::byte*>(y.data());
  const auto* out_end = out + y.byte_size();
  const auto* place = out;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const auto* in = static_cast<const std::byte*>(inputs[i]->data());
    const auto* in_end = in + inputs[i]->byte_size();
    if (in < out_end && out < in_end && (outer != 1 || in != place)) {
      return EPCTX_ERROR(kInvalidArgument,
                         "input {} shares memory with the output but is not at its place in it", i);
    }
    place += static_cast<size_t>(inputs[i]->shape()[axis]) * inner;
  }
  return Status::Ok();
}

}  // namespace

Status ConcatToOutput(KernelContext& ctx, size_t output, const std::vector<const Tensor*>& inputs,
                      int64_t axis_attr) {
  if (inputs.empty()) return EPCTX_ERROR(kInvalidArgument, "no inputs");
  const Tensor& first = *inputs[0];
  const bool strings = first.dtype() == DataType::kString;
  size_t element = 1;  // strings: counted in elements, not bytes
  if (!strings) {
    EPCTX_ASSIGN_OR_RETURN(element, CopyableElementSize(first.dtype(), "0"));
  }
  const int64_t rank = static_cast<int64_t>(first.shape().size());
  EPCTX_ASSIGN_OR_RETURN(int64_t axis64, NormalizeAxis(axis_attr, rank, "axis"));
  const size_t axis = static_cast<size_t>(axis64);
  std::vector<int64_t> shape = first.shape();
  shape[axis] = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = *inputs[i];
    if (t.dtype() != first.dtype()) {
      return EPCTX_ERROR(kInvalidArgument, "input {} has type {}, input 0 has {}", i,
                         DataTypeName(t.dtype()), DataTypeName(first.dtype()));
    }
    bool fits = t.shape().size() == first.shape().size();
    for (size_t d = 0; fits && d < shape.size(); ++d) {
      fits = d == axis || t.shape()[d] == first.shape()[d];
    }
    if (!fits) {
      return EPCTX_ERROR(kInvalidArgument,
                         "input {} has shape {}, which does not match input 0's {} outside "
                         "axis {}",
                         i, ShapeToString(t.shape()), ShapeToString(first.shape()), axis);
    }
    if (__builtin_add_overflow(shape[axis], t.shape()[axis], &shape[axis])) {
      return EPCTX_ERROR(kInvalidArgument, "the inputs' dims on axis {} add up beyond int64", axis);
    }
  }
  EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(output, first.dtype(), shape));
  if (y->element_count() == 0) return Status::Ok();
  EPCTX_ASSIGN_OR_RETURN(const int64_t outer, CheckedDimProduct(shape, 0, axis));
  EPCTX_ASSIGN_OR_RETURN(const int64_t inner_count,
                         CheckedDimProduct(shape, axis + 1, shape.size()));
  const size_t inner = static_cast<size_t>(inner_count) * element;
  if (strings) {
    ConcatBlocks(inputs, axis, outer, inner, y->mutable_data_as<std::string>());
  } else {
    EPCTX_RETURN_IF_ERROR(CheckSharedInputs(inputs, axis, outer, inner, *y));
    ConcatBlocks(inputs, axis, outer, inner, static_cast<std::byte*>(y->mutable_data()));
  }
  return Status::Ok();
}

namespace {

class ConcatKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node) {
    auto kernel = std::unique_ptr<ConcatKernel>(new ConcatKernel());
    EPCTX_ASSIGN_OR_RETURN(const AttributeValue* axis, node.attrs->Require("axis", AttrType::kInt));
    kernel->axis_ = axis->i;
    if (node.inputs.empty()) return EPCTX_ERROR(kInvalidArgument, "no inputs");
    return std::unique_ptr<Kernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    if (ctx.input_count() == 0) return EPCTX_ERROR(kInvalidArgument, "no inputs");
    std::vector<const Tensor*> inputs;
    for (size_t i = 0; i < ctx.input_count(); ++i) {
      EPCTX_ASSIGN_OR_RETURN(const Tensor* t, RequiredInput(ctx, i, fmt::format("{}", i)));
      inputs.push_back(t);
    }
    return ConcatToOutput(ctx, 0, inputs, axis_);
  }

 private:
  ConcatKernel() = default;
  int64_t axis_ = 0;
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateConcat(const NodeInfo& node) {
  return ConcatKernel::Create(node);
}

}  // namespace epctx::exec::kernels
