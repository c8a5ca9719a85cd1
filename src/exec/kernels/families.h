// Registration functions of the kernel families, one folder each under src/exec/kernels/.
#pragma once

#include "exec/kernel.h"

namespace epctx::exec::kernels {

// elementwise/: every element-wise op: unary math (Floor, Sqrt, Exp, Sin, Erf, Neg, Abs, Not,
// IsNaN, Elu, LeakyRelu, HardSwish, ...), Relu, Sigmoid, Clip; the binary ops on one broadcasting
// kernel (Add, Sub, Mul, Div, Pow, Mod, BitShift, PRelu, comparisons, And/Or/Xor); variadic Sum,
// Mean, Max, Min; Where, Cast, CastLike, Identity, Dropout
void RegisterElementwiseKernels(KernelRegistry& registry);
// nn/: Conv, FusedConv, Gemm, FusedGemm, MatMul, Average/Max/GlobalPool, BatchNormalization
// (inference; training_mode=1 from opset 14), Softmax
void RegisterNnKernels(KernelRegistry& registry);
// tensor/: Flatten, Reshape, Transpose, Concat, Squeeze, Unsqueeze, Shape, Gather
void RegisterTensorKernels(KernelRegistry& registry);
// reduce/: reductions, ArgMax/ArgMin, TopK, CumSum
void RegisterReduceKernels(KernelRegistry& registry);
// indexing/: Slice, Expand, Tile, Pad, Split, Range, ConstantOfShape, GatherElements, GatherND,
// Scatter*, NonZero, OneHot, Trilu, Compress, EyeLike, ReverseSequence, Unique
void RegisterIndexingKernels(KernelRegistry& registry);
// norm/: InstanceNormalization, LayerNormalization, MeanVarianceNormalization, LRN, LogSoftmax,
// Hardmax
void RegisterNormalizationKernels(KernelRegistry& registry);
// image/: ConvTranspose, LpPool, GlobalLpPool, Resize, Upsample, DepthToSpace, SpaceToDepth,
// MaxUnpool, RoiAlign, GridSample, NonMaxSuppression
void RegisterImageKernels(KernelRegistry& registry);
// rnn/: RNN, GRU, LSTM
void RegisterRecurrentKernels(KernelRegistry& registry);
// quant/: QuantizeLinear, DequantizeLinear, MatMulInteger, QLinear*, ConvInteger
void RegisterQuantKernels(KernelRegistry& registry);
// linalg/: Einsum, Det
void RegisterLinalgKernels(KernelRegistry& registry);
// signal/: DFT, STFT, MelWeightMatrix
void RegisterSignalKernels(KernelRegistry& registry);
// control/: If, Loop, Scan
void RegisterControlFlowKernels(KernelRegistry& registry);
// dnnl/: com.epctx DnnlConv (oneDNN primitives on weights packed by the compiler)
void RegisterDnnlKernels(KernelRegistry& registry);
// text/: TfIdfVectorizer (integer tokens)
void RegisterTextKernels(KernelRegistry& registry);

}  // namespace epctx::exec::kernels
