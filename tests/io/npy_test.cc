// .npy reading and writing: round trips, files written by NumPy, files NumPy must read, and the
// exact errors for files that cannot be read.

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "epctx/tensor_io.h"
#include "io/npy_test_helpers.h"
#include "tools/tools_test_helpers.h"

namespace epctx {
namespace {

using npy_testing::NpyFile;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using tools_testing::ReadFileToString;
using tools_testing::RunPython;
using tools_testing::TempDir;
using tools_testing::WriteStringToFile;

std::string Bytes(const Tensor& t) {
  return std::string(static_cast<const char*>(t.data()), t.byte_size());
}

Tensor PatternTensor(DataType dtype, std::vector<int64_t> shape, uint32_t seed) {
  auto t = Tensor::Allocate(dtype, std::move(shape));
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  std::mt19937 rng(seed);
  auto* p = static_cast<unsigned char*>(t->mutable_data());
  for (size_t i = 0; i < t->byte_size(); ++i) p[i] = static_cast<unsigned char>(rng());
  // Bools are 0 or 1 (a file holding other bytes is refused: values_that_lie_test.cc).
  if (dtype == DataType::kBool) {
    for (size_t i = 0; i < t->byte_size(); ++i) p[i] &= 1;
  }
  return std::move(t).value();
}

const DataType kNpyTypes[] = {DataType::kFloat32, DataType::kFloat64, DataType::kFloat16,
                              DataType::kInt8,    DataType::kInt16,   DataType::kInt32,
                              DataType::kInt64,   DataType::kUint8,   DataType::kUint16,
                              DataType::kUint32,  DataType::kUint64,  DataType::kBool};

const std::vector<int64_t> kShapes[] = {{},  {0},    {3, 0, 2},    {1},
                                        {7}, {2, 3}, {2, 3, 4, 5}, {1, 1, 1}};

TEST(NpyTest, RoundTripIsByteExactForEveryDtypeAndShape) {
  TempDir dir;
  uint32_t seed = 1;
  for (DataType dtype : kNpyTypes) {
    for (const auto& shape : kShapes) {
      SCOPED_TRACE(DataTypeName(dtype) + " " + ShapeToString(shape));
      Tensor original = PatternTensor(dtype, shape, seed++);
      std::string path = dir / "t.npy";
      ASSERT_TRUE(WriteNpy(path, original).ok());
      auto read = ReadNpy(path);
      ASSERT_TRUE(read.ok()) << read.status().ToString();
      EXPECT_EQ(read->dtype(), dtype);
      EXPECT_EQ(read->shape(), shape);
      EXPECT_EQ(Bytes(*read), Bytes(original));

      // Writing what was read gives the same file again.
      std::string first = ReadFileToString(path);
      ASSERT_TRUE(WriteNpy(dir / "again.npy", *read).ok());
      EXPECT_EQ(ReadFileToString(dir / "again.npy"), first);
      EXPECT_EQ(first.size() % 64, Bytes(original).size() % 64);  // data starts 64-aligned
    }
  }
}

TEST(NpyTest, WritesNumPyStyleHeader) {
  TempDir dir;
  Tensor t = PatternTensor(DataType::kFloat32, {2, 3}, 7);
  ASSERT_TRUE(WriteNpy(dir / "a.npy", t).ok());
  std::string file = ReadFileToString(dir / "a.npy");
  std::string expected_header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  ASSERT_EQ(file.size(), 128u + 24u);
  EXPECT_EQ(file.substr(0, 10), std::string("\x93NUMPY\x01\x00\x76\x00", 10));
  EXPECT_EQ(file.substr(10, expected_header.size()), expected_header);
  EXPECT_EQ(file.substr(10 + expected_header.size(), 117 - expected_header.size()),
            std::string(117 - expected_header.size(), ' '));
  EXPECT_EQ(file[127], '\n');
  EXPECT_EQ(file.substr(128), Bytes(t));

  ASSERT_TRUE(WriteNpy(dir / "b.npy", PatternTensor(DataType::kInt64, {5}, 1)).ok());
  EXPECT_THAT(ReadFileToString(dir / "b.npy"), HasSubstr("'shape': (5,), }"));
  ASSERT_TRUE(WriteNpy(dir / "c.npy", PatternTensor(DataType::kBool, {}, 1)).ok());
  EXPECT_THAT(ReadFileToString(dir / "c.npy"),
              HasSubstr("{'descr': '|b1', 'fortran_order': False, 'shape': (), }"));
}

TEST(NpyTest, WriteReplacesAnExistingFileAndLeavesNoTemporaries) {
  TempDir dir;
  WriteStringToFile(dir / "x.npy", "old contents");
  Tensor t = PatternTensor(DataType::kUint8, {3}, 3);
  ASSERT_TRUE(WriteNpy(dir / "x.npy", t).ok());
  auto read = ReadNpy(dir / "x.npy");
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(Bytes(*read), Bytes(t));
  size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    (void)entry;
    ++files;
  }
  EXPECT_EQ(files, 1u);
}

TEST(NpyTest, WriteErrors) {
  TempDir dir;
  std::string path = dir / "x.npy";
  Status s = WriteNpy(path, PatternTensor(DataType::kBFloat16, {2}, 1));
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  EXPECT_EQ(s.message(),
            "'" + path + "': a bfloat16 tensor cannot be written as .npy (NumPy has no bfloat16)");
  s = WriteNpy(path, Tensor());
  EXPECT_EQ(s.message(), "'" + path + "': cannot write an empty (undefined) tensor");
  s = WriteNpy(dir / "no/such/dir/x.npy", PatternTensor(DataType::kFloat32, {2}, 1));
  EXPECT_EQ(s.code(), StatusCode::kIoError);
  EXPECT_THAT(s.message(), HasSubstr("no/such/dir/x.npy"));
  EXPECT_FALSE(std::filesystem::exists(path));
}

// NumPy writes the files; epctx must read the same dtype, shape and bytes.
TEST(NpyTest, ReadsFilesWrittenByNumPy) {
  TempDir dir;
  auto py = RunPython(R"PY(
import numpy as np
cases = {
  'f4': np.arange(6, dtype='<f4').reshape(2, 3) / 7,
  'f8': np.linspace(-1, 1, 4),
  'f2': np.array([0.5, -2, 65504, 6e-8], dtype='<f2'),
  'i8_scalar': np.array(-123456789012, dtype='<i8'),
  'i4_empty': np.zeros((0, 3), dtype='<i4'),
  'i2': np.arange(-4, 4, dtype='<i2').reshape(2, 2, 2),
  'i1': np.array([-128, -1, 0, 1, 127], dtype='i1'),
  'u1': np.arange(9, dtype='u1').reshape(3, 3),
  'u2': np.array([0, 65535], dtype='<u2'),
  'u4': np.array([0, 4294967295], dtype='<u4'),
  'u8': np.array([0, 18446744073709551615], dtype='<u8'),
  'b1': np.array([True, False, True, True]),
  'strided': np.arange(24, dtype='<f4').reshape(4, 6)[:, ::2],  # saved in C order
  'big_shape': np.zeros((1, 1, 1, 1, 1, 1, 1, 2), dtype='<f4'),
}
names = {'f4': 'float32', 'f8': 'float64', 'f2': 'float16', 'i8': 'int64', 'i4': 'int32',
         'i2': 'int16', 'i1': 'int8', 'u1': 'uint8', 'u2': 'uint16', 'u4': 'uint32',
         'u8': 'uint64', 'b1': 'bool'}
with open('manifest.txt', 'w') as m:
  def emit(name, a):
    open(name + '.bin', 'wb').write(a.tobytes(order='C'))
    m.write('%s %s [%s]\n' % (name, names[a.dtype.str[1:]], ','.join(str(d) for d in a.shape)))
  for name, a in cases.items():
    np.save(name + '.npy', a)
    emit(name, a)
  for version in [(1, 0), (2, 0), (3, 0)]:
    name = 'v%d' % version[0]
    a = np.arange(10, dtype='<f4').reshape(2, 5)
    with open(name + '.npy', 'wb') as f:
      np.lib.format.write_array(f, a, version=version)
    emit(name, a)
)PY",
                      dir.path());
  ASSERT_EQ(py.exit_code, 0) << py.err;
  std::istringstream manifest(ReadFileToString(dir / "manifest.txt"));
  std::string name, dtype, shape;
  int cases = 0;
  while (manifest >> name >> dtype >> shape) {
    SCOPED_TRACE(name);
    auto t = ReadNpy(dir / (name + ".npy"));
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    EXPECT_EQ(DataTypeName(t->dtype()), dtype);
    EXPECT_EQ(ShapeToString(t->shape()), shape);
    EXPECT_EQ(Bytes(*t), ReadFileToString(dir / (name + ".bin")));
    ++cases;
  }
  EXPECT_EQ(cases, 17);
}

