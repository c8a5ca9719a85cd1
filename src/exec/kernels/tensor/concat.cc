// Concat along `axis` (negative from the end) for any fixed-size element type (moved as bytes)
// or strings.
#include <algorithm>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "exec/kernels/common/parallel_for.h"
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

// Bytes of output from which a Concat of fixed-size elements is copied by all of a run's threads
// (the key and value caches of a decode step, each a few hundred KiB read from memory), and the
// least each thread takes.
constexpr size_t kParallelConcatBytes = size_t{64} << 10;
constexpr size_t kConcatChunkBytes = size_t{32} << 10;

// Output bytes [begin, end) of the blocks ConcatBlocks copies (row_bytes: one row of every
// input's block, block_bytes[i] input i's).
void ConcatByteRange(const std::vector<const Tensor*>& inputs,
                     const std::vector<size_t>& block_bytes, size_t row_bytes, std::byte* out,
                     size_t begin, size_t end) {
  size_t pos = begin;
  while (pos < end) {
    const size_t row = pos / row_bytes;
    size_t at = pos % row_bytes;
    size_t i = 0;
    while (at >= block_bytes[i]) at -= block_bytes[i++];  // row_bytes > at: some block holds it
    const size_t n = std::min(block_bytes[i] - at, end - pos);
    const auto* from = static_cast<const std::byte*>(inputs[i]->data()) + row * block_bytes[i] + at;
    if (from != out + pos) std::copy_n(from, n, out + pos);
    pos += n;
  }
}

// ConcatBlocks for fixed-size elements, as bytes, split over up to `threads` threads by output
// bytes from kParallelConcatBytes on.
void ConcatBytes(const std::vector<const Tensor*>& inputs, size_t axis, int64_t outer, size_t inner,
                 std::byte* out, int threads) {
  std::vector<size_t> block_bytes;
  size_t row_bytes = 0;
  for (const Tensor* t : inputs) {
    block_bytes.push_back(static_cast<size_t>(t->shape()[axis]) * inner);
    row_bytes += block_bytes.back();
  }
  const size_t total = row_bytes * static_cast<size_t>(outer);
  const int64_t chunks =
      total < kParallelConcatBytes
          ? 1
          : static_cast<int64_t>(std::clamp<size_t>(total / kConcatChunkBytes, 1,
                                                    static_cast<size_t>(std::max(threads, 1))));
  ParallelFor(threads, chunks, [&](int64_t c, int) {
    const size_t c0 = static_cast<size_t>(c);
    ConcatByteRange(inputs, block_bytes, row_bytes, out, total * c0 / static_cast<size_t>(chunks),
                    total * (c0 + 1) / static_cast<size_t>(chunks));
  });
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
    ConcatBytes(inputs, axis, outer, inner, static_cast<std::byte*>(y->mutable_data()),
                ctx.num_threads());
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
