// The element types each kernel row declares (register_all.cc, shown by `epctx compile --list`)
// against what the kernels do: every ONNX operator whose schema lets it be probed (below) is run
// once on each type its row declares, and must compute; a type the row does not declare is
// refused at creation with the registry's message.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <onnx/defs/schema.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "exec/kernel.h"

namespace epctx::exec {
namespace {

constexpr int64_t kProbeOpset = 17;  // the newest opset of onnx 1.12, which these kernels follow

constexpr DataType kAllTypes[] = {DataType::kFloat32,  DataType::kFloat64, DataType::kFloat16,
                                  DataType::kBFloat16, DataType::kInt8,    DataType::kInt16,
                                  DataType::kInt32,    DataType::kInt64,   DataType::kUint8,
                                  DataType::kUint16,   DataType::kUint32,  DataType::kUint64,
                                  DataType::kBool};

// Every probe value: rank 4 with square last dimensions, which convolutions, pools, matrix
// products and determinants take as well as the element-wise ops.
const std::vector<int64_t> kProbeShape = {2, 2, 2, 2};
constexpr size_t kProbeElements = 16;

// The bytes of 1 as `type` (little-endian; the 16-bit floats' bit patterns).
uint64_t OneBits(DataType type) {
  switch (type) {
    case DataType::kFloat32:
      return std::bit_cast<uint32_t>(1.0f);
    case DataType::kFloat64:
      return std::bit_cast<uint64_t>(1.0);
    case DataType::kFloat16:
      return 0x3c00;
    case DataType::kBFloat16:
      return 0x3f80;
    default:  // integers and bool
      return 1;
  }
}

// A kProbeShape tensor of `type` with every element 1.
Tensor Ones(DataType type) {
  auto t = Tensor::Allocate(type, kProbeShape);
  EXPECT_TRUE(t.ok());
  const size_t size = DataTypeSize(type);
  const uint64_t one = OneBits(type);
  for (size_t i = 0; i < kProbeElements; ++i) {
    std::memcpy(static_cast<uint8_t*>(t->mutable_data()) + i * size, &one, size);
  }
  return *t;
}

// How an operator is probed: its required inputs, all of the probed type, and its required
// outputs, of the probed type or of the one type their schema allows (kUndefined: probed type).
struct Probe {
  std::string op;
  int inputs = 0;
  std::vector<DataType> outputs;
};

// The one type a schema's type parameter or type string allows, or kUndefined.
DataType SingleAllowedType(const onnx::OpSchema& schema, const std::string& type_str) {
  static const std::map<std::string, DataType> kTypes = {{"tensor(bool)", DataType::kBool},
                                                         {"tensor(int64)", DataType::kInt64}};
  std::vector<std::string> allowed = {type_str};
  for (const auto& c : schema.typeConstraintParams()) {
    if (c.type_param_str == type_str) allowed = c.allowed_type_strs;
  }
  if (allowed.size() != 1 || !kTypes.count(allowed[0])) return DataType::kUndefined;
  return kTypes.at(allowed[0]);
}

// Operators of the ONNX domain whose schema at kProbeOpset has no required attribute, binds every
// required input to input 0's type parameter, and gives each required output that parameter or
// a single type (the bool of comparisons, the int64 of indices).
std::vector<Probe> ProbeableOps() {
  // Shapes, not types, keep these from running on kProbeShape values: Gemm takes matrices,
  // the recurrent ops and NonMaxSuppression rank 3, InstanceNormalization and
  // LayerNormalization a smaller scale, Range scalars, Resize scales or sizes.
  static const std::set<std::string> kShapeBound = {"GRU",
                                                    "Gemm",
                                                    "InstanceNormalization",
                                                    "LSTM",
                                                    "LayerNormalization",
                                                    "NonMaxSuppression",
                                                    "RNN",
                                                    "Range",
                                                    "Resize"};
  std::vector<Probe> probes;
  for (const RegisteredOp& op : KernelRegistry::Global().Ops()) {
    if (!op.domain.empty() || op.typed.back().output || op.typed.back().index != 0) continue;
    if (kShapeBound.count(op.op_type)) continue;
    const onnx::OpSchema* schema =
        onnx::OpSchemaRegistry::Schema(op.op_type, static_cast<int>(kProbeOpset), "");
    if (schema == nullptr || schema->min_input() < 1 || schema->outputs().empty()) continue;
    const std::string& param = schema->inputs()[0].GetTypeStr();
    // Tensors only: sequences and optionals are not probed.
    bool probeable = true;
    for (const auto& c : schema->typeConstraintParams()) {
      if (c.type_param_str != param) continue;
      for (const std::string& t : c.allowed_type_strs) {
        probeable = probeable && t.rfind("tensor(", 0) == 0;
      }
    }
    for (const auto& [name, attr] : schema->attributes()) probeable = probeable && !attr.required;
    for (int i = 0; i < schema->min_input(); ++i) {
      const auto& formals = schema->inputs();
      const auto& f = formals[std::min<size_t>(static_cast<size_t>(i), formals.size() - 1)];
      probeable = probeable && f.GetTypeStr() == param;
    }
    Probe probe{op.op_type, schema->min_input(), {}};
    for (const auto& f : schema->outputs()) {
      if (f.GetOption() == onnx::OpSchema::Optional) continue;
      if (f.GetTypeStr() == param) {
        probe.outputs.push_back(DataType::kUndefined);
        continue;
      }
      const DataType fixed = SingleAllowedType(*schema, f.GetTypeStr());
      probeable = probeable && fixed != DataType::kUndefined;
      probe.outputs.push_back(fixed);
    }
    if (probeable) probes.push_back(std::move(probe));
  }
  return probes;
}

NodeInfo ProbeNode(const Probe& probe, DataType type, const Attributes& attrs) {
  NodeInfo node;
  node.name = "probe";
  node.op_type = probe.op;
  node.opset = kProbeOpset;
  node.attrs = &attrs;
  ValueDesc d;
  d.dtype = type;
  d.shape_known = true;
  d.shape = kProbeShape;
  node.inputs.assign(static_cast<size_t>(probe.inputs), d);
  for (DataType fixed : probe.outputs) {
    node.outputs.push_back(d);
    if (fixed != DataType::kUndefined) node.outputs.back().dtype = fixed;
  }
  return node;
}

TEST(KernelElementTypesTest, EnoughOperatorsAreProbed) {
  // Unary and binary arithmetic, logic, variadic Max/Min/Sum/Mean, convolutions and pools:
  // fewer would mean the probe lost its way (a schema lookup or a filter broke).
  std::vector<Probe> probes = ProbeableOps();
  EXPECT_GE(probes.size(), 70u);
  const auto probed = [&](const std::string& op) {
    return std::any_of(probes.begin(), probes.end(), [&](const Probe& p) { return p.op == op; });
  };
  for (const char* op : {"Abs", "Add", "And", "Conv", "Equal", "GlobalMaxPool", "IsNaN", "MatMul",
                         "Relu", "Sum", "Where"}) {
    EXPECT_EQ(probed(op), std::string(op) != "Where") << op;  // Where's input 0 is its condition
  }
}

TEST(KernelElementTypesTest, EveryDeclaredTypeRuns) {
  const Attributes no_attrs;
  std::vector<std::string> failures;
  std::map<std::string, ElementTypes> declared;
  for (const RegisteredOp& op : KernelRegistry::Global().Ops()) {
    if (op.domain.empty()) declared[op.op_type] = op.typed.back().types;
  }
  for (const Probe& probe : ProbeableOps()) {
    for (DataType type : kAllTypes) {
      if ((declared[probe.op] & TypeBit(type)) == 0) continue;
      NodeInfo node = ProbeNode(probe, type, no_attrs);
      std::vector<Tensor> values(static_cast<size_t>(probe.inputs), Ones(type));
      std::vector<const Tensor*> inputs;
      for (const Tensor& v : values) inputs.push_back(&v);
      auto out = RunNodeOnce(node, inputs);
      if (!out.ok()) {
        failures.push_back(
            fmt::format("{} on {}: {}", probe.op, DataTypeName(type), out.status().message()));
      }
    }
  }
  EXPECT_THAT(failures, ::testing::IsEmpty());
}

TEST(KernelElementTypesTest, AnUndeclaredTypeIsRefusedAtCreation) {
  const Attributes no_attrs;
  for (const Probe& probe : ProbeableOps()) {
    ElementTypes declared = 0;
    for (const RegisteredOp& op : KernelRegistry::Global().Ops()) {
      if (op.domain.empty() && op.op_type == probe.op) declared = op.typed.back().types;
    }
    for (DataType type : kAllTypes) {
      if ((declared & TypeBit(type)) != 0) continue;
      auto kernel = KernelRegistry::Global().Create(ProbeNode(probe, type, no_attrs));
      ASSERT_FALSE(kernel.ok()) << probe.op << " on " << DataTypeName(type);
      EXPECT_EQ(kernel.status().message(),
                fmt::format("{} node 'probe': input 0 has type {}, which {} does not run on (it "
                            "takes {})",
                            probe.op, DataTypeName(type), probe.op, ElementTypesName(declared)));
    }
  }
}

// A type code outside the enum (a forged blob's value declaration) is in no set, even "every
// type", and is refused by name: shifting by it was undefined behaviour (the blob fuzzer's
// regression_value_type_outside_enum.epctx).
TEST(KernelElementTypesTest, ATypeOutsideTheEnumIsRefused) {
  EXPECT_EQ(TypeBit(static_cast<DataType>(35)), 0u);
  EXPECT_EQ(TypeBit(static_cast<DataType>(-1)), 0u);
  EXPECT_EQ(TypeBit(static_cast<DataType>(32)), 0u);
  const Attributes no_attrs;
  for (const char* op : {"Identity", "Relu"}) {
    auto kernel = KernelRegistry::Global().Create(
        ProbeNode(Probe{op, 1, {DataType::kUndefined}}, static_cast<DataType>(35), no_attrs));
    ASSERT_FALSE(kernel.ok()) << op;
    EXPECT_THAT(
        kernel.status().message(),
        ::testing::StartsWith(fmt::format(
            "{} node 'probe': input 0 has type unknown(35), which {} does not run on", op, op)));
  }
}

TEST(KernelElementTypesTest, TypeSetsHaveNames) {
  EXPECT_EQ(ElementTypesName(kEveryType), "every type");
  EXPECT_EQ(ElementTypesName(kNumericTypes), "numeric types");
  EXPECT_EQ(ElementTypesName(kFloatTypes), "float types");
  EXPECT_EQ(ElementTypesName(TypeBit(DataType::kFloat32)), "float32");
  EXPECT_EQ(ElementTypesName(TypeBit(DataType::kInt64) | TypeBit(DataType::kFloat16) |
                             TypeBit(DataType::kFloat32)),
            "float32, float16, int64");
  EXPECT_EQ(ElementTypesName(0), "no type");
}

}  // namespace
}  // namespace epctx::exec
