// Momentum (ai.onnx.preview.training, opset 1): one step of stochastic gradient descent with
// standard or Nesterov momentum (attribute mode) on N tensors. At the first update (T = 0) the
// gradient enters the momentum with coefficient 1 instead of beta.
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "exec/kernels/families.h"
#include "exec/kernels/training/optimizer.h"

namespace epctx::exec::kernels::training {
namespace {

struct MomentumRule {
  static constexpr std::string_view kOp = "Momentum";
  static constexpr std::array<std::string_view, 3> kInputs = {"X", "G", "V"};
  static constexpr std::array<std::string_view, 2> kOutputs = {"X_new", "V_new"};

  double alpha = 0;
  double beta = 0;
  double norm_coefficient = 0;
  bool nesterov = false;

  struct Step {
    double r;
    double beta;  // beta, or 1 at the first update
  };
  Step MakeStep(double r, int64_t t) const { return {r, t > 0 ? beta : 1.0}; }

  // in: X, G, V (momentum); out: X_new, V_new.
  void Apply(const Step& s, const double (&in)[3], double (&out)[2]) const {
    const double g = norm_coefficient * in[0] + in[1];
    const double v = alpha * in[2] + s.beta * g;
    out[0] = in[0] - s.r * (nesterov ? g + alpha * v : v);
    out[1] = v;
  }
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateMomentum(const NodeInfo& node) {
  // The operator gives these four attributes no defaults.
  const Attributes& attrs = *node.attrs;
  EPCTX_ASSIGN_OR_RETURN(const AttributeValue* alpha, attrs.Require("alpha", AttrType::kFloat));
  EPCTX_ASSIGN_OR_RETURN(const AttributeValue* beta, attrs.Require("beta", AttrType::kFloat));
  EPCTX_ASSIGN_OR_RETURN(const AttributeValue* norm,
                         attrs.Require("norm_coefficient", AttrType::kFloat));
  EPCTX_ASSIGN_OR_RETURN(const AttributeValue* mode, attrs.Require("mode", AttrType::kString));
  MomentumRule rule;
  if (mode->s == "nesterov") {
    rule.nesterov = true;
  } else if (mode->s != "standard") {
    return EPCTX_ERROR(kInvalidArgument,
                       "Momentum: attribute mode is '{}', expected 'standard' or 'nesterov'",
                       mode->s);
  }
  rule.alpha = alpha->f;
  rule.beta = beta->f;
  rule.norm_coefficient = norm->f;
  return OptimizerKernel<MomentumRule>::Create(node, rule);
}

}  // namespace epctx::exec::kernels::training
