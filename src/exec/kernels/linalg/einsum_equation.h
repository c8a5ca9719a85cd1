// Parsing of an Einsum equation against its operands' shapes into integer labels: letters keep
// their ASCII codes (so sorting the labels gives numpy's implicit output order, upper case
// first), and the dims an ellipsis covers get labels kEllipsisLabel + j, right-aligned across
// operands as numpy broadcasting aligns them.
#pragma once

#include <cstdint>
#include <map>
#include <string_view>
#include <vector>

#include "epctx/status.h"

namespace epctx::exec::kernels {

inline constexpr int kEllipsisLabel = 256;

struct EinsumEquation {
  std::vector<std::vector<int>> inputs;  // per operand: one label per dim (repeats = diagonal)
  std::vector<int> output;               // distinct labels in output order
  std::map<int, int64_t> sizes;          // every label's extent after broadcasting
};

Result<EinsumEquation> ParseEinsum(std::string_view equation,
                                   const std::vector<std::vector<int64_t>>& shapes);

}  // namespace epctx::exec::kernels
