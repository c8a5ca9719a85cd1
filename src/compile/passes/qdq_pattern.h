// The pieces of ONNX's QDQ format (static quantization) that the integer rewrites match: a
// DequantizeLinear of a uint8 activation with a constant per-tensor scale and zero point, and a
// DequantizeLinear of a constant int8 weight with zero point 0 and a per-tensor or per-channel
// scale; and the small IR builders those rewrites share.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "compile/ir.h"

namespace epctx::compile::qdq {

// The DequantizeLinear node (among `nodes`, indexed by `producer`) producing `value`, or null.
const IrNode* DequantizeProducing(const std::vector<IrNode>& nodes,
                                  const std::vector<int>& producer, int value);

struct QuantizedActivation {
  int q = -1;     // the uint8 value (not a constant)
  int zero = -1;  // its zero point (a uint8 scalar constant), or -1 for 0
  uint8_t zero_value = 0;
  float scale = 0;
};

struct QuantizedWeight {
  int q = -1;                // the int8 constant
  std::vector<float> scale;  // one, or one per channel along the weight's `channel_axis`
};

std::optional<QuantizedActivation> MatchActivation(const IrGraph& graph, const IrNode& dq);
// `channel_axis`: the weight axis a per-channel scale may run along (MatMul 1, Conv 0).
std::optional<QuantizedWeight> MatchWeight(const IrGraph& graph, const IrNode& dq,
                                           int64_t channel_axis);

// Whether oneDNN's int8 kernels multiply by the int8 constant `w` exactly on this CPU
// (onednn::Int8ProductsExact: VNNI, or every weight within [-64, 64]). The rewrites into them
// (these and LowerMatMulIntegersToDnnl) apply only then; otherwise the product stays on exact
// kernels (MatMulInteger's own, or the float convolution and matmul of the dequantized values).
bool Int8KernelsExactFor(const IrValue& w);

}  // namespace epctx::compile::qdq
