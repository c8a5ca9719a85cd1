// NumPy .npy files, read and written: format versions 1.0-3.0, little-endian or byte-order-free
// dtypes, C order.
//
// A .npy file is untrusted input: every size is overflow-checked and compared with the bytes the
// file really has, and every error names the file and what is wrong with it.

#include <bit>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "epctx/tensor_io.h"
#include "io/py_literal.h"
#include "io/tensor_parse.h"
#include "util/file.h"
#include "util/overflow.h"
#include "util/status_macros.h"

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

std::string SupportedNpyTypeList() {
  std::string out;
  for (const NpyType& t : kNpyTypes) {
    if (!out.empty()) out += ", ";
    out += fmt::format("'{}' ({})", t.descr, DataTypeName(t.dtype));
  }
  return out;
}

// `descr` is a NumPy type string: byte order ('<' little, '>' big, '|' not applicable, '=' native),
// kind letter, item size.
Result<DataType> NpyDescrToDataType(const std::string& path, const std::string& descr) {
  if (descr.size() >= 2) {
    char order = descr[0];
    std::string_view rest = std::string_view(descr).substr(1);
    if (order == '<' || order == '|' || order == '=' || order == '>') {
      for (const NpyType& t : kNpyTypes) {
        if (t.descr.substr(1) != rest) continue;
        // One-byte types have no byte order, so any order mark describes the same bytes.
        if (DataTypeSize(t.dtype) == 1 || order == '<' || order == '=') return t.dtype;
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
      return EPCTX_ERROR(kUnsupported, "'{}': dtype '{}' (Python objects) is not supported", path,
                         descr);
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
// .npy header.

constexpr std::string_view kNpyMagic("\x93NUMPY", 6);

struct NpyHeader {
  DataType dtype = DataType::kUndefined;
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
  EPCTX_ASSIGN_OR_RETURN(header.dtype, NpyDescrToDataType(path, descr->text));
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

// Bytes the data of `shape` and `dtype` take, or an error naming the file when that overflows.
Result<uint64_t> DataByteSize(const std::string& path, DataType dtype,
                              const std::vector<int64_t>& shape) {
  uint64_t bytes = 0;
  if (!CheckedByteSize(shape, DataTypeSize(dtype), &bytes)) {
    return EPCTX_ERROR(kCorrupt, "'{}': shape {} of {} is too large", path, ShapeToString(shape),
                       DataTypeName(dtype));
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
  EPCTX_ASSIGN_OR_RETURN(uint64_t data_bytes, DataByteSize(path, header.dtype, header.shape));
  uint64_t available = file.size() - header.data_offset;
  if (available != data_bytes) {
    return EPCTX_ERROR(
        kCorrupt, "'{}': {}: shape {} of {} needs {} data bytes, the file has {}", path,
        available < data_bytes ? "data is truncated" : "unexpected bytes after the data",
        ShapeToString(header.shape), DataTypeName(header.dtype), data_bytes, available);
  }
  return TensorFromBytes(fmt::format("'{}'", path), header.dtype, std::move(header.shape),
                         std::as_bytes(std::span(file.substr(header.data_offset))));
}

Status WriteNpy(const std::string& path, const Tensor& tensor) {
  if (tensor.empty()) {
    return EPCTX_ERROR(kInvalidArgument, "'{}': cannot write an empty (undefined) tensor", path);
  }
  EPCTX_ASSIGN_OR_RETURN(std::string_view descr, DataTypeToNpyDescr(path, tensor.dtype()));
  for (int64_t d : tensor.shape()) {
    if (d < 0) {
      return EPCTX_ERROR(kInvalidArgument, "'{}': cannot write a tensor of unknown shape {}", path,
                         ShapeToString(tensor.shape()));
    }
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
  if (tensor.byte_size() > 0) {
    EPCTX_RETURN_IF_ERROR(writer.WriteAt(
        prelude.size(), {static_cast<const std::byte*>(tensor.data()), tensor.byte_size()}));
  }
  return writer.Commit();
}

}  // namespace epctx
