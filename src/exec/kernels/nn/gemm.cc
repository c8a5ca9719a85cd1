// Gemm and com.epctx FusedGemm: Y = act(alpha * op(A) * op(B) + beta * C), C broadcast
// unidirectionally to [M, N]. The compiler may have stored B transposed with alpha folded in;
// that arrives here as plain attributes (transB = 1, alpha = 1). Before opset 7, C had to be
// [M, N] unless attribute broadcast=1.
#include <memory>

#include "exec/kernels/common/activation.h"
#include "exec/kernels/common/shape.h"
#include "exec/kernels/families.h"
#include "exec/kernels/nn/gemm_f32.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

// C's element strides along the rows and columns of Y (0 where C is broadcast).
struct BiasLayout {
  int64_t row_stride = 0;
  int64_t col_stride = 0;
};

Result<BiasLayout> LayoutOfC(const std::vector<int64_t>& c, int64_t m, int64_t n) {
  const int64_t rows = c.size() == 2 ? c[0] : 1;
  const int64_t cols = c.empty() ? 1 : c.back();
  if (c.size() > 2 || (rows != 1 && rows != m) || (cols != 1 && cols != n)) {
    return EPCTX_ERROR(kInvalidArgument,
                       "input C has shape {}, which does not broadcast to [{},{}]",
                       ShapeToString(c), m, n);
  }
  return BiasLayout{rows == 1 ? 0 : cols, cols == 1 ? 0 : 1};
}

