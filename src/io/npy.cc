// NumPy .npy files, read and written: format versions 1.0-3.0, little-endian or byte-order-free
// dtypes, C order; strings as NumPy's fixed-width unicode ('<U<n>', also read big-endian) and
// byte ('|S<n>') arrays, UTF-8 in the tensor.
//
// A .npy file is untrusted input: every size is overflow-checked and compared with the bytes the
// file really has, and every error names the file and what is wrong with it.

#include <algorithm>
#include <bit>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "epctx/tensor_io.h"
#include "io/py_literal.h"
#include "io/tensor_parse.h"
#include "util/file.h"
#include "util/overflow.h"
#include "util/status_macros.h"
#include "util/utf8.h"

namespace epctx {
namespace {

static_assert(std::endian::native == std::endian::little,
              "tensor files are little-endian and are copied without byte swapping");

using io::PyValue;

// ---------------------------------------------------------------------------------------------
// .npy dtypes.

struct NpyType {
  std::string_view descr;  // as written by NumPy on a little-endian machine
  DataType dtype;
};

constexpr NpyType kNpyTypes[] = {
    {"<f2", DataType::kFloat16}, {"<f4", DataType::kFloat32}, {"<f8", DataType::kFloat64},
    {"|i1", DataType::kInt8},    {"<i2", DataType::kInt16},   {"<i4", DataType::kInt32},
    {"<i8", DataType::kInt64},   {"|u1", DataType::kUint8},   {"<u2", DataType::kUint16},
    {"<u4", DataType::kUint32},  {"<u8", DataType::kUint64},  {"|b1", DataType::kBool},
};

// Longest string element read, in characters ('<U') or bytes ('|S'): a limit on what one
// header digit string may ask for, far above any real use.
constexpr uint64_t kMaxNpyStringWidth = uint64_t{1} << 24;

// How a .npy element is stored. Strings are fixed-width and padded with zeros: '<U<n>' (and
// big-endian '>U<n>') as n UTF-32 code points, '|S<n>' as n bytes.
enum class NpyText { kNone, kUtf32Little, kUtf32Big, kBytes };

struct NpyDtype {
  DataType dtype = DataType::kUndefined;
  uint64_t item_size = 0;  // bytes per element
  NpyText text = NpyText::kNone;
  std::string what;  // for messages: "float32", "string '<U5'"
};

std::string SupportedNpyTypeList() {
  std::string out;
  for (const NpyType& t : kNpyTypes) {
    if (!out.empty()) out += ", ";
    out += fmt::format("'{}' ({})", t.descr, DataTypeName(t.dtype));
  }
  return out + ", '<U<n>' and '>U<n>' (string), '|S<n>' (string of bytes)";
}

// A string dtype's descr: order mark, 'U' or 'S', width. nullopt when `descr` is not one.
Result<std::optional<NpyDtype>> NpyStringDescr(const std::string& path, const std::string& descr) {
  if (descr.size() < 3 || (descr[1] != 'U' && descr[1] != 'S')) return std::optional<NpyDtype>();
  std::string_view digits = std::string_view(descr).substr(2);
  if (digits.size() > 9 ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return std::optional<NpyDtype>();
  }
  char order = descr[0];
  bool bytes = descr[1] == 'S';
  // Bytes have no byte order; code points do, and NumPy never writes '|U'.
  if (order != '<' && order != '>' && order != '=' && (bytes ? order != '|' : true)) {
    return std::optional<NpyDtype>();
  }
  uint64_t width = std::stoull(std::string(digits));
  if (width == 0) {
    return EPCTX_ERROR(kCorrupt, "'{}': dtype '{}' has elements of width 0 (NumPy writes {}1)",
                       path, descr, descr.substr(0, 2));
  }
  if (width > kMaxNpyStringWidth) {
    return EPCTX_ERROR(kUnsupported,
                       "'{}': dtype '{}': string elements wider than {} {} are not supported", path,
                       descr, kMaxNpyStringWidth, bytes ? "bytes" : "characters");
  }
  NpyDtype type;
  type.dtype = DataType::kString;
  type.item_size = bytes ? width : 4 * width;
  type.text = bytes ? NpyText::kBytes : order == '>' ? NpyText::kUtf32Big : NpyText::kUtf32Little;
  type.what = fmt::format("string '{}'", descr);
  return std::optional<NpyDtype>(std::move(type));
}

// `descr` is a NumPy type string: byte order ('<' little, '>' big, '|' not applicable, '=' native),
// kind letter, item size.
Result<NpyDtype> ParseNpyDescr(const std::string& path, const std::string& descr) {
  EPCTX_ASSIGN_OR_RETURN(std::optional<NpyDtype> text, NpyStringDescr(path, descr));
  if (text.has_value()) return *std::move(text);
  if (descr.size() >= 2) {
    char order = descr[0];
    std::string_view rest = std::string_view(descr).substr(1);
    if (order == '<' || order == '|' || order == '=' || order == '>') {
      for (const NpyType& t : kNpyTypes) {
        if (t.descr.substr(1) != rest) continue;
        // One-byte types have no byte order, so any order mark describes the same bytes.
        if (DataTypeSize(t.dtype) == 1 || order == '<' || order == '=') {
          return NpyDtype{t.dtype, DataTypeSize(t.dtype), NpyText::kNone, DataTypeName(t.dtype)};
        }
        if (order == '>') {
          return EPCTX_ERROR(kUnsupported,
                             "'{}': dtype '{}' ({}) is big-endian; only little-endian data is "
                             "supported (convert with array.astype('<{}'))",
                             path, descr, DataTypeName(t.dtype), rest);
        }
        break;  // '|' on a multi-byte type: not something NumPy writes
      }
    }
    if (rest.starts_with("O")) {
      return EPCTX_ERROR(kUnsupported,
                         "'{}': dtype '{}' (Python objects, pickled) is not supported; save "
                         "strings with a '<U' dtype instead (numpy.save(path, array.astype(str)))",
                         path, descr);
    }
  }
  return EPCTX_ERROR(kUnsupported, "'{}': dtype '{}' is not supported; supported dtypes: {}", path,
                     descr, SupportedNpyTypeList());
}

Result<std::string_view> DataTypeToNpyDescr(const std::string& path, DataType dtype) {
  for (const NpyType& t : kNpyTypes) {
    if (t.dtype == dtype) return t.descr;
  }
  return EPCTX_ERROR(kUnsupported, "'{}': a {} tensor cannot be written as .npy (NumPy has no {})",
                     path, DataTypeName(dtype), DataTypeName(dtype));
}

// ---------------------------------------------------------------------------------------------
// String elements: fixed-width in the file, UTF-8 std::string in the tensor.

uint32_t LoadCodePoint(const char* p, bool big_endian) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) {
    uint32_t byte = static_cast<uint8_t>(p[i]);
    v |= byte << (8 * (big_endian ? 3 - i : i));
  }
  return v;
}

