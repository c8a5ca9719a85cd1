// Tensor files whose values lie: bools that are not 0 or 1 (a '|b1' .npy of other bytes, as
// NumPy writes a bool view of any bytes; a .pb with such raw_data) are refused naming the element,
// where they were read as they were (Not of 2 gave 3); and paths holding a NUL byte are refused
// instead of naming the file before the NUL.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cstring>
#include <filesystem>
#include <string>

#include "epctx/tensor_io.h"
#include "io/npy_test_helpers.h"
#include "tools/tools_test_helpers.h"

namespace epctx {
namespace {

using npy_testing::NpyFile;
using tools_testing::RunPython;
using tools_testing::TempDir;
using tools_testing::WriteStringToFile;

std::string BoolFileBytes(const Tensor& t) {
  return std::string(static_cast<const char*>(t.data()), t.byte_size());
}

TEST(BoolFiles, NpyBoolsOtherThanZeroOrOneAreRefused) {
  TempDir dir;
  // NumPy saves a bool view of any bytes as it is, and reads it back the same way.
  auto py = RunPython(R"PY(
import numpy as np
np.save('view.npy', np.array([0, 1, 2, 255], np.uint8).view(np.bool_))
np.save('good.npy', np.array([[True, False], [False, True]]))
)PY",
                      dir.path());
  ASSERT_EQ(py.exit_code, 0) << py.err;
  auto view = ReadNpy(dir / "view.npy");
  ASSERT_FALSE(view.ok());
  EXPECT_EQ(view.status().code(), StatusCode::kCorrupt);
  EXPECT_EQ(view.status().message(),
            "'" + (dir / "view.npy") + "': bool element 2 is 2, not 0 or 1");
  auto good = ReadNpy(dir / "good.npy");
  ASSERT_TRUE(good.ok()) << good.status().ToString();
  EXPECT_EQ(BoolFileBytes(*good), std::string("\x01\x00\x00\x01", 4));

  // Past the first word of eight bytes, and the last byte.
  WriteStringToFile(dir / "long.npy",
                    NpyFile("{'descr': '|b1', 'fortran_order': False, 'shape': (11,), }",
                            std::string(10, '\x01') + '\x80'));
  auto long_bools = ReadTensorFile(dir / "long.npy");
  ASSERT_FALSE(long_bools.ok());
  EXPECT_EQ(long_bools.status().message(),
            "'" + (dir / "long.npy") + "': bool element 10 is 128, not 0 or 1");
}

TEST(BoolFiles, TensorProtoBoolRawDataOtherThanZeroOrOneIsRefused) {
  TempDir dir;
  onnx::TensorProto p;
  p.set_name("mask");
  p.set_data_type(onnx::TensorProto_DataType_BOOL);
  p.add_dims(4);
  p.set_raw_data(std::string("\x00\x01\x02\xff", 4));
  WriteStringToFile(dir / "mask.pb", p.SerializeAsString());
  auto t = ReadTensorFile(dir / "mask.pb");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kCorrupt);
  EXPECT_EQ(
      t.status().message(),
      "'" + (dir / "mask.pb") + "' (tensor 'mask'): raw_data[2] = 2 is out of range for bool");
}

TEST(NulPathFiles, ReadsAndWritesAreRefusedAndWriteNothing) {
  TempDir dir;
  auto bools = Tensor::Allocate(DataType::kBool, {2});
  ASSERT_TRUE(bools.ok());
  std::memset(bools->mutable_data(), 1, 2);
  ASSERT_TRUE(WriteNpy(dir / "x.npy", *bools).ok());
  const std::string nul = (dir / "x.npy") + std::string("\0.pb", 4);
  const std::string message = "path '" + (dir / "x.npy") +
                              "\\0.pb' contains a NUL byte: the system would see only '" +
                              (dir / "x.npy") + "'";
  for (auto read : {ReadNpy(nul), ReadTensorProto(nul), ReadTensorFile(nul),
                    ReadValueProto(nul, ValueKind::kSequence)}) {
    ASSERT_FALSE(read.ok());
    EXPECT_EQ(read.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(read.status().message(), message);
  }
  const std::string out = (dir / "y.npy") + std::string("\0.npy", 5);
  Status written = WriteNpy(out, *bools);
  EXPECT_EQ(written.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(written.message(), "path '" + (dir / "y.npy") +
                                   "\\0.npy' contains a NUL byte: the system would see only '" +
                                   (dir / "y.npy") + "'");
  EXPECT_FALSE(std::filesystem::exists(dir / "y.npy"));
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()), {}), 1);
}

}  // namespace
}  // namespace epctx
