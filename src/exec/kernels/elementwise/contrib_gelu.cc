// The GELU-family activations, as ONNX Runtime's CPU kernels compute them:
//   FastGelu(X, bias?)  the tanh approximation 0.5 v (1 + tanh(v (0.0356774 v^2 + 0.7978846)))
//   BiasGelu(A, B)      the exact GELU 0.5 v (1 + erf(v / sqrt(2)))
//   Gelu(X)             the exact GELU of X; ONNX's Gelu (opset 20) too, or with approximate
//                       = "tanh" FastGelu's tanh approximation (any rank, no bias)
//   QuickGelu(X)        v sigmoid(alpha v), alpha 1.702 by default
// where v is the input plus the bias when there is one. The bias is a vector of the input's last
// dim, and FastGelu and BiasGelu want an input of rank 1 or more (ORT refuses a scalar). One pass
// per chunk with Eigen's vectorized tanh, erf and logistic, and nothing written but the output.
// float32 only.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "exec/kernels/common/eigen.h"
#include "exec/kernels/common/parallel_for.h"
#include "exec/kernels/common/shape.h"
#include "exec/kernels/common/threads.h"
#include "exec/kernels/elementwise/unary_float.h"
#include "exec/kernels/families.h"
#include "util/status_macros.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <unsupported/Eigen/SpecialFunctions>  // Array::erf
#pragma GCC diagnostic pop

namespace epctx::exec::kernels::elementwise {
namespace {

enum class Gelu { kFast, kBias, kErf, kQuick, kTanh };

// FastGelu's constants: sqrt(2 / pi) and 0.044715 sqrt(2 / pi).
constexpr float kSqrt2OverPi = 0.7978845608028654f;
constexpr float kCubicTimesSqrt2OverPi = 0.035677408136300125f;
constexpr float kSqrtHalf = 0.7071067811865476f;

// y = gelu(v) for an Eigen array expression v of n elements.
template <Gelu kind, typename V>
void Apply(const V& v, float alpha, float* y, int64_t n) {
  ArrayMapF out(y, n);
  if constexpr (kind == Gelu::kFast || kind == Gelu::kTanh) {
    out = 0.5f * v * (1.0f + (v * (kCubicTimesSqrt2OverPi * v.square() + kSqrt2OverPi)).tanh());
  } else if constexpr (kind == Gelu::kBias || kind == Gelu::kErf) {
    out = 0.5f * v * (1.0f + (v * kSqrtHalf).erf());
  } else {
    out = v * (alpha * v).logistic();
  }
}

template <Gelu kind>
class GeluKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node) {
    auto kernel = std::unique_ptr<GeluKernel>(new GeluKernel());
    if constexpr (kind == Gelu::kQuick) {
      EPCTX_ASSIGN_OR_RETURN(kernel->alpha_, node.attrs->GetFloat("alpha", 1.702f));
    }
    EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, 0, DataType::kFloat32, kInputName));
    EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, 1, DataType::kFloat32, kBiasName));
    return std::unique_ptr<Kernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, kInputName));
    EPCTX_RETURN_IF_ERROR(ExpectDtype(*x, DataType::kFloat32, kInputName));
    const Tensor* bias = nullptr;
    if constexpr (kind == Gelu::kBias) {
      EPCTX_ASSIGN_OR_RETURN(bias, RequiredInput(ctx, 1, kBiasName));
    } else if constexpr (kind == Gelu::kFast) {
      bias = ctx.input(1);
    }
    const std::vector<int64_t>& xs = x->shape();
    if ((kind == Gelu::kFast || kind == Gelu::kBias) && xs.empty()) {
      return EPCTX_ERROR(kInvalidArgument, "input {} has rank 0, expected 1 or more", kInputName);
    }
    if (bias != nullptr) {
      EPCTX_RETURN_IF_ERROR(ExpectDtype(*bias, DataType::kFloat32, kBiasName));
      if (bias->shape().size() != 1 || bias->shape()[0] != xs.back()) {
        return EPCTX_ERROR(kInvalidArgument,
                           "input {} has shape {}, expected [{}] (the last dim of {})", kBiasName,
                           ShapeToString(bias->shape()), xs.back(), kInputName);
      }
    }
    EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, DataType::kFloat32, xs));
    const float* xp = x->data_as<float>();
    float* yp = y->mutable_data_as<float>();
    const int64_t n = x->element_count();
    const float alpha = alpha_;
    if (bias == nullptr) {
      ParallelMap(xp, yp, n, ctx.num_threads(),
                  [alpha](const float* in, float* out, int64_t count) {
                    Apply<kind>(ConstArrayMapF(in, count), alpha, out, count);
                  });
      return Status::Ok();
    }
    const int64_t len = xs.back();
    if (len == 0) return Status::Ok();
    const ConstArrayMapF b(bias->data_as<float>(), len);
    // Whole rows, so that each lines up with the bias; enough of them per range to be worth a
    // thread.
    const int64_t grain = std::max<int64_t>(1, kMinParallelElements / 8 / len);
    ParallelForRanges(
        ThreadsFor(ctx.num_threads(), n), n / len, grain, [&](int64_t begin, int64_t end) {
          for (int64_t r = begin; r < end; ++r) {
            Apply<kind>(ConstArrayMapF(xp + r * len, len) + b, alpha, yp + r * len, len);
          }
        });
    return Status::Ok();
  }

 private:
  GeluKernel() = default;
  static constexpr const char* kInputName = kind == Gelu::kBias ? "A" : "X";
  static constexpr const char* kBiasName = kind == Gelu::kBias ? "B" : "bias";
  float alpha_ = 1.702f;
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateFastGelu(const NodeInfo& node) {
  return GeluKernel<Gelu::kFast>::Create(node);
}

Result<std::unique_ptr<Kernel>> CreateBiasGelu(const NodeInfo& node) {
  return GeluKernel<Gelu::kBias>::Create(node);
}

Result<std::unique_ptr<Kernel>> CreateContribGelu(const NodeInfo& node) {
  return GeluKernel<Gelu::kErf>::Create(node);
}

Result<std::unique_ptr<Kernel>> CreateQuickGelu(const NodeInfo& node) {
  return GeluKernel<Gelu::kQuick>::Create(node);
}

Result<std::unique_ptr<Kernel>> CreateGelu(const NodeInfo& node) {
  EPCTX_ASSIGN_OR_RETURN(std::string approximate, node.attrs->GetString("approximate", "none"));
  if (approximate == "none") return GeluKernel<Gelu::kErf>::Create(node);
  if (approximate == "tanh") return GeluKernel<Gelu::kTanh>::Create(node);
  return EPCTX_ERROR(kInvalidArgument, "approximate is '{}', expected 'none' or 'tanh'",
                     approximate);
}

}  // namespace epctx::exec::kernels::elementwise
