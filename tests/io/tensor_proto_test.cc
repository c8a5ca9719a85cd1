// ONNX TensorProto .pb reading: ONNX's own test data, files written by the onnx Python package
// (raw and typed fields), and the errors particular to files. The checks of the values themselves
// are the TensorProto decoder's, with their catalogue in tests/compile/onnx_tensor_test.cc; here
// one of them shows that its messages name the file and the tensor.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "epctx/tensor_io.h"
#include "tools/tools_test_helpers.h"

namespace epctx {
namespace {

using ::testing::HasSubstr;
using tools_testing::OnnxAddTestDir;
using tools_testing::ReadFileToString;
using tools_testing::RunPython;
using tools_testing::TempDir;
using tools_testing::WriteStringToFile;

std::string RawBytes(const Tensor& t) {
  return std::string(static_cast<const char*>(t.data()), t.byte_size());
}

template <typename T>
std::string BytesOf(const std::vector<T>& values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
}

std::string Write(const TempDir& dir, const onnx::TensorProto& proto,
                  const std::string& name = "t.pb") {
  std::string path = dir / name;
  WriteStringToFile(path, proto.SerializeAsString());
  return path;
}

TEST(TensorProtoTest, ReadsOnnxTestDataLikeNumpyHelper) {
  TempDir dir;
  std::string input = OnnxAddTestDir() + "/test_data_set_0/input_0.pb";
  auto py = RunPython(
      "import numpy as np, onnx\nfrom onnx import numpy_helper\n"
      "t = onnx.TensorProto()\nt.ParseFromString(open('" +
          input +
          "', 'rb').read())\n"
          "np.save('expected.npy', numpy_helper.to_array(t))\n",
      dir.path());
  ASSERT_EQ(py.exit_code, 0) << py.err;
  auto expected = ReadNpy(dir / "expected.npy");
  ASSERT_TRUE(expected.ok()) << expected.status().ToString();
  auto actual = ReadTensorProto(input);
  ASSERT_TRUE(actual.ok()) << actual.status().ToString();
  EXPECT_EQ(actual->dtype(), DataType::kFloat32);
  EXPECT_EQ(actual->shape(), (std::vector<int64_t>{3, 4, 5}));
  EXPECT_EQ(actual->dtype(), expected->dtype());
  EXPECT_EQ(actual->shape(), expected->shape());
  EXPECT_EQ(RawBytes(*actual), RawBytes(*expected));
  // And through the extension dispatch.
  auto by_extension = ReadTensorFile(input);
  ASSERT_TRUE(by_extension.ok());
  EXPECT_EQ(RawBytes(*by_extension), RawBytes(*expected));
}

// The onnx package writes each dtype both as raw_data and in its typed field; numpy_helper says
// what the values are.
TEST(TensorProtoTest, ReadsRawAndTypedFieldsWrittenByOnnxPython) {
  TempDir dir;
  auto py = RunPython(R"PY(
import numpy as np, onnx
from onnx import helper, numpy_helper, TensorProto as TP
cases = {
  'float': (TP.FLOAT, [1.5, -2.25, 3e38, 0.0, -0.0, 1e-40]),
  'double': (TP.DOUBLE, [1.5, -2.25, 1e300, 5e-324, 0.0, 7.0]),
  'int8': (TP.INT8, [-128, -1, 0, 1, 100, 127]),
  'uint8': (TP.UINT8, [0, 1, 2, 128, 254, 255]),
  'int16': (TP.INT16, [-32768, -1, 0, 1, 1000, 32767]),
  'uint16': (TP.UINT16, [0, 1, 2, 32768, 65534, 65535]),
  'int32': (TP.INT32, [-2147483648, -1, 0, 1, 7, 2147483647]),
  'int64': (TP.INT64, [-9223372036854775808, -1, 0, 1, 7, 9223372036854775807]),
  'uint32': (TP.UINT32, [0, 1, 2, 3, 2147483648, 4294967295]),
  'uint64': (TP.UINT64, [0, 1, 2, 3, 9223372036854775808, 18446744073709551615]),
  'bool': (TP.BOOL, [True, False, True, True, False, False]),
  'float16': (TP.FLOAT16, [0.5, -2.0, 65504.0, 6e-8, 0.0, 1.0]),
}
with open('manifest.txt', 'w') as m:
  for name, (dtype, values) in cases.items():
    for raw in (False, True):
      vals = values
      if raw:
        np_type = helper.tensor_dtype_to_np_dtype(dtype) if hasattr(helper, 'tensor_dtype_to_np_dtype') else onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[dtype]
        vals = np.array(values, dtype=np_type).tobytes()
      t = helper.make_tensor(name, dtype, [2, 3], vals, raw=raw)
      file = '%s_%s' % (name, 'raw' if raw else 'typed')
      open(file + '.pb', 'wb').write(t.SerializeToString())
      np.save(file + '.npy', numpy_helper.to_array(t))
      m.write(file + '\n')
)PY",
                      dir.path());
  ASSERT_EQ(py.exit_code, 0) << py.err;
  std::istringstream manifest(ReadFileToString(dir / "manifest.txt"));
  std::string name;
  int cases = 0;
  while (manifest >> name) {
    SCOPED_TRACE(name);
    auto expected = ReadNpy(dir / (name + ".npy"));
    ASSERT_TRUE(expected.ok()) << expected.status().ToString();
    auto actual = ReadTensorProto(dir / (name + ".pb"));
    ASSERT_TRUE(actual.ok()) << actual.status().ToString();
    EXPECT_EQ(actual->dtype(), expected->dtype());
    EXPECT_EQ(actual->shape(), (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(RawBytes(*actual), RawBytes(*expected));
    ++cases;
  }
  EXPECT_EQ(cases, 24);
}

TEST(TensorProtoTest, TypedFieldsBuiltInCpp) {
  TempDir dir;
  {
    onnx::TensorProto p;
    p.set_data_type(onnx::TensorProto_DataType_BFLOAT16);
    p.add_dims(2);
    p.add_int32_data(0x3f80);  // 1.0
    p.add_int32_data(0xc000);  // -2.0
    auto t = ReadTensorProto(Write(dir, p));
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    EXPECT_EQ(t->dtype(), DataType::kBFloat16);
    EXPECT_EQ(RawBytes(*t), BytesOf(std::vector<uint16_t>{0x3f80, 0xc000}));
  }
  {
    onnx::TensorProto p;  // 0-d scalar
    p.set_data_type(onnx::TensorProto_DataType_INT64);
    p.add_int64_data(-5);
    auto t = ReadTensorProto(Write(dir, p));
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    EXPECT_TRUE(t->shape().empty());
    EXPECT_EQ(RawBytes(*t), BytesOf(std::vector<int64_t>{-5}));
  }
  {
    onnx::TensorProto p;  // zero-size tensor without any data field
    p.set_data_type(onnx::TensorProto_DataType_FLOAT);
    p.add_dims(3);
    p.add_dims(0);
    auto t = ReadTensorProto(Write(dir, p));
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    EXPECT_EQ(t->shape(), (std::vector<int64_t>{3, 0}));
    EXPECT_EQ(t->byte_size(), 0u);
  }
}

class TensorProtoErrorTest : public ::testing::Test {
 protected:
  onnx::TensorProto Float23() {
    onnx::TensorProto p;
    p.set_name("w");
    p.set_data_type(onnx::TensorProto_DataType_FLOAT);
    p.add_dims(2);
    p.add_dims(3);
    return p;
  }
  std::string ErrorFor(const onnx::TensorProto& proto, StatusCode code) {
    return ErrorForBytes(proto.SerializeAsString(), code);
  }
  std::string ErrorForBytes(const std::string& bytes, StatusCode code) {
    WriteStringToFile(path_, bytes);
    auto t = ReadTensorProto(path_);
    if (t.ok()) return "";
    EXPECT_EQ(t.status().code(), code) << t.status().ToString();
    return t.status().message();
  }

  TempDir dir_;
  std::string path_ = dir_ / "bad.pb";
  std::string w_ = "'" + path_ + "' (tensor 'w'): ";
};

TEST_F(TensorProtoErrorTest, ExternalData) {
  onnx::TensorProto p = Float23();
  p.set_data_location(onnx::TensorProto_DataLocation_EXTERNAL);
  auto* entry = p.add_external_data();
  entry->set_key("location");
  entry->set_value("weights.bin");
  EXPECT_EQ(ErrorFor(p, StatusCode::kUnsupported),
            w_ + "data is stored externally (location 'weights.bin'); tensor files with external "
                 "data are not supported");
}

TEST_F(TensorProtoErrorTest, NotATensorProto) {
  EXPECT_EQ(ErrorForBytes("", StatusCode::kCorrupt),
            "'" + path_ + "': TensorProto has no data_type (is this a TensorProto file?)");
  EXPECT_EQ(ErrorForBytes("\x93NUMPY\x01\x00 this is not a protobuf", StatusCode::kCorrupt),
            "'" + path_ + "': not a serialized ONNX TensorProto (protobuf parsing failed)");
}

TEST_F(TensorProtoErrorTest, DecoderErrorsNameTheFileAndTheTensor) {
  onnx::TensorProto p = Float23();
  p.set_raw_data(std::string(20, '\0'));
  EXPECT_EQ(ErrorFor(p, StatusCode::kCorrupt),
            w_ + "raw_data has 20 bytes; shape [2,3] of float32 needs 24");
  p = Float23();
  p.clear_dims();
  p.add_dims(4611686018427387904);
  p.add_dims(4);
  EXPECT_EQ(ErrorFor(p, StatusCode::kCorrupt),
            w_ + "shape [4611686018427387904,4] of float32 is too large");
  p = Float23();
  p.set_data_type(onnx::TensorProto_DataType_INT8);
  p.clear_dims();
  p.add_dims(2);
  p.add_int32_data(5);
  p.add_int32_data(300);
  EXPECT_EQ(ErrorFor(p, StatusCode::kCorrupt), w_ + "int32_data[1] = 300 is out of range for int8");
}

TEST_F(TensorProtoErrorTest, UnnamedTensorMessagesNameOnlyTheFile) {
  onnx::TensorProto p = Float23();
  p.clear_name();
  p.set_raw_data("x");
  EXPECT_EQ(ErrorFor(p, StatusCode::kCorrupt),
            "'" + path_ + "': raw_data has 1 bytes; shape [2,3] of float32 needs 24");
}

TEST_F(TensorProtoErrorTest, MissingFile) {
  auto t = ReadTensorProto(dir_ / "missing.pb");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(t.status().message(), HasSubstr("missing.pb': file not found"));
}

}  // namespace
}  // namespace epctx
