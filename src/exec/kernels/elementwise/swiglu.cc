// com.epctx SwiGlu(g, u) = (g * sigmoid(g)) * u: the gate of a Llama MLP, which a PyTorch or
// ONNX Runtime GenAI export spells Sigmoid, Mul, Mul, and the compiler fuses into this node
// (compile/passes/fuse_swiglu.cc) where the gate's matmul took no activation of its own (int4
// MatMulNBits). g and u are float32 of one shape (the pass proves it; checked again here). The
// sigmoid is the Sigmoid kernel's own (ApplyActivation on whole 16-float blocks), then the two
// products in the graph's order, each rounded: the fusion is exact.
#include <algorithm>
#include <memory>

#include "exec/kernels/common/activation.h"
#include "exec/kernels/common/shape.h"
#include "exec/kernels/elementwise/unary_float.h"
#include "exec/kernels/families.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels::elementwise {
namespace {

// y[i] = (g[i] * sigmoid(g[i])) * u[i] for n elements, through a sigmoid buffer of kChunk on the
// stack (a whole number of 16-float blocks, so that only the tensor's last elements take Eigen's
// scalar path, as in the Sigmoid kernel). y may be g or u.
void SwiGluChunk(const float* g, const float* u, float* y, int64_t n) {
  constexpr int64_t kChunk = 1024;
  alignas(64) float s[kChunk];
  Activation sigmoid;
  sigmoid.kind = Activation::Kind::kSigmoid;
  for (int64_t at = 0; at < n; at += kChunk) {
    const int64_t m = std::min(kChunk, n - at);
    ApplyActivation(sigmoid, g + at, s, m);
    for (int64_t i = 0; i < m; ++i) {
      const float silu = g[at + i] * s[i];
      y[at + i] = silu * u[at + i];
    }
  }
}

class SwiGluKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node) {
    if (node.inputs.size() != 2 || node.outputs.size() != 1) {
      return EPCTX_ERROR(kInvalidArgument,
                         "SwiGlu takes 2 inputs and makes 1 output, not {} and {}",
                         node.inputs.size(), node.outputs.size());
    }
    EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, 0, DataType::kFloat32, "g"));
    EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, 1, DataType::kFloat32, "u"));
    return std::unique_ptr<Kernel>(new SwiGluKernel());
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* g, RequiredInput(ctx, 0, "g"));
    EPCTX_ASSIGN_OR_RETURN(const Tensor* u, RequiredInput(ctx, 1, "u"));
    EPCTX_RETURN_IF_ERROR(ExpectDtype(*g, DataType::kFloat32, "g"));
    EPCTX_RETURN_IF_ERROR(ExpectDtype(*u, DataType::kFloat32, "u"));
    if (g->shape() != u->shape()) {
      return EPCTX_ERROR(kInvalidArgument, "g {} and u {} differ in shape",
                         ShapeToString(g->shape()), ShapeToString(u->shape()));
    }
    EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, DataType::kFloat32, g->shape()));
    const float* gp = g->data_as<float>();
    const float* up = u->data_as<float>();
    float* yp = y->mutable_data_as<float>();
    // ParallelMap's ranges of whole 16-float blocks, over g and y; u at the same offsets.
    ParallelMap(gp, yp, g->element_count(), ctx.num_threads(),
                [gp, up](const float* in, float* out, int64_t n) {
                  SwiGluChunk(in, up + (in - gp), out, n);
                });
    return Status::Ok();
  }

 private:
  SwiGluKernel() = default;
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateSwiGlu(const NodeInfo& node) {
  return SwiGluKernel::Create(node);
}

}  // namespace epctx::exec::kernels::elementwise
