// Large inline weights become external-data references into the model file itself
// (compile/inline_weights.h), so that a compile reads them in place from the file's mapping:
// which tensors are rewritten, that the references point at exactly their bytes, that anything
// odd is left as it was, and that the import gives the same values read from the mapping.

#include "compile/inline_weights.h"

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "compile/onnx_import.h"
#include "tools/tools_test_helpers.h"
#include "util/hash.h"

namespace epctx::compile {
namespace {

using tools_testing::TempDir;
using tools_testing::WriteStringToFile;

std::string FloatBytes(size_t count, float first) {
  std::vector<float> v(count);
  for (size_t i = 0; i < count; ++i) v[i] = first + static_cast<float>(i) * 0.25f;
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
}

onnx::TensorProto RawFloat(const std::string& name, std::vector<int64_t> dims,
                           const std::string& raw) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(onnx::TensorProto_DataType_FLOAT);
  for (int64_t d : dims) t.add_dims(d);
  t.set_raw_data(raw);
  return t;
}

// Identity nodes read each initializer, so that the import keeps them all.
onnx::ModelProto ModelWith(const std::vector<onnx::TensorProto>& initializers) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(17);
  onnx::GraphProto* graph = model.mutable_graph();
  graph->set_name("g");
  for (const onnx::TensorProto& t : initializers) {
    *graph->add_initializer() = t;
    onnx::NodeProto* node = graph->add_node();
    node->set_op_type("Identity");
    node->add_input(t.name());
    node->add_output(t.name() + "_out");
    onnx::ValueInfoProto* out = graph->add_output();
    out->set_name(t.name() + "_out");
    auto* type = out->mutable_type()->mutable_tensor_type();
    type->set_elem_type(t.data_type());
    for (int64_t d : t.dims()) type->mutable_shape()->add_dim()->set_dim_value(d);
  }
  return model;
}

std::map<std::string, std::string> ExternalEntries(const onnx::TensorProto& t) {
  std::map<std::string, std::string> out;
  for (const auto& e : t.external_data()) out[e.key()] = e.value();
  return out;
}

std::span<const std::byte> AsBytes(const std::string& s) {
  return std::as_bytes(std::span<const char>(s));
}

const std::string kBig = FloatBytes(128 * 128, 1.0f);  // 64 KiB: the smallest size rewritten

TEST(InlineWeightsTest, LargeRawDataBecomesAReferenceToItsOwnBytes) {
  const std::string small = FloatBytes(4, 7.0f);
  const std::string lying = FloatBytes(128 * 128 + 1, 3.0f);  // one float more than its dims
  const std::string serialized =
      ModelWith({RawFloat("big", {128, 128}, kBig), RawFloat("small", {4}, small),
                 RawFloat("lying", {128, 128}, lying)})
          .SerializeAsString();
  std::optional<std::string> rewritten = ExternalizeInlineWeights(AsBytes(serialized), "m.onnx");
  ASSERT_TRUE(rewritten.has_value());
  onnx::ModelProto parsed;
  ASSERT_TRUE(parsed.ParseFromString(*rewritten));
  ASSERT_EQ(parsed.graph().initializer_size(), 3);

  const onnx::TensorProto& big = parsed.graph().initializer(0);
  EXPECT_EQ(big.name(), "big");
  EXPECT_EQ(big.data_type(), onnx::TensorProto_DataType_FLOAT);
  EXPECT_EQ(std::vector<int64_t>(big.dims().begin(), big.dims().end()),
            (std::vector<int64_t>{128, 128}));
  EXPECT_FALSE(big.has_raw_data());
  EXPECT_EQ(big.data_location(), onnx::TensorProto_DataLocation_EXTERNAL);
  std::map<std::string, std::string> entries = ExternalEntries(big);
  EXPECT_EQ(entries["location"], "m.onnx");
  EXPECT_EQ(entries["length"], std::to_string(kBig.size()));
  const size_t offset = std::stoul(entries["offset"]);
  ASSERT_LE(offset + kBig.size(), serialized.size());
  EXPECT_EQ(serialized.substr(offset, kBig.size()), kBig);

  // Under 64 KiB, or not matching its dims: as it was.
  EXPECT_EQ(parsed.graph().initializer(1).raw_data(), small);
  EXPECT_EQ(parsed.graph().initializer(1).data_location(), onnx::TensorProto_DataLocation_DEFAULT);
  EXPECT_EQ(parsed.graph().initializer(2).raw_data(), lying);
  // Everything else is untouched.
  EXPECT_EQ(parsed.graph().node_size(), 3);
  EXPECT_EQ(parsed.graph().output(2).name(), "lying_out");
  EXPECT_EQ(parsed.opset_import(0).version(), 17);
}

TEST(InlineWeightsTest, NothingToRewriteOrNotProtobufGivesNothing) {
  const std::string small_only =
      ModelWith({RawFloat("small", {4}, FloatBytes(4, 0.0f))}).SerializeAsString();
  EXPECT_FALSE(ExternalizeInlineWeights(AsBytes(small_only), "m.onnx").has_value());

  const std::string serialized = ModelWith({RawFloat("big", {128, 128}, kBig)}).SerializeAsString();
  // Cut inside the weight: the length runs past the end.
  EXPECT_FALSE(
      ExternalizeInlineWeights(AsBytes(serialized.substr(0, serialized.size() / 2)), "m.onnx")
          .has_value());
  // A tag of field 0 and a group wire type.
  EXPECT_FALSE(ExternalizeInlineWeights(AsBytes(std::string("\x00\x01", 2)), "m.onnx").has_value());
  EXPECT_FALSE(ExternalizeInlineWeights(AsBytes(std::string("\x3b", 1)), "m.onnx").has_value());

  // A tensor holding typed values too (refused by the import) is left for the import to judge.
  onnx::TensorProto both = RawFloat("both", {128, 128}, kBig);
  both.add_float_data(1.0f);
  const std::string with_both = ModelWith({both}).SerializeAsString();
  EXPECT_FALSE(ExternalizeInlineWeights(AsBytes(with_both), "m.onnx").has_value());
}

TEST(InlineWeightsTest, ImportReadsTheWeightInPlaceFromTheModelFile) {
  TempDir dir;
  const std::string small = FloatBytes(4, 7.0f);
  const std::string serialized =
      ModelWith({RawFloat("big", {128, 128}, kBig), RawFloat("small", {4}, small)})
          .SerializeAsString();
  WriteStringToFile(dir / "m.onnx", serialized);
  Result<ImportedModel> imported = ImportModelFile(dir / "m.onnx");
  ASSERT_TRUE(imported.ok()) << imported.status().ToString();
  std::map<std::string, const IrValue*> by_name;
  for (const IrValue& v : imported->graph.values) by_name[v.name] = &v;
  ASSERT_TRUE(by_name.count("big") && by_name["big"]->is_constant());
  const ConstantData& big = *by_name["big"]->constant;
  EXPECT_NE(big.file, nullptr);  // a view of the model file's mapping
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(big.bytes.data()), big.bytes.size()), kBig);
  const ConstantData& small_c = *by_name["small"]->constant;
  EXPECT_EQ(small_c.file, nullptr);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(small_c.bytes.data()), small_c.bytes.size()),
            small);
  // The source identity is the file's, not the rewritten parse's.
  EXPECT_EQ(imported->source.size, serialized.size());
  EXPECT_EQ(imported->source.hash, Hash64(AsBytes(serialized)));
}

}  // namespace
}  // namespace epctx::compile
