// Graph optimization passes. Each rewrites the IR in place and reports what it changed; nodes a
// pass removes are erased before it returns, so the node list stays topological and dense.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "compile/ir.h"
#include "epctx/status.h"

namespace epctx::compile {

struct PassStats {
  std::string pass;
  int changed = 0;  // nodes removed, folded or fused
};

// Float16 values become float32 (constants converted, Cast targets changed); the main graph's
// float16 inputs and outputs stay float16 behind a Cast each (lift_float16.cc says why).
Result<PassStats> LiftFloat16(IrGraph& graph);
// Identity, inference-mode Dropout, Pad by zero and Casts to the type the value already has:
// consumers read the input directly.
Result<PassStats> EliminateIdentityLike(IrGraph& graph);
// MatMul of DequantizeLinear(uint8 activation) by DequantizeLinear(constant int8 weight, zero
// point 0) becomes com.epctx DnnlMatMulInteger with float32 output scaled by the product of the
// scales, so the weight stays int8 (runs before FoldConstants, which would fold it to float32).
Result<PassStats> LowerQdqMatMulsToInteger(IrGraph& graph);
// A 2-D Conv of DequantizeLinear(uint8 activation) by DequantizeLinear(constant int8 filter,
// zero point 0), with a float or DequantizeLinear(int32) bias, becomes com.epctx DnnlIntegerConv
// (the filter stays int8; runs before FoldConstants).
Result<PassStats> LowerQdqConvsToInteger(IrGraph& graph);
// com.microsoft MatMulNBits with constant B, scales and zero points becomes com.epctx
// MatMulNBitsPacked, its codes repacked for the kernel (exec/kernels/quant/nbits_layout.h).
Result<PassStats> LowerMatMulNBits(IrGraph& graph);
// Nodes whose inputs are all constants are run once and replaced by their outputs; Shape/Size of
// statically shaped values become constants too.
Result<PassStats> FoldConstants(IrGraph& graph);
// BatchNormalization after a Conv with constant weights is folded into the Conv's weight and bias.
Result<PassStats> FoldBatchNormIntoConv(IrGraph& graph);
// AveragePool or GlobalAveragePool (whole windows, no padding) of a 1x1 Conv at stride 1 with a
// constant filter becomes the Conv of the pooled input: one affine map per pixel commutes with
// averaging, and fewer pixels are multiplied (pool_before_pointwise_conv.cc).
Result<PassStats> PoolBeforePointwiseConvs(IrGraph& graph);
// RMS normalization as PyTorch exports it (Pow, ReduceMean, Add, Sqrt, Div, Mul, Mul by a constant
// weight) becomes SimplifiedLayerNormalization, and a residual Add feeding one becomes
// com.microsoft SkipSimplifiedLayerNormalization (fuse_rms_norm.cc). Runs before the oneDNN
// lowering, which would take the residual Add as a post-op of the product before it.
Result<PassStats> FuseRmsNorms(IrGraph& graph);
// Relu / Clip / Sigmoid following a Conv or Gemm becomes part of it (com.epctx
// FusedConv/FusedGemm).
Result<PassStats> FuseActivations(IrGraph& graph);
// Conv with a constant float32 filter becomes com.epctx DnnlConv (oneDNN; the filter is packed
// later by PackWeights); a FusedConv's activation becomes its first post-op.
Result<PassStats> LowerConvsToDnnl(IrGraph& graph);
// MatMul with a constant float32 [K, N] weight, and Gemm (transA=0) with a constant B and a
// constant row-vector or scalar C, become com.epctx DnnlMatMul (B as [K, N] with alpha folded in,
// C as a bias times beta; the weight is packed later by PackWeights).
Result<PassStats> LowerMatMulsToDnnl(IrGraph& graph);
// MatMulInteger of a uint8 activation and a constant int8 [K, N] weight with zero point 0
// becomes com.epctx DnnlMatMulInteger (the weight packed later by PackWeights, as int8).
Result<PassStats> LowerMatMulIntegersToDnnl(IrGraph& graph);
// MatMul of two float32 activations of rank 2 or more becomes com.epctx DnnlBatchMatMul; a
// Transpose read only by it, or reordering only its output, is folded into it (a_perm, b_perm,
// out_perm: oneDNN reads and writes with permuted strides).
Result<PassStats> LowerBatchMatMulsToDnnl(IrGraph& graph);
// Bias additions (DnnlMatMul), activations, element-wise chains such as GELU or SiLU, and residual
// additions that follow a DnnlConv or DnnlMatMul become its post-ops.
Result<PassStats> FuseDnnlPostOps(IrGraph& graph);
// Softmax over the last axis of scores that were scaled by a scalar (Div/Mul), masked by an
// addition (Add) and/or a selection (Where with a constant fill) becomes one com.epctx
// MaskedSoftmax: the attention scores are read once, and the intermediates are never written.
Result<PassStats> FuseMaskedSoftmax(IrGraph& graph);
// Attention spelled out node by node (MatMul, scale, mask, Softmax, MatMul, with Hugging Face's
// repeat_kv for grouped heads) becomes one com.epctx Attention node (fuse_attention.cc).
Result<PassStats> FuseAttention(IrGraph& graph);
// A key/value cache update, Concat(past, new) on the sequence axis, moves into the com.epctx
// Attention reading it, which then makes the present (fuse_cache_concat.cc).
Result<PassStats> FuseCacheConcatIntoAttention(IrGraph& graph);
// PyTorch's rotary embedding, x * cos + rotate_half(x) * sin with rotate_half(x) =
// Concat(-x[..., s:], x[..., :s]) (two Slices, Neg, Concat, two Muls, Add), becomes one com.epctx
// RotateHalf, bit for bit (fuse_rotary.cc).
Result<PassStats> FuseRotateHalf(IrGraph& graph);
// A Llama MLP's gate, Mul(Mul(g, Sigmoid(g)), u), where no matmul took the sigmoid as its
// activation, becomes one com.epctx SwiGlu(g, u), bit for bit (fuse_swiglu.cc).
Result<PassStats> FuseSwiGlu(IrGraph& graph);
// com.epctx MatMulNBitsPacked nodes reading one activation (Q, K and V; gate and up) become one
// over their columns side by side, an output per original node, bit for bit
// (fuse_sibling_nbits.cc).
Result<PassStats> FuseSiblingNBitsMatMuls(IrGraph& graph);
// Chooses which activations stay in oneDNN's channel-blocked layout between convolutions and
// inserts com.epctx Reorder nodes where the layout changes (plan_layouts.cc).
Result<PassStats> PlanActivationLayouts(IrGraph& graph);
// Every float32 DnnlConv and DnnlMatMul multiplies in bfloat16 (exec/kernels/onednn/compute_type.h;
// PackWeights packs their weights so, or keeps one in float32 where oneDNN has no bfloat16
// kernel for it). kUnsupported where oneDNN's bfloat16 kernels would not use bf16 instructions.
Result<PassStats> ComputeInBf16(IrGraph& graph);
// Nodes none of whose outputs are used are dropped.
Result<PassStats> EliminateDeadNodes(IrGraph& graph);

// What a compile asks of the pipeline beyond the standard passes.
struct PassOptions {
  bool compute_bf16 = false;  // epctx.precision=bf16: ComputeInBf16 runs before PackWeights
};

// Matching a pattern backwards from its last node, along values only the next step reads: the
// graph's uses and producers, and the nodes the pass has fused so far (erase them with
// EraseNodes(graph, dead()) when it is done).
class ChainMatcher {
 public:
  explicit ChainMatcher(IrGraph& graph);
  // The default-domain node `op` (of one output) making `v`, when one node only reads `v`, it is
  // no graph output, and the node is not fused yet; else -1.
  int SoleProducer(int v, std::string_view op) const;
  const IrNode& node(int k) const { return g_.nodes[static_cast<size_t>(k)]; }
  std::vector<bool>& dead() { return dead_; }

