// ReverseSequence: for each batch entry b, reverses the first sequence_lens[b] steps along the
// time axis and copies the rest. Batch and time are dims 0 and 1 in either order, so the dims
// after them form contiguous blocks.
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "exec/kernels/common/shape.h"
#include "exec/kernels/families.h"
#include "exec/kernels/indexing/index_input.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

class ReverseSequenceKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node) {
    auto kernel = std::unique_ptr<ReverseSequenceKernel>(new ReverseSequenceKernel());
    EPCTX_RETURN_IF_ERROR(ExpectStaticCopyable(node, 0, "input"));
    EPCTX_ASSIGN_OR_RETURN(int64_t batch, node.attrs->GetInt("batch_axis", 1));
    EPCTX_ASSIGN_OR_RETURN(int64_t time, node.attrs->GetInt("time_axis", 0));
    if (!((batch == 0 && time == 1) || (batch == 1 && time == 0))) {
      return EPCTX_ERROR(kInvalidArgument,
                         "batch_axis {} and time_axis {} must be 0 and 1 in some order", batch,
                         time);
    }
    kernel->batch_major_ = batch == 0;
    return std::unique_ptr<Kernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, "input"));
    EPCTX_ASSIGN_OR_RETURN(const Tensor* lens_t, RequiredInput(ctx, 1, "sequence_lens"));
    EPCTX_ASSIGN_OR_RETURN(size_t element, CopyableElementSize(x->dtype(), "input"));
    const std::vector<int64_t>& shape = x->shape();
    if (shape.size() < 2) {
      return EPCTX_ERROR(kInvalidArgument, "input has rank {}, expected at least 2", shape.size());
    }
    const int64_t batches = batch_major_ ? shape[0] : shape[1];
    const int64_t steps = batch_major_ ? shape[1] : shape[0];
    EPCTX_ASSIGN_OR_RETURN(std::vector<int64_t> lens, ReadIndexTensor(*lens_t, "sequence_lens"));
    if (static_cast<int64_t>(lens.size()) != batches) {
      return EPCTX_ERROR(kInvalidArgument, "sequence_lens has {} elements for a batch of {}",
                         lens.size(), batches);
    }
    for (int64_t len : lens) {
      if (len < 0 || len > steps) {
        return EPCTX_ERROR(kInvalidArgument, "sequence length {} is outside [0, {}]", len, steps);
      }
    }
    EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, x->dtype(), shape));
    if (y->element_count() == 0) return Status::Ok();
    EPCTX_ASSIGN_OR_RETURN(const int64_t block_count, CheckedDimProduct(shape, 2, shape.size()));
    const size_t block = static_cast<size_t>(block_count) * element;
    const auto* src = static_cast<const std::byte*>(x->data());
    auto* dst = static_cast<std::byte*>(y->mutable_data());
    for (int64_t b = 0; b < batches; ++b) {
      const int64_t len = lens[static_cast<size_t>(b)];
      for (int64_t t = 0; t < steps; ++t) {
        const int64_t from = t < len ? len - 1 - t : t;
        const int64_t out_pos = batch_major_ ? b * steps + t : t * batches + b;
        const int64_t in_pos = batch_major_ ? b * steps + from : from * batches + b;
        std::memcpy(dst + static_cast<size_t>(out_pos) * block,
                    src + static_cast<size_t>(in_pos) * block, block);
      }
    }
    return Status::Ok();
  }

 private:
  ReverseSequenceKernel() = default;
  bool batch_major_ = false;
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateReverseSequence(const NodeInfo& node) {
  return ReverseSequenceKernel::Create(node);
}

}  // namespace epctx::exec::kernels
