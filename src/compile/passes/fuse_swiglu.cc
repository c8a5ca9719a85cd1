// The gate of a Llama MLP, silu(g) * u, as PyTorch and ONNX Runtime GenAI's builder export it:
//   Mul(Mul(g, Sigmoid(g)), u)
// three nodes on one row of the MLP's width per token, becomes one com.epctx SwiGlu(g, u)
// (exec/kernels/elementwise/swiglu.cc), which computes the same sigmoid and products in the same
// order, bit for bit. Where g comes from a float32 MatMul, FuseActivations has already made
// g * sigmoid(g) that matmul's activation (a oneDNN post-op), and the pattern is gone; this pass
// serves the matmuls that take no activation (int4 MatMulNBits). The sigmoid and the first
// product must be read by the next step only; g and u must be of one shape, proven at compile
// time (equal dims, or unknown dims of one symbolic name), as the fused kernel does not
// broadcast. Either operand order of both Muls.
#include <vector>

#include "compile/passes/passes.h"
#include "exec/kernels/epctx_ops.h"

namespace epctx::compile {

Result<PassStats> FuseSwiGlu(IrGraph& graph) {
  PassStats stats{"fuse-swiglu", 0};
  ChainMatcher m(graph);
  for (IrNode& mul : graph.nodes) {
    if (!mul.domain.empty() || mul.op_type != "Mul" || mul.inputs.size() != 2 ||
        mul.outputs.size() != 1 || !IsFloat32Tensor(graph, mul.outputs[0])) {
      continue;
    }
    for (int side = 0; side < 2; ++side) {
      const int silu = m.SoleProducer(mul.inputs[side], "Mul");
      if (silu < 0) continue;
      const IrNode& sm = m.node(silu);
      if (sm.inputs.size() != 2) continue;
      int g = -1, sigmoid = -1;
      for (int s = 0; s < 2 && g < 0; ++s) {
        const int sig = m.SoleProducer(sm.inputs[s], "Sigmoid");
        if (sig >= 0 && m.node(sig).inputs.size() == 1 &&
            m.node(sig).inputs[0] == sm.inputs[1 - s]) {
          g = sm.inputs[1 - s];
          sigmoid = sig;
        }
      }
      const int u = mul.inputs[1 - side];
      if (g < 0 || !IsFloat32Tensor(graph, g) || !IsFloat32Tensor(graph, u) ||
          !ProvablySameShape(ValueOf(graph, g), ValueOf(graph, u)) ||
          !ProvablySameShape(ValueOf(graph, g), ValueOf(graph, mul.outputs[0]))) {
        continue;
      }
      m.dead()[static_cast<size_t>(silu)] = true;
      m.dead()[static_cast<size_t>(sigmoid)] = true;
      mul.op_type = ops::kSwiGlu;
      mul.domain = ops::kDomain;
      mul.inputs = {g, u};
      mul.attrs.clear();
      stats.changed += 2;
      break;
    }
  }
  if (stats.changed > 0) graph.DeclareEpctxOpset();
  EraseNodes(graph, m.dead());
  return stats;
}

}  // namespace epctx::compile
