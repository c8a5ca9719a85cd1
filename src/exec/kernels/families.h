// Every kernel family, one folder each under src/exec/kernels/, with the factories its
// registration table (register_all.cc) lists: one per op, defined in the family's file for that op.
// A factory serves every opset of its op from its row's since_version on, reading node.opset where
// the opsets differ.
#pragma once

#include "exec/kernel.h"

namespace epctx::exec::kernels {

// elementwise/: every element-wise op: unary math (float maps, Mish, Neg, Abs, Sign, BitwiseNot,
// Not, IsNaN, IsInf, the activations with attributes), Relu, Sigmoid, Clip; the binary ops, all on
// one broadcasting kernel (arithmetic, Pow, Mod, BitShift, BitwiseAnd/Or/Xor, PRelu, comparisons,
// And/Or/Xor); variadic Sum, Mean, Max, Min; Where, Cast, CastLike, Identity, Dropout; Gelu (opset
// 20); ONNX Runtime's com.microsoft FastGelu, BiasGelu, Gelu and QuickGelu; com.epctx SwiGlu
namespace elementwise {
KernelCreateFn CreateAbs, CreateAcos, CreateAcosh, CreateAdd, CreateAnd, CreateAsin, CreateAsinh,
    CreateAtan, CreateAtanh, CreateBiasGelu, CreateBitShift, CreateBitwiseAnd, CreateBitwiseNot,
    CreateBitwiseOr, CreateBitwiseXor, CreateCast, CreateCastLike, CreateCeil, CreateCelu,
    CreateClip, CreateContribGelu, CreateCos, CreateCosh, CreateDiv, CreateDropout, CreateElu,
    CreateEqual, CreateErf, CreateExp, CreateFastGelu, CreateFloor, CreateGelu, CreateGreater,
    CreateGreaterOrEqual, CreateHardSigmoid, CreateHardSwish, CreateIdentity, CreateIsInf,
    CreateIsNaN, CreateLeakyRelu, CreateLess, CreateLessOrEqual, CreateLog, CreateMax, CreateMean,
    CreateMin, CreateMish, CreateMod, CreateMul, CreateNeg, CreateNot, CreateOr, CreatePow,
    CreatePRelu, CreateQuickGelu, CreateReciprocal, CreateRelu, CreateRound, CreateSelu,
    CreateShrink, CreateSigmoid, CreateSign, CreateSin, CreateSinh, CreateSoftplus, CreateSoftsign,
    CreateSqrt, CreateSub, CreateSum, CreateSwiGlu, CreateTan, CreateTanh, CreateThresholdedRelu,
    CreateWhere, CreateXor;
}  // namespace elementwise

// nn/: convolutions, matrix products and pooling on epctx's own code, BatchNormalization
// (inference; training_mode=1 from opset 14), Col2Im (opset 18)
KernelCreateFn CreateAveragePool, CreateBatchNormalization, CreateCol2Im, CreateConv,
    CreateConvTranspose, CreateFusedConv, CreateFusedGemm, CreateGemm, CreateGlobalAveragePool,
    CreateGlobalLpPool, CreateGlobalMaxPool, CreateLpPool, CreateMatMul, CreateMaxPool;

// tensor/: data movement: reshaping views, Transpose, Concat, Gather, Shape, Size
KernelCreateFn CreateConcat, CreateFlatten, CreateGather, CreateReshape, CreateShape, CreateSize,
    CreateSqueeze, CreateTranspose, CreateUnsqueeze;

// reduce/: reductions, ArgMax/ArgMin, TopK, CumSum
KernelCreateFn CreateArgMax, CreateArgMin, CreateCumSum, CreateReduce, CreateTopK;

// indexing/: slicing, padding, tiling and splitting, gathers and scatters by index, generated
// tensors (Range, ConstantOfShape, EyeLike, OneHot, Trilu), NonZero, Compress, ReverseSequence,
// Unique, CenterCropPad (opset 18)
KernelCreateFn CreateCenterCropPad, CreateCompress, CreateConstantOfShape, CreateExpand,
    CreateEyeLike, CreateGatherElements, CreateGatherND, CreateNonZero, CreateOneHot, CreatePad,
    CreateRange, CreateReverseSequence, CreateScatterElements, CreateScatterND, CreateSlice,
    CreateSplit, CreateTile, CreateTrilu, CreateUnique;

// norm/: normalizations along an axis: Softmax, LogSoftmax, Hardmax, LayerNormalization,
// InstanceNormalization, GroupNormalization (opset 18), MeanVarianceNormalization, LRN, com.epctx
// MaskedSoftmax (attention's scale, mask and Softmax fused), and ONNX Runtime's RMS and residual
// normalizations (SimplifiedLayerNormalization in the ONNX domain, com.microsoft
// SkipLayerNormalization and SkipSimplifiedLayerNormalization), and com.microsoft
// EmbedLayerNormalization (a BERT's embeddings and their normalization)
KernelCreateFn CreateEmbedLayerNormalization, CreateGroupNormalization, CreateHardmax,
    CreateInstanceNormalization, CreateLayerNormalization, CreateLogSoftmax, CreateLrn,
    CreateMaskedSoftmax, CreateMeanVarianceNormalization, CreateSimplifiedLayerNormalization,
    CreateSkipLayerNormalization, CreateSkipSimplifiedLayerNormalization, CreateSoftmax;

// image/: resampling (Resize, Upsample, GridSample, RoiAlign), DepthToSpace, SpaceToDepth,
// MaxUnpool, NonMaxSuppression
KernelCreateFn CreateDepthToSpace, CreateGridSample, CreateMaxUnpool, CreateNonMaxSuppression,
    CreateResize, CreateRoiAlign, CreateSpaceToDepth, CreateUpsample;

// rnn/: RNN, GRU, LSTM
KernelCreateFn CreateGru, CreateLstm, CreateRnn;

// quant/: QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear and the integer matrix products
// and convolutions
KernelCreateFn CreateConvInteger, CreateDequantizeLinear, CreateDynamicQuantizeLinear,
    CreateMatMulInteger, CreateQLinearConv, CreateQLinearMatMul, CreateQuantizeLinear;
// ... and the weight-only quantized products: com.microsoft MatMulNBits (refuses, saying why it
// was not packed) and the com.epctx MatMulNBitsPacked the compiler lowers it to
KernelCreateFn CreateMatMulNBits, CreateMatMulNBitsPacked;
// ... and com.microsoft GatherBlockQuantized (rows of a block-quantized table, dequantized)
KernelCreateFn CreateGatherBlockQuantized;

// linalg/: Einsum, Det
KernelCreateFn CreateDet, CreateEinsum;

// signal/: DFT, STFT, MelWeightMatrix (the window functions are ONNX functions the compiler
// inlines)
KernelCreateFn CreateDft, CreateMelWeightMatrix, CreateStft;

// control/: If, Loop, Scan: their bodies are programs of their own in the blob, bound when the
// node's kernel is created
KernelCreateFn CreateIf, CreateLoop, CreateScan;

// sequence/: sequence values (SequenceEmpty/Construct/At/Insert/Erase/Length, SplitToSequence,
// ConcatFromSequence, SequenceMap) and optional values (Optional, OptionalHasElement,
// OptionalGetElement)
KernelCreateFn CreateConcatFromSequence, CreateOptional, CreateOptionalGetElement,
    CreateOptionalHasElement, CreateSequenceAt, CreateSequenceConstruct, CreateSequenceEmpty,
    CreateSequenceErase, CreateSequenceInsert, CreateSequenceLength, CreateSequenceMap,
    CreateSplitToSequence;

// text/: StringNormalizer, TfIdfVectorizer, and com.epctx StringConstant (the compiler's form of a
// string tensor constant)
KernelCreateFn CreateStringConstant, CreateStringNormalizer, CreateTfIdfVectorizer;

// training/: the ai.onnx.preview.training optimizers: one update step of Adagrad, Adam and
// Momentum (standard and Nesterov) on N tensors
namespace training {
KernelCreateFn CreateAdagrad, CreateAdam, CreateMomentum;
}  // namespace training

// attention/: ONNX Runtime GenAI's attention operators with ONNX Runtime's CPU semantics:
// com.microsoft GroupQueryAttention (with its KV cache and rotary embedding) and RotaryEmbedding;
// and com.epctx Attention, the attention of PyTorch exports on the same core (attention_op.h), and
// com.epctx RotateHalf, their rotary embedding
namespace attention {
KernelCreateFn CreateAttention, CreateGroupQueryAttention, CreateRotaryEmbedding, CreateRotateHalf;
}  // namespace attention

// onednn/: the com.epctx ops the compiler lowers to oneDNN primitives, on weights it packed. The
// ops keep the prefix Dnnl (oneDNN's API prefix): their names are in every blob written, and a new
// name would make every such blob refused. The namespace cannot be `dnnl`, which would hide the
// library's own inside ours.
namespace onednn {
KernelCreateFn CreateChannelAffine, CreateConcatChannelAffine, CreateDnnlBatchMatMul,
    CreateDnnlConv, CreateDnnlIntegerConv, CreateDnnlMatMul, CreateDnnlMatMulInteger,
    CreateDnnlPool, CreateReorder;
}  // namespace onednn

}  // namespace epctx::exec::kernels
