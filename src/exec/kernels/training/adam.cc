// Adam (ai.onnx.preview.training, opset 1): one step of Adam on N tensors, with the bias
// correction of both moments folded into the learning rate once T > 0, and the optional
// post-update decay of X (norm_coefficient_post).
#include <array>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string_view>

#include "exec/kernels/families.h"
#include "exec/kernels/training/optimizer.h"

namespace epctx::exec::kernels::training {
namespace {

struct AdamRule {
  static constexpr std::string_view kOp = "Adam";
  static constexpr std::array<std::string_view, 4> kInputs = {"X", "G", "V", "H"};
  static constexpr std::array<std::string_view, 3> kOutputs = {"X_new", "V_new", "H_new"};

  double alpha = 0.9;
  double beta = 0.999;
  double epsilon = 1e-6;
  double norm_coefficient = 0;
  double norm_coefficient_post = 0;

  struct Step {
    double r;  // R, bias-corrected when T > 0
  };
  Step MakeStep(double r, int64_t t) const {
    if (t <= 0) return {r};
    const double td = static_cast<double>(t);
    return {r * std::sqrt(1 - std::pow(beta, td)) / (1 - std::pow(alpha, td))};
  }

  // in: X, G, V (averaged gradient), H (averaged squared gradient); out: X_new, V_new, H_new.
  void Apply(const Step& s, const double (&in)[4], double (&out)[3]) const {
    const double g = norm_coefficient * in[0] + in[1];
    const double v = alpha * in[2] + (1 - alpha) * g;
    const double h = beta * in[3] + (1 - beta) * g * g;
    const double x = in[0] - s.r * v / (std::sqrt(h) + epsilon);
    out[0] = (1 - norm_coefficient_post) * x;
    out[1] = v;
    out[2] = h;
  }
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateAdam(const NodeInfo& node) {
  AdamRule rule;
  const Attributes& attrs = *node.attrs;
  EPCTX_ASSIGN_OR_RETURN(float alpha, attrs.GetFloat("alpha", 0.9f));
  EPCTX_ASSIGN_OR_RETURN(float beta, attrs.GetFloat("beta", 0.999f));
  EPCTX_ASSIGN_OR_RETURN(float epsilon, attrs.GetFloat("epsilon", 1e-6f));
  EPCTX_ASSIGN_OR_RETURN(float norm, attrs.GetFloat("norm_coefficient", 0.0f));
  EPCTX_ASSIGN_OR_RETURN(float norm_post, attrs.GetFloat("norm_coefficient_post", 0.0f));
  rule.alpha = alpha;
  rule.beta = beta;
  rule.epsilon = epsilon;
  rule.norm_coefficient = norm;
  rule.norm_coefficient_post = norm_post;
  return OptimizerKernel<AdamRule>::Create(node, rule);
}

}  // namespace epctx::exec::kernels::training
