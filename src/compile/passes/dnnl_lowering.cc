#include "compile/passes/dnnl_lowering.h"

#include "compile/passes/passes.h"
#include "exec/kernels/epctx_ops.h"
#include "exec/kernels/onednn/conv_primitive.h"

namespace epctx::compile {

bool IsOnnx(const IrNode& n, std::string_view op) {
  return n.domain.empty() && n.op_type == op;
}

void AppendPostOp(IrNode& n, PostOpKind kind, float alpha, float beta) {
  std::vector<int64_t> kinds;
  std::vector<float> alphas, betas;
  if (const IrAttribute* a = n.FindAttr(ops::kPostOps)) kinds = a->ints;
  if (const IrAttribute* a = n.FindAttr(ops::kPostOpAlpha)) alphas = a->floats;
  if (const IrAttribute* a = n.FindAttr(ops::kPostOpBeta)) betas = a->floats;
  kinds.push_back(static_cast<int64_t>(kind));
  alphas.push_back(alpha);
  betas.push_back(beta);
  n.SetInts(ops::kPostOps, std::move(kinds));
  n.SetFloats(ops::kPostOpAlpha, std::move(alphas));
  n.SetFloats(ops::kPostOpBeta, std::move(betas));
}

bool IsFloatConstant(const IrGraph& g, int index) {
  return index >= 0 && ValueOf(g, index).constant &&
         ValueOf(g, index).constant->dtype == DataType::kFloat32 &&
         ValueOf(g, index).constant->layout == 0;
}

// A constant that is a bias for an output of `n` columns: [N] or [1, ..., 1, N].
bool IsBiasFor(const IrGraph& g, int v, int64_t n) {
  if (!IsFloatConstant(g, v)) return false;
  const std::vector<int64_t>& s = ValueOf(g, v).shape;
  if (s.empty() || s.back() != n) return false;
  for (size_t i = 0; i + 1 < s.size(); ++i) {
    if (s[i] != 1) return false;
  }
  return true;
}

bool TooWideForDnnlConv(const IrValue& x) {
  return x.shape_known && !x.shape.empty() &&
         x.shape.back() > exec::kernels::onednn::kMaxConvOutputWidth;
}

// A FusedGemm/FusedConv's activation as its first post-op; false when it has none we know.
bool TakeFusedActivation(IrNode& n) {
  const IrAttribute* act = n.FindAttr(ops::kActivation);
  const IrAttribute* params = n.FindAttr(ops::kActivationParams);
  if (act == nullptr) return false;
  if (act->s == "Relu") {
    AppendPostOp(n, PostOpKind::kRelu, 0, 0);
  } else if (act->s == "Sigmoid") {
    AppendPostOp(n, PostOpKind::kSigmoid, 0, 0);
  } else if (act->s == "Clip" && params != nullptr && params->floats.size() == 2) {
    AppendPostOp(n, PostOpKind::kClip, params->floats[0], params->floats[1]);
  } else {
    return false;
  }
  n.RemoveAttr(ops::kActivation);
  n.RemoveAttr(ops::kActivationParams);
  return true;
}

}  // namespace epctx::compile