// `data` holds exactly the elements of `shape`, `type.item_size` bytes each. Trailing zeros of
// an element are padding and dropped, as NumPy does when it reads one.
Result<Tensor> StringTensorFromNpy(const std::string& path, const NpyDtype& type,
                                   std::vector<int64_t> shape, std::string_view data) {
  auto allocated = Tensor::Allocate(DataType::kString, std::move(shape));
  if (!allocated.ok()) {
    return Status(allocated.status().code(),
                  fmt::format("'{}': {}", path, allocated.status().message()));
  }
  Tensor tensor = std::move(allocated).value();
  std::string* out = tensor.mutable_data_as<std::string>();
  const size_t item = static_cast<size_t>(type.item_size);
  for (int64_t i = 0; i < tensor.element_count(); ++i) {
    std::string_view element = data.substr(static_cast<size_t>(i) * item, item);
    if (type.text == NpyText::kBytes) {
      size_t end = element.find_last_not_of('\0');
      out[i] = element.substr(0, end == std::string_view::npos ? 0 : end + 1);
      continue;
    }
    const bool big = type.text == NpyText::kUtf32Big;
    size_t width = item / 4;
    while (width > 0 && LoadCodePoint(element.data() + 4 * (width - 1), big) == 0) --width;
    for (size_t k = 0; k < width; ++k) {
      uint32_t c = LoadCodePoint(element.data() + 4 * k, big);
      if (auto reason = InvalidCodePointReason(c)) {
        return EPCTX_ERROR(kCorrupt,
                           "'{}': element {} has the code point 0x{:X} at character {}, which is "
                           "{}; .npy unicode data must be Unicode code points",
                           path, i, c, k, *reason);
      }
      AppendUtf8(c, &out[i]);
    }
  }
  return tensor;
}

