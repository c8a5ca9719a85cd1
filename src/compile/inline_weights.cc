#include "compile/inline_weights.h"

#include <cstdint>
#include <limits>
#include <vector>

namespace epctx::compile {
namespace {

// Protobuf wire types.
constexpr uint32_t kVarint = 0;
constexpr uint32_t kFixed64 = 1;
constexpr uint32_t kLengthDelimited = 2;
constexpr uint32_t kFixed32 = 5;

// Field numbers of onnx.proto.
constexpr uint32_t kModelGraph = 7;
constexpr uint32_t kGraphInitializer = 5;
constexpr uint32_t kTensorDims = 1;
constexpr uint32_t kTensorDataType = 2;
constexpr uint32_t kTensorSegment = 3;
constexpr uint32_t kTensorRawData = 9;
constexpr uint32_t kTensorExternalData = 13;
constexpr uint32_t kTensorDataLocation = 14;
constexpr uint32_t kEntryKey = 1;
constexpr uint32_t kEntryValue = 2;
constexpr uint64_t kDataLocationExternal = 1;

// One field of a message: its number, wire type, and where its bytes lie (the whole field,
// tag included, and for length-delimited fields the payload).
struct Field {
  uint32_t number = 0;
  uint32_t wire_type = 0;
  uint64_t value = 0;  // varint fields
  const uint8_t* begin = nullptr;
  const uint8_t* end = nullptr;
  const uint8_t* payload = nullptr;
  size_t payload_size = 0;
};

bool ReadVarint(const uint8_t*& p, const uint8_t* end, uint64_t* out) {
  uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (p == end) return false;
    const uint8_t byte = *p++;
    v |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) {
      *out = v;
      return true;
    }
  }
  return false;
}

// The fields of a message, in order; false when the bytes are not well-formed (groups, the
// deprecated wire types 3 and 4, are treated as such: ONNX has none).
bool SplitFields(const uint8_t* p, const uint8_t* end, std::vector<Field>* out) {
  while (p != end) {
    Field f;
    f.begin = p;
    uint64_t tag = 0;
    if (!ReadVarint(p, end, &tag) || (tag >> 3) == 0 || (tag >> 3) > 0x1fffffff) return false;
    f.number = static_cast<uint32_t>(tag >> 3);
    f.wire_type = static_cast<uint32_t>(tag & 7);
    switch (f.wire_type) {
      case kVarint:
        if (!ReadVarint(p, end, &f.value)) return false;
        break;
      case kFixed64:
        if (end - p < 8) return false;
        p += 8;
        break;
      case kFixed32:
        if (end - p < 4) return false;
        p += 4;
        break;
      case kLengthDelimited: {
        uint64_t size = 0;
        if (!ReadVarint(p, end, &size) || size > static_cast<uint64_t>(end - p)) return false;
        f.payload = p;
        f.payload_size = static_cast<size_t>(size);
        p += size;
        break;
      }
      default:
        return false;
    }
    f.end = p;
    out->push_back(f);
  }
  return true;
}

void AppendVarint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

void AppendTag(std::string& out, uint32_t number, uint32_t wire_type) {
  AppendVarint(out, (static_cast<uint64_t>(number) << 3) | wire_type);
}

void AppendBytesField(std::string& out, uint32_t number, const std::string& bytes) {
  AppendTag(out, number, kLengthDelimited);
  AppendVarint(out, bytes.size());
  out += bytes;
}

void AppendRaw(std::string& out, const Field& f) {
  out.append(reinterpret_cast<const char*>(f.begin), static_cast<size_t>(f.end - f.begin));
}

// Bytes per element of ONNX's fixed-size data types; 0 for strings, sub-byte and unknown types.
size_t ElementSize(uint64_t data_type) {
  switch (data_type) {
    case 2:
    case 3:
    case 9:  // UINT8, INT8, BOOL
      return 1;
    case 4:
    case 5:
    case 10:
    case 16:  // UINT16, INT16, FLOAT16, BFLOAT16
      return 2;
    case 1:
    case 6:
    case 12:  // FLOAT, INT32, UINT32
      return 4;
    case 7:
    case 11:
    case 13:
    case 14:  // INT64, DOUBLE, UINT64, COMPLEX64
      return 8;
    case 15:  // COMPLEX128
      return 16;
    default:
      return 0;
  }
}

// Multiplies `count` by `d` unless it overflows or `d` is negative.
bool MulDim(uint64_t* count, uint64_t d) {
  if (static_cast<int64_t>(d) < 0) return false;
  if (d != 0 && *count > std::numeric_limits<uint64_t>::max() / d) return false;
  *count *= d;
  return true;
}

