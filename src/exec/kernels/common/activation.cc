#include "exec/kernels/common/activation.h"

#include <algorithm>
#include <string>

#include "exec/kernels/common/eigen.h"
#include "exec/kernels/epctx_ops.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {

Result<Activation> ParseFusedActivation(const Attributes& attrs) {
  EPCTX_ASSIGN_OR_RETURN(std::string name, attrs.GetString(ops::kActivation, ""));
  EPCTX_ASSIGN_OR_RETURN(std::vector<float> params, attrs.GetFloats(ops::kActivationParams, {}));
  Activation act;
  if (name.empty()) return act;
  if (name == "Relu") {
    act.kind = Activation::Kind::kRelu;
  } else if (name == "Sigmoid") {
    act.kind = Activation::Kind::kSigmoid;
  } else if (name == "Clip") {
    if (params.size() != 2) {
      return EPCTX_ERROR(kInvalidArgument,
                         "activation Clip needs activation_params [min, max], got {} values",
                         params.size());
    }
    act.kind = Activation::Kind::kClip;
    act.lo = params[0];
    act.hi = params[1];
  } else {
    return EPCTX_ERROR(kUnsupported, "activation '{}' is not supported", name);
  }
  return act;
}

void ApplyBiasActivation(const Activation& act, float bias, float* data, int64_t n) {
  switch (act.kind) {
    case Activation::Kind::kNone:
      if (bias != 0) {
        for (int64_t i = 0; i < n; ++i) data[i] += bias;
      }
      return;
    case Activation::Kind::kRelu:
      for (int64_t i = 0; i < n; ++i) data[i] = std::max(data[i] + bias, 0.0f);
      return;
    case Activation::Kind::kClip:
      for (int64_t i = 0; i < n; ++i) data[i] = std::min(std::max(data[i] + bias, act.lo), act.hi);
      return;
    case Activation::Kind::kSigmoid: {
      ArrayMapF y(data, n);
      y = (y + bias).logistic();
      return;
    }
  }
}

void ApplyActivation(const Activation& act, const float* x, float* y, int64_t n) {
  switch (act.kind) {
    case Activation::Kind::kNone:
      if (x != y) std::copy(x, x + n, y);
      return;
    case Activation::Kind::kRelu:
      for (int64_t i = 0; i < n; ++i) y[i] = std::max(x[i], 0.0f);
      return;
    case Activation::Kind::kClip:
      for (int64_t i = 0; i < n; ++i) y[i] = std::min(std::max(x[i], act.lo), act.hi);
      return;
    case Activation::Kind::kSigmoid:
      ArrayMapF(y, n) = ConstArrayMapF(x, n).logistic();
      return;
  }
}

}  // namespace epctx::exec::kernels
