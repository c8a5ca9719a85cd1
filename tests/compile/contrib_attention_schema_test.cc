// The import's inference of com.microsoft GroupQueryAttention and RotaryEmbedding outputs
// (src/compile/contrib/schemas_attention.cc): ONNX Runtime's rules, and where
// total_sequence_length is not a constant, a present of unknown length instead of ORT's past
// length (a decode step's present is one row longer than its past).
#include <gtest/gtest.h>
#include <onnx/defs/parser.h>
#include <onnx/onnx_pb.h>

#include <fmt/format.h>

#include <span>
#include <string>
#include <vector>

#include "compile/onnx_import.h"

namespace epctx::compile {
namespace {

Result<ImportedModel> ImportText(const std::string& text) {
  onnx::ModelProto model;
  onnx::Status parsed = onnx::OnnxParser::Parse(model, text.c_str());
  EXPECT_TRUE(parsed.IsOK()) << parsed.ErrorMessage();
  std::string bytes = model.SerializeAsString();
  return ImportModelBytes(std::as_bytes(std::span<const char>(bytes)), "attention.onnx", "");
}

const IrValue& ValueNamed(const ImportedModel& m, const std::string& name) {
  for (const IrValue& v : m.graph.values) {
    if (v.name == name) return v;
  }
  ADD_FAILURE() << "no value " << name;
  return m.graph.values.front();
}

// One GroupQueryAttention node whose outputs o, pk_out, pv_out feed Identity nodes (so their
// shapes are the inference's, not declared ones). `total` is a constant when it is a number.
std::string GqaModel(const std::string& inputs, const std::string& call, const std::string& total) {
  const bool constant = total != "input";
  return fmt::format(
      "<ir_version: 8, opset_import: [\"\" : 17, \"com.microsoft\" : 1]>\n"
      "agraph ({}{}) => (float[A, B, C] y, float[D, E, F, G] yk)\n{}\n{{\n"
      "  o, pk_out, pv_out = com.microsoft.GroupQueryAttention<num_heads = 9, kv_num_heads = "
      "3>({})\n  y = Identity(o)\n  yk = Identity(pk_out)\n}}\n",
      inputs, constant ? "" : ", int32 tot",
      constant ? fmt::format("<int32 tot = {{{}}}>", total) : "", call);
}

constexpr const char* kSeparate =
    "float[1, 1, 576] q, float[1, 1, 192] k, float[1, 1, 192] v, float[1, 3, {}, 64] pk, "
    "float[1, 3, {}, 64] pv, int32[1] sk";

TEST(GroupQueryAttentionSchema, PresentIsTheLongerOfTotalAndPast) {
  for (const auto& [past, total, rows] : {std::tuple{16, 17, 17}, std::tuple{64, 17, 64}}) {
    auto m = ImportText(GqaModel(fmt::format(kSeparate, past, past), "q, k, v, pk, pv, sk, tot",
                                 std::to_string(total)));
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    EXPECT_EQ(ValueNamed(*m, "o").shape, (std::vector<int64_t>{1, 1, 576}));
    EXPECT_EQ(ValueNamed(*m, "o").dtype, DataType::kFloat32);
    for (const char* present : {"pk_out", "pv_out"}) {
      EXPECT_EQ(ValueNamed(*m, present).shape, (std::vector<int64_t>{1, 3, rows, 64}))
          << present << " past " << past;
      EXPECT_EQ(ValueNamed(*m, present).dtype, DataType::kFloat32);
    }
  }
}

TEST(GroupQueryAttentionSchema, TotalOnlyKnownAtRunTimeLeavesThePresentLengthUnknown) {
  auto m =
      ImportText(GqaModel(fmt::format(kSeparate, 16, 16), "q, k, v, pk, pv, sk, tot", "input"));
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  ASSERT_TRUE(ValueNamed(*m, "pk_out").shape_known);
  EXPECT_EQ(ValueNamed(*m, "pk_out").shape, (std::vector<int64_t>{1, 3, -1, 64}));
}

TEST(GroupQueryAttentionSchema, PackedQkvWithoutPast) {
  auto m = ImportText(GqaModel("float[1, 8, 960] q, int32[1] sk", "q, , , , , sk, tot", "8"));
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(ValueNamed(*m, "o").shape, (std::vector<int64_t>{1, 8, 576}));
  EXPECT_EQ(ValueNamed(*m, "pk_out").shape, (std::vector<int64_t>{1, 3, 8, 64}));
  EXPECT_EQ(ValueNamed(*m, "pv_out").dtype, DataType::kFloat32);
}

TEST(RotaryEmbeddingSchema, OutputIsTheInputsShape) {
  auto m = ImportText(
      "<ir_version: 8, opset_import: [\"\" : 17, \"com.microsoft\" : 1]>\n"
      "agraph (float[2, 5, 128] x, int64[2, 5] pos, float[64, 8] c, float[64, 8] s) => "
      "(float[A, B, C] z)\n{\n"
      "  r = com.microsoft.RotaryEmbedding<num_heads = 4, rotary_embedding_dim = 16>(x, pos, c, "
      "s)\n  z = Identity(r)\n}\n");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(ValueNamed(*m, "r").shape, (std::vector<int64_t>{2, 5, 128}));
  EXPECT_EQ(ValueNamed(*m, "r").dtype, DataType::kFloat32);
}

}  // namespace
}  // namespace epctx::compile
