// GroupNormalization: the channels of x [N, C, spatial...] fall into num_groups groups of
// C / num_groups consecutive channels; each group of each sample is normalized to zero mean and
// unit variance, then scaled and shifted: by its group's scale and bias in opset 18, by each
// channel's from opset 21 (which fixed the definition to the paper's and PyTorch's). float32;
// opset 21's stash_type (the statistics' type) is float32 or wider here either way.
#include <memory>
#include <vector>

#include "exec/kernels/common/shape.h"
#include "exec/kernels/common/threads.h"
#include "exec/kernels/families.h"
#include "exec/kernels/norm/norm_stats.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

class GroupNormKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node) {
    auto kernel = std::unique_ptr<GroupNormKernel>(new GroupNormKernel());
    EPCTX_ASSIGN_OR_RETURN(kernel->epsilon_, node.attrs->GetFloat("epsilon", 1e-5f));
    EPCTX_ASSIGN_OR_RETURN(kernel->groups_, node.attrs->GetInt("num_groups", 0));
    if (kernel->groups_ < 1) {
      return EPCTX_ERROR(kInvalidArgument, "num_groups is {}, expected a positive count",
                         kernel->groups_);
    }
    kernel->per_channel_ = node.opset >= kPerChannelSince;
    EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, 0, DataType::kFloat32, "X"));
    EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, 1, DataType::kFloat32, "scale"));
    EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, 2, DataType::kFloat32, "bias"));
    return std::unique_ptr<Kernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, "X"));
    EPCTX_ASSIGN_OR_RETURN(const Tensor* scale, RequiredInput(ctx, 1, "scale"));
    EPCTX_ASSIGN_OR_RETURN(const Tensor* bias, RequiredInput(ctx, 2, "bias"));
    EPCTX_RETURN_IF_ERROR(ExpectDtype(*x, DataType::kFloat32, "X"));
    EPCTX_RETURN_IF_ERROR(ExpectDtype(*scale, DataType::kFloat32, "scale"));
    EPCTX_RETURN_IF_ERROR(ExpectDtype(*bias, DataType::kFloat32, "bias"));
    const std::vector<int64_t>& xs = x->shape();
    if (xs.size() < 2) {
      return EPCTX_ERROR(kInvalidArgument, "X has rank {}, expected at least 2 ([N, C, ...])",
                         xs.size());
    }
    const int64_t channels = xs[1];
    if (channels % groups_ != 0) {
      return EPCTX_ERROR(kInvalidArgument,
                         "X has {} channels, which do not divide into num_groups = {} groups",
                         channels, groups_);
    }
    const int64_t params = per_channel_ ? channels : groups_;
    for (const auto& [t, name] : {std::pair{scale, "scale"}, std::pair{bias, "bias"}}) {
      if (t->shape().size() != 1 || t->shape()[0] != params) {
        return EPCTX_ERROR(kInvalidArgument,
                           "input {} has shape {}, expected [{}] (one value per {})", name,
                           ShapeToString(t->shape()), params,
                           per_channel_ ? "channel, from opset 21" : "group, in opset 18");
      }
    }
    EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, DataType::kFloat32, xs));
    EPCTX_ASSIGN_OR_RETURN(const int64_t inner, CheckedDimProduct(xs, 2, xs.size()));
    NormalizeChannelGroups(x->data_as<float>(), xs[0], channels, groups_, inner,
                           scale->data_as<float>(), bias->data_as<float>(), per_channel_, epsilon_,
                           y->mutable_data_as<float>(),
                           ThreadsFor(ctx.num_threads(), x->element_count()));
    return Status::Ok();
  }

 private:
  static constexpr int64_t kPerChannelSince = 21;
  GroupNormKernel() = default;
  float epsilon_ = 1e-5f;
  int64_t groups_ = 0;
  bool per_channel_ = false;
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateGroupNormalization(const NodeInfo& node) {
  return GroupNormKernel::Create(node);
}

}  // namespace epctx::exec::kernels
