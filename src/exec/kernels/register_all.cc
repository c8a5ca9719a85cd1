// The one place that lists every kernel: a registration table per family, rows sorted by op type
// (constexpr, so the tables are data in the binary). The factories are declared in families.h,
// next to what each family is for.
#include <span>

#include "exec/kernel.h"
#include "exec/kernels/epctx_ops.h"
#include "exec/kernels/families.h"

namespace epctx::exec::kernels {

// The element types a row's kernel computes on (KernelEntry::typed): sets several families use.
constexpr ElementTypes kFloat32 = TypeBit(DataType::kFloat32);
constexpr ElementTypes kFloat32Or64 = kFloat32 | TypeBit(DataType::kFloat64);
constexpr ElementTypes kBool = TypeBit(DataType::kBool);
constexpr ElementTypes kInt8OrUint8 = TypeBit(DataType::kInt8) | TypeBit(DataType::kUint8);
// ArgMax/ArgMin, TopK and the reductions but ReduceL2, ReduceLogSum and ReduceLogSumExp.
constexpr ElementTypes kReduceTypes = kFloat32Or64 | TypeBit(DataType::kInt8) |
                                      TypeBit(DataType::kInt32) | TypeBit(DataType::kInt64) |
                                      TypeBit(DataType::kUint8);

namespace elementwise {
constexpr KernelEntry kElementwiseKernels[] = {
    {"Abs", 6, CreateAbs, kNumericTypes},
    {"Acos", 7, CreateAcos, kFloatTypes},
    {"Acosh", 9, CreateAcosh, kFloatTypes},
    {"Add", 1, CreateAdd, kNumericTypes},
    {"And", 7, CreateAnd, kBool},
    {"Asin", 7, CreateAsin, kFloatTypes},
    {"Asinh", 9, CreateAsinh, kFloatTypes},
    {"Atan", 7, CreateAtan, kFloatTypes},
    {"Atanh", 9, CreateAtanh, kFloatTypes},
    {"BitShift", 11, CreateBitShift, kUnsignedIntTypes},
    {"BitwiseAnd", 18, CreateBitwiseAnd, kIntTypes},
    {"BitwiseNot", 18, CreateBitwiseNot, kIntTypes},
    {"BitwiseOr", 18, CreateBitwiseOr, kIntTypes},
    {"BitwiseXor", 18, CreateBitwiseXor, kIntTypes},
    {"Cast", 6, CreateCast, kEveryType, "", kStringTensors},
    {"CastLike", 15, CreateCastLike, kEveryType, "", kStringTensors},
    {"Ceil", 6, CreateCeil, kFloatTypes},
    {"Celu", 12, CreateCelu, kFloatTypes},
    {"Clip", 6, CreateClip, kFloat32},
    {"Clip", 11, CreateClip, kNumericTypes},
    {"Cos", 7, CreateCos, kFloatTypes},
    {"Cosh", 9, CreateCosh, kFloatTypes},
    {"Div", 1, CreateDiv, kNumericTypes},
    {"Dropout", 7, CreateDropout, kEveryType},
    {"Elu", 6, CreateElu, kFloatTypes},
    {"Equal", 7, CreateEqual, kEveryType, "", kStringTensors},
    {"Erf", 9, CreateErf, kFloatTypes},
    {"Exp", 6, CreateExp, kFloatTypes},
    {"Floor", 6, CreateFloor, kFloatTypes},
    {"Greater", 7, CreateGreater, kNumericTypes},
    {"GreaterOrEqual", 12, CreateGreaterOrEqual, kNumericTypes},
    {"HardSigmoid", 6, CreateHardSigmoid, kFloatTypes},
    {"HardSwish", 14, CreateHardSwish, kFloatTypes},
    {"Identity", 1, CreateIdentity, kEveryType, "", kStringTensors | kAnyValueKind},
    {"IsInf", 10, CreateIsInf, kFloatTypes},
    {"IsNaN", 9, CreateIsNaN, kFloatTypes},
    {"LeakyRelu", 6, CreateLeakyRelu, kFloatTypes},
    {"Less", 7, CreateLess, kNumericTypes},
    {"LessOrEqual", 12, CreateLessOrEqual, kNumericTypes},
    {"Log", 6, CreateLog, kFloatTypes},
    {"Max", 6, CreateMax, kNumericTypes},
    {"Mean", 6, CreateMean, kNumericTypes},
    {"Min", 6, CreateMin, kNumericTypes},
    {"Mish", 18, CreateMish, kFloatTypes},
    {"Mod", 10, CreateMod, kNumericTypes},
    {"Mul", 1, CreateMul, kNumericTypes},
    {"Neg", 6, CreateNeg, kFloatTypes | kSignedIntTypes},
    {"Not", 1, CreateNot, kBool},
    {"Or", 7, CreateOr, kBool},
    {"Pow", 1, CreatePow, kFloatTypes | TypeBit(DataType::kInt32) | TypeBit(DataType::kInt64)},
    {"PRelu", 1, CreatePRelu, kFloatTypes | kSignedIntTypes},
    {"Reciprocal", 6, CreateReciprocal, kFloatTypes},
    {"Relu", 6, CreateRelu, kFloat32},
    {"Round", 11, CreateRound, kFloatTypes},
    {"Selu", 6, CreateSelu, kFloatTypes},
    {"Shrink", 9, CreateShrink, kNumericTypes},
    {"Sigmoid", 6, CreateSigmoid, kFloat32},
    {"Sign", 9, CreateSign, kNumericTypes},
    {"Sin", 7, CreateSin, kFloatTypes},
    {"Sinh", 9, CreateSinh, kFloatTypes},
    {"Softplus", 1, CreateSoftplus, kFloatTypes},
    {"Softsign", 1, CreateSoftsign, kFloatTypes},
    {"Sqrt", 6, CreateSqrt, kFloatTypes},
    {"Sub", 1, CreateSub, kNumericTypes},
    {"Sum", 6, CreateSum, kNumericTypes},
    {"Tan", 7, CreateTan, kFloatTypes},
    {"Tanh", 6, CreateTanh, kFloatTypes},
    {"ThresholdedRelu", 10, CreateThresholdedRelu, kFloatTypes},
    {"Where", 9, CreateWhere, Input(1, kEveryType), "", kStringTensors},
    {"Xor", 7, CreateXor, kBool},
    {"BiasGelu", 1, CreateBiasGelu, kFloat32, "com.microsoft"},
    {"FastGelu", 1, CreateFastGelu, kFloat32, "com.microsoft"},
    {"Gelu", 1, CreateContribGelu, kFloat32, "com.microsoft"},
    {"Gelu", 20, CreateGelu, kFloat32},
    {"QuickGelu", 1, CreateQuickGelu, kFloat32, "com.microsoft"},
    {ops::kSwiGlu, ops::kOpsetVersion, CreateSwiGlu, kFloat32, ops::kDomain},
};
}  // namespace elementwise

constexpr KernelEntry kNnKernels[] = {
    {"AveragePool", 1, CreateAveragePool, kFloat32Or64},
    {"BatchNormalization", 1, CreateBatchNormalization, kFloat32},
    {"Col2Im", 18, CreateCol2Im, kFloat32},
    {"Conv", 1, CreateConv, kFloat32},
    {"ConvTranspose", 1, CreateConvTranspose, kFloat32},
    {"Gemm", 1, CreateGemm, kFloat32},
    {"GlobalAveragePool", 1, CreateGlobalAveragePool, kFloat32},
    {"GlobalLpPool", 2, CreateGlobalLpPool, kFloat32},
    {"GlobalMaxPool", 1, CreateGlobalMaxPool, kFloat32},
    {"LpPool", 2, CreateLpPool, kFloat32},
    {"MatMul", 1, CreateMatMul, kFloat32},
    {"MaxPool", 1, CreateMaxPool,
     TypeBit(DataType::kFloat32) | TypeBit(DataType::kFloat64) | TypeBit(DataType::kInt8) |
         TypeBit(DataType::kUint8)},
    {ops::kFusedConv, ops::kOpsetVersion, CreateFusedConv, kFloat32, ops::kDomain},
    {ops::kFusedGemm, ops::kOpsetVersion, CreateFusedGemm, kFloat32, ops::kDomain},
};

constexpr KernelEntry kTensorKernels[] = {
    {"Concat", 4, CreateConcat, kEveryType, "", kStringTensors},
    {"Flatten", 1, CreateFlatten, kEveryType, "", kStringTensors},
    {"Gather", 1, CreateGather, kEveryType, "", kStringTensors},
    {"Reshape", 5, CreateReshape, kEveryType, "", kStringTensors},
    {"Shape", 1, CreateShape, kEveryType, "", kStringTensors},
    {"Size", 1, CreateSize, kEveryType, "", kStringTensors},
    {"Squeeze", 1, CreateSqueeze, kEveryType, "", kStringTensors},
    {"Transpose", 1, CreateTranspose, kEveryType, "", kStringTensors},
    {"Unsqueeze", 1, CreateUnsqueeze, kEveryType, "", kStringTensors},
};

constexpr KernelEntry kReduceKernels[] = {
    {"ArgMax", 1, CreateArgMax, kReduceTypes},
    {"ArgMin", 1, CreateArgMin, kReduceTypes},
    {"CumSum", 11, CreateCumSum,
     TypeBit(DataType::kFloat32) | TypeBit(DataType::kFloat64) | TypeBit(DataType::kInt32) |
         TypeBit(DataType::kInt64) | TypeBit(DataType::kUint32) | TypeBit(DataType::kUint64)},
    {"ReduceL1", 1, CreateReduce, kReduceTypes},
    {"ReduceL2", 1, CreateReduce, kFloat32Or64},
    {"ReduceLogSum", 1, CreateReduce, kFloat32Or64},
    {"ReduceLogSumExp", 1, CreateReduce, kFloat32Or64},
    {"ReduceMax", 1, CreateReduce, kReduceTypes},
    {"ReduceMean", 1, CreateReduce, kReduceTypes},
    {"ReduceMin", 1, CreateReduce, kReduceTypes},
    {"ReduceProd", 1, CreateReduce, kReduceTypes},
    {"ReduceSum", 1, CreateReduce, kReduceTypes},
    {"ReduceSumSquare", 1, CreateReduce, kReduceTypes},
    {"TopK", 1, CreateTopK, kReduceTypes},
};

constexpr KernelEntry kIndexingKernels[] = {
    {"CenterCropPad", 18, CreateCenterCropPad, kEveryType},
    {"Compress", 9, CreateCompress, kEveryType},
    {"ConstantOfShape", 9, CreateConstantOfShape, Output(0, kEveryType)},
    {"Expand", 8, CreateExpand, kEveryType, "", kStringTensors},
    {"EyeLike", 9, CreateEyeLike, Output(0, kEveryType)},
    {"GatherElements", 11, CreateGatherElements, kEveryType},
    {"GatherND", 11, CreateGatherND, kEveryType},
    {"NonZero", 9, CreateNonZero, kEveryType},
    {"OneHot", 9, CreateOneHot, Input(2, kEveryType)},
    {"Pad", 2, CreatePad, kEveryType},
    {"Range", 11, CreateRange,
     TypeBit(DataType::kFloat32) | TypeBit(DataType::kFloat64) | TypeBit(DataType::kInt16) |
         TypeBit(DataType::kInt32) | TypeBit(DataType::kInt64)},
    {"ReverseSequence", 10, CreateReverseSequence, kEveryType},
    {"Scatter", 9, CreateScatterElements, kEveryType},
    {"ScatterElements", 11, CreateScatterElements, kEveryType, "", kNumericTensors,
     "a reduction: not bfloat16"},
    {"ScatterND", 11, CreateScatterND, kEveryType, "", kNumericTensors,
     "a reduction: not bfloat16"},
    {"Slice", 1, CreateSlice, kEveryType, "", kStringTensors},
    {"Split", 1, CreateSplit, kEveryType},
    {"Tile", 6, CreateTile, kEveryType, "", kStringTensors},
    {"Trilu", 14, CreateTrilu, kEveryType},
    {"Unique", 11, CreateUnique,
     TypeBit(DataType::kFloat32) | TypeBit(DataType::kFloat64) | TypeBit(DataType::kInt8) |
         TypeBit(DataType::kInt32) | TypeBit(DataType::kInt64) | TypeBit(DataType::kUint8) |
         TypeBit(DataType::kBool)},
};

constexpr KernelEntry kNormKernels[] = {
    {"GroupNormalization", 18, CreateGroupNormalization, kFloat32},
    {"Hardmax", 1, CreateHardmax, kFloat32Or64},
    {"InstanceNormalization", 1, CreateInstanceNormalization, kFloat32},
    {"LayerNormalization", 17, CreateLayerNormalization, kFloat32},
    {"LogSoftmax", 1, CreateLogSoftmax, kFloat32Or64},
    {"LRN", 1, CreateLrn, kFloat32},
    {"MeanVarianceNormalization", 9, CreateMeanVarianceNormalization, kFloat32},
    {"SimplifiedLayerNormalization", 1, CreateSimplifiedLayerNormalization, kFloat32},
    {"Softmax", 1, CreateSoftmax, kFloat32},
    {ops::kMaskedSoftmax, ops::kOpsetVersion, CreateMaskedSoftmax, kFloat32, ops::kDomain},
    {"EmbedLayerNormalization", 1, CreateEmbedLayerNormalization, Input(2, kFloat32),
     "com.microsoft"},
    {"SkipLayerNormalization", 1, CreateSkipLayerNormalization, kFloat32, "com.microsoft"},
    {"SkipSimplifiedLayerNormalization", 1, CreateSkipSimplifiedLayerNormalization, kFloat32,
     "com.microsoft"},
};

constexpr KernelEntry kImageKernels[] = {
    {"DepthToSpace", 1, CreateDepthToSpace, kEveryType},
    {"GridSample", 16, CreateGridSample, kFloat32},
    {"MaxUnpool", 9, CreateMaxUnpool, kFloat32},
    {"NonMaxSuppression", 10, CreateNonMaxSuppression, kFloat32},
    {"Resize", 10, CreateResize, kEveryType, "", kNumericTensors,
     "modes linear and cubic: float32 and float16 only"},
    {"RoiAlign", 10, CreateRoiAlign, kFloat32},
    {"SpaceToDepth", 1, CreateSpaceToDepth, kEveryType},
    {"Upsample", 7, CreateUpsample, kEveryType, "", kNumericTensors,
     "mode linear: float32 and float16 only"},
};

constexpr KernelEntry kRnnKernels[] = {
    {"GRU", 1, CreateGru, kFloat32},
    {"LSTM", 1, CreateLstm, kFloat32},
    {"RNN", 1, CreateRnn, kFloat32},
};

constexpr KernelEntry kQuantKernels[] = {
    {"ConvInteger", 10, CreateConvInteger, kInt8OrUint8},
    {"DequantizeLinear", 10, CreateDequantizeLinear,
     TypeBit(DataType::kInt8) | TypeBit(DataType::kInt32) | TypeBit(DataType::kUint8)},
    {"DynamicQuantizeLinear", 11, CreateDynamicQuantizeLinear, kFloat32},
    {"MatMulInteger", 10, CreateMatMulInteger, kInt8OrUint8},
    {"GatherBlockQuantized", 1, CreateGatherBlockQuantized, TypeBit(DataType::kUint8),
     "com.microsoft"},
    {"MatMulNBits", 1, CreateMatMulNBits, kFloat32, "com.microsoft"},
    {ops::kMatMulNBitsPacked, ops::kOpsetVersion, CreateMatMulNBitsPacked, kFloat32, ops::kDomain},
    {"QLinearConv", 10, CreateQLinearConv, kInt8OrUint8},
    {"QLinearMatMul", 10, CreateQLinearMatMul, kInt8OrUint8},
    {"QuantizeLinear", 10, CreateQuantizeLinear, kFloat32},
};

constexpr KernelEntry kLinalgKernels[] = {
    {"Det", 11, CreateDet, kFloat32Or64},
    {"Einsum", 12, CreateEinsum,
     TypeBit(DataType::kFloat32) | TypeBit(DataType::kFloat64) | TypeBit(DataType::kInt32) |
         TypeBit(DataType::kInt64)},
};

constexpr KernelEntry kSignalKernels[] = {
    {"DFT", 17, CreateDft, kFloat32Or64},
    {"MelWeightMatrix", 17, CreateMelWeightMatrix, Output(0, kFloat32Or64)},
    {"STFT", 17, CreateStft, kFloat32Or64},
};

constexpr KernelEntry kControlKernels[] = {
    {"If", 1, CreateIf, kBool, "", kStringTensors | kAnyValueKind},
    {"Loop", 1, CreateLoop, Input(2, kEveryType), "", kAnyValueKind},
    {"Scan", 8, CreateScan, kEveryType},
};

// Sequences and optionals of any element type, strings included.
constexpr uint8_t kAnyValue = kStringTensors | kAnyValueKind;
constexpr KernelEntry kSequenceKernels[] = {
    {"ConcatFromSequence", 11, CreateConcatFromSequence, kEveryType, "", kAnyValue},
    {"Optional", 15, CreateOptional, Output(0, kEveryType), "", kAnyValue},
    {"OptionalGetElement", 15, CreateOptionalGetElement, kEveryType, "", kAnyValue},
    {"OptionalHasElement", 15, CreateOptionalHasElement, kEveryType, "", kAnyValue},
    {"SequenceAt", 11, CreateSequenceAt, kEveryType, "", kAnyValue},
    {"SequenceConstruct", 11, CreateSequenceConstruct, kEveryType, "", kAnyValue},
    {"SequenceEmpty", 11, CreateSequenceEmpty, Output(0, kEveryType), "", kAnyValue},
    {"SequenceErase", 11, CreateSequenceErase, kEveryType, "", kAnyValue},
    {"SequenceInsert", 11, CreateSequenceInsert, kEveryType, "", kAnyValue},
    {"SequenceLength", 11, CreateSequenceLength, kEveryType, "", kAnyValue},
    {"SequenceMap", 17, CreateSequenceMap, kEveryType, "", kAnyValue},
    {"SplitToSequence", 11, CreateSplitToSequence, kEveryType, "", kAnyValue},
};

constexpr KernelEntry kTextKernels[] = {
    {"StringNormalizer", 10, CreateStringNormalizer, TypeBit(DataType::kString), "",
     kStringTensors},
    {"TfIdfVectorizer", 9, CreateTfIdfVectorizer,
     TypeBit(DataType::kInt32) | TypeBit(DataType::kInt64) | TypeBit(DataType::kString), "",
     kStringTensors},
    {ops::kStringConstant, ops::kOpsetVersion, CreateStringConstant,
     Output(0, TypeBit(DataType::kString)), ops::kDomain, kStringTensors},
};

namespace training {
constexpr std::string_view kDomain = "ai.onnx.preview.training";
constexpr KernelEntry kTrainingKernels[] = {
    {"Adagrad", 1, CreateAdagrad, Input(2, kFloat32Or64), kDomain},
    {"Adam", 1, CreateAdam, Input(2, kFloat32Or64), kDomain},
    {"Momentum", 1, CreateMomentum, Input(2, kFloat32Or64), kDomain},
};
}  // namespace training

namespace attention {
constexpr std::string_view kDomain = "com.microsoft";
constexpr KernelEntry kAttentionKernels[] = {
    {"GroupQueryAttention", 1, CreateGroupQueryAttention, kFloat32, kDomain},
    {"RotaryEmbedding", 1, CreateRotaryEmbedding, kFloat32, kDomain},
    {ops::kAttention, ops::kOpsetVersion, CreateAttention, kFloat32, ops::kDomain},
    {ops::kRotateHalf, ops::kOpsetVersion, CreateRotateHalf, kFloat32, ops::kDomain},
};
}  // namespace attention

namespace onednn {
constexpr KernelEntry kDnnlKernels[] = {
    {ops::kChannelAffine, ops::kOpsetVersion, CreateChannelAffine, kFloat32, ops::kDomain},
    {ops::kConcatChannelAffine, ops::kOpsetVersion, CreateConcatChannelAffine, Input(2, kFloat32),
     ops::kDomain},
    {ops::kDnnlBatchMatMul, ops::kOpsetVersion, CreateDnnlBatchMatMul, kFloat32, ops::kDomain},
    {ops::kDnnlConv, ops::kOpsetVersion, CreateDnnlConv, kFloat32, ops::kDomain},
    {ops::kDnnlIntegerConv, ops::kOpsetVersion, CreateDnnlIntegerConv, TypeBit(DataType::kUint8),
     ops::kDomain},
    {ops::kDnnlMatMul, ops::kOpsetVersion, CreateDnnlMatMul, kFloat32, ops::kDomain},
    {ops::kDnnlMatMulInteger, ops::kOpsetVersion, CreateDnnlMatMulInteger,
     TypeBit(DataType::kUint8), ops::kDomain},
    {ops::kDnnlPool, ops::kOpsetVersion, CreateDnnlPool, kFloat32, ops::kDomain},
    {ops::kReorder, ops::kOpsetVersion, CreateReorder, kFloat32, ops::kDomain},
};
}  // namespace onednn

}  // namespace epctx::exec::kernels

namespace epctx::exec {

void RegisterAllKernels(KernelRegistry& registry) {
  registry.Register(kernels::elementwise::kElementwiseKernels);
  registry.Register(kernels::kNnKernels);
  registry.Register(kernels::kTensorKernels);
  registry.Register(kernels::kReduceKernels);
  registry.Register(kernels::kIndexingKernels);
  registry.Register(kernels::kNormKernels);
  registry.Register(kernels::kImageKernels);
  registry.Register(kernels::kRnnKernels);
  registry.Register(kernels::kQuantKernels);
  registry.Register(kernels::kLinalgKernels);
  registry.Register(kernels::kSignalKernels);
  registry.Register(kernels::kControlKernels);
  registry.Register(kernels::kSequenceKernels);
  registry.Register(kernels::kTextKernels);
  registry.Register(kernels::training::kTrainingKernels);
  registry.Register(kernels::onednn::kDnnlKernels);
  registry.Register(kernels::attention::kAttentionKernels);
}

}  // namespace epctx::exec
