// Kernels are bound against the types and shapes a program declares. A tensor that disagrees
// with its declaration (a forged program, or a body handed the wrong type by its node) is refused
// at the node that made it, before any kernel bound for the declared type reads it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "exec/executor.h"
#include "program_generated.h"

namespace epctx::exec {
namespace {

using ::testing::HasSubstr;

// Finishes the program x -> `op` -> y over `values` (x and y) in `fbb`.
std::vector<uint8_t> OneNodeProgram(flatbuffers::FlatBufferBuilder& fbb,
                                    const std::vector<flatbuffers::Offset<fb::Value>>& values,
                                    const char* op, const char* node_name) {
  std::vector<flatbuffers::Offset<fb::Node>> nodes = {fb::CreateNode(
      fbb, fbb.CreateString(node_name), fbb.CreateString(op), fbb.CreateString(""),
      fbb.CreateVector(std::vector<int32_t>{0}), fbb.CreateVector(std::vector<int32_t>{1}))};
  std::vector<flatbuffers::Offset<fb::OpsetImport>> opsets = {
      fb::CreateOpsetImport(fbb, fbb.CreateString(""), 17)};
  fbb.Finish(fb::CreateProgram(fbb, fbb.CreateString("p"), fbb.CreateVector(values),
                               fbb.CreateVector(nodes), fbb.CreateVector(std::vector<int32_t>{0}),
                               fbb.CreateVector(std::vector<int32_t>{1}), 0,
                               fbb.CreateVector(opsets)));
  return {fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()};
}

// x -> Relu -> y, with y declared as `y_type` `y_shape`.
std::vector<uint8_t> ReluProgram(DataType y_type, std::vector<int64_t> y_shape) {
  flatbuffers::FlatBufferBuilder fbb;
  std::vector<flatbuffers::Offset<fb::Value>> values = {
      fb::CreateValue(fbb, fbb.CreateString("x"), static_cast<int32_t>(DataType::kFloat32),
                      fbb.CreateVector(std::vector<int64_t>{2})),
      fb::CreateValue(fbb, fbb.CreateString("y"), static_cast<int32_t>(y_type),
                      fbb.CreateVector(y_shape))};
  return OneNodeProgram(fbb, values, "Relu", "relu");
}

Result<std::vector<Tensor>> RunRelu(const std::vector<uint8_t>& bytes, const Tensor& x) {
  WeightResolver no_weights = [](uint32_t) -> Result<Tensor> {
    return Status(StatusCode::kInternal, "no weights");
  };
  auto bound = BoundProgram::Bind(*flatbuffers::GetRoot<fb::Program>(bytes.data()), no_weights, 1);
  if (!bound.ok()) return bound.status();
  std::vector<Tensor> inputs = {x};
  return (*bound)->Run(inputs, {});
}

Tensor FloatPair() {
  auto t = Tensor::Allocate(DataType::kFloat32, {2});
  EXPECT_TRUE(t.ok());
  t->mutable_data_as<float>()[0] = -1.0f;
  t->mutable_data_as<float>()[1] = 2.0f;
  return *t;
}

TEST(DeclaredTypes, ProgramThatMatchesItsDeclarationsRuns) {
  auto out = RunRelu(ReluProgram(DataType::kFloat32, {2}), FloatPair());
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_EQ(out->size(), 1u);
  EXPECT_EQ((*out)[0].data_as<float>()[0], 0.0f);
  EXPECT_EQ((*out)[0].data_as<float>()[1], 2.0f);
}

TEST(DeclaredTypes, NodeOutputOfAnotherTypeIsRefused) {
  auto out = RunRelu(ReluProgram(DataType::kInt8, {2}), FloatPair());
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(),
              HasSubstr("Relu node 'relu': value 'y' is float32 [2], but the program declares "
                        "int8 [2]"));
}

TEST(DeclaredTypes, NodeOutputOfAnotherShapeIsRefused) {
  auto out = RunRelu(ReluProgram(DataType::kFloat32, {2, 1}), FloatPair());
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(),
              HasSubstr("value 'y' is float32 [2], but the program declares float32 [2,1]"));
  out = RunRelu(ReluProgram(DataType::kFloat32, {3}), FloatPair());
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("but the program declares float32 [3]"));
}

// A node asking for an output of another shape than declared is refused before any memory is
// taken: a forged program must not make a tensor of any size first.
TEST(DeclaredTypes, OutputOfAnotherShapeIsRefusedBeforeItsMemoryIsTaken) {
  flatbuffers::FlatBufferBuilder fbb;
  std::vector<flatbuffers::Offset<fb::Value>> values = {
      fb::CreateValue(fbb, fbb.CreateString("shape"), static_cast<int32_t>(DataType::kInt64),
                      fbb.CreateVector(std::vector<int64_t>{2})),
      fb::CreateValue(fbb, fbb.CreateString("y"), static_cast<int32_t>(DataType::kFloat32),
                      fbb.CreateVector(std::vector<int64_t>{2, 2}))};
  const std::vector<uint8_t> bytes = OneNodeProgram(fbb, values, "ConstantOfShape", "fill");
  auto shape = Tensor::Allocate(DataType::kInt64, {2});
  ASSERT_TRUE(shape.ok());
  shape->mutable_data_as<int64_t>()[0] = int64_t{1} << 30;  // 2^60 floats: no allocator has them
  shape->mutable_data_as<int64_t>()[1] = int64_t{1} << 30;
  auto out = RunRelu(bytes, *shape);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(
      out.status().message(),
      HasSubstr("ConstantOfShape node 'fill': value 'y' is float32 [1073741824,1073741824], "
                "but the program declares float32 [2,2]"));
}

