// Split along an axis into the node's outputs. Sizes come from the `split` attribute (before
// opset 13) or input (from 13); without them the axis splits evenly, and from opset 18 the last
// part may be smaller (ceil division by num_outputs).
#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "exec/kernels/common/copy.h"
#include "exec/kernels/common/shape.h"
#include "exec/kernels/families.h"
#include "exec/kernels/indexing/index_input.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

class SplitKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node) {
    auto kernel = std::unique_ptr<SplitKernel>(new SplitKernel());
    EPCTX_RETURN_IF_ERROR(ExpectStaticCopyable(node, 0, "input"));
    kernel->split_is_input_ = node.opset >= 13;
    kernel->uneven_ = node.opset >= 18;
    EPCTX_ASSIGN_OR_RETURN(kernel->axis_, node.attrs->GetInt("axis", 0));
    if (!kernel->split_is_input_) {
      EPCTX_ASSIGN_OR_RETURN(kernel->split_, node.attrs->GetInts("split"));
    }
    if (node.outputs.empty()) return EPCTX_ERROR(kInvalidArgument, "Split has no outputs");
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      kernel->present_.push_back(OutputPresent(node, i));
    }
    return std::unique_ptr<Kernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, "input"));
    EPCTX_RETURN_IF_ERROR(CopyableElementSize(x->dtype(), "input").status());
    const std::vector<int64_t>& shape = x->shape();
    EPCTX_ASSIGN_OR_RETURN(int64_t axis64,
                           NormalizeAxis(axis_, static_cast<int64_t>(shape.size()), "axis"));
    const size_t axis = static_cast<size_t>(axis64);
    const int64_t extent = shape[axis];
    const size_t parts = present_.size();
    std::vector<int64_t> sizes = split_;
    // Opset 1 also accepted the sizes as a second input.
    if (ctx.input_count() > 1 && ctx.input(1) != nullptr) {
      EPCTX_ASSIGN_OR_RETURN(sizes, ReadIndexVector(*ctx.input(1), "split"));
    }
    if (sizes.empty()) {
      const int64_t count = static_cast<int64_t>(parts);
      if (!uneven_ && extent % count != 0) {
        return EPCTX_ERROR(kInvalidArgument, "axis {} of extent {} does not split into {} parts",
                           axis64, extent, parts);
      }
      const int64_t each = (extent + count - 1) / count;
      for (int64_t begin = 0, i = 0; i < count; ++i, begin += each) {
        sizes.push_back(std::max<int64_t>(0, std::min(each, extent - begin)));
      }
    }
    if (sizes.size() != parts) {
      return EPCTX_ERROR(kInvalidArgument, "split has {} sizes for {} outputs", sizes.size(),
                         parts);
    }
    int64_t total = 0;
    for (int64_t s : sizes) {
      if (s < 0 || __builtin_add_overflow(total, s, &total)) {
        return EPCTX_ERROR(kInvalidArgument, "split size {} is out of range", s);
      }
    }
    if (total != extent) {
      return EPCTX_ERROR(kInvalidArgument, "split sizes sum to {}, but axis {} has extent {}",
                         total, axis64, extent);
    }
    int64_t begin = 0;
    for (size_t p = 0; p < parts; ++p) {
      if (present_[p]) {
        std::vector<int64_t> out_shape = shape;
        out_shape[axis] = sizes[p];
        EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(p, x->dtype(), out_shape));
        EPCTX_RETURN_IF_ERROR(CopyAxisRange(*x, axis, begin, sizes[p], *y));
      }
      begin += sizes[p];
    }
    return Status::Ok();
  }

 private:
  SplitKernel() = default;
  bool split_is_input_ = true;
  bool uneven_ = false;
  int64_t axis_ = 0;
  std::vector<int64_t> split_;
  std::vector<bool> present_;
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateSplit(const NodeInfo& node) {
  return SplitKernel::Create(node);
}

}  // namespace epctx::exec::kernels
