// Equal on string tensors (bool output, numpy broadcasting); the numeric Equal is a BinaryKernel
// op (binary_ops.cc), which picks this kernel when the node's inputs are strings.
#pragma once

#include <memory>

#include "epctx/status.h"
#include "exec/kernel.h"

namespace epctx::exec::kernels::elementwise {

Result<std::unique_ptr<Kernel>> CreateStringEqual(const NodeInfo& node);

}  // namespace epctx::exec::kernels::elementwise