class GemmKernel final : public Kernel {
 public:
  // `legacy`: opsets 1 and 6, with attribute broadcast.
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node, bool fused, bool legacy) {
    auto kernel = std::unique_ptr<GemmKernel>(new GemmKernel());
    const Attributes& attrs = *node.attrs;
    if (legacy) {
      EPCTX_ASSIGN_OR_RETURN(int64_t broadcast, attrs.GetInt("broadcast", 0));
      if (broadcast != 0 && broadcast != 1) {
        return EPCTX_ERROR(kInvalidArgument, "attribute broadcast is {}, expected 0 or 1",
                           broadcast);
      }
      kernel->c_is_full_ = broadcast == 0;
    }
    EPCTX_ASSIGN_OR_RETURN(kernel->alpha_, attrs.GetFloat("alpha", 1.0f));
    EPCTX_ASSIGN_OR_RETURN(kernel->beta_, attrs.GetFloat("beta", 1.0f));
    EPCTX_ASSIGN_OR_RETURN(int64_t trans_a, attrs.GetInt("transA", 0));
    EPCTX_ASSIGN_OR_RETURN(int64_t trans_b, attrs.GetInt("transB", 0));
    kernel->trans_a_ = trans_a != 0;
    kernel->trans_b_ = trans_b != 0;
    if (fused) {
      EPCTX_ASSIGN_OR_RETURN(kernel->act_, ParseFusedActivation(attrs));
    }
    EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, 0, DataType::kFloat32, "A"));
    EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, 1, DataType::kFloat32, "B"));
    EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, 2, DataType::kFloat32, "C"));
    EPCTX_RETURN_IF_ERROR(ExpectStaticRank(node, 0, 2, "A"));
    EPCTX_RETURN_IF_ERROR(ExpectStaticRank(node, 1, 2, "B"));
    const std::vector<int64_t>* sa = StaticShape(node, 0);
    const std::vector<int64_t>* sb = StaticShape(node, 1);
    if (sa != nullptr && sb != nullptr) {
      const int64_t k = (*sa)[kernel->trans_a_ ? 0 : 1];
      const int64_t kb = (*sb)[kernel->trans_b_ ? 1 : 0];
      if (k >= 0 && kb >= 0 && k != kb) {
        return EPCTX_ERROR(kInvalidArgument,
                           "inner dimensions differ: A {} (transA={}) and B {} (transB={})",
                           ShapeToString(*sa), trans_a, ShapeToString(*sb), trans_b);
      }
      const std::vector<int64_t>* sc = StaticShape(node, 2);
      if (kernel->c_is_full_ && kernel->beta_ != 0.0f && sc != nullptr) {
        const std::vector<int64_t> mn{(*sa)[kernel->trans_a_ ? 1 : 0],
                                      (*sb)[kernel->trans_b_ ? 0 : 1]};
        EPCTX_RETURN_IF_ERROR(ExpectFullC(*sc, mn));
      }
    }
    return std::unique_ptr<Kernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* a, RequiredInput(ctx, 0, "A"));
    EPCTX_ASSIGN_OR_RETURN(const Tensor* b, RequiredInput(ctx, 1, "B"));
    const Tensor* c = beta_ != 0.0f ? ctx.input(2) : nullptr;
    EPCTX_RETURN_IF_ERROR(ExpectDtype(*a, DataType::kFloat32, "A"));
    EPCTX_RETURN_IF_ERROR(ExpectDtype(*b, DataType::kFloat32, "B"));
    EPCTX_RETURN_IF_ERROR(ExpectRank(*a, 2, "A"));
    EPCTX_RETURN_IF_ERROR(ExpectRank(*b, 2, "B"));
    const int64_t m = a->shape()[trans_a_ ? 1 : 0];
    const int64_t k = a->shape()[trans_a_ ? 0 : 1];
    const int64_t kb = b->shape()[trans_b_ ? 1 : 0];
    const int64_t n = b->shape()[trans_b_ ? 0 : 1];
    if (k != kb) {
      return EPCTX_ERROR(
          kInvalidArgument, "inner dimensions differ: A {} (transA={}) and B {} (transB={})",
          ShapeToString(a->shape()), trans_a_ ? 1 : 0, ShapeToString(b->shape()), trans_b_ ? 1 : 0);
    }
    BiasLayout layout;
    if (c != nullptr) {
      EPCTX_RETURN_IF_ERROR(ExpectDtype(*c, DataType::kFloat32, "C"));
      if (c_is_full_) EPCTX_RETURN_IF_ERROR(ExpectFullC(c->shape(), {m, n}));
      EPCTX_ASSIGN_OR_RETURN(layout, LayoutOfC(c->shape(), m, n));
    }
    EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, DataType::kFloat32, {m, n}));
    float* yp = y->mutable_data_as<float>();
    const float* cp = c != nullptr ? c->data_as<float>() : nullptr;
    auto epilogue = [&](int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
      for (int64_t i = r0; i < r1; ++i) {
        float* row = yp + i * n;
        if (cp != nullptr) {
          const float* ci = cp + i * layout.row_stride;
          if (layout.col_stride == 0) {
            ApplyBiasActivation(act_, beta_ * ci[0], row + c0, c1 - c0);
            continue;
          }
          for (int64_t j = c0; j < c1; ++j) row[j] += beta_ * ci[j];
        }
        ApplyActivation(act_, row + c0, row + c0, c1 - c0);
      }
    };
    ParallelGemmF32(m, n, k, alpha_, GemmOperand{a->data_as<float>(), a->shape()[1], trans_a_},
                    GemmOperand{b->data_as<float>(), b->shape()[1], trans_b_}, yp, n,
                    ctx.num_threads(), epilogue);
    return Status::Ok();
  }

 private:
  GemmKernel() = default;

  // Legacy broadcast=0: C is exactly [M, N] (unknown dims, -1, pass).
  static Status ExpectFullC(const std::vector<int64_t>& c, const std::vector<int64_t>& mn) {
    bool ok = c.size() == 2;
    for (size_t i = 0; ok && i < 2; ++i) ok = c[i] == mn[i] || c[i] < 0 || mn[i] < 0;
    if (!ok) {
      return EPCTX_ERROR(kInvalidArgument,
                         "input C has shape {}, expected {} since broadcast is 0 (legacy opset)",
                         ShapeToString(c), ShapeToString(mn));
    }
    return Status::Ok();
  }

  float alpha_ = 1;
  float beta_ = 1;
  bool trans_a_ = false;
  bool trans_b_ = false;
  Activation act_;
  bool c_is_full_ = false;  // legacy broadcast=0
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateGemm(const NodeInfo& node) {
  return GemmKernel::Create(node, false, node.opset < 7);
}

Result<std::unique_ptr<Kernel>> CreateFusedGemm(const NodeInfo& node) {
  return GemmKernel::Create(node, true, false);
}

}  // namespace epctx::exec::kernels
