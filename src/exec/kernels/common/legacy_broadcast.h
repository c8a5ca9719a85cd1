// Broadcasting as opsets 1 to 6 defined it for Add, Sub, Mul, Div and Pow: only B is broadcast,
// onto A's shape, and only when attribute broadcast=1. B's dims line up with A's starting at
// attribute `axis`, or with A's last dims when axis is absent. PRelu before opset 7 had a rule of
// its own for its slope. Opset 7 replaced both with numpy broadcasting; kernels translate the
// legacy forms into it by giving B a shape of A's rank.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "epctx/status.h"
#include "exec/attributes.h"

namespace epctx::exec::kernels {

struct LegacyBroadcast {
  bool enabled = false;  // broadcast=1
  bool has_axis = false;
  int64_t axis = 0;
};

// Reads `broadcast` and `axis`; axis without broadcast=1 is an error.
Result<LegacyBroadcast> ParseLegacyBroadcast(const Attributes& attrs);

// B's shape with A's rank (padded with 1s on both sides) such that numpy broadcasting of A and B
// gives A's shape; kInvalidArgument when B does not fit A under `lb`. Unknown dims (-1) in
// static shapes match anything.
Result<std::vector<int64_t>> LegacyShapeOfB(const LegacyBroadcast& lb, std::span<const int64_t> a,
                                            std::span<const int64_t> b);

// PRelu before opset 7: the slope's shape re-viewed so that numpy broadcasting of X and the slope
// gives X's shape. The slope has one element, or one per channel (dim 1 of X) as in Caffe2, from
// which these versions came; any other slope must broadcast onto X numpy-style.
Result<std::vector<int64_t>> LegacySlopeShape(std::span<const int64_t> x,
                                              std::span<const int64_t> slope);

}  // namespace epctx::exec::kernels
