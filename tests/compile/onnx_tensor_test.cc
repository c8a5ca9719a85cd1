// The TensorProto decoder (compile/onnx_tensor.h) that initializers, tensor attributes and tensor
// files share: typed fields of every type, a catalogue of corrupt TensorProtos with the exact
// error for each, raw data used in place, external data through a file, and the import of a model
// whose initializer is out of range (a bool byte other than 0 or 1 included).

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "compile/onnx_import.h"
#include "compile/onnx_tensor.h"
#include "tools/tools_test_helpers.h"

namespace epctx::compile {
namespace {

using tools_testing::TempDir;
using tools_testing::WriteStringToFile;

const std::string kWhere = "'m.onnx': initializer 'w'";

Result<std::shared_ptr<ConstantData>> Decode(const onnx::TensorProto& proto,
                                             ExternalDataFiles& external) {
  return ConstantFromTensorProto(proto, nullptr, external, kWhere);
}

Result<std::shared_ptr<ConstantData>> Decode(const onnx::TensorProto& proto) {
  ExternalDataFiles no_directory("");
  return Decode(proto, no_directory);
}

std::string Bytes(const ConstantData& c) {
  return std::string(reinterpret_cast<const char*>(c.bytes.data()), c.bytes.size());
}

template <typename T>
std::string BytesOf(const std::vector<T>& values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
}

onnx::TensorProto Proto(int32_t data_type, std::vector<int64_t> dims) {
  onnx::TensorProto p;
  p.set_name("w");
  p.set_data_type(data_type);
  for (int64_t d : dims) p.add_dims(d);
  return p;
}

onnx::TensorProto Float23() {
  return Proto(onnx::TensorProto_DataType_FLOAT, {2, 3});
}

template <typename T>
onnx::TensorProto WithInt32Data(int32_t data_type, const std::vector<T>& values) {
  onnx::TensorProto p = Proto(data_type, {static_cast<int64_t>(values.size())});
  for (T v : values) p.add_int32_data(static_cast<int32_t>(v));
  return p;
}

// The error of decoding `proto`, checking its code; empty when it decodes.
std::string ErrorFor(const onnx::TensorProto& proto, StatusCode code) {
  auto c = Decode(proto);
  if (c.ok()) return "";
  EXPECT_EQ(c.status().code(), code) << c.status().ToString();
  return c.status().message();
}

TEST(OnnxTensorTest, TypedFieldsOfEveryType) {
  using P = onnx::TensorProto;
  struct Case {
    onnx::TensorProto proto;
    DataType dtype;
    std::string bytes;
  };
  std::vector<Case> cases;
  cases.push_back({WithInt32Data(P::INT8, std::vector<int8_t>{-128, -1, 0, 127}), DataType::kInt8,
                   BytesOf(std::vector<int8_t>{-128, -1, 0, 127})});
  cases.push_back({WithInt32Data(P::UINT8, std::vector<uint8_t>{0, 1, 128, 255}), DataType::kUint8,
                   BytesOf(std::vector<uint8_t>{0, 1, 128, 255})});
  cases.push_back({WithInt32Data(P::BOOL, std::vector<uint8_t>{1, 0, 1}), DataType::kBool,
                   BytesOf(std::vector<uint8_t>{1, 0, 1})});
  cases.push_back({WithInt32Data(P::INT16, std::vector<int16_t>{-32768, -1, 32767}),
                   DataType::kInt16, BytesOf(std::vector<int16_t>{-32768, -1, 32767})});
  cases.push_back({WithInt32Data(P::UINT16, std::vector<uint16_t>{0, 32768, 65535}),
                   DataType::kUint16, BytesOf(std::vector<uint16_t>{0, 32768, 65535})});
  cases.push_back({WithInt32Data(P::FLOAT16, std::vector<uint16_t>{0x3c00, 0xc000}),
                   DataType::kFloat16, BytesOf(std::vector<uint16_t>{0x3c00, 0xc000})});
  cases.push_back({WithInt32Data(P::BFLOAT16, std::vector<uint16_t>{0x3f80, 0xc000}),
                   DataType::kBFloat16, BytesOf(std::vector<uint16_t>{0x3f80, 0xc000})});
  cases.push_back({WithInt32Data(P::INT32, std::vector<int32_t>{INT32_MIN, -1, INT32_MAX}),
                   DataType::kInt32, BytesOf(std::vector<int32_t>{INT32_MIN, -1, INT32_MAX})});
  {
    onnx::TensorProto p = Proto(P::UINT32, {2});
    p.add_uint64_data(0);
    p.add_uint64_data(UINT32_MAX);
    cases.push_back({p, DataType::kUint32, BytesOf(std::vector<uint32_t>{0, UINT32_MAX})});
  }
  {
    onnx::TensorProto p = Proto(P::UINT64, {2});
    p.add_uint64_data(1);
    p.add_uint64_data(UINT64_MAX);
    cases.push_back({p, DataType::kUint64, BytesOf(std::vector<uint64_t>{1, UINT64_MAX})});
  }
  {
    onnx::TensorProto p = Proto(P::INT64, {});  // 0-d scalar
    p.add_int64_data(-5);
    cases.push_back({p, DataType::kInt64, BytesOf(std::vector<int64_t>{-5})});
  }
  {
    onnx::TensorProto p = Proto(P::FLOAT, {2});
    p.add_float_data(1.5f);
    p.add_float_data(-0.0f);
    cases.push_back({p, DataType::kFloat32, BytesOf(std::vector<float>{1.5f, -0.0f})});
  }
  {
    onnx::TensorProto p = Proto(P::DOUBLE, {1});
    p.add_double_data(1e300);
    cases.push_back({p, DataType::kFloat64, BytesOf(std::vector<double>{1e300})});
  }
  ASSERT_EQ(cases.size(), 13u);
  for (const Case& c : cases) {
    SCOPED_TRACE(DataTypeName(c.dtype));
    auto decoded = Decode(c.proto);
    ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
    EXPECT_EQ((*decoded)->dtype, c.dtype);
    EXPECT_EQ((*decoded)->shape,
              std::vector<int64_t>(c.proto.dims().begin(), c.proto.dims().end()));
    EXPECT_FALSE(c.bytes.empty());
    EXPECT_EQ(Bytes(**decoded), c.bytes);
  }
}

TEST(OnnxTensorTest, ZeroSizeTensorNeedsNoValues) {
  auto c = Decode(Proto(onnx::TensorProto_DataType_FLOAT, {3, 0}));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ((*c)->shape, (std::vector<int64_t>{3, 0}));
  EXPECT_TRUE((*c)->bytes.empty());
}

TEST(OnnxTensorTest, RawDataIsUsedInPlaceAndKeepsItsOwnerAlive) {
  auto proto = std::make_shared<onnx::TensorProto>(Float23());
  std::vector<float> values = {1, 2, 3, 4, 5, 6};
  proto->set_raw_data(BytesOf(values));
  ExternalDataFiles no_directory("");
  auto c = ConstantFromTensorProto(*proto, proto, no_directory, kWhere);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(static_cast<const void*>((*c)->bytes.data()),
            static_cast<const void*>(proto->raw_data().data()));
  const onnx::TensorProto* raw = proto.get();
  proto.reset();
  EXPECT_EQ((*c)->owner.get(), raw);
  EXPECT_EQ(Bytes(**c), BytesOf(values));
}

TEST(OnnxTensorTest, NarrowingOutOfRangeIsRefused) {
  using P = onnx::TensorProto;
  struct Case {
    onnx::TensorProto proto;
    std::string message;
  };
  onnx::TensorProto uint32 = Proto(P::UINT32, {2});
  uint32.add_uint64_data(1);
  uint32.add_uint64_data(uint64_t{1} << 32);
  const Case cases[] = {
      {WithInt32Data(P::INT8, std::vector<int32_t>{5, 300}),
       "int32_data[1] = 300 is out of range for int8"},
      {WithInt32Data(P::INT8, std::vector<int32_t>{-129}),
       "int32_data[0] = -129 is out of range for int8"},
      {WithInt32Data(P::UINT8, std::vector<int32_t>{0, 256}),
       "int32_data[1] = 256 is out of range for uint8"},
      {WithInt32Data(P::UINT8, std::vector<int32_t>{-1}),
       "int32_data[0] = -1 is out of range for uint8"},
      {WithInt32Data(P::BOOL, std::vector<int32_t>{1, 2}),
       "int32_data[1] = 2 is out of range for bool"},
      {WithInt32Data(P::INT16, std::vector<int32_t>{40000}),
       "int32_data[0] = 40000 is out of range for int16"},
      {WithInt32Data(P::UINT16, std::vector<int32_t>{-1}),
       "int32_data[0] = -1 is out of range for uint16"},
      {WithInt32Data(P::FLOAT16, std::vector<int32_t>{65536}),
       "int32_data[0] = 65536 is out of range for float16"},
      {WithInt32Data(P::BFLOAT16, std::vector<int32_t>{0, 0, -2}),
       "int32_data[2] = -2 is out of range for bfloat16"},
      {uint32, "uint64_data[1] = 4294967296 is out of range for uint32"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(ErrorFor(c.proto, StatusCode::kCorrupt), kWhere + ": " + c.message);
  }
}

// Bools are 0 or 1 in raw_data too, as in int32_data: a 2 or a 255 is refused, not read as true
// (Not would flip it to 3 or 254, Cast would make it 2.0 or 255.0).
TEST(OnnxTensorTest, BoolRawDataOtherThanZeroOrOneIsRefused) {
  onnx::TensorProto p = Proto(onnx::TensorProto_DataType_BOOL, {4});
  p.set_raw_data(std::string("\x00\x01\x02\xff", 4));
  EXPECT_EQ(ErrorFor(p, StatusCode::kCorrupt),
            kWhere + ": raw_data[2] = 2 is out of range for bool");
  p.set_raw_data(std::string("\x00\x01\x01\xff", 4));
  EXPECT_EQ(ErrorFor(p, StatusCode::kCorrupt),
            kWhere + ": raw_data[3] = 255 is out of range for bool");
  // Past the first eight bytes too (the check reads eight at a time).
  onnx::TensorProto long_bools = Proto(onnx::TensorProto_DataType_BOOL, {19});
  std::string bytes(19, '\x01');
  bytes[17] = '\x10';
  long_bools.set_raw_data(bytes);
  EXPECT_EQ(ErrorFor(long_bools, StatusCode::kCorrupt),
            kWhere + ": raw_data[17] = 16 is out of range for bool");
  p.set_raw_data(std::string("\x00\x01\x01\x00", 4));
  auto c = Decode(p);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(Bytes(**c), std::string("\x00\x01\x01\x00", 4));
}

TEST(OnnxTensorTest, SizesMustMatchTheShape) {
  onnx::TensorProto p = Float23();
  p.set_raw_data(std::string(20, '\0'));
  EXPECT_EQ(ErrorFor(p, StatusCode::kCorrupt),
            kWhere + ": raw_data has 20 bytes; shape [2,3] of float32 needs 24");
  p = Float23();
  for (int i = 0; i < 5; ++i) p.add_float_data(1.0f);
  EXPECT_EQ(ErrorFor(p, StatusCode::kCorrupt),
            kWhere + ": float_data has 5 values; shape [2,3] needs 6");
  EXPECT_EQ(ErrorFor(Float23(), StatusCode::kCorrupt),
            kWhere + ": no values (neither raw_data nor float_data) for shape [2,3]");
  p = Proto(onnx::TensorProto_DataType_FLOAT, {4611686018427387904, 4});
  EXPECT_EQ(ErrorFor(p, StatusCode::kCorrupt),
            kWhere + ": shape [4611686018427387904,4] of float32 is too large");
  p = Proto(onnx::TensorProto_DataType_UINT8, {INT64_MAX, 2});
  EXPECT_EQ(ErrorFor(p, StatusCode::kCorrupt),
            kWhere + ": shape [9223372036854775807,2] of uint8 is too large");
  p = Float23();
  p.add_dims(-1);
  EXPECT_EQ(ErrorFor(p, StatusCode::kCorrupt), kWhere + ": dims [2,3,?] has a negative dimension");
}

TEST(OnnxTensorTest, ValuesInTheWrongFieldOrInTwoFields) {
  onnx::TensorProto p = Float23();
  for (int i = 0; i < 6; ++i) p.add_int64_data(1);
  EXPECT_EQ(
      ErrorFor(p, StatusCode::kCorrupt),
      kWhere + ": values of data_type float32 belong in float_data or raw_data, not in int64_data");
  p.set_raw_data(std::string(24, '\0'));
  EXPECT_EQ(ErrorFor(p, StatusCode::kCorrupt),
            kWhere + ": values are given twice, in raw_data and in int64_data");
  p = Float23();
  p.set_raw_data(std::string(24, '\0'));
  p.set_data_location(onnx::TensorProto_DataLocation_EXTERNAL);
  EXPECT_EQ(ErrorFor(p, StatusCode::kCorrupt),
            kWhere + ": values are given twice, in external data and in raw_data");
}

TEST(OnnxTensorTest, UnsupportedAndMissingDataTypes) {
  onnx::TensorProto p = Float23();
  p.set_data_type(onnx::TensorProto_DataType_COMPLEX64);
  EXPECT_EQ(ErrorFor(p, StatusCode::kUnsupported),
            kWhere + ": data_type COMPLEX64 (14) is not supported");
  p.set_data_type(999);
  EXPECT_EQ(ErrorFor(p, StatusCode::kUnsupported),
            kWhere + ": data_type unknown (999) is not supported");
  p.set_data_type(onnx::TensorProto_DataType_UNDEFINED);
  EXPECT_EQ(ErrorFor(p, StatusCode::kCorrupt), kWhere + ": TensorProto has no data_type");
  p = Proto(onnx::TensorProto_DataType_STRING, {1});
  p.add_string_data("hello");
  EXPECT_EQ(ErrorFor(p, StatusCode::kUnsupported),
            kWhere +
                ": a string tensor cannot be a weight (string initializers and Constant nodes are "
                "supported, as StringConstant nodes; string tensor attributes are not)");
  p = Float23();
  p.mutable_segment()->set_begin(0);
  EXPECT_EQ(ErrorFor(p, StatusCode::kUnsupported),
            kWhere + ": segmented tensors are not supported");
}

class ExternalDataTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::vector<float> floats = {0, 1, 2, 3, 4, 5, 6, 7};
    WriteStringToFile(dir_ / "weights.bin", BytesOf(floats));
  }
  // Float23 stored in weights.bin with these external_data entries.
  static onnx::TensorProto External(std::vector<std::pair<std::string, std::string>> entries) {
    onnx::TensorProto p = Float23();
    p.set_data_location(onnx::TensorProto_DataLocation_EXTERNAL);
    for (const auto& [key, value] : entries) {
      auto* e = p.add_external_data();
      e->set_key(key);
      e->set_value(value);
    }
    return p;
  }
  std::string ErrorWith(const onnx::TensorProto& proto, ExternalDataFiles& files, StatusCode code) {
    auto c = Decode(proto, files);
    if (c.ok()) return "";
    EXPECT_EQ(c.status().code(), code) << c.status().ToString();
    return c.status().message();
  }

