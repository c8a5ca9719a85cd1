// The element types the reduce/ kernels compute in, checked at creation when the compiler knows
// the input type so that an unsupported model fails as "unsupported" before it runs.
#pragma once

#include <string_view>

#include "epctx/status.h"
#include "epctx/tensor.h"
#include "exec/kernel.h"

namespace epctx::exec::kernels {

// float32, float64, int32, int64, int8, uint8.
bool IsReduceType(DataType type);

// kUnsupported "<op> does not support input type <type>" unless `supported(type)`.
Status ExpectSupportedType(DataType type, bool (*supported)(DataType), std::string_view op);

// The same check on input `index` at creation; passes when the type is not known yet.
Status ExpectStaticSupportedType(const NodeInfo& node, size_t index, bool (*supported)(DataType),
                                 std::string_view op);

}  // namespace epctx::exec::kernels