 protected:
  IrGraph& g_;
  std::vector<int> uses_;
  std::vector<int> producer_;
  std::vector<bool> dead_;
};

// The standard pipeline, in order (pipeline.cc).
Result<std::vector<PassStats>> RunAllPasses(IrGraph& graph, const PassOptions& options = {});

// Value `index` of the graph (index >= 0).
inline const IrValue& ValueOf(const IrGraph& graph, int index) {
  return graph.values[static_cast<size_t>(index)];
}
// A node's int attribute `name`, or `fallback` when it has none of that type.
inline int64_t IntAttr(const IrNode& n, std::string_view name, int64_t fallback) {
  const IrAttribute* a = n.FindAttr(name);
  return a != nullptr && a->type == exec::AttrType::kInt ? a->i : fallback;
}
// Whether value `index` (-1: none) is a plain float32 tensor.
inline bool IsFloat32Tensor(const IrGraph& graph, int index) {
  return index >= 0 && ValueOf(graph, index).is_plain_tensor() &&
         ValueOf(graph, index).dtype == DataType::kFloat32;
}
// The values of an int64 constant; empty for any other value.
std::vector<int64_t> Int64Values(const IrValue& v);
// A node's ints: attribute `attr` when it has one, else input `input` when that is an int64
// constant (opset 13 moved several from attributes to inputs); empty when neither.
std::vector<int64_t> IntsOf(const IrGraph& graph, const IrNode& n, std::string_view attr,
                            size_t input);
// Whether values a and b have one shape whatever the run: every dim the same number, or unknown
// in both under the same symbolic name.
bool ProvablySameShape(const IrValue& a, const IrValue& b);
// Whether value `index` is a float32 constant of one element; its value in `out`.
bool ScalarConstant(const IrGraph& graph, int index, float* out);
// A node of one output.
IrNode MakeNode(const std::string& name, std::string_view op, std::string_view domain,
                std::vector<int> inputs, int output);
// Replaces every node input reading `from` with `to`.
void ReplaceUses(IrGraph& graph, int from, int to);
// Erases nodes whose flag is set in `dead` (same size as graph.nodes).
void EraseNodes(IrGraph& graph, const std::vector<bool>& dead);
bool IsGraphOutput(const IrGraph& graph, int value);

}  // namespace epctx::compile
