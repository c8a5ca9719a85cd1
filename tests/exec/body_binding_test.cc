// Binding a program binds the control-flow bodies it uses, recursively. A blob cannot make that
// recursion run away: nesting depth and the total number of bindings are limited.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "exec/executor.h"
#include "program_generated.h"

namespace epctx::exec {
namespace {

using ::testing::HasSubstr;

// A program of a chain: `uses` nodes each using program `body` (none when body < 0). With
// kIf, each node is an If whose two branches are `body` (bodies take no inputs); with kLoop, a
// Loop whose body is `body` (bodies take the iteration number and condition, return the
// condition).
enum class Op { kIf, kLoop };
std::vector<uint8_t> ChainProgram(Op op, int uses, int32_t body, bool main) {
  flatbuffers::FlatBufferBuilder fbb;
  auto scalar = [&](const char* name, DataType type) {
    return fb::CreateValue(fbb, fbb.CreateString(name), static_cast<int32_t>(type),
                           fbb.CreateVector(std::vector<int64_t>{}));
  };
  std::vector<flatbuffers::Offset<fb::Value>> values = {scalar("n", DataType::kInt64),
                                                        scalar("cond", DataType::kBool)};
  std::vector<flatbuffers::Offset<fb::Node>> nodes;
  for (int i = 0; body >= 0 && i < uses; ++i) {
    std::vector<flatbuffers::Offset<fb::Attribute>> attrs;
    std::vector<const char*> names = op == Op::kIf
                                         ? std::vector<const char*>{"then_branch", "else_branch"}
                                         : std::vector<const char*>{"body"};
    for (const char* name : names) {
      auto attr_name = fbb.CreateString(name);
      fb::AttributeBuilder a(fbb);
      a.add_name(attr_name);
      a.add_type(fb::AttrType::Graph);
      a.add_graph(body);
      attrs.push_back(a.Finish());
    }
    std::vector<int32_t> inputs =
        op == Op::kIf ? std::vector<int32_t>{1} : std::vector<int32_t>{0, 1};
    nodes.push_back(
        fb::CreateNode(fbb, fbb.CreateString("n"), fbb.CreateString(op == Op::kIf ? "If" : "Loop"),
                       fbb.CreateString(""), fbb.CreateVector(inputs),
                       fbb.CreateVector(std::vector<int32_t>{}), fbb.CreateVector(attrs)));
  }
  std::vector<int32_t> inputs =
      main || op == Op::kLoop ? std::vector<int32_t>{0, 1} : std::vector<int32_t>{};
  std::vector<int32_t> outputs =
      !main && op == Op::kLoop ? std::vector<int32_t>{1} : std::vector<int32_t>{};
  fbb.Finish(fb::CreateProgram(fbb, fbb.CreateString("p"), fbb.CreateVector(values),
                               fbb.CreateVector(nodes), fbb.CreateVector(inputs),
                               fbb.CreateVector(outputs), 0));
  return {fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()};
}

// `count` programs, program i using program i + 1 through `uses` nodes; the last uses none.
Status BindChain(Op op, int count, int uses) {
  std::vector<std::vector<uint8_t>> bytes;
  for (int i = 0; i < count; ++i) {
    bytes.push_back(ChainProgram(op, uses, i + 1 < count ? i + 1 : -1, i == 0));
  }
  std::vector<const fb::Program*> programs;
  for (const auto& b : bytes) programs.push_back(flatbuffers::GetRoot<fb::Program>(b.data()));
  WeightResolver no_weights = [](uint32_t) -> Result<Tensor> {
    return Status(StatusCode::kInternal, "no weights");
  };
  return BoundProgram::Bind(programs, 0, no_weights, 1).status();
}

TEST(BodyBinding, BindsNestedBodies) {
  Status s = BindChain(Op::kLoop, BoundProgram::kMaxBodyDepth + 1, 1);
  EXPECT_TRUE(s.ok()) << s.ToString();
}

TEST(BodyBinding, RefusesNestingDeeperThanTheLimit) {
  Status s = BindChain(Op::kLoop, BoundProgram::kMaxBodyDepth + 2, 1);
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  EXPECT_THAT(s.message(), HasSubstr("control-flow bodies are nested more than 64 deep"));
}

TEST(BodyBinding, RefusesBlowUpThroughSharedBodies) {
  // Each level binds the next four times (two If nodes, two branches each): 4^10 bindings.
  Status s = BindChain(Op::kIf, 11, 2);
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  EXPECT_THAT(s.message(), HasSubstr("binding the model takes more than 65536 program bindings"));
}

}  // namespace
}  // namespace epctx::exec
