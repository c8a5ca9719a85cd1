// Tensor files at paths holding a NUL byte: refused, naming the path, instead of reading or
// writing the file named by what precedes the NUL.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <string>

#include "epctx/tensor_io.h"
#include "tools/tools_test_helpers.h"

namespace epctx {
namespace {

using tools_testing::TempDir;

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
