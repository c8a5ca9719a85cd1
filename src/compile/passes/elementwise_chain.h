// Recognizes element-wise functions that exporters spell out node by node (GELU as
// Div/Erf/Add/Mul/Mul, its tanh approximation as Pow/Mul/Add/Mul/Tanh/Add/Mul/Mul, SiLU as
// Sigmoid/Mul, HardSwish as Add/Clip/Div/Mul, ...) after a value, so that the node producing it
// can apply the function as one oneDNN post-op.
//
// The chain is found structurally (single-input element-wise nodes whose other operands are
// scalar constants, closed: only its last value is read outside), and identified numerically:
// it is run on sample points with the real kernels and compared with each candidate function.
// This catches every spelling of a function, and never fuses a chain that computes anything
// else.
#pragma once

#include <optional>
#include <vector>

#include "compile/ir.h"
#include "exec/kernels/onednn/post_ops.h"

namespace epctx::compile {

struct ElementwiseChain {
  exec::kernels::onednn::PostOp function;
  std::vector<size_t> nodes;  // indices into graph.nodes, in order
  int output = -1;            // the chain's last value
};

// The longest chain applied to `value` (produced by node `producer`) that computes a function
// oneDNN has as a post-op; nullopt when there is none.
std::optional<ElementwiseChain> FindElementwiseChain(const IrGraph& graph, size_t producer,
                                                     int value, const std::vector<bool>& dead);

}  // namespace epctx::compile