// epctx writes the files; NumPy must read the values back.
TEST(NpyTest, NumPyReadsFilesWrittenByEpctx) {
  TempDir dir;
  auto f = Tensor::Allocate(DataType::kFloat32, {2, 3});
  ASSERT_TRUE(f.ok());
  for (int i = 0; i < 6; ++i) f->mutable_data_as<float>()[i] = static_cast<float>(i) * 0.25f;
  ASSERT_TRUE(WriteNpy(dir / "f.npy", *f).ok());
  auto s = Tensor::Allocate(DataType::kInt64, {});
  ASSERT_TRUE(s.ok());
  *s->mutable_data_as<int64_t>() = -42;
  ASSERT_TRUE(WriteNpy(dir / "s.npy", *s).ok());
  auto b = Tensor::Allocate(DataType::kBool, {0, 4});
  ASSERT_TRUE(b.ok());
  ASSERT_TRUE(WriteNpy(dir / "b.npy", *b).ok());
  auto h = Tensor::Allocate(DataType::kFloat16, {2});
  ASSERT_TRUE(h.ok());
  h->mutable_data_as<uint16_t>()[0] = 0x3c00;  // 1.0
  h->mutable_data_as<uint16_t>()[1] = 0xc000;  // -2.0
  ASSERT_TRUE(WriteNpy(dir / "h.npy", *h).ok());

  auto py = RunPython(R"PY(
import numpy as np
f = np.load('f.npy'); assert f.dtype == np.float32 and f.shape == (2, 3), f
assert (f == np.arange(6, dtype=np.float32).reshape(2, 3) * 0.25).all(), f
s = np.load('s.npy'); assert s.dtype == np.int64 and s.shape == () and s == -42, s
b = np.load('b.npy'); assert b.dtype == np.bool_ and b.shape == (0, 4), b
h = np.load('h.npy'); assert h.dtype == np.float16 and list(h) == [1.0, -2.0], h
)PY",
                      dir.path());
  EXPECT_EQ(py.exit_code, 0) << py.err;
}

