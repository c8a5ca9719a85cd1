// Symbolic shape inference, run on the imported IR after ONNX's own shape inference: it follows
// the contents of shape tensors (Shape -> Gather -> Concat -> Reshape and the like) and gives
// output dims as expressions of the input dims, so shapes computed at run time still get a rank
// and dims that provably agree get the same name (what the compiler needs to fuse, for example,
// a residual Add into the matrix product before it). Dims ONNX inferred as static are never
// changed; the declared shapes of graph inputs and outputs are left as the model states them.
#pragma once

#include "compile/ir.h"

namespace epctx::compile {

struct SymbolicShapeStats {
  int values = 0;               // node outputs, in the main graph and every body
  int unknown_rank_before = 0;  // of them, without a rank after ONNX's inference
  int unknown_rank_after = 0;   // ... and after this pass
  int dims_improved = 0;        // unknown dims that became static or got a name
};

SymbolicShapeStats InferSymbolicShapes(IrGraph& graph);

}  // namespace epctx::compile