  TempDir dir_;
  ExternalDataFiles files_{dir_.path().string()};
};

TEST_F(ExternalDataTest, ReadsTheRangeOfTheFile) {
  // Keys not needed to read the data (ONNX's "checksum") are not read.
  auto c = Decode(External({{"location", "weights.bin"},
                            {"offset", "8"},
                            {"length", "24"},
                            {"checksum", "not a number"}}),
                  files_);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(Bytes(**c), BytesOf(std::vector<float>{2, 3, 4, 5, 6, 7}));
  EXPECT_NE((*c)->owner, nullptr);
  // Without a length the data runs to the end of the file.
  c = Decode(External({{"location", "weights.bin"}, {"offset", "8"}}), files_);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(Bytes(**c), BytesOf(std::vector<float>{2, 3, 4, 5, 6, 7}));
}

TEST_F(ExternalDataTest, Errors) {
  EXPECT_EQ(ErrorWith(External({{"location", "weights.bin"}}), files_, StatusCode::kCorrupt),
            kWhere + ": external data has 32 bytes; shape [2,3] of float32 needs 24");
  std::string file = (dir_.path() / "weights.bin").string();
  EXPECT_EQ(
      ErrorWith(External({{"location", "weights.bin"}, {"offset", "16"}, {"length", "24"}}), files_,
                StatusCode::kCorrupt),
      kWhere + ": external data '" + file + "': 24 bytes at offset 16 exceed the file size 32");
  for (const char* bad : {"12abc", "-1", " 8", ""}) {
    EXPECT_EQ(ErrorWith(External({{"location", "weights.bin"}, {"offset", bad}}), files_,
                        StatusCode::kCorrupt),
              kWhere + ": external data field 'offset' is not a number: '" + bad + "'");
  }
  EXPECT_EQ(ErrorWith(External({{"offset", "0"}}), files_, StatusCode::kCorrupt),
            kWhere + ": external data without a location");
  EXPECT_EQ(
      ErrorWith(External({{"location", "../weights.bin"}}), files_, StatusCode::kInvalidArgument),
      kWhere +
          ": external data location '../weights.bin' must be a relative path inside the "
          "model's directory");
  ExternalDataFiles no_directory("");
  EXPECT_EQ(ErrorWith(External({{"location", "weights.bin"}}), no_directory,
                      StatusCode::kInvalidArgument),
            kWhere +
                ": external data 'weights.bin' cannot be resolved for a model without a "
                "directory");
  // The location is a path: with a NUL the system would open the file named by what precedes it.
  const std::string nul_location("weights.bin\0.other", 18);
  EXPECT_EQ(ErrorWith(External({{"location", nul_location}}), files_, StatusCode::kInvalidArgument),
            kWhere + ": path '" + file +
                "\\0.other' contains a NUL byte: the system would see only '" + file + "'");
  // Bools stored externally are checked as raw_data is.
  WriteStringToFile(dir_ / "bools.bin", std::string("\x01\x00\x02", 3));
  onnx::TensorProto bools = External({{"location", "bools.bin"}});
  bools.set_data_type(onnx::TensorProto_DataType_BOOL);
  bools.clear_dims();
  bools.add_dims(3);
  EXPECT_EQ(ErrorWith(bools, files_, StatusCode::kCorrupt),
            kWhere + ": external data[2] = 2 is out of range for bool");
  auto refusing = ExternalDataFiles::Refusing("tensor files with external data are not supported");
  EXPECT_EQ(ErrorWith(External({{"location", "weights.bin"}}), refusing, StatusCode::kUnsupported),
            kWhere +
                ": data is stored externally (location 'weights.bin'); tensor files with "
                "external data are not supported");
}

// The import decodes initializers with the same checks: an int8 initializer whose typed field
// holds 300 is refused, not wrapped to 44.
TEST(OnnxTensorTest, ImportRefusesAnOutOfRangeInitializer) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(17);
  onnx::GraphProto* graph = model.mutable_graph();
  graph->set_name("g");
  *graph->add_initializer() = WithInt32Data(onnx::TensorProto_DataType_INT8, std::vector{5, 300});
  onnx::NodeProto* node = graph->add_node();
  node->set_op_type("Identity");
  node->add_input("w");
  node->add_output("y");
  onnx::ValueInfoProto* y = graph->add_output();
  y->set_name("y");
  auto* type = y->mutable_type()->mutable_tensor_type();
  type->set_elem_type(onnx::TensorProto_DataType_INT8);
  type->mutable_shape()->add_dim()->set_dim_value(2);
  std::string bytes = model.SerializeAsString();
  auto imported = ImportModelBytes(std::as_bytes(std::span<const char>(bytes)), "m.onnx", "");
  ASSERT_FALSE(imported.ok());
  EXPECT_EQ(imported.status().code(), StatusCode::kCorrupt);
  EXPECT_EQ(imported.status().message(), kWhere + ": int32_data[1] = 300 is out of range for int8");
}

}  // namespace
}  // namespace epctx::compile