TEST(NpyTest, ParsesUnusualButValidHeaders) {
  TempDir dir;
  std::string data(24, '\x01');
  const std::string headers[] = {
      // Python 2 longs, keys in another order, double quotes, no trailing comma.
      R"({"shape": (2L, 3L), "fortran_order": False, "descr": "<f4"})",
      // Extra whitespace everywhere, a list for the shape.
      "{ 'descr' : '<f4' ,\n 'fortran_order' : False , 'shape' : [ 2 , 3 ] , }",
      // Native byte order mark.
      "{'descr': '=f4', 'fortran_order': False, 'shape': (2, 3), }",
  };
  for (const std::string& header : headers) {
    SCOPED_TRACE(header);
    WriteStringToFile(dir / "h.npy", NpyFile(header, data));
    auto t = ReadNpy(dir / "h.npy");
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    EXPECT_EQ(t->dtype(), DataType::kFloat32);
    EXPECT_EQ(t->shape(), (std::vector<int64_t>{2, 3}));
  }
  // One-byte types mean the same bytes with any byte-order mark.
  WriteStringToFile(dir / "u.npy",
                    NpyFile("{'descr': '<u1', 'fortran_order': False, 'shape': (3,), }", "abc"));
  auto u = ReadNpy(dir / "u.npy");
  ASSERT_TRUE(u.ok()) << u.status().ToString();
  EXPECT_EQ(u->dtype(), DataType::kUint8);
}

class NpyErrorTest : public npy_testing::NpyErrorFixture {
 protected:
  std::string Header(const std::string& descr, const std::string& fortran,
                     const std::string& shape) {
    return "{'descr': " + descr + ", 'fortran_order': " + fortran + ", 'shape': " + shape + ", }";
  }
};

TEST_F(NpyErrorTest, TruncatedAndOversizedData) {
  std::string header = Header("'<f4'", "False", "(2, 3)");
  EXPECT_EQ(ErrorFor(NpyFile(header, std::string(20, 'x')), StatusCode::kCorrupt),
            p_ + "data is truncated: shape [2,3] of float32 needs 24 data bytes, the file has 20");
  EXPECT_EQ(ErrorFor(NpyFile(header, std::string(25, 'x')), StatusCode::kCorrupt),
            p_ + "unexpected bytes after the data: shape [2,3] of float32 needs 24 data bytes, "
                 "the file has 25");
  EXPECT_EQ(ErrorFor(NpyFile(Header("'<f4'", "False", "(0, 3)"), "x"), StatusCode::kCorrupt),
            p_ + "unexpected bytes after the data: shape [0,3] of float32 needs 0 data bytes, the "
                 "file has 1");
}

