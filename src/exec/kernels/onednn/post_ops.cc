#include "exec/kernels/onednn/post_ops.h"

#include <algorithm>

#include "exec/kernels/common/eigen.h"
#include "exec/kernels/common/parallel_for.h"
#include "exec/kernels/epctx_ops.h"
#include "util/status_macros.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <unsupported/Eigen/SpecialFunctions>  // Array::erf
#pragma GCC diagnostic pop

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
    case PostOpKind::kMish:
      return "Mish";
  }
  return "?";
}

Result<std::vector<PostOp>> ParsePostOps(const Attributes& attrs) {
  EPCTX_ASSIGN_OR_RETURN(std::vector<int64_t> kinds, attrs.GetInts(ops::kPostOps));
  EPCTX_ASSIGN_OR_RETURN(std::vector<float> alpha, attrs.GetFloats(ops::kPostOpAlpha));
  EPCTX_ASSIGN_OR_RETURN(std::vector<float> beta, attrs.GetFloats(ops::kPostOpBeta));
  if (alpha.size() != kinds.size() || beta.size() != kinds.size()) {
    return EPCTX_ERROR(kInvalidArgument,
                       "post_ops has {} entries but post_op_alpha {} and post_op_beta {}",
                       kinds.size(), alpha.size(), beta.size());
  }
  std::vector<PostOp> ops;
  int residuals = 0;
  for (size_t i = 0; i < kinds.size(); ++i) {
    if (kinds[i] < static_cast<int64_t>(PostOpKind::kRelu) ||
        kinds[i] > static_cast<int64_t>(PostOpKind::kMish)) {
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

namespace {

bool IsPlain(PostOpKind kind) {
  switch (kind) {
    case PostOpKind::kAddTensor:
    case PostOpKind::kRelu:
    case PostOpKind::kClip:
    case PostOpKind::kLinear:
      return true;
    default:
      return false;
  }
}

// The kinds ApplyTrailingPostOps computes: transcendental, and 0 at 0.
bool AppliedAfterPrimitive(PostOpKind kind) {
  switch (kind) {
    case PostOpKind::kSwish:
    case PostOpKind::kTanh:
    case PostOpKind::kGeluErf:
    case PostOpKind::kGeluTanh:
    case PostOpKind::kMish:
      return true;
    default:
      return false;
  }
}

void ApplyOne(const PostOp& op, float* data, int64_t n) {
  ArrayMapF x(data, n);
  switch (op.kind) {
    case PostOpKind::kSwish:
      x = x * (op.alpha * x).logistic();
      return;
    case PostOpKind::kTanh:
      x = x.tanh();
      return;
    case PostOpKind::kGeluErf:
      x = 0.5f * x * (1.0f + (x * static_cast<float>(M_SQRT1_2)).erf());
      return;
    case PostOpKind::kGeluTanh: {
      constexpr float kSqrt2OverPi = 0.7978845608028654f;
      x = 0.5f * x * (1.0f + (kSqrt2OverPi * (x + 0.044715f * x.cube())).tanh());
      return;
    }
    case PostOpKind::kMish:
      // exp overflows to infinity above ~88, where tanh(infinity) = 1 gives x.
      x = x * x.exp().log1p().tanh();
      return;
    case PostOpKind::kSigmoid:
      x = x.logistic();
      return;
    case PostOpKind::kRelu:
      x = (x > 0).select(x, op.alpha * x);
      return;
    case PostOpKind::kClip:
      x = x.max(op.alpha).min(op.beta);
      return;
    case PostOpKind::kLinear:
      x = op.alpha * x + op.beta;
      return;
    default:
      return;  // AppliedToABuffer admits only the kinds above
  }
}

}  // namespace

size_t PrimitivePostOpCount(std::span<const PostOp> ops) {
  size_t count = ops.size();
  while (count > 0 && AppliedAfterPrimitive(ops[count - 1].kind)) --count;
  return count;
}

void ApplyTrailingPostOps(std::span<const PostOp> ops, float* data, int64_t n, int threads) {
  ApplyPostOpsToBuffer(ops.subspan(PrimitivePostOpCount(ops)), data, n, threads);
}

bool AppliedToABuffer(PostOpKind kind) {
  switch (kind) {
    case PostOpKind::kSigmoid:
    case PostOpKind::kRelu:
    case PostOpKind::kClip:
    case PostOpKind::kLinear:
      return true;
    default:
      return AppliedAfterPrimitive(kind);
  }
}

void ApplyPostOpsToBuffer(std::span<const PostOp> ops, float* data, int64_t n, int threads) {
  if (ops.empty() || n <= 0) return;
  // Ranges of at least 16K floats (64 KiB), so that small outputs stay on one thread.
  constexpr int64_t kGrain = 1 << 14;
  ParallelForRanges(threads, n, kGrain, [&](int64_t begin, int64_t end) {
    for (const PostOp& op : ops) ApplyOne(op, data + begin, end - begin);
  });
}

size_t LeadingPlainPostOpCount(std::span<const PostOp> ops) {
  size_t count = 0;
  while (count < ops.size() && IsPlain(ops[count].kind)) ++count;
  return count;
}

bool PrimitivePostOpsArePlain(std::span<const PostOp> ops) {
  for (const PostOp& op : ops.first(PrimitivePostOpCount(ops))) {
    if (!IsPlain(op.kind)) return false;
  }
  return true;
}

void ApplyPrimitivePostOps(std::span<const PostOp> ops, float* data, const float* residual,
                           int64_t n) {
  for (const PostOp& op : ops.first(PrimitivePostOpCount(ops))) {
    for (int64_t i = 0; i < n; ++i) {
      float& x = data[i];
      switch (op.kind) {
        case PostOpKind::kAddTensor:
          x += residual[i];
          break;
        case PostOpKind::kRelu:  // oneDNN's eltwise_relu: alpha * x below 0
          x = x > 0 ? x : op.alpha * x;
          break;
        case PostOpKind::kClip:  // eltwise_clip_v2
          x = std::min(std::max(x, op.alpha), op.beta);
          break;
        case PostOpKind::kLinear:
          x = op.alpha * x + op.beta;
          break;
        default:
          break;  // PrimitivePostOpsArePlain rules the others out
      }
    }
  }
}

Result<dnnl::post_ops> ToDnnlPostOps(std::span<const PostOp> ops,
                                     const dnnl::memory::desc* residual) {
  dnnl::post_ops chain;
  for (const PostOp& op : ops.first(PrimitivePostOpCount(ops))) {
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
      case PostOpKind::kMish:
        eltwise(dnnl::algorithm::eltwise_mish, 0, 0);
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
