#include "conformance/classify.h"

#include <algorithm>
#include <map>
#include <unordered_map>

namespace epctx::cli::conformance {
namespace {

struct OpFamily {
  std::string_view op;
  Family family;
};

constexpr OpFamily kOpFamilies[] = {
    // Elementwise math, comparison, logic and casts.
    {"Abs", Family::kElementwise},
    {"Acos", Family::kElementwise},
    {"Acosh", Family::kElementwise},
    {"Add", Family::kElementwise},
    {"And", Family::kElementwise},
    {"Asin", Family::kElementwise},
    {"Asinh", Family::kElementwise},
    {"Atan", Family::kElementwise},
    {"Atanh", Family::kElementwise},
    {"BitShift", Family::kElementwise},
    {"BitwiseAnd", Family::kElementwise},
    {"BitwiseNot", Family::kElementwise},
    {"BitwiseOr", Family::kElementwise},
    {"BitwiseXor", Family::kElementwise},
    {"Cast", Family::kElementwise},
    {"CastLike", Family::kElementwise},
    {"Ceil", Family::kElementwise},
    {"Clip", Family::kElementwise},
    {"Cos", Family::kElementwise},
    {"Cosh", Family::kElementwise},
    {"Div", Family::kElementwise},
    {"Equal", Family::kElementwise},
    {"Erf", Family::kElementwise},
    {"Exp", Family::kElementwise},
    {"Floor", Family::kElementwise},
    {"Greater", Family::kElementwise},
    {"GreaterOrEqual", Family::kElementwise},
    {"IsInf", Family::kElementwise},
    {"IsNaN", Family::kElementwise},
    {"Less", Family::kElementwise},
    {"LessOrEqual", Family::kElementwise},
    {"Log", Family::kElementwise},
    {"Max", Family::kElementwise},
    {"Mean", Family::kElementwise},
    {"Min", Family::kElementwise},
    {"Mod", Family::kElementwise},
    {"Mul", Family::kElementwise},
    {"Neg", Family::kElementwise},
    {"Not", Family::kElementwise},
    {"Or", Family::kElementwise},
    {"Pow", Family::kElementwise},
    {"Reciprocal", Family::kElementwise},
    {"Round", Family::kElementwise},
    {"Sigmoid", Family::kElementwise},
    {"Sign", Family::kElementwise},
    {"Sin", Family::kElementwise},
    {"Sinh", Family::kElementwise},
    {"Sqrt", Family::kElementwise},
    {"Sub", Family::kElementwise},
    {"Sum", Family::kElementwise},
    {"Tan", Family::kElementwise},
    {"Tanh", Family::kElementwise},
    {"Where", Family::kElementwise},
    {"Xor", Family::kElementwise},
    // Reductions along axes.
    {"ArgMax", Family::kReduction},
    {"ArgMin", Family::kReduction},
    {"CumSum", Family::kReduction},
    {"ReduceL1", Family::kReduction},
    {"ReduceL2", Family::kReduction},
    {"ReduceLogSum", Family::kReduction},
    {"ReduceLogSumExp", Family::kReduction},
    {"ReduceMax", Family::kReduction},
    {"ReduceMean", Family::kReduction},
    {"ReduceMin", Family::kReduction},
    {"ReduceProd", Family::kReduction},
    {"ReduceSum", Family::kReduction},
    {"ReduceSumSquare", Family::kReduction},
    {"TopK", Family::kReduction},
    // Shapes, data movement and indexing.
    {"Compress", Family::kShape},
    {"Concat", Family::kShape},
    {"Constant", Family::kShape},
    {"ConstantOfShape", Family::kShape},
    {"DepthToSpace", Family::kShape},
    {"Expand", Family::kShape},
    {"EyeLike", Family::kShape},
    {"Flatten", Family::kShape},
    {"Gather", Family::kShape},
    {"GatherElements", Family::kShape},
    {"GatherND", Family::kShape},
    {"Identity", Family::kShape},
    {"NonZero", Family::kShape},
    {"OneHot", Family::kShape},
    {"Pad", Family::kShape},
    {"Range", Family::kShape},
    {"Reshape", Family::kShape},
    {"ReverseSequence", Family::kShape},
    {"Scatter", Family::kShape},
    {"ScatterElements", Family::kShape},
    {"ScatterND", Family::kShape},
    {"Shape", Family::kShape},
    {"Size", Family::kShape},
    {"Slice", Family::kShape},
    {"SpaceToDepth", Family::kShape},
    {"Split", Family::kShape},
    {"Squeeze", Family::kShape},
    {"Tile", Family::kShape},
    {"Transpose", Family::kShape},
    {"Trilu", Family::kShape},
    {"Unique", Family::kShape},
    {"Unsqueeze", Family::kShape},
    // Neural-network layers, activations, normalizations, losses and linear algebra.
    {"AveragePool", Family::kNN},
    {"BatchNormalization", Family::kNN},
    {"Celu", Family::kNN},
    {"Conv", Family::kNN},
    {"ConvTranspose", Family::kNN},
    {"Dropout", Family::kNN},
    {"Einsum", Family::kNN},
    {"Elu", Family::kNN},
    {"Gelu", Family::kNN},
    {"Gemm", Family::kNN},
    {"GlobalAveragePool", Family::kNN},
    {"GlobalLpPool", Family::kNN},
    {"GlobalMaxPool", Family::kNN},
    {"GridSample", Family::kNN},
    {"GroupNormalization", Family::kNN},
    {"HardSigmoid", Family::kNN},
    {"HardSwish", Family::kNN},
    {"Hardmax", Family::kNN},
    {"InstanceNormalization", Family::kNN},
    {"LRN", Family::kNN},
    {"LayerNormalization", Family::kNN},
    {"LeakyRelu", Family::kNN},
    {"LogSoftmax", Family::kNN},
    {"LpNormalization", Family::kNN},
    {"LpPool", Family::kNN},
    {"MatMul", Family::kNN},
    {"MaxPool", Family::kNN},
    {"MaxRoiPool", Family::kNN},
    {"MaxUnpool", Family::kNN},
    {"MeanVarianceNormalization", Family::kNN},
    {"Mish", Family::kNN},
    {"NegativeLogLikelihoodLoss", Family::kNN},
    {"NonMaxSuppression", Family::kNN},
    {"PRelu", Family::kNN},
    {"Relu", Family::kNN},
    {"Resize", Family::kNN},
    {"RoiAlign", Family::kNN},
    {"Selu", Family::kNN},
    {"Shrink", Family::kNN},
    {"Softmax", Family::kNN},
    {"SoftmaxCrossEntropyLoss", Family::kNN},
    {"Softplus", Family::kNN},
    {"Softsign", Family::kNN},
    {"ThresholdedRelu", Family::kNN},
    {"Upsample", Family::kNN},
    // Recurrent layers.
    {"GRU", Family::kRecurrent},
    {"LSTM", Family::kRecurrent},
    {"RNN", Family::kRecurrent},
    // Control flow.
    {"If", Family::kControlFlow},
    {"Loop", Family::kControlFlow},
    {"Scan", Family::kControlFlow},
    // Quantization.
    {"ConvInteger", Family::kQuantization},
    {"DequantizeLinear", Family::kQuantization},
    {"DynamicQuantizeLinear", Family::kQuantization},
    {"MatMulInteger", Family::kQuantization},
    {"QLinearConv", Family::kQuantization},
    {"QLinearMatMul", Family::kQuantization},
    {"QuantizeLinear", Family::kQuantization},
    // Training (ai.onnx.preview.training).
    {"Adagrad", Family::kTraining},
    {"Adam", Family::kTraining},
    {"Gradient", Family::kTraining},
    {"Momentum", Family::kTraining},
    // Sequences, optionals and strings.
    {"ConcatFromSequence", Family::kSequence},
    {"Optional", Family::kSequence},
    {"OptionalGetElement", Family::kSequence},
    {"OptionalHasElement", Family::kSequence},
    {"RegexFullMatch", Family::kSequence},
    {"SequenceAt", Family::kSequence},
    {"SequenceConstruct", Family::kSequence},
    {"SequenceEmpty", Family::kSequence},
    {"SequenceErase", Family::kSequence},
    {"SequenceInsert", Family::kSequence},
    {"SequenceLength", Family::kSequence},
    {"SequenceMap", Family::kSequence},
    {"SplitToSequence", Family::kSequence},
    {"StringConcat", Family::kSequence},
    {"StringNormalizer", Family::kSequence},
    {"StringSplit", Family::kSequence},
};

// For a model of several ops, the family of its most specific op decides (AveragePool wrapped in
// Unsqueeze/Squeeze is an NN test, Split + Sigmoid + Mul an elementwise one). Earlier here is
// more specific.
constexpr Family kPriority[] = {
    Family::kSequence,     Family::kTraining, Family::kControlFlow, Family::kRecurrent,
    Family::kQuantization, Family::kNN,       Family::kReduction,   Family::kOther,
    Family::kElementwise,  Family::kShape,
};

int Rank(Family family) {
  return static_cast<int>(std::find(std::begin(kPriority), std::end(kPriority), family) -
                          std::begin(kPriority));
}

// The op under test when the model has one op type besides Constant (or is just a Constant).
std::string SingleOp(const ModelInfo& info) {
  std::vector<std::string> ops;
  for (const std::string& op : info.op_types) {
    if (op != "Constant") ops.push_back(op);
  }
  if (ops.size() == 1) return ops.front();
  if (ops.empty() && info.op_types.size() == 1) return info.op_types.front();
  return {};
}

constexpr std::string_view kExpandedSuffix = "_expanded";

}  // namespace

const char* FamilyName(Family family) {
  switch (family) {
    case Family::kElementwise:
      return "elementwise math/logic";
    case Family::kReduction:
      return "reductions";
    case Family::kShape:
      return "shape/indexing";
    case Family::kNN:
      return "NN";
    case Family::kRecurrent:
      return "recurrent";
    case Family::kControlFlow:
      return "control flow";
    case Family::kQuantization:
      return "quantization";
    case Family::kTraining:
      return "training";
    case Family::kSequence:
      return "sequence/optional/string";
    case Family::kOther:
      return "other";
  }
  return "other";
}

Family FamilyOfOp(std::string_view op_type) {
  static const std::unordered_map<std::string_view, Family> table = [] {
    std::unordered_map<std::string_view, Family> t;
    for (const OpFamily& entry : kOpFamilies) t.emplace(entry.op, entry.family);
    return t;
  }();
  auto it = table.find(op_type);
  return it == table.end() ? Family::kOther : it->second;
}

std::vector<Classification> ClassifyTests(const std::vector<TestCase>& tests,
                                          const std::vector<ModelInfo>& infos) {
  std::map<std::pair<std::string, std::string>, std::string> single_op;  // (suite, name) -> op
  for (size_t i = 0; i < tests.size(); ++i) {
    single_op[{tests[i].suite, tests[i].name}] = SingleOp(infos[i]);
  }
  std::vector<Classification> out(tests.size());
  for (size_t i = 0; i < tests.size(); ++i) {
    const TestCase& test = tests[i];
    const ModelInfo& info = infos[i];
    Classification& c = out[i];
    c.op = single_op[{test.suite, test.name}];
    if (test.name.ends_with(kExpandedSuffix)) {
      std::string base = test.name.substr(0, test.name.size() - kExpandedSuffix.size());
      auto it = single_op.find({test.suite, base});
      if (it == single_op.end()) {  // not in this run (--filter): read its model
        std::string base_dir = test.dir.substr(0, test.dir.size() - kExpandedSuffix.size());
        auto base_info = ReadModelInfo(TestCase{test.suite, base, base_dir}.model_path());
        it = single_op
                 .emplace(std::pair(test.suite, base),
                          base_info.ok() ? SingleOp(*base_info) : std::string())
                 .first;
      }
      if (!it->second.empty()) c.op = it->second;
    }
    if (!c.op.empty()) {
      c.family = FamilyOfOp(c.op);
    } else {
      c.family = std::end(kPriority)[-1];  // the least specific
      for (const std::string& op : info.op_types) {
        Family f = FamilyOfOp(op);
        if (op != "Constant" && Rank(f) < Rank(c.family)) c.family = f;
      }
    }
    // Training ops and sequence/optional/string values outrank the op under test.
    for (const std::string& op : info.op_types) {
      Family f = FamilyOfOp(op);
      if ((f == Family::kTraining || f == Family::kSequence) && Rank(f) < Rank(c.family)) {
        c.family = f;
      }
    }
    if (info.non_tensor_types) c.family = Family::kSequence;
    c.core = info.core_types_only && c.family != Family::kTraining && c.family != Family::kSequence;
  }
  return out;
}

}  // namespace epctx::cli::conformance
