// com.epctx Reorder: moves an activation between the plain and the channel-blocked layout
// (activation_layout.h), where the compiler's layout plan changes from one to the other.
// Attributes: `from_layout` and `to_layout`, `channels` (the logical channel count, which a
// blocked shape does not show).
#include <memory>

#include <fmt/ranges.h>
#include "exec/kernels/common/shape.h"
#include "exec/kernels/epctx_ops.h"
#include "exec/kernels/families.h"
#include "exec/kernels/onednn/activation_layout.h"
#include "exec/kernels/onednn/conv_primitive.h"
#include "exec/kernels/onednn/primitive_memo.h"
#include "exec/kernels/onednn/runtime.h"

#include "util/status_macros.h"

namespace epctx::exec::kernels::onednn {
namespace {

class ReorderKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node) {
    auto k = std::unique_ptr<ReorderKernel>(new ReorderKernel());
    EPCTX_ASSIGN_OR_RETURN(int64_t to, node.attrs->GetInt(ops::kToLayout, -1));
    EPCTX_ASSIGN_OR_RETURN(int64_t from, node.attrs->GetInt(ops::kFromLayout, -1));
    EPCTX_ASSIGN_OR_RETURN(k->to_, ParseActivationLayout(to));
    EPCTX_ASSIGN_OR_RETURN(k->from_, ParseActivationLayout(from));
    if (k->to_ == k->from_) {
      return EPCTX_ERROR(kInvalidArgument, "from_layout and to_layout are both {}", to);
    }
    EPCTX_ASSIGN_OR_RETURN(k->channels_, node.attrs->GetInt("channels", 0));
    if (k->channels_ < 1) {
      return EPCTX_ERROR(kInvalidArgument, "channels is {}, expected at least 1", k->channels_);
    }
    EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, 0, DataType::kFloat32, "X"));
    return std::unique_ptr<Kernel>(std::move(k));
  }

  std::string_view implementation() const override { return memo_.implementation(); }

  // Makes the primitive ahead of the first run when the input's shape is known: a reorder's code
  // is generated too (ResNet-50's last one took 0.35 ms more in the first run than in later ones).
  void Prepare(std::span<const std::vector<int64_t>* const> shapes, int threads) override {
    if (shapes.empty() || shapes[0] == nullptr) return;
    auto dims = LogicalShape(*shapes[0], from_, channels_);
    if (dims.ok() && Accepts(*dims)) (void)PrimitiveFor(*shapes[0], *dims, threads);
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, "X"));
    EPCTX_RETURN_IF_ERROR(ExpectDtype(*x, DataType::kFloat32, "X"));
    EPCTX_ASSIGN_OR_RETURN(std::vector<int64_t> dims, LogicalShape(x->shape(), from_, channels_));
    if (!Accepts(dims)) {
      return EPCTX_ERROR(kInvalidArgument,
                         "input X has shape {}, expected rank 3 to 5 with {} "
                         "channels",
                         ShapeToString(x->shape()), channels_);
    }
    EPCTX_ASSIGN_OR_RETURN(Tensor * y,
                           ctx.AllocateOutput(0, DataType::kFloat32, PhysicalShape(dims, to_)));
    if (y->element_count() == 0) return Status::Ok();
    const int threads = ctx.num_threads();
    const dnnl::memory::desc src = ActivationDesc(dims, from_);
    const dnnl::memory::desc dst = ActivationDesc(dims, to_);
    EPCTX_ASSIGN_OR_RETURN(std::shared_ptr<const CachedPrimitive> prim,
                           PrimitiveFor(x->shape(), dims, threads));
    return ExecuteSrcToDst(*prim, DNNL_ARG_FROM, src, x->data(), DNNL_ARG_TO, dst, y->data(),
                           threads, "a reorder");
  }

 private:
  ReorderKernel() = default;

  bool Accepts(const std::vector<int64_t>& dims) const {
    return dims.size() >= 3 && dims.size() <= 5 && dims[1] == channels_;
  }

  // The primitive for an input of physical shape `shape` (logical `dims`), from this kernel's
  // memo or the process-wide cache.
  Result<std::shared_ptr<const CachedPrimitive>> PrimitiveFor(const std::vector<int64_t>& shape,
                                                              const std::vector<int64_t>& dims,
                                                              int threads) {
    auto key = [&] {
      return fmt::format("reorder t{} {} {} to {}", threads, fmt::join(dims, ","),
                         static_cast<int>(from_), static_cast<int>(to_));
    };
    return memo_.FindOrCreate(shape, threads, key, [&] {
      return MakeReorder(ActivationDesc(dims, from_), ActivationDesc(dims, to_), threads);
    });
  }

  static Result<CachedPrimitive> MakeReorder(const dnnl::memory::desc& src,
                                             const dnnl::memory::desc& dst, int threads) {
    ThreadBudget budget(threads);
    try {
      CachedPrimitive out;
      dnnl::reorder::primitive_desc pd(CpuEngine(), src, CpuEngine(), dst);
      out.primitive = dnnl::reorder(pd);
      out.implementation = std::string("onednn:") + pd.impl_info_str();
      return out;
    } catch (const dnnl::error& e) {
      return FromDnnlError(e, "creating a reorder");
    }
  }
  ActivationLayout to_ = ActivationLayout::kPlain;
  ActivationLayout from_ = ActivationLayout::kPlain;
  int64_t channels_ = 0;
  PrimitiveMemo memo_;
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateReorder(const NodeInfo& node) {
  return ReorderKernel::Create(node);
}

}  // namespace epctx::exec::kernels::onednn
