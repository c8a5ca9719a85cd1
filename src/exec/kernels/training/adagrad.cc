// Adagrad (ai.onnx.preview.training, opset 1): one step of ADAGRAD on N tensors, the learning
// rate decaying with the update count T.
#include <array>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string_view>

#include "exec/kernels/families.h"
#include "exec/kernels/training/optimizer.h"

namespace epctx::exec::kernels::training {
namespace {

struct AdagradRule {
  static constexpr std::string_view kOp = "Adagrad";
  static constexpr std::array<std::string_view, 3> kInputs = {"X", "G", "H"};
  static constexpr std::array<std::string_view, 2> kOutputs = {"X_new", "H_new"};

  double epsilon = 1e-6;
  double decay_factor = 0;
  double norm_coefficient = 0;

  struct Step {
    double r;  // R / (1 + T * decay_factor)
  };
  Step MakeStep(double r, int64_t t) const {
    return {r / (1 + static_cast<double>(t) * decay_factor)};
  }

  // in: X, G, H (accumulated squared gradient); out: X_new, H_new.
  void Apply(const Step& s, const double (&in)[3], double (&out)[2]) const {
    const double g = norm_coefficient * in[0] + in[1];
    const double h = in[2] + g * g;
    out[0] = in[0] - s.r * g / (std::sqrt(h) + epsilon);
    out[1] = h;
  }
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateAdagrad(const NodeInfo& node) {
  AdagradRule rule;
  EPCTX_ASSIGN_OR_RETURN(float epsilon, node.attrs->GetFloat("epsilon", 1e-6f));
  EPCTX_ASSIGN_OR_RETURN(float decay, node.attrs->GetFloat("decay_factor", 0.0f));
  EPCTX_ASSIGN_OR_RETURN(float norm, node.attrs->GetFloat("norm_coefficient", 0.0f));
  rule.epsilon = epsilon;
  rule.decay_factor = decay;
  rule.norm_coefficient = norm;
  return OptimizerKernel<AdagradRule>::Create(node, rule);
}

}  // namespace epctx::exec::kernels::training
