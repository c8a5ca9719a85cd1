// The contract between the compiler and the kernels for epctx's own operators (domain com.epctx):
// their names and the attributes the compiler's passes write and the kernels read. Both sides
// spell them with these constants only, so that a rename on one side fails to build instead of
// failing at run time. The strings are stored in every blob written: changing one makes the
// blobs written before unreadable (the build id in their fingerprint refuses them first).
#pragma once

#include <cstdint>
#include <string_view>

namespace epctx::ops {

inline constexpr std::string_view kDomain = "com.epctx";
inline constexpr int64_t kOpsetVersion = 1;  // the one opset of kDomain

// Operators, by kernel family (exec/kernels/families.h).
// nn/: Conv and Gemm with a fused activation (attributes kActivation, kActivationParams).
inline constexpr std::string_view kFusedConv = "FusedConv";
inline constexpr std::string_view kFusedGemm = "FusedGemm";
// elementwise/: SwiGLU's gate, silu(g) * u = (g * sigmoid(g)) * u (swiglu.cc).
inline constexpr std::string_view kSwiGlu = "SwiGlu";
// norm/: attention's scale, mask and Softmax in one.
inline constexpr std::string_view kMaskedSoftmax = "MaskedSoftmax";
// quant/: MatMulNBits with its weights repacked for the kernel.
inline constexpr std::string_view kMatMulNBitsPacked = "MatMulNBitsPacked";
// text/: a constant string tensor.
inline constexpr std::string_view kStringConstant = "StringConstant";
// attention/: scaled dot-product attention fused from its ONNX pattern.
inline constexpr std::string_view kAttention = "Attention";
// attention/: x * cos + rotate_half(x) * sin, PyTorch's rotary embedding (rotate_half.cc).
inline constexpr std::string_view kRotateHalf = "RotateHalf";
// onednn/: oneDNN primitives on weights the compiler packed.
inline constexpr std::string_view kChannelAffine = "ChannelAffine";
inline constexpr std::string_view kConcatChannelAffine = "ConcatChannelAffine";
inline constexpr std::string_view kDnnlBatchMatMul = "DnnlBatchMatMul";
inline constexpr std::string_view kDnnlConv = "DnnlConv";
inline constexpr std::string_view kDnnlIntegerConv = "DnnlIntegerConv";
inline constexpr std::string_view kDnnlMatMul = "DnnlMatMul";
inline constexpr std::string_view kDnnlMatMulInteger = "DnnlMatMulInteger";
inline constexpr std::string_view kDnnlPool = "DnnlPool";
inline constexpr std::string_view kReorder = "Reorder";

// Attributes that more than one op, or both sides, name. Those of one op only are beside its
// kernel: attention/attention_op.h (Attention), quant/nbits_layout.h (MatMulNBitsPacked).
// A fused activation (common/activation.h): its name and float parameters.
inline constexpr std::string_view kActivation = "activation";
inline constexpr std::string_view kActivationParams = "activation_params";
// Packed weights (DnnlConv, DnnlIntegerConv, DnnlMatMul, DnnlMatMulInteger): the ONNX dims of the
// weight, and oneDNN's layout of the packed bytes (onednn/weight_format.h).
inline constexpr std::string_view kWeightsShape = "weights_shape";
inline constexpr std::string_view kWeightsFormat = "weights_format";
// Integer products into float32: the scale of each output channel (or one for all).
inline constexpr std::string_view kOutputScales = "output_scales";
// Element-wise steps after a primitive (onednn/post_ops.h): kinds, and their alpha and beta.
inline constexpr std::string_view kPostOps = "post_ops";
inline constexpr std::string_view kPostOpAlpha = "post_op_alpha";
inline constexpr std::string_view kPostOpBeta = "post_op_beta";
// Activation layouts (onednn/activation_layout.h) of a DnnlConv's source and destination, and of
// a Reorder's input and output.
inline constexpr std::string_view kSrcLayout = "src_layout";
inline constexpr std::string_view kDstLayout = "dst_layout";
inline constexpr std::string_view kFromLayout = "from_layout";
inline constexpr std::string_view kToLayout = "to_layout";
// A DnnlConv whose weights were packed for oneDNN's Winograd algorithm.
inline constexpr std::string_view kWinograd = "winograd";
// DnnlConv and DnnlMatMul computing in bfloat16 (onednn/compute_type.h).
inline constexpr std::string_view kComputeType = "compute_type";
// DnnlBatchMatMul: transposes folded into its operands and its output.
inline constexpr std::string_view kAPerm = "a_perm";
inline constexpr std::string_view kBPerm = "b_perm";
inline constexpr std::string_view kOutPerm = "out_perm";

}  // namespace epctx::ops
