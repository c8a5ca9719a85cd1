// ModelMetadata from the protobuf wire format: a full ModelProto parse would copy every weight
// of an original model (and the embedded blob of a context model) only to read a few strings.
#include "loader/model_metadata.h"

#include <google/protobuf/io/coded_stream.h>

#include <climits>

#include "util/status_macros.h"

namespace epctx::loader {
namespace {

using google::protobuf::io::CodedInputStream;

// Field numbers of onnx.proto.
constexpr uint32_t kModelProducerName = 2;
constexpr uint32_t kModelProducerVersion = 3;
constexpr uint32_t kModelDomain = 4;
constexpr uint32_t kModelVersion = 5;
constexpr uint32_t kModelDocString = 6;
constexpr uint32_t kModelGraph = 7;
constexpr uint32_t kModelMetadataProps = 14;
constexpr uint32_t kGraphName = 2;
constexpr uint32_t kGraphDocString = 10;
constexpr uint32_t kEntryKey = 1;
constexpr uint32_t kEntryValue = 2;

constexpr uint32_t kWireVarint = 0;
constexpr uint32_t kWireFixed64 = 1;
constexpr uint32_t kWireLengthDelimited = 2;
constexpr uint32_t kWireFixed32 = 5;

uint32_t FieldOf(uint32_t tag) {
  return tag >> 3;
}
uint32_t WireOf(uint32_t tag) {
  return tag & 7;
}

bool ReadLength(CodedInputStream& in, int* length) {
  uint32_t n = 0;
  if (!in.ReadVarint32(&n) || n > static_cast<uint32_t>(INT_MAX)) return false;
  *length = static_cast<int>(n);
  return true;
}

bool ReadString(CodedInputStream& in, uint32_t tag, std::string* out) {
  int n = 0;
  return WireOf(tag) == kWireLengthDelimited && ReadLength(in, &n) && in.ReadString(out, n);
}

bool SkipField(CodedInputStream& in, uint32_t tag) {
  uint64_t v64 = 0;
  uint32_t v32 = 0;
  int n = 0;
  switch (WireOf(tag)) {
    case kWireVarint:
      return in.ReadVarint64(&v64);
    case kWireFixed64:
      return in.ReadLittleEndian64(&v64);
    case kWireLengthDelimited:
      return ReadLength(in, &n) && in.Skip(n);
    case kWireFixed32:
      return in.ReadLittleEndian32(&v32);
    default:
      return false;  // groups: onnx.proto has none
  }
}

// What a field callback did with the field at the cursor.
enum class Field { kRead, kSkip, kMalformed };

Field ReadInto(CodedInputStream& in, uint32_t tag, std::string* out) {
  return ReadString(in, tag, out) ? Field::kRead : Field::kMalformed;
}

// Calls `field(tag)` for each field of the message that ends at the end of the input, or, with
// `nested`, of the length-delimited message at the cursor; fields it skips are stepped over.
template <typename Fn>
bool ForEachField(CodedInputStream& in, bool nested, Fn&& field) {
  int n = 0;
  CodedInputStream::Limit limit{};
  if (nested) {
    if (!ReadLength(in, &n)) return false;
    limit = in.PushLimit(n);
  }
  while (uint32_t tag = in.ReadTag()) {
    Field f = field(tag);
    if (f == Field::kMalformed || (f == Field::kSkip && !SkipField(in, tag))) return false;
  }
  bool complete = in.ConsumedEntireMessage();
  if (nested) in.PopLimit(limit);
  return complete;
}

bool ReadGraph(CodedInputStream& in, ModelMetadata& meta) {
  return ForEachField(in, true, [&](uint32_t tag) {
    if (FieldOf(tag) == kGraphName) return ReadInto(in, tag, &meta.graph_name);
    if (FieldOf(tag) == kGraphDocString) return ReadInto(in, tag, &meta.graph_doc_string);
    return Field::kSkip;
  });
}

bool ReadEntry(CodedInputStream& in, ModelMetadata& meta) {
  std::string key, value;
  bool ok = ForEachField(in, true, [&](uint32_t tag) {
    if (FieldOf(tag) == kEntryKey) return ReadInto(in, tag, &key);
    if (FieldOf(tag) == kEntryValue) return ReadInto(in, tag, &value);
    return Field::kSkip;
  });
  if (ok) meta.custom_metadata[key] = value;
  return ok;
}

Field ReadModelField(CodedInputStream& in, uint32_t tag, ModelMetadata& meta) {
  bool nested = WireOf(tag) == kWireLengthDelimited;
  switch (FieldOf(tag)) {
    case kModelProducerName:
      return ReadInto(in, tag, &meta.producer_name);
    case kModelProducerVersion:
      return ReadInto(in, tag, &meta.producer_version);
    case kModelDomain:
      return ReadInto(in, tag, &meta.domain);
    case kModelDocString:
      return ReadInto(in, tag, &meta.doc_string);
    case kModelVersion: {
      uint64_t v = 0;
      if (WireOf(tag) != kWireVarint || !in.ReadVarint64(&v)) return Field::kMalformed;
      meta.model_version = static_cast<int64_t>(v);
      return Field::kRead;
    }
    case kModelGraph:
      return nested && ReadGraph(in, meta) ? Field::kRead : Field::kMalformed;
    case kModelMetadataProps:
      return nested && ReadEntry(in, meta) ? Field::kRead : Field::kMalformed;
    default:
      return Field::kSkip;
  }
}

}  // namespace

Result<ModelMetadata> ReadModelMetadata(std::span<const std::byte> bytes, const std::string& name) {
  if (bytes.size() > static_cast<size_t>(INT_MAX)) {
    return EPCTX_ERROR(kUnsupported, "'{}': model files of 2 GiB or more are not supported", name);
  }
  CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()),
                      static_cast<int>(bytes.size()));
  ModelMetadata meta;
  bool ok = ForEachField(in, false, [&](uint32_t tag) { return ReadModelField(in, tag, meta); });
  if (!ok) {
    return EPCTX_ERROR(kInvalidArgument, "'{}': not an ONNX model (protobuf parse failed)", name);
  }
  return meta;
}

}  // namespace epctx::loader