TEST(DeclaredTypes, UnknownDimsAcceptAnyExtent) {
  auto out = RunRelu(ReluProgram(DataType::kFloat32, {-1}), FloatPair());
  EXPECT_TRUE(out.ok()) << out.status().ToString();
}

TEST(DeclaredTypes, ProgramInputOfAnotherTypeIsRefused) {
  // What a control-flow node passing a body the wrong type would do.
  auto x = Tensor::Allocate(DataType::kInt8, {2});
  ASSERT_TRUE(x.ok());
  auto out = RunRelu(ReluProgram(DataType::kFloat32, {2}), *x);
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(),
              HasSubstr("input 0 is int8, but the program declares float32"));
}

// x -> Identity -> y, each declared with its own kind, optional flag and element type; no shapes.
std::vector<uint8_t> IdentityProgram(ValueKind x_kind, bool x_optional, ValueKind y_kind,
                                     bool y_optional, DataType y_type = DataType::kFloat32,
                                     DataType x_type = DataType::kFloat32) {
  flatbuffers::FlatBufferBuilder fbb;
  auto value = [&](const char* name, ValueKind kind, bool optional, DataType type) {
    auto n = fbb.CreateString(name);
    fb::ValueBuilder v(fbb);
    v.add_name(n);
    v.add_dtype(static_cast<int32_t>(type));
    v.add_kind(static_cast<uint8_t>(kind));
    v.add_optional(optional);
    return v.Finish();
  };
  std::vector<flatbuffers::Offset<fb::Value>> values = {value("x", x_kind, x_optional, x_type),
                                                        value("y", y_kind, y_optional, y_type)};
  return OneNodeProgram(fbb, values, "Identity", "id");
}

Tensor FloatSequence() {
  return Tensor::Sequence(DataType::kFloat32, {FloatPair()});
}

TEST(DeclaredTypes, SequencesAndOptionalsRunWhereDeclared) {
  auto seq = RunRelu(IdentityProgram(ValueKind::kSequence, false, ValueKind::kSequence, false),
                     FloatSequence());
  ASSERT_TRUE(seq.ok()) << seq.status().ToString();
  ASSERT_EQ((*seq)[0].kind(), ValueKind::kSequence);
  EXPECT_EQ((*seq)[0].elements().size(), 1u);
  auto none = RunRelu(IdentityProgram(ValueKind::kTensor, true, ValueKind::kTensor, true),
                      Tensor::None(DataType::kFloat32));
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_EQ((*none)[0].kind(), ValueKind::kNone);
}

TEST(DeclaredTypes, ValueOfAnotherKindIsRefused) {
  // An input of the wrong kind, and a node output whose kind disagrees with its declaration (a
  // forged program): both refused before a kernel reads them.
  auto input = RunRelu(IdentityProgram(ValueKind::kTensor, false, ValueKind::kTensor, false),
                       FloatSequence());
  ASSERT_FALSE(input.ok());
  EXPECT_EQ(input.status().message(), "value 'x' is a sequence, but the program declares a tensor");
  auto output = RunRelu(IdentityProgram(ValueKind::kSequence, false, ValueKind::kTensor, true),
                        FloatSequence());
  ASSERT_FALSE(output.ok());
  EXPECT_EQ(output.status().message(),
            "Identity node 'id': value 'y' is a sequence, but the program declares an optional of "
            "a tensor");
  auto none = RunRelu(IdentityProgram(ValueKind::kTensor, false, ValueKind::kTensor, false),
                      Tensor::None(DataType::kFloat32));
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().message(),
            "value 'x' is an empty optional, but the program declares a tensor that is not "
            "optional");
}

TEST(DeclaredTypes, StringNeverFillsASlotOfUnknownType) {
  // x and y of types unknown at compile time: a numeric tensor may fill them, a string may not
  // (kernels bound for an unknown type are not bound for strings).
  auto text = Tensor::Allocate(DataType::kString, {1});
  ASSERT_TRUE(text.ok());
  auto bytes =
      IdentityProgram(ValueKind::kTensor, false, ValueKind::kTensor, false, DataType::kUndefined);
  EXPECT_TRUE(RunRelu(bytes, FloatPair()).ok());
  auto out = RunRelu(
      IdentityProgram(ValueKind::kTensor, false, ValueKind::kTensor, false, DataType::kUndefined),
      *text);
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("input 0 is string, but the program declares"));
}

}  // namespace
}  // namespace epctx::exec