// The '<U<n>' descr and data of a string tensor, n its longest element in code points (at least
// 1, as NumPy writes); an element that is not UTF-8 is an error naming it.
Result<std::pair<std::string, std::string>> NpyStringData(const std::string& path,
                                                          const Tensor& tensor) {
  const std::string* strings = tensor.data_as<std::string>();
  std::vector<std::vector<uint32_t>> code_points(static_cast<size_t>(tensor.element_count()));
  uint64_t width = 1;
  for (size_t i = 0; i < code_points.size(); ++i) {
    size_t bad = 0;
    auto decoded = DecodeUtf8(strings[i], &bad);
    if (!decoded.has_value()) {
      return EPCTX_ERROR(kInvalidArgument,
                         "'{}': element {} of the string tensor is not valid UTF-8 (byte {} is "
                         "0x{:02X}); .npy '<U' arrays hold Unicode text",
                         path, i, bad, static_cast<uint8_t>(strings[i][bad]));
    }
    code_points[i] = *std::move(decoded);
    width = std::max<uint64_t>(width, code_points[i].size());
  }
  uint64_t bytes = 0;
  if (!CheckedByteSize(tensor.shape(), 4 * width, &bytes) || bytes > SIZE_MAX) {
    return EPCTX_ERROR(kInvalidArgument, "'{}': string tensor of shape {} is too large for .npy",
                       path, ShapeToString(tensor.shape()));
  }
  std::string data(static_cast<size_t>(bytes), '\0');
  for (size_t i = 0; i < code_points.size(); ++i) {
    char* p = data.data() + i * 4 * width;
    for (uint32_t c : code_points[i]) {
      for (int b = 0; b < 4; ++b) *p++ = static_cast<char>((c >> (8 * b)) & 0xff);
    }
  }
  return std::pair{fmt::format("<U{}", width), std::move(data)};
}

// ---------------------------------------------------------------------------------------------
// .npy header.

constexpr std::string_view kNpyMagic("\x93NUMPY", 6);

struct NpyHeader {
  NpyDtype type;
  std::vector<int64_t> shape;
  size_t data_offset = 0;
};

uint32_t LoadLittleEndian(const char* p, size_t size) {
  uint32_t v = 0;
  for (size_t i = 0; i < size; ++i)
    v |= static_cast<uint32_t>(static_cast<uint8_t>(p[i])) << (8 * i);
  return v;
}

Result<std::vector<int64_t>> NpyShape(const std::string& path, const PyValue& value) {
  if (value.kind != PyValue::Kind::kTuple && value.kind != PyValue::Kind::kList) {
    return EPCTX_ERROR(kCorrupt, "'{}': .npy header 'shape' is not a tuple", path);
  }
  std::vector<int64_t> shape;
  for (const PyValue& dim : value.items) {
    if (dim.kind != PyValue::Kind::kInt || dim.integer < 0) {
      return EPCTX_ERROR(kCorrupt,
                         "'{}': .npy header 'shape' has '{}' where a non-negative integer belongs",
                         path, dim.text);
    }
    shape.push_back(dim.integer);
  }
  return shape;
}

