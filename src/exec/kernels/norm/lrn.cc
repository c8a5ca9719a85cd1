// LRN (local response normalization across channels):
// y = x / (bias + alpha / size * sum of x^2 over channels [c - (size-1)/2, c + ceil((size-1)/2)])
// ^ beta, for x [N, C, spatial...]. float32.
#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "exec/kernels/common/parallel_for.h"
#include "exec/kernels/common/shape.h"
#include "exec/kernels/common/threads.h"
#include "exec/kernels/families.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

class LrnKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node) {
    auto kernel = std::unique_ptr<LrnKernel>(new LrnKernel());
    EPCTX_ASSIGN_OR_RETURN(const AttributeValue* size, node.attrs->Require("size", AttrType::kInt));
    kernel->size_ = size->i;
    if (kernel->size_ < 1) {
      return EPCTX_ERROR(kInvalidArgument, "size is {}, expected at least 1", kernel->size_);
    }
    EPCTX_ASSIGN_OR_RETURN(kernel->alpha_, node.attrs->GetFloat("alpha", 1e-4f));
    EPCTX_ASSIGN_OR_RETURN(kernel->beta_, node.attrs->GetFloat("beta", 0.75f));
    EPCTX_ASSIGN_OR_RETURN(kernel->bias_, node.attrs->GetFloat("bias", 1.0f));
    EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, 0, DataType::kFloat32, "X"));
    return std::unique_ptr<Kernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, "X"));
    EPCTX_RETURN_IF_ERROR(ExpectDtype(*x, DataType::kFloat32, "X"));
    const std::vector<int64_t>& xs = x->shape();
    if (xs.size() < 2) {
      return EPCTX_ERROR(kInvalidArgument, "input X has rank {}, expected at least 2", xs.size());
    }
    EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, DataType::kFloat32, xs));
    const int64_t channels = xs[1];
    EPCTX_ASSIGN_OR_RETURN(const int64_t inner, CheckedDimProduct(xs, 2, xs.size()));
    const int64_t before = (size_ - 1) / 2;
    const int64_t after = size_ - 1 - before;
    const float scale = alpha_ / static_cast<float>(size_);
    const float* xp = x->data_as<float>();
    float* yp = y->mutable_data_as<float>();
    EPCTX_ASSIGN_OR_RETURN(const int64_t planes, CheckedDimProduct(xs, 0, 2));
    const int nt = ThreadsFor(ctx.num_threads(), x->element_count() * size_);
    ParallelForRanges(nt, planes, 1, [&](int64_t begin, int64_t end) {
      std::vector<float> sum(static_cast<size_t>(inner));
      for (int64_t p = begin; p < end; ++p) {
        const int64_t c = p % channels;
        const float* image = xp + (p - c) * inner;
        std::fill(sum.begin(), sum.end(), 0.0f);
        for (int64_t k = std::max<int64_t>(0, c - before); k <= std::min(channels - 1, c + after);
             ++k) {
          const float* xk = image + k * inner;
          for (int64_t i = 0; i < inner; ++i) sum[i] += xk[i] * xk[i];
        }
        const float* in = xp + p * inner;
        float* out = yp + p * inner;
        for (int64_t i = 0; i < inner; ++i) {
          out[i] = in[i] / std::pow(bias_ + scale * sum[i], beta_);
        }
      }
    });
    return Status::Ok();
  }

 private:
  LrnKernel() = default;
  int64_t size_ = 1;
  float alpha_ = 1e-4f;
  float beta_ = 0.75f;
  float bias_ = 1.0f;
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateLrn(const NodeInfo& node) {
  return LrnKernel::Create(node);
}

}  // namespace epctx::exec::kernels
