// String tensors in .npy files: NumPy's unicode ('<U<n>', '>U<n>') and byte ('|S<n>') arrays read
// into UTF-8 strings, string tensors written as '<U<n>' byte for byte as NumPy writes them, and
// the exact errors for bad code points, bad UTF-8 and malformed string dtypes.

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "epctx/tensor_io.h"
#include "io/npy_test_helpers.h"
#include "tools/tools_test_helpers.h"

namespace epctx {
namespace {

using npy_testing::NpyFile;
using ::testing::StartsWith;
using tools_testing::ReadFileToString;
using tools_testing::RunPython;
using tools_testing::TempDir;
using tools_testing::WriteStringToFile;

std::vector<std::string> Strings(const Tensor& t) {
  const std::string* p = t.data_as<std::string>();
  return std::vector<std::string>(p, p + t.element_count());
}

Tensor StringTensor(std::vector<int64_t> shape, const std::vector<std::string>& values) {
  auto t = Tensor::Allocate(DataType::kString, std::move(shape));
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(static_cast<size_t>(t->element_count()), values.size());
  for (size_t i = 0; i < values.size(); ++i) t->mutable_data_as<std::string>()[i] = values[i];
  return std::move(t).value();
}

std::string Utf32(const std::vector<uint32_t>& code_points) {
  std::string out;
  for (uint32_t c : code_points) {
    for (int b = 0; b < 4; ++b) out += static_cast<char>((c >> (8 * b)) & 0xff);
  }
  return out;
}

// Cases NumPy writes; for each, `<name>.npy` and `<name>.expected`: the elements as NumPy reads
// them back, encoded UTF-8 (bytes as they are for '|S'), each as a 4-byte length and the bytes.
// The manifest says whether writing what was read must give NumPy's file again (only for '<U'
// arrays whose width is their longest element, which is how both write).
constexpr char kNumPyCases[] = R"PY(
import numpy as np, struct
cases = {
  'ascii': (np.array(['ab', 'c', '']), 1),
  'matrix': (np.array([['one', 'two', 'three'], ['4', '', 'six']]), 1),
  'scalar': (np.array('héllo wörld'), 1),
  'empty': (np.array([], dtype=str), 1),
  'empty_2d': (np.zeros((2, 0), dtype='<U3'), 0),
  'all_empty': (np.array(['', '']), 1),
  'unicode': (np.array(['\u00e9', '\u4e2d\u6587', '\U0001F600x', '\U0010FFFF', '\x7f\x80']), 1),
  'inner_nul': (np.array(['a\x00b', 'c']), 1),
  'trailing_nul': (np.array(['a\x00', 'bc']), 0),  # NumPy keeps '<U2', reads 'a'
  'wide': (np.array(['x', 'y'], dtype='<U7'), 0),
  'big_endian': (np.array(['\u00e9t\u00e9', 'a'], dtype='>U3'), 0),
  'bytes': (np.array([b'ab', b'c\x00d', b'\xff\xfe', b'']), 0),
}
with open('manifest.txt', 'w') as m:
  for name, (a, exact) in cases.items():
    np.save(name + '.npy', a)
    with open(name + '.expected', 'wb') as f:
      for item in np.load(name + '.npy').reshape(-1).tolist():
        raw = item if isinstance(item, bytes) else item.encode('utf-8')
        f.write(struct.pack('<I', len(raw)) + raw)
    m.write('%s [%s] %d\n' % (name, ','.join(str(d) for d in a.shape), exact))
  for version in [(2, 0), (3, 0)]:
    name = 'v%d' % version[0]
    with open(name + '.npy', 'wb') as f:
      np.lib.format.write_array(f, np.array(['v', 'er\u00df']), version=version)
    with open(name + '.expected', 'wb') as f:
      for s in ['v', 'er\u00df']:
        f.write(struct.pack('<I', len(s.encode())) + s.encode())
    m.write('%s [2] 0\n' % name)
)PY";

std::vector<std::string> ReadExpected(const std::string& path) {
  std::string bytes = ReadFileToString(path);
  std::vector<std::string> out;
  size_t at = 0;
  while (at + 4 <= bytes.size()) {
    uint32_t length = 0;
    for (int b = 0; b < 4; ++b)
      length |= static_cast<uint32_t>(static_cast<uint8_t>(bytes[at + b])) << (8 * b);
    at += 4;
    out.push_back(bytes.substr(at, length));
    at += length;
  }
  EXPECT_EQ(at, bytes.size());
  return out;
}

TEST(NpyStringTest, ReadsNumPyStringArraysAndWritesThemBackByteForByte) {
  TempDir dir;
  auto py = RunPython(kNumPyCases, dir.path());
  ASSERT_EQ(py.exit_code, 0) << py.err;
  std::istringstream manifest(ReadFileToString(dir / "manifest.txt"));
  std::string name, shape;
  int exact = 0;
  int cases = 0, exact_cases = 0;
  while (manifest >> name >> shape >> exact) {
    SCOPED_TRACE(name);
    auto t = ReadNpy(dir / (name + ".npy"));
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    EXPECT_EQ(t->dtype(), DataType::kString);
    EXPECT_EQ(ShapeToString(t->shape()), shape);
    EXPECT_EQ(Strings(*t), ReadExpected(dir / (name + ".expected")));
    ++cases;
    if (name == "bytes") continue;  // not UTF-8, so not writable as '<U'
    ASSERT_TRUE(WriteNpy(dir / "again.npy", *t).ok());
    if (exact) {
      EXPECT_EQ(ReadFileToString(dir / "again.npy"), ReadFileToString(dir / (name + ".npy")));
      ++exact_cases;
    }
    auto again = ReadNpy(dir / "again.npy");
    ASSERT_TRUE(again.ok()) << again.status().ToString();
    EXPECT_EQ(Strings(*again), Strings(*t));
    EXPECT_EQ(again->shape(), t->shape());
  }
  EXPECT_EQ(cases, 14);
  EXPECT_EQ(exact_cases, 7);
}

// epctx writes the files; NumPy must read the same strings back.
TEST(NpyStringTest, NumPyReadsStringTensorsWrittenByEpctx) {
  TempDir dir;
  ASSERT_TRUE(WriteNpy(dir / "a.npy",
                       StringTensor({2, 2}, {"", "x", "\xc3\xa9t\xc3\xa9", "\xf0\x9f\x98\x80 ok"}))
                  .ok());
  ASSERT_TRUE(WriteNpy(dir / "s.npy", StringTensor({}, {"scalar"})).ok());
  ASSERT_TRUE(WriteNpy(dir / "e.npy", StringTensor({0, 3}, {})).ok());
  ASSERT_TRUE(WriteNpy(dir / "z.npy", StringTensor({2}, {"", ""})).ok());
  ASSERT_TRUE(WriteNpy(dir / "n.npy", StringTensor({1}, {std::string("a\0b", 3)})).ok());
  auto py = RunPython(R"PY(
import numpy as np
a = np.load('a.npy'); assert a.dtype == np.dtype('<U4') and a.shape == (2, 2), a
assert a.tolist() == [['', 'x'], ['\u00e9t\u00e9', '\U0001F600 ok']], a
s = np.load('s.npy'); assert s.dtype == np.dtype('<U6') and s.shape == () and s[()] == 'scalar', s
e = np.load('e.npy'); assert e.dtype == np.dtype('<U1') and e.shape == (0, 3), e
z = np.load('z.npy'); assert z.dtype == np.dtype('<U1') and z.tolist() == ['', ''], z
n = np.load('n.npy'); assert n.tolist() == ['a\x00b'], n
)PY",
                      dir.path());
  EXPECT_EQ(py.exit_code, 0) << py.err;
}