Result<NpyHeader> ParseNpyHeader(const std::string& path, std::string_view file) {
  if (!file.starts_with(kNpyMagic)) {
    return EPCTX_ERROR(kCorrupt, "'{}': not a NumPy .npy file (no \\x93NUMPY magic at the start)",
                       path);
  }
  if (file.size() < kNpyMagic.size() + 2) {
    return EPCTX_ERROR(kCorrupt, "'{}': .npy file is truncated inside its header", path);
  }
  int major = static_cast<uint8_t>(file[6]);
  int minor = static_cast<uint8_t>(file[7]);
  if (major < 1 || major > 3 || minor != 0) {
    return EPCTX_ERROR(kUnsupported,
                       "'{}': .npy format version {}.{} is not supported (1.0, 2.0 and 3.0 are)",
                       path, major, minor);
  }
  size_t length_size = major == 1 ? 2 : 4;
  size_t prelude = kNpyMagic.size() + 2 + length_size;
  if (file.size() < prelude) {
    return EPCTX_ERROR(kCorrupt, "'{}': .npy file is truncated inside its header", path);
  }
  uint64_t header_len = LoadLittleEndian(file.data() + 8, length_size);
  if (header_len > file.size() - prelude) {
    return EPCTX_ERROR(kCorrupt,
                       "'{}': .npy file is truncated: the header declares {} bytes, the file has "
                       "{} after the prelude",
                       path, header_len, file.size() - prelude);
  }
  std::string_view text = file.substr(prelude, header_len);

  auto parsed = io::ParsePyLiteral(text);
  if (!parsed.ok()) {
    return EPCTX_ERROR(kCorrupt, "'{}': bad .npy header: {}", path, parsed.status().message());
  }
  const PyValue& dict = *parsed;
  if (dict.kind != PyValue::Kind::kDict) {
    return EPCTX_ERROR(kCorrupt, "'{}': bad .npy header: not a dict", path);
  }
  const PyValue* descr = nullptr;
  const PyValue* fortran_order = nullptr;
  const PyValue* shape = nullptr;
  for (size_t i = 0; i < dict.keys.size(); ++i) {
    const std::string& key = dict.keys[i];
    if (key == "descr") {
      descr = &dict.items[i];
    } else if (key == "fortran_order") {
      fortran_order = &dict.items[i];
    } else if (key == "shape") {
      shape = &dict.items[i];
    } else {
      return EPCTX_ERROR(kCorrupt, "'{}': bad .npy header: unexpected key '{}'", path, key);
    }
  }
  for (auto [value, name] : {std::pair{descr, "descr"}, std::pair{fortran_order, "fortran_order"},
                             std::pair{shape, "shape"}}) {
    if (value == nullptr) {
      return EPCTX_ERROR(kCorrupt, "'{}': bad .npy header: key '{}' is missing", path, name);
    }
  }

  NpyHeader header;
  if (descr->kind == PyValue::Kind::kList) {
    return EPCTX_ERROR(kUnsupported,
                       "'{}': structured dtype (record fields) is not supported; save a plain "
                       "numeric array",
                       path);
  }
  if (descr->kind != PyValue::Kind::kString) {
    return EPCTX_ERROR(kCorrupt, "'{}': bad .npy header: 'descr' is not a string", path);
  }
  EPCTX_ASSIGN_OR_RETURN(header.type, ParseNpyDescr(path, descr->text));
  if (fortran_order->kind != PyValue::Kind::kBool) {
    return EPCTX_ERROR(kCorrupt, "'{}': bad .npy header: 'fortran_order' is not True or False",
                       path);
  }
  if (fortran_order->boolean) {
    return EPCTX_ERROR(kUnsupported,
                       "'{}': array is in Fortran order (fortran_order: True); only C-order arrays "
                       "are supported (save numpy.ascontiguousarray(a) instead)",
                       path);
  }
  EPCTX_ASSIGN_OR_RETURN(header.shape, NpyShape(path, *shape));
  header.data_offset = prelude + header_len;
  return header;
}

// Bytes the data of `shape` and `type` take, or an error naming the file when that overflows.
Result<uint64_t> DataByteSize(const std::string& path, const NpyDtype& type,
                              const std::vector<int64_t>& shape) {
  uint64_t bytes = 0;
  if (!CheckedByteSize(shape, type.item_size, &bytes)) {
    return EPCTX_ERROR(kCorrupt, "'{}': shape {} of {} is too large", path, ShapeToString(shape),
                       type.what);
  }
  return bytes;
}

std::string NpyShapeLiteral(const std::vector<int64_t>& shape) {
  std::string out = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) out += ", ";
    out += std::to_string(shape[i]);
  }
  if (shape.size() == 1) out += ',';
  return out + ")";
}

}  // namespace

