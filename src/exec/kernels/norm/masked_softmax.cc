// com.epctx MaskedSoftmax: the middle of attention in one pass over the scores. The compiler
// (fuse_masked_softmax.cc) makes it from Softmax over the last axis of
//   Where(condition, Add(Div-or-Mul(x, scale), addend), fill)
// where any of the three steps may be absent. Inputs: x, scale (a one-element float32, may be
// computed at run time), addend (float32), condition (bool); each optional after x, broadcast
// with the others as the ops they replace would. Attributes: scale_divides (1: x / scale, 0:
// x * scale), fill (the value Where substitutes) and fill_when (the condition value that selects
// fill: 0 for Where(c, scores, fill), 1 for Where(c, fill, scores)).
// Each row is computed with the element-wise steps in the unfused order, then SoftmaxRow, in the
// output itself: the scores are read once and the intermediates never written.
#include <algorithm>
#include <memory>
#include <vector>

#include "exec/kernels/common/broadcast.h"
#include "exec/kernels/common/parallel_for.h"
#include "exec/kernels/common/shape.h"
#include "exec/kernels/common/threads.h"
#include "exec/kernels/families.h"
#include "exec/kernels/norm/softmax_row.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

// One broadcast operand: its data and strides over the output's dims.
template <typename T>
struct Operand {
  const T* data = nullptr;
  std::vector<int64_t> strides;
  int64_t inner() const { return strides.back(); }  // along the last dim: 0 or 1
};

class MaskedSoftmaxKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node) {
    auto k = std::unique_ptr<MaskedSoftmaxKernel>(new MaskedSoftmaxKernel());
    EPCTX_ASSIGN_OR_RETURN(int64_t divides, node.attrs->GetInt("scale_divides", 1));
    EPCTX_ASSIGN_OR_RETURN(k->fill_, node.attrs->GetFloat("fill", 0.0f));
    EPCTX_ASSIGN_OR_RETURN(int64_t fill_when, node.attrs->GetInt("fill_when", 0));
    k->divides_ = divides != 0;
    k->fill_when_ = fill_when != 0;
    EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, 0, DataType::kFloat32, "x"));
    EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, 1, DataType::kFloat32, "scale"));
    EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, 2, DataType::kFloat32, "addend"));
    EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, 3, DataType::kBool, "condition"));
    return std::unique_ptr<Kernel>(std::move(k));
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, "x"));
    EPCTX_RETURN_IF_ERROR(ExpectDtype(*x, DataType::kFloat32, "x"));
    const Tensor* scale = ctx.input(1);
    const Tensor* addend = ctx.input(2);
    const Tensor* condition = ctx.input(3);
    float scale_value = 1.0f;
    if (scale != nullptr) {
      EPCTX_RETURN_IF_ERROR(ExpectDtype(*scale, DataType::kFloat32, "scale"));
      if (scale->element_count() != 1 || scale->shape().size() > 1) {
        return EPCTX_ERROR(kInvalidArgument, "scale must hold one element, not shape {}",
                           ShapeToString(scale->shape()));
      }
      scale_value = scale->data_as<float>()[0];
    }
    std::vector<int64_t> out = x->shape();
    if (out.empty()) return EPCTX_ERROR(kInvalidArgument, "x must have at least one dim");
    if (addend != nullptr) {
      EPCTX_RETURN_IF_ERROR(ExpectDtype(*addend, DataType::kFloat32, "addend"));
      EPCTX_ASSIGN_OR_RETURN(out, BroadcastShapes(out, addend->shape()));
    }
    if (condition != nullptr) {
      EPCTX_RETURN_IF_ERROR(ExpectDtype(*condition, DataType::kBool, "condition"));
      EPCTX_ASSIGN_OR_RETURN(out, BroadcastShapes(out, condition->shape()));
    }
    EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, DataType::kFloat32, out));
    if (y->element_count() == 0) return Status::Ok();

    Operand<float> xs{x->data_as<float>(), BroadcastStrides(x->shape(), out)};
    // An absent operand reads nothing: null data, every stride 0.
    Operand<float> as{nullptr, std::vector<int64_t>(out.size(), 0)};
    Operand<uint8_t> cs{nullptr, std::vector<int64_t>(out.size(), 0)};
    if (addend != nullptr) as = {addend->data_as<float>(), BroadcastStrides(addend->shape(), out)};
    if (condition != nullptr) {
      cs = {condition->data_as<uint8_t>(), BroadcastStrides(condition->shape(), out)};
    }

    const int64_t len = out.back();
    const int64_t rows = y->element_count() / len;
    float* yp = y->mutable_data_as<float>();
    const bool has_scale = scale != nullptr;
    const int nt = ThreadsFor(ctx.num_threads(), y->element_count());
    ParallelForRanges(nt, rows, 1, [&](int64_t first, int64_t last) {
      for (int64_t r = first; r < last; ++r) {
        // The row's offset in each operand, from its index in the output's leading dims.
        int64_t xo = 0, ao = 0, co = 0;
        for (int64_t rest = r, d = static_cast<int64_t>(out.size()) - 2; d >= 0; --d) {
          const int64_t i = rest % out[static_cast<size_t>(d)];
          rest /= out[static_cast<size_t>(d)];
          xo += i * xs.strides[static_cast<size_t>(d)];
          ao += i * as.strides[static_cast<size_t>(d)];
          co += i * cs.strides[static_cast<size_t>(d)];
        }
        float* yr = yp + r * len;
        const float* xr = xs.data + xo;
        if (xs.inner() == 1) {
          std::copy(xr, xr + len, yr);
        } else {
          std::fill(yr, yr + len, xr[0]);
        }
        if (has_scale) {
          if (divides_) {
            for (int64_t j = 0; j < len; ++j) yr[j] /= scale_value;
          } else {
            for (int64_t j = 0; j < len; ++j) yr[j] *= scale_value;
          }
        }
        if (as.data != nullptr) {
          const float* ar = as.data + ao;
          if (as.inner() == 1) {
            for (int64_t j = 0; j < len; ++j) yr[j] += ar[j];
          } else {
            for (int64_t j = 0; j < len; ++j) yr[j] += ar[0];
          }
        }
        if (cs.data != nullptr) {
          const uint8_t* cr = cs.data + co;
          for (int64_t j = 0; j < len; ++j) {
            if ((cr[j * cs.inner()] != 0) == fill_when_) yr[j] = fill_;
          }
        }
        SoftmaxRow(yr, yr, len);
      }
    });
    return Status::Ok();
  }

 private:
  MaskedSoftmaxKernel() = default;
  bool divides_ = true;
  float fill_ = 0.0f;
  bool fill_when_ = false;
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateMaskedSoftmax(const NodeInfo& node) {
  return MaskedSoftmaxKernel::Create(node);
}

}  // namespace epctx::exec::kernels