TEST_F(NpyErrorTest, TruncatedHeader) {
  std::string full = NpyFile(Header("'<f4'", "False", "(2,)"), std::string(8, 'x'));
  EXPECT_EQ(ErrorFor(full.substr(0, 7), StatusCode::kCorrupt),
            p_ + ".npy file is truncated inside its header");
  EXPECT_EQ(ErrorFor(full.substr(0, 9), StatusCode::kCorrupt),
            p_ + ".npy file is truncated inside its header");
  EXPECT_EQ(ErrorFor(full.substr(0, 40), StatusCode::kCorrupt),
            p_ + ".npy file is truncated: the header declares 118 bytes, the file has 30 after "
                 "the prelude");
  std::string v2 = NpyFile(Header("'<f4'", "False", "(2,)"), "", 2);
  EXPECT_EQ(ErrorFor(v2.substr(0, 11), StatusCode::kCorrupt),
            p_ + ".npy file is truncated inside its header");
}

TEST_F(NpyErrorTest, BadMagicAndVersion) {
  EXPECT_EQ(ErrorFor("", StatusCode::kCorrupt),
            p_ + "not a NumPy .npy file (no \\x93NUMPY magic at the start)");
  EXPECT_EQ(ErrorFor("PK\x03\x04 not numpy at all", StatusCode::kCorrupt),
            p_ + "not a NumPy .npy file (no \\x93NUMPY magic at the start)");
  std::string v4 = NpyFile(Header("'<f4'", "False", "()"), "abcd");
  v4[6] = 4;
  EXPECT_EQ(ErrorFor(v4, StatusCode::kUnsupported),
            p_ + ".npy format version 4.0 is not supported (1.0, 2.0 and 3.0 are)");
  v4[6] = 1;
  v4[7] = 1;
  EXPECT_EQ(ErrorFor(v4, StatusCode::kUnsupported),
            p_ + ".npy format version 1.1 is not supported (1.0, 2.0 and 3.0 are)");
}

TEST_F(NpyErrorTest, MalformedHeaders) {
  EXPECT_EQ(ErrorFor(NpyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), ", ""),
                     StatusCode::kCorrupt),
            p_ + "bad .npy header: unexpected end of the header at offset 118 of the header");
  EXPECT_EQ(ErrorFor(NpyFile("{'descr' '<f4'}", ""), StatusCode::kCorrupt),
            p_ + "bad .npy header: expected ':' after a dict key at offset 9 of the header");
  EXPECT_EQ(ErrorFor(NpyFile("['descr']", ""), StatusCode::kCorrupt),
            p_ + "bad .npy header: not a dict");
  EXPECT_EQ(ErrorFor(NpyFile("{'descr': '<f4', 'shape': (), }", "abcd"), StatusCode::kCorrupt),
            p_ + "bad .npy header: key 'fortran_order' is missing");
  EXPECT_EQ(
      ErrorFor(NpyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (), 'x': 1}", "abcd"),
               StatusCode::kCorrupt),
      p_ + "bad .npy header: unexpected key 'x'");
  EXPECT_EQ(ErrorFor(NpyFile("{'descr': '<f4', 'descr': '<f4'}", ""), StatusCode::kCorrupt),
            p_ + "bad .npy header: key 'descr' appears twice at offset 24 of the header");
  EXPECT_EQ(ErrorFor(NpyFile(Header("'<f4'", "False", "(2, -3)"), ""), StatusCode::kCorrupt),
            p_ + ".npy header 'shape' has '-3' where a non-negative integer belongs");
  EXPECT_EQ(ErrorFor(NpyFile(Header("'<f4'", "False", "(2, 'a')"), ""), StatusCode::kCorrupt),
            p_ + ".npy header 'shape' has 'a' where a non-negative integer belongs");
  EXPECT_EQ(ErrorFor(NpyFile(Header("'<f4'", "False", "3"), ""), StatusCode::kCorrupt),
            p_ + ".npy header 'shape' is not a tuple");
  EXPECT_EQ(ErrorFor(NpyFile(Header("'<f4'", "0", "(3,)"), ""), StatusCode::kCorrupt),
            p_ + "bad .npy header: 'fortran_order' is not True or False");
  EXPECT_EQ(ErrorFor(NpyFile(Header("'<f4'", "False", "(99999999999999999999,)"), ""),
                     StatusCode::kCorrupt),
            p_ + "bad .npy header: integer out of range at offset 69 of the header");
  EXPECT_EQ(ErrorFor(NpyFile(Header("'<f4'", "False", "(4611686018427387904, 4)"), ""),
                     StatusCode::kCorrupt),
            p_ + "shape [4611686018427387904,4] of float32 is too large");
  std::string deep(100, '[');
  EXPECT_EQ(ErrorFor(NpyFile(deep, ""), StatusCode::kCorrupt),
            p_ + "bad .npy header: literal nested too deeply at offset 9 of the header");
}