Result<Tensor> ReadNpy(const std::string& path) {
  EPCTX_ASSIGN_OR_RETURN(std::string file, ReadWholeFile(path));
  return io::ParseNpy(file, path);
}

Result<Tensor> io::ParseNpy(std::string_view file, const std::string& path) {
  EPCTX_ASSIGN_OR_RETURN(NpyHeader header, ParseNpyHeader(path, file));
  EPCTX_ASSIGN_OR_RETURN(uint64_t data_bytes, DataByteSize(path, header.type, header.shape));
  uint64_t available = file.size() - header.data_offset;
  if (available != data_bytes) {
    return EPCTX_ERROR(
        kCorrupt, "'{}': {}: shape {} of {} needs {} data bytes, the file has {}", path,
        available < data_bytes ? "data is truncated" : "unexpected bytes after the data",
        ShapeToString(header.shape), header.type.what, data_bytes, available);
  }
  if (header.type.text != NpyText::kNone) {
    return StringTensorFromNpy(path, header.type, std::move(header.shape),
                               file.substr(header.data_offset));
  }
  return TensorFromBytes(fmt::format("'{}'", path), header.type.dtype, std::move(header.shape),
                         std::as_bytes(std::span(file.substr(header.data_offset))));
}

Status WriteNpy(const std::string& path, const Tensor& tensor) {
  if (tensor.empty()) {
    return EPCTX_ERROR(kInvalidArgument, "'{}': cannot write an empty (undefined) tensor", path);
  }
  if (!tensor.is_tensor()) {
    return EPCTX_ERROR(kInvalidArgument, "'{}': cannot write {} as .npy (only a tensor)", path,
                       tensor.kind() == ValueKind::kSequence ? "a sequence" : "an empty optional");
  }
  for (int64_t d : tensor.shape()) {
    if (d < 0) {
      return EPCTX_ERROR(kInvalidArgument, "'{}': cannot write a tensor of unknown shape {}", path,
                         ShapeToString(tensor.shape()));
    }
  }
  std::string descr;
  std::string string_data;  // string tensors: the fixed-width code points
  std::span<const std::byte> data;
  if (tensor.dtype() == DataType::kString) {
    EPCTX_ASSIGN_OR_RETURN(std::tie(descr, string_data), NpyStringData(path, tensor));
    data = std::as_bytes(std::span(string_data));
  } else {
    EPCTX_ASSIGN_OR_RETURN(std::string_view numeric, DataTypeToNpyDescr(path, tensor.dtype()));
    descr = numeric;
    data = {static_cast<const std::byte*>(tensor.data()), tensor.byte_size()};
  }
  // Format 1.0: magic, version, uint16 header length, then the header padded with spaces and ended
  // by '\n' so that the data starts on a 64-byte boundary, as NumPy does.
  std::string header = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}",
                                   descr, NpyShapeLiteral(tensor.shape()));
  constexpr size_t kPrelude = kNpyMagic.size() + 2 + 2;
  size_t total = (kPrelude + header.size() + 1 + 63) / 64 * 64;
  size_t header_len = total - kPrelude;
  if (header_len > UINT16_MAX) {
    return EPCTX_ERROR(kUnsupported, "'{}': shape {} is too long for a .npy 1.0 header", path,
                       ShapeToString(tensor.shape()));
  }
  header.resize(header_len - 1, ' ');
  header += '\n';
  std::string prelude(kNpyMagic);
  prelude += '\x01';
  prelude += '\x00';
  prelude += static_cast<char>(header_len & 0xff);
  prelude += static_cast<char>(header_len >> 8);
  prelude += header;

  EPCTX_ASSIGN_OR_RETURN(AtomicFileWriter writer, AtomicFileWriter::Create(path));
  EPCTX_RETURN_IF_ERROR(writer.WriteAt(0, std::as_bytes(std::span(prelude))));
  if (!data.empty()) EPCTX_RETURN_IF_ERROR(writer.WriteAt(prelude.size(), data));
  return writer.Commit();
}

}  // namespace epctx
