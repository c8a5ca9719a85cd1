// The element type a DnnlConv or DnnlMatMul multiplies in. A node compiled with
// epctx.precision=bf16 carries `compute_type` (ops::kComputeType) "bf16": its weights are packed as
// bfloat16, its float32 input is rounded to bfloat16 before each run (in the thread's scratchpad),
// and the products accumulate in float32 into a float32 output (bias and post-ops in float32).
// Without the attribute the node computes in float32.
//
// bfloat16 primitives are used only where oneDNN runs them on the CPU's own bf16 dot products
// (avx512_bf16: oneDNN's avx512_core_bf16 and AMX tiers); elsewhere oneDNN would emulate them,
// slower than float32.
#pragma once

#include <cstdint>
#include <string_view>

#include "epctx/status.h"
#include "epctx/tensor.h"
#include "exec/attributes.h"

namespace epctx::exec::kernels::onednn {

inline constexpr std::string_view kComputeTypeBf16 = "bf16";

// Whether the node's `compute_type` asks for bfloat16; kInvalidArgument for values other than
// "bf16".
Result<bool> ParseComputeBf16(const Attributes& attrs);

// The element type of a float problem's packed weights: bfloat16 when it computes in bf16.
inline DataType PackedFloatWeightType(bool bf16) {
  return bf16 ? DataType::kBFloat16 : DataType::kFloat32;
}

// Whether oneDNN's bfloat16 kernels here use the CPU's bf16 instructions (see above), and the
// CPU, as DetectedCpuFeatures() sees it, has avx512_bf16.
bool HasBf16Kernels();

// The CPU features (util/cpu_features.h) a CPU needs to run weights packed as bfloat16 here:
// avx512bf16, and amx-tile when oneDNN packed them for AMX. The blob's fingerprint requires them.
uint64_t Bf16WeightCpuFeatures();

}  // namespace epctx::exec::kernels::onednn