class NpyStringErrorTest : public npy_testing::NpyErrorFixture {
 protected:
  static std::string Header(const std::string& descr, const std::string& shape) {
    return "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  }
};

TEST_F(NpyStringErrorTest, CodePointsThatAreNotUnicode) {
  EXPECT_EQ(ErrorFor(NpyFile(Header("<U2", "(2,)"), Utf32({'a', 'b', 'c', 0xD800})),
                     StatusCode::kCorrupt),
            p_ + "element 1 has the code point 0xD800 at character 1, which is a UTF-16 "
                 "surrogate; .npy unicode data must be Unicode code points");
  EXPECT_EQ(ErrorFor(NpyFile(Header("<U1", "()"), Utf32({0x110000})), StatusCode::kCorrupt),
            p_ + "element 0 has the code point 0x110000 at character 0, which is beyond "
                 "U+10FFFF; .npy unicode data must be Unicode code points");
  EXPECT_EQ(ErrorFor(NpyFile(Header("<U1", "()"), Utf32({0xFFFFFFFF})), StatusCode::kCorrupt),
            p_ + "element 0 has the code point 0xFFFFFFFF at character 0, which is beyond "
                 "U+10FFFF; .npy unicode data must be Unicode code points");
  // Big-endian: the same code point read the other way round.
  EXPECT_EQ(ErrorFor(NpyFile(Header(">U1", "(1,)"), std::string("\x00\x00\xDF\xFF", 4)),
                     StatusCode::kCorrupt),
            p_ + "element 0 has the code point 0xDFFF at character 0, which is a UTF-16 "
                 "surrogate; .npy unicode data must be Unicode code points");
  // A bad code point in the padding position is still a code point, not padding.
  EXPECT_EQ(ErrorFor(NpyFile(Header("<U2", "(1,)"), Utf32({0, 0xDC00})), StatusCode::kCorrupt),
            p_ + "element 0 has the code point 0xDC00 at character 1, which is a UTF-16 "
                 "surrogate; .npy unicode data must be Unicode code points");
  // The largest code point and the ones around the surrogates are fine.
  WriteStringToFile(path_, NpyFile(Header("<U3", "()"), Utf32({0xD7FF, 0xE000, 0x10FFFF})));
  auto ok = ReadNpy(path_);
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(Strings(*ok), (std::vector<std::string>{"\xed\x9f\xbf\xee\x80\x80\xf4\x8f\xbf\xbf"}));
}

TEST_F(NpyStringErrorTest, MalformedStringDtypes) {
  EXPECT_EQ(ErrorFor(NpyFile(Header("<U0", "(2,)"), ""), StatusCode::kCorrupt),
            p_ + "dtype '<U0' has elements of width 0 (NumPy writes <U1)");
  EXPECT_EQ(ErrorFor(NpyFile(Header("|S0", "(99999999999,)"), ""), StatusCode::kCorrupt),
            p_ + "dtype '|S0' has elements of width 0 (NumPy writes |S1)");
  EXPECT_EQ(ErrorFor(NpyFile(Header("<U16777217", "()"), ""), StatusCode::kUnsupported),
            p_ + "dtype '<U16777217': string elements wider than 16777216 characters are not "
                 "supported");
  EXPECT_EQ(ErrorFor(NpyFile(Header("|S999999999", "()"), ""), StatusCode::kUnsupported),
            p_ + "dtype '|S999999999': string elements wider than 16777216 bytes are not "
                 "supported");
  for (const char* descr : {"<U", "|U3", "<U3x", "<U-1", "<U 3", "<U9999999999", "U3"}) {
    SCOPED_TRACE(descr);
    EXPECT_THAT(ErrorFor(NpyFile(Header(descr, "(1,)"), "abcd"), StatusCode::kUnsupported),
                StartsWith(p_ + "dtype '" + descr + "' is not supported; supported dtypes: "));
  }
  EXPECT_THAT(ErrorFor(NpyFile(Header("<f", "(1,)"), "abcd"), StatusCode::kUnsupported),
              ::testing::EndsWith(", '<U<n>' and '>U<n>' (string), '|S<n>' (string of bytes)"));
}

TEST_F(NpyStringErrorTest, TruncatedAndOversizedStringData) {
  EXPECT_EQ(ErrorFor(NpyFile(Header("<U2", "(2,)"), Utf32({'a', 'b', 'c'})), StatusCode::kCorrupt),
            p_ + "data is truncated: shape [2] of string '<U2' needs 16 data bytes, the file has "
                 "12");
  EXPECT_EQ(ErrorFor(NpyFile(Header("|S3", "(2,)"), "abcdefg"), StatusCode::kCorrupt),
            p_ + "unexpected bytes after the data: shape [2] of string '|S3' needs 6 data bytes, "
                 "the file has 7");
  EXPECT_EQ(ErrorFor(NpyFile(Header("<U4", "(4611686018427387904,)"), ""), StatusCode::kCorrupt),
            p_ + "shape [4611686018427387904] of string '<U4' is too large");
  // A huge count of empty arrays is fine: nothing is read or allocated per element.
  WriteStringToFile(path_, NpyFile(Header("<U4", "(0, 4611686018427387904)"), ""));
  auto empty = ReadNpy(path_);
  ASSERT_TRUE(empty.ok()) << empty.status().ToString();
  EXPECT_EQ(empty->element_count(), 0);
}

TEST(NpyStringWriteTest, InvalidUtf8IsRefusedNamingTheElement) {
  TempDir dir;
  std::string path = dir / "x.npy";
  const std::pair<std::string, std::string> cases[] = {
      {"\xff", "byte 0 is 0xFF"},
      {"ok\xc3", "byte 2 is 0xC3"},            // truncated sequence
      {"\xc0\xaf", "byte 0 is 0xC0"},          // overlong '/'
      {"ab\xed\xa0\x80", "byte 2 is 0xED"},    // a surrogate in UTF-8
      {"\xf4\x90\x80\x80", "byte 0 is 0xF4"},  // beyond U+10FFFF
      {"\xe2\x82", "byte 0 is 0xE2"},          // truncated at the end
      {"a\x80", "byte 1 is 0x80"},             // a continuation byte alone
  };
  for (const auto& [bad, where] : cases) {
    SCOPED_TRACE(where);
    Status s = WriteNpy(path, StringTensor({3}, {"fine", "\xc3\xa9", bad}));
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(s.message(), "'" + path + "': element 2 of the string tensor is not valid UTF-8 (" +
                               where + "); .npy '<U' arrays hold Unicode text");
    EXPECT_FALSE(std::filesystem::exists(path));
  }
}

TEST(NpyStringWriteTest, SequencesAndEmptyOptionalsAreNotNpyFiles) {
  TempDir dir;
  std::string path = dir / "x.npy";
  Status s = WriteNpy(path, Tensor::Sequence(DataType::kString, {StringTensor({1}, {"a"})}));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "'" + path + "': cannot write a sequence as .npy (only a tensor)");
  s = WriteNpy(path, Tensor::None(DataType::kFloat32));
  EXPECT_EQ(s.message(), "'" + path + "': cannot write an empty optional as .npy (only a tensor)");
}

}  // namespace
}  // namespace epctx
