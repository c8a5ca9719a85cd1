// The one place that lists every kernel: a registration table per family, rows sorted by op type
// (constexpr, so the tables are data in the binary). The factories are declared in families.h,
// next to what each family is for.
#include <span>

#include "exec/kernel.h"
#include "exec/kernels/epctx_ops.h"
#include "exec/kernels/families.h"

namespace epctx::exec::kernels {

namespace elementwise {
constexpr KernelEntry kElementwiseKernels[] = {
    {"Abs", 6, CreateAbs},
    {"Acos", 7, CreateAcos},
    {"Acosh", 9, CreateAcosh},
    {"Add", 1, CreateAdd},
    {"And", 7, CreateAnd},
    {"Asin", 7, CreateAsin},
    {"Asinh", 9, CreateAsinh},
    {"Atan", 7, CreateAtan},
    {"Atanh", 9, CreateAtanh},
    {"BitShift", 11, CreateBitShift},
    {"Cast", 6, CreateCast, "", kStringTensors},
    {"CastLike", 15, CreateCastLike, "", kStringTensors},
    {"Ceil", 6, CreateCeil},
    {"Celu", 12, CreateCelu},
    {"Clip", 6, CreateClip},
    {"Cos", 7, CreateCos},
    {"Cosh", 9, CreateCosh},
    {"Div", 1, CreateDiv},
    {"Dropout", 7, CreateDropout},
    {"Elu", 6, CreateElu},
    {"Equal", 7, CreateEqual, "", kStringTensors},
    {"Erf", 9, CreateErf},
    {"Exp", 6, CreateExp},
    {"Floor", 6, CreateFloor},
    {"Greater", 7, CreateGreater},
    {"GreaterOrEqual", 12, CreateGreaterOrEqual},
    {"HardSigmoid", 6, CreateHardSigmoid},
    {"HardSwish", 14, CreateHardSwish},
    {"Identity", 1, CreateIdentity, "", kStringTensors | kAnyValueKind},
    {"IsInf", 10, CreateIsInf},
    {"IsNaN", 9, CreateIsNaN},
    {"LeakyRelu", 6, CreateLeakyRelu},
    {"Less", 7, CreateLess},
    {"LessOrEqual", 12, CreateLessOrEqual},
    {"Log", 6, CreateLog},
    {"Max", 6, CreateMax},
    {"Mean", 6, CreateMean},
    {"Min", 6, CreateMin},
    {"Mod", 10, CreateMod},
    {"Mul", 1, CreateMul},
    {"Neg", 6, CreateNeg},
    {"Not", 1, CreateNot},
    {"Or", 7, CreateOr},
    {"Pow", 1, CreatePow},
    {"PRelu", 1, CreatePRelu},
    {"Reciprocal", 6, CreateReciprocal},
    {"Relu", 6, CreateRelu},
    {"Round", 11, CreateRound},
    {"Selu", 6, CreateSelu},
    {"Shrink", 9, CreateShrink},
    {"Sigmoid", 6, CreateSigmoid},
    {"Sign", 9, CreateSign},
    {"Sin", 7, CreateSin},
    {"Sinh", 9, CreateSinh},
    {"Softplus", 1, CreateSoftplus},
    {"Softsign", 1, CreateSoftsign},
    {"Sqrt", 6, CreateSqrt},
    {"Sub", 1, CreateSub},
    {"Sum", 6, CreateSum},
    {"Tan", 7, CreateTan},
    {"Tanh", 6, CreateTanh},
    {"ThresholdedRelu", 10, CreateThresholdedRelu},
    {"Where", 9, CreateWhere, "", kStringTensors},
    {"Xor", 7, CreateXor},
    {"BiasGelu", 1, CreateBiasGelu, "com.microsoft"},
    {"FastGelu", 1, CreateFastGelu, "com.microsoft"},
    {"Gelu", 1, CreateContribGelu, "com.microsoft"},
    {"QuickGelu", 1, CreateQuickGelu, "com.microsoft"},
    {ops::kSwiGlu, ops::kOpsetVersion, CreateSwiGlu, ops::kDomain},
};
}  // namespace elementwise

constexpr KernelEntry kNnKernels[] = {
    {"AveragePool", 1, CreateAveragePool},
    {"BatchNormalization", 1, CreateBatchNormalization},
    {"Conv", 1, CreateConv},
    {"ConvTranspose", 1, CreateConvTranspose},
    {"Gemm", 1, CreateGemm},
    {"GlobalAveragePool", 1, CreateGlobalAveragePool},
    {"GlobalLpPool", 2, CreateGlobalLpPool},
    {"GlobalMaxPool", 1, CreateGlobalMaxPool},
    {"LpPool", 2, CreateLpPool},
    {"MatMul", 1, CreateMatMul},
    {"MaxPool", 1, CreateMaxPool},
    {ops::kFusedConv, ops::kOpsetVersion, CreateFusedConv, ops::kDomain},
    {ops::kFusedGemm, ops::kOpsetVersion, CreateFusedGemm, ops::kDomain},
};

constexpr KernelEntry kTensorKernels[] = {
    {"Concat", 4, CreateConcat, "", kStringTensors},
    {"Flatten", 1, CreateFlatten, "", kStringTensors},
    {"Gather", 1, CreateGather, "", kStringTensors},
    {"Reshape", 5, CreateReshape, "", kStringTensors},
    {"Shape", 1, CreateShape, "", kStringTensors},
    {"Size", 1, CreateSize, "", kStringTensors},
    {"Squeeze", 1, CreateSqueeze, "", kStringTensors},
    {"Transpose", 1, CreateTranspose, "", kStringTensors},
    {"Unsqueeze", 1, CreateUnsqueeze, "", kStringTensors},
};

constexpr KernelEntry kReduceKernels[] = {
    {"ArgMax", 1, CreateArgMax},          {"ArgMin", 1, CreateArgMin},
    {"CumSum", 11, CreateCumSum},         {"ReduceL1", 1, CreateReduce},
    {"ReduceL2", 1, CreateReduce},        {"ReduceLogSum", 1, CreateReduce},
    {"ReduceLogSumExp", 1, CreateReduce}, {"ReduceMax", 1, CreateReduce},
    {"ReduceMean", 1, CreateReduce},      {"ReduceMin", 1, CreateReduce},
    {"ReduceProd", 1, CreateReduce},      {"ReduceSum", 1, CreateReduce},
    {"ReduceSumSquare", 1, CreateReduce}, {"TopK", 1, CreateTopK},
};

constexpr KernelEntry kIndexingKernels[] = {
    {"Compress", 9, CreateCompress},
    {"ConstantOfShape", 9, CreateConstantOfShape},
    {"Expand", 8, CreateExpand, "", kStringTensors},
    {"EyeLike", 9, CreateEyeLike},
    {"GatherElements", 11, CreateGatherElements},
    {"GatherND", 11, CreateGatherND},
    {"NonZero", 9, CreateNonZero},
    {"OneHot", 9, CreateOneHot},
    {"Pad", 2, CreatePad},
    {"Range", 11, CreateRange},
    {"ReverseSequence", 10, CreateReverseSequence},
    {"Scatter", 9, CreateScatterElements},
    {"ScatterElements", 11, CreateScatterElements},
    {"ScatterND", 11, CreateScatterND},
    {"Slice", 1, CreateSlice, "", kStringTensors},
    {"Split", 1, CreateSplit},
    {"Tile", 6, CreateTile, "", kStringTensors},
    {"Trilu", 14, CreateTrilu},
    {"Unique", 11, CreateUnique},
};

constexpr KernelEntry kNormKernels[] = {
    {"Hardmax", 1, CreateHardmax},
    {"InstanceNormalization", 1, CreateInstanceNormalization},
    {"LayerNormalization", 17, CreateLayerNormalization},
    {"LogSoftmax", 1, CreateLogSoftmax},
    {"LRN", 1, CreateLrn},
    {"MeanVarianceNormalization", 9, CreateMeanVarianceNormalization},
    {"SimplifiedLayerNormalization", 1, CreateSimplifiedLayerNormalization},
    {"Softmax", 1, CreateSoftmax},
    {ops::kMaskedSoftmax, ops::kOpsetVersion, CreateMaskedSoftmax, ops::kDomain},
    {"EmbedLayerNormalization", 1, CreateEmbedLayerNormalization, "com.microsoft"},
    {"SkipLayerNormalization", 1, CreateSkipLayerNormalization, "com.microsoft"},
    {"SkipSimplifiedLayerNormalization", 1, CreateSkipSimplifiedLayerNormalization,
     "com.microsoft"},
};

constexpr KernelEntry kImageKernels[] = {
    {"DepthToSpace", 1, CreateDepthToSpace},
    {"GridSample", 16, CreateGridSample},
    {"MaxUnpool", 9, CreateMaxUnpool},
    {"NonMaxSuppression", 10, CreateNonMaxSuppression},
    {"Resize", 10, CreateResize},
    {"RoiAlign", 10, CreateRoiAlign},
    {"SpaceToDepth", 1, CreateSpaceToDepth},
    {"Upsample", 7, CreateUpsample},
};

constexpr KernelEntry kRnnKernels[] = {
    {"GRU", 1, CreateGru},
    {"LSTM", 1, CreateLstm},
    {"RNN", 1, CreateRnn},
};

constexpr KernelEntry kQuantKernels[] = {
    {"ConvInteger", 10, CreateConvInteger},
    {"DequantizeLinear", 10, CreateDequantizeLinear},
    {"DynamicQuantizeLinear", 11, CreateDynamicQuantizeLinear},
    {"MatMulInteger", 10, CreateMatMulInteger},
    {"GatherBlockQuantized", 1, CreateGatherBlockQuantized, "com.microsoft"},
    {"MatMulNBits", 1, CreateMatMulNBits, "com.microsoft"},
    {ops::kMatMulNBitsPacked, ops::kOpsetVersion, CreateMatMulNBitsPacked, ops::kDomain},
    {"QLinearConv", 10, CreateQLinearConv},
    {"QLinearMatMul", 10, CreateQLinearMatMul},
    {"QuantizeLinear", 10, CreateQuantizeLinear},
};

constexpr KernelEntry kLinalgKernels[] = {
    {"Det", 11, CreateDet},
    {"Einsum", 12, CreateEinsum},
};

constexpr KernelEntry kSignalKernels[] = {
    {"DFT", 17, CreateDft},
    {"MelWeightMatrix", 17, CreateMelWeightMatrix},
    {"STFT", 17, CreateStft},
};

constexpr KernelEntry kControlKernels[] = {
    {"If", 1, CreateIf, "", kStringTensors | kAnyValueKind},
    {"Loop", 1, CreateLoop, "", kAnyValueKind},
    {"Scan", 8, CreateScan},
};

// Sequences and optionals of any element type, strings included.
constexpr uint8_t kAnyValue = kStringTensors | kAnyValueKind;
constexpr KernelEntry kSequenceKernels[] = {
    {"ConcatFromSequence", 11, CreateConcatFromSequence, "", kAnyValue},
    {"Optional", 15, CreateOptional, "", kAnyValue},
    {"OptionalGetElement", 15, CreateOptionalGetElement, "", kAnyValue},
    {"OptionalHasElement", 15, CreateOptionalHasElement, "", kAnyValue},
    {"SequenceAt", 11, CreateSequenceAt, "", kAnyValue},
    {"SequenceConstruct", 11, CreateSequenceConstruct, "", kAnyValue},
    {"SequenceEmpty", 11, CreateSequenceEmpty, "", kAnyValue},
    {"SequenceErase", 11, CreateSequenceErase, "", kAnyValue},
    {"SequenceInsert", 11, CreateSequenceInsert, "", kAnyValue},
    {"SequenceLength", 11, CreateSequenceLength, "", kAnyValue},
    {"SequenceMap", 17, CreateSequenceMap, "", kAnyValue},
    {"SplitToSequence", 11, CreateSplitToSequence, "", kAnyValue},
};

constexpr KernelEntry kTextKernels[] = {
    {"StringNormalizer", 10, CreateStringNormalizer, "", kStringTensors},
    {"TfIdfVectorizer", 9, CreateTfIdfVectorizer, "", kStringTensors},
    {ops::kStringConstant, ops::kOpsetVersion, CreateStringConstant, ops::kDomain, kStringTensors},
};

namespace training {
constexpr std::string_view kDomain = "ai.onnx.preview.training";
constexpr KernelEntry kTrainingKernels[] = {
    {"Adagrad", 1, CreateAdagrad, kDomain},
    {"Adam", 1, CreateAdam, kDomain},
    {"Momentum", 1, CreateMomentum, kDomain},
};
}  // namespace training

namespace attention {
constexpr std::string_view kDomain = "com.microsoft";
constexpr KernelEntry kAttentionKernels[] = {
    {"GroupQueryAttention", 1, CreateGroupQueryAttention, kDomain},
    {"RotaryEmbedding", 1, CreateRotaryEmbedding, kDomain},
    {ops::kAttention, ops::kOpsetVersion, CreateAttention, ops::kDomain},
    {ops::kRotateHalf, ops::kOpsetVersion, CreateRotateHalf, ops::kDomain},
};
}  // namespace attention

namespace onednn {
constexpr KernelEntry kDnnlKernels[] = {
    {ops::kChannelAffine, ops::kOpsetVersion, CreateChannelAffine, ops::kDomain},
    {ops::kConcatChannelAffine, ops::kOpsetVersion, CreateConcatChannelAffine, ops::kDomain},
    {ops::kDnnlBatchMatMul, ops::kOpsetVersion, CreateDnnlBatchMatMul, ops::kDomain},
    {ops::kDnnlConv, ops::kOpsetVersion, CreateDnnlConv, ops::kDomain},
    {ops::kDnnlIntegerConv, ops::kOpsetVersion, CreateDnnlIntegerConv, ops::kDomain},
    {ops::kDnnlMatMul, ops::kOpsetVersion, CreateDnnlMatMul, ops::kDomain},
    {ops::kDnnlMatMulInteger, ops::kOpsetVersion, CreateDnnlMatMulInteger, ops::kDomain},
    {ops::kDnnlPool, ops::kOpsetVersion, CreateDnnlPool, ops::kDomain},
    {ops::kReorder, ops::kOpsetVersion, CreateReorder, ops::kDomain},
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
