#include "exec/kernels/dnnl/post_ops.h"

#include "util/status_macros.h"

namespace epctx::exec::kernels::onednn {

std::string_view PostOpName(PostOpKind kind) {
  switch (kind) {
    case PostOpKind::kRelu:
      return "Relu";
    case PostOpKind::kClip:
      return "Clip";
    case PostOpKind::kSigmoid:
      return "Sigmoid";
    case PostOpKind::kSwish:
      return "Swish";
    case PostOpKind::kHardSwish:
      return "HardSwish";
    case PostOpKind::kTanh:
      return "Tanh";
    case PostOpKind::kGeluErf:
      return "Gelu";
    case PostOpKind::kGeluTanh:
      return "GeluTanh";
    case PostOpKind::kAddTensor:
      return "Add";
    case PostOpKind::kLinear:
      return "Linear";
    case PostOpKind::kElu:
      return "Elu";
  }
  return "?";
}

Result<std::vector<PostOp>> ParsePostOps(const Attributes& attrs) {
  EPCTX_ASSIGN_OR_RETURN(std::vector<int64_t> kinds, attrs.GetInts("post_ops"));
  EPCTX_ASSIGN_OR_RETURN(std::vector<float> alpha, attrs.GetFloats("post_op_alpha"));
  EPCTX_ASSIGN_OR_RETURN(std::vector<float> beta, attrs.GetFloats("post_op_beta"));
  if (alpha.size() != kinds.size() || beta.size() != kinds.size()) {
    return EPCTX_ERROR(kInvalidArgument,
                       "post_ops has {} entries but post_op_alpha {} and post_op_beta {}",
                       kinds.size(), alpha.size(), beta.size());
  }
  std::vector<PostOp> ops;
  int residuals = 0;
  for (size_t i = 0; i < kinds.size(); ++i) {
    if (kinds[i] < static_cast<int64_t>(PostOpKind::kRelu) ||
        kinds[i] > static_cast<int64_t>(PostOpKind::kElu)) {
      return EPCTX_ERROR(kInvalidArgument, "post_ops[{}] = {} is not a known post-op", i, kinds[i]);
    }
    PostOp op{static_cast<PostOpKind>(kinds[i]), alpha[i], beta[i]};
    if (op.kind == PostOpKind::kAddTensor && ++residuals > 1) {
      return EPCTX_ERROR(kInvalidArgument, "post_ops adds more than one tensor");
    }
    ops.push_back(op);
  }
  return ops;
}

Result<dnnl::post_ops> ToDnnlPostOps(std::span<const PostOp> ops,
                                     const dnnl::memory::desc* residual) {
  dnnl::post_ops chain;
  for (const PostOp& op : ops) {
    auto eltwise = [&](dnnl::algorithm alg, float alpha, float beta) {
      chain.append_eltwise(1.0f, alg, alpha, beta);
    };
    switch (op.kind) {
      case PostOpKind::kRelu:
        eltwise(dnnl::algorithm::eltwise_relu, op.alpha, 0);
        break;
      case PostOpKind::kClip:
        eltwise(dnnl::algorithm::eltwise_clip_v2, op.alpha, op.beta);
        break;
      case PostOpKind::kSigmoid:
        eltwise(dnnl::algorithm::eltwise_logistic, 0, 0);
        break;
      case PostOpKind::kSwish:
        eltwise(dnnl::algorithm::eltwise_swish, op.alpha, 0);
        break;
      case PostOpKind::kHardSwish:
        eltwise(dnnl::algorithm::eltwise_hardswish, 0, 0);
        break;
      case PostOpKind::kTanh:
        eltwise(dnnl::algorithm::eltwise_tanh, 0, 0);
        break;
      case PostOpKind::kGeluErf:
        eltwise(dnnl::algorithm::eltwise_gelu_erf, 0, 0);
        break;
      case PostOpKind::kGeluTanh:
        eltwise(dnnl::algorithm::eltwise_gelu_tanh, 0, 0);
        break;
      case PostOpKind::kLinear:
        eltwise(dnnl::algorithm::eltwise_linear, op.alpha, op.beta);
        break;
      case PostOpKind::kElu:
        eltwise(dnnl::algorithm::eltwise_elu, op.alpha, 0);
        break;
      case PostOpKind::kAddTensor:
        if (residual == nullptr) {
          return EPCTX_ERROR(kInvalidArgument, "post-op Add has no residual input");
        }
        chain.append_binary(dnnl::algorithm::binary_add, *residual);
        break;
    }
  }
  return chain;
}

int ResidualIndex(std::span<const PostOp> ops) {
  for (size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].kind == PostOpKind::kAddTensor) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace epctx::exec::kernels::onednn