TEST_F(NpyErrorTest, FortranOrder) {
  auto py = RunPython(
      "import numpy as np\nnp.save('bad.npy', np.asfortranarray(np.zeros((2, 3), np.float32)))\n",
      dir_.path());
  ASSERT_EQ(py.exit_code, 0) << py.err;
  auto t = ReadNpy(path_);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kUnsupported);
  EXPECT_EQ(t.status().message(),
            p_ + "array is in Fortran order (fortran_order: True); only C-order arrays are "
                 "supported (save numpy.ascontiguousarray(a) instead)");
}

TEST_F(NpyErrorTest, UnsupportedDtypesFromNumPy) {
  auto py = RunPython(R"PY(
import numpy as np
np.save('big.npy', np.zeros(3, '>f4'))
np.save('big8.npy', np.zeros(3, '>i8'))
np.save('obj.npy', np.array([1, 'a'], dtype=object), allow_pickle=True)
np.save('rec.npy', np.zeros(2, dtype=[('a', '<f4'), ('b', '<i4')]))
np.save('c8.npy', np.zeros(2, dtype='<c8'))
)PY",
                      dir_.path());
  ASSERT_EQ(py.exit_code, 0) << py.err;
  auto error = [&](const std::string& name) {
    auto t = ReadNpy(dir_ / name);
    EXPECT_FALSE(t.ok());
    EXPECT_EQ(t.status().code(), StatusCode::kUnsupported);
    return t.status().message();
  };
  auto p = [&](const std::string& name) { return fmt::format("'{}': ", dir_ / name); };
  EXPECT_EQ(error("big.npy"), p("big.npy") +
                                  "dtype '>f4' (float32) is big-endian; only little-endian data "
                                  "is supported (convert with array.astype('<f4'))");
  EXPECT_EQ(error("big8.npy"), p("big8.npy") +
                                   "dtype '>i8' (int64) is big-endian; only little-endian data "
                                   "is supported (convert with array.astype('<i8'))");
  EXPECT_EQ(error("obj.npy"), p("obj.npy") +
                                  "dtype '|O' (Python objects, pickled) is not supported; save "
                                  "strings with a '<U' dtype instead (numpy.save(path, "
                                  "array.astype(str)))");
  EXPECT_EQ(error("rec.npy"),
            p("rec.npy") +
                "structured dtype (record fields) is not supported; save a plain numeric array");
  EXPECT_THAT(error("c8.npy"),
              StartsWith(p("c8.npy") + "dtype '<c8' is not supported; supported "
                                       "dtypes: '<f2' (float16), '<f4' (float32)"));
}

TEST_F(NpyErrorTest, MissingFile) {
  auto t = ReadNpy(dir_ / "nope.npy");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(t.status().message(), fmt::format("'{}': file not found", dir_ / "nope.npy"));
}

TEST(TensorFileTest, DispatchesOnTheExtension) {
  TempDir dir;
  Tensor t = PatternTensor(DataType::kInt32, {4}, 9);
  ASSERT_TRUE(WriteNpy(dir / "a.npy", t).ok());
  std::filesystem::copy_file(dir / "a.npy", dir / "A.NPY");
  for (const char* name : {"a.npy", "A.NPY"}) {
    auto read = ReadTensorFile(dir / name);
    ASSERT_TRUE(read.ok()) << read.status().ToString();
    EXPECT_EQ(Bytes(*read), Bytes(t));
  }
  std::filesystem::copy_file(dir / "a.npy", dir / "a.txt");
  auto bad = ReadTensorFile(dir / "a.txt");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().message(),
            fmt::format("'{}': cannot tell the tensor file type from the extension '.txt'; "
                        "expected .npy (NumPy) or .pb (ONNX TensorProto)",
                        dir / "a.txt"));
  // A .npy file named .pb is read as a TensorProto and refused as one.
  std::filesystem::copy_file(dir / "a.npy", dir / "a.pb");
  auto misnamed = ReadTensorFile(dir / "a.pb");
  ASSERT_FALSE(misnamed.ok());
  EXPECT_THAT(misnamed.status().message(), HasSubstr("a.pb"));
}

}  // namespace
}  // namespace epctx