// The dims of a tensor (packed or not) multiplied into `count`.
bool CountDims(const Field& f, uint64_t* count) {
  if (f.wire_type == kVarint) return MulDim(count, f.value);
  if (f.wire_type != kLengthDelimited) return false;
  const uint8_t* p = f.payload;
  const uint8_t* end = p + f.payload_size;
  while (p != end) {
    uint64_t d = 0;
    if (!ReadVarint(p, end, &d) || !MulDim(count, d)) return false;
  }
  return true;
}

struct Rewriter {
  const uint8_t* file_begin;
  std::string location;
  size_t min_bytes;
  size_t rewritten = 0;

  // The tensor, with its raw_data moved out when it qualifies.
  bool Tensor(const uint8_t* p, const uint8_t* end, std::string* out) {
    std::vector<Field> fields;
    if (!SplitFields(p, end, &fields)) return false;
    const Field* raw = nullptr;
    bool simple = true;
    uint64_t data_type = 0;
    uint64_t count = 1;
    for (const Field& f : fields) {
      switch (f.number) {
        case kTensorRawData:
          if (raw != nullptr || f.wire_type != kLengthDelimited) simple = false;
          raw = &f;
          break;
        case kTensorDataType:
          if (f.wire_type != kVarint) simple = false;
          data_type = f.value;
          break;
        case kTensorDims:
          if (!CountDims(f, &count)) simple = false;
          break;
        case 4:
        case 5:
        case 6:
        case 7:
        case 10:
        case 11:  // typed value fields
        case kTensorSegment:
        case kTensorExternalData:
        case kTensorDataLocation:
          simple = false;
          break;
        default:
          break;
      }
    }
    const size_t element = ElementSize(data_type);
    const bool qualifies = simple && raw != nullptr && element != 0 &&
                           raw->payload_size >= min_bytes &&
                           count <= std::numeric_limits<uint64_t>::max() / element &&
                           count * element == raw->payload_size;
    if (!qualifies) {
      out->append(reinterpret_cast<const char*>(p), static_cast<size_t>(end - p));
      return true;
    }
    for (const Field& f : fields) {
      if (&f != raw) AppendRaw(*out, f);
    }
    auto entry = [&](const std::string& key, const std::string& value) {
      std::string e;
      AppendBytesField(e, kEntryKey, key);
      AppendBytesField(e, kEntryValue, value);
      AppendBytesField(*out, kTensorExternalData, e);
    };
    entry("location", location);
    entry("offset", std::to_string(raw->payload - file_begin));
    entry("length", std::to_string(raw->payload_size));
    AppendTag(*out, kTensorDataLocation, kVarint);
    AppendVarint(*out, kDataLocationExternal);
    ++rewritten;
    return true;
  }

  bool Graph(const uint8_t* p, const uint8_t* end, std::string* out) {
    std::vector<Field> fields;
    if (!SplitFields(p, end, &fields)) return false;
    for (const Field& f : fields) {
      if (f.number != kGraphInitializer || f.wire_type != kLengthDelimited) {
        AppendRaw(*out, f);
        continue;
      }
      std::string tensor;
      if (!Tensor(f.payload, f.payload + f.payload_size, &tensor)) return false;
      AppendBytesField(*out, kGraphInitializer, tensor);
    }
    return true;
  }

  bool Model(const uint8_t* p, const uint8_t* end, std::string* out) {
    std::vector<Field> fields;
    if (!SplitFields(p, end, &fields)) return false;
    for (const Field& f : fields) {
      if (f.number != kModelGraph || f.wire_type != kLengthDelimited) {
        AppendRaw(*out, f);
        continue;
      }
      std::string graph;
      if (!Graph(f.payload, f.payload + f.payload_size, &graph)) return false;
      AppendBytesField(*out, kModelGraph, graph);
    }
    return true;
  }
};

}  // namespace

std::optional<std::string> ExternalizeInlineWeights(std::span<const std::byte> model,
                                                    const std::string& self_location,
                                                    size_t min_bytes) {
  const auto* begin = reinterpret_cast<const uint8_t*>(model.data());
  Rewriter rewriter{begin, self_location, min_bytes};
  std::string out;
  if (!rewriter.Model(begin, begin + model.size(), &out) || rewriter.rewritten == 0) {
    return std::nullopt;
  }
  return out;
}

}  // namespace epctx::compile
