#include "compile/context_model.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/wire_format_lite.h>
#include <onnx/onnx_pb.h>

#include <charconv>
#include <climits>
#include <utility>

#include "epctx_build_info.h"
#include "util/status_macros.h"

namespace epctx::compile {
namespace {

using google::protobuf::internal::WireFormatLite;

// Field numbers of onnx.proto.
constexpr int kModelGraphField = 7;  // ModelProto.graph
constexpr int kGraphNodeField = 1;   // GraphProto.node
constexpr int kNodeOpTypeField = 4;  // NodeProto.op_type

// Reads the length-delimited field the stream is positioned at into a sub-stream limit, calls
// `body` and restores the limit. False on malformed input.
template <typename Body>
bool WithinMessage(google::protobuf::io::CodedInputStream& in, Body body) {
  uint32_t length = 0;
  if (!in.ReadVarint32(&length)) return false;
  auto limit = in.PushLimit(static_cast<int>(length));
  bool ok = body();
  ok = ok && in.ConsumedEntireMessage();
  in.PopLimit(limit);
  return ok;
}

// Whether the model's main graph has an EPContext node, found by walking the wire format: the
// graph's node list is read, everything else (initializers above all) is skipped unparsed, so
// an original model is not parsed here only to be parsed again by the importer. nullopt when
// the bytes are not well-formed protobuf (the full parse then reports it).
std::optional<bool> HasEpContextNode(std::span<const std::byte> bytes) {
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()),
                                            static_cast<int>(bytes.size()));
  in.SetTotalBytesLimit(INT_MAX);
  bool found = false;
  auto length_delimited = [](uint32_t tag, int field) {
    return WireFormatLite::GetTagFieldNumber(tag) == field &&
           WireFormatLite::GetTagWireType(tag) == WireFormatLite::WIRETYPE_LENGTH_DELIMITED;
  };
  auto scan_node = [&]() {
    while (uint32_t tag = in.ReadTag()) {
      if (length_delimited(tag, kNodeOpTypeField)) {
        std::string op;
        if (!WireFormatLite::ReadString(&in, &op)) return false;
        found = found || op == kEpContextOp;
      } else if (!WireFormatLite::SkipField(&in, tag)) {
        return false;
      }
    }
    return true;
  };
  auto scan_graph = [&]() {
    while (uint32_t tag = in.ReadTag()) {
      if (length_delimited(tag, kGraphNodeField)) {
        if (!WithinMessage(in, scan_node)) return false;
      } else if (!WireFormatLite::SkipField(&in, tag)) {
        return false;
      }
    }
    return true;
  };
  while (uint32_t tag = in.ReadTag()) {
    if (length_delimited(tag, kModelGraphField)) {
      if (!WithinMessage(in, scan_graph)) return std::nullopt;
    } else if (!WireFormatLite::SkipField(&in, tag)) {
      return std::nullopt;
    }
  }
  if (!in.ConsumedEntireMessage()) return std::nullopt;
  return found;
}

void AddString(onnx::NodeProto& node, const std::string& name, std::string value) {
  auto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(std::move(value));
}

void AddInt(onnx::NodeProto& node, const std::string& name, int64_t value) {
  auto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(value);
}

void AddMeta(onnx::ModelProto& model, const std::string& key, std::string value) {
  auto* p = model.add_metadata_props();
  p->set_key(key);
  p->set_value(std::move(value));
}

template <typename T>
std::optional<T> ParseNumber(const std::string& s, int base = 10) {
  T value{};
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value, base);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return value;
}

// The EPContext attributes epctx reads, with the type ONNX Runtime's contrib op gives them.
Status CheckAttributeType(const onnx::AttributeProto& a, const std::string& name) {
  using A = onnx::AttributeProto;
  static const std::pair<const char*, A::AttributeType> kTypes[] = {
      {"ep_cache_context", A::STRING},      {"embed_mode", A::INT}, {"main_context", A::INT},
      {"partition_name", A::STRING},        {"source", A::STRING},  {"ep_sdk_version", A::STRING},
      {"hardware_architecture", A::STRING}, {"notes", A::STRING}};
  for (const auto& [attr, type] : kTypes) {
    if (a.name() == attr && a.type() != type) {
      return EPCTX_ERROR(kInvalidArgument, "'{}': EPContext attribute '{}' must be {}, not {}",
                         name, attr, A::AttributeType_Name(type), A::AttributeType_Name(a.type()));
    }
  }
  return Status::Ok();
}

IoDeclaration Declaration(const onnx::ValueInfoProto& vi) {
  IoDeclaration d;
  d.name = vi.name();
  if (!vi.type().has_tensor_type()) return d;
  const auto& tt = vi.type().tensor_type();
  d.elem_type = tt.elem_type();
  d.has_shape = tt.has_shape();
  for (const auto& dim : tt.shape().dim())
    d.dims.push_back(dim.has_dim_value() ? dim.dim_value() : -1);
  return d;
}

std::string FormatExternalData(const std::vector<ExternalDataRecord>& records) {
  std::string out;
  for (const ExternalDataRecord& r : records) {
    std::string location;
    for (char c : r.location) {
      if (c == '%') {
        location += "%25";
      } else if (c == '\n') {
        location += "%0A";
      } else {
        location += c;
      }
    }
    out += fmt::format("{} {} {:016x} {}\n", r.size, r.mtime_ns, r.hash, location);
  }
  return out;
}

std::optional<std::vector<ExternalDataRecord>> ParseExternalData(const std::string& text) {
  std::vector<ExternalDataRecord> records;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) return std::nullopt;
    const std::string line = text.substr(at, end - at);
    at = end + 1;
    const size_t a = line.find(' '), b = line.find(' ', a + 1), c = line.find(' ', b + 1);
    if (a == std::string::npos || b == std::string::npos || c == std::string::npos) {
      return std::nullopt;
    }
    auto size = ParseNumber<uint64_t>(line.substr(0, a));
    auto mtime = ParseNumber<int64_t>(line.substr(a + 1, b - a - 1));
    auto hash = ParseNumber<uint64_t>(line.substr(b + 1, c - b - 1), 16);
    if (!size || !mtime || !hash) return std::nullopt;
    ExternalDataRecord r{"", *size, *mtime, *hash};
    const std::string escaped = line.substr(c + 1);
    for (size_t i = 0; i < escaped.size(); ++i) {
      if (escaped[i] != '%') {
        r.location += escaped[i];
      } else if (escaped.compare(i, 3, "%25") == 0) {
        r.location += '%', i += 2;
      } else if (escaped.compare(i, 3, "%0A") == 0) {
        r.location += '\n', i += 2;
      } else {
        return std::nullopt;
      }
    }
    if (r.location.empty()) return std::nullopt;
    records.push_back(std::move(r));
  }
  return records;
}

}  // namespace

std::string ContextModelFileName(const std::string& stem) {
  return stem + "_ctx.onnx";
}

Result<std::string> SerializeContextModel(const ContextModelSpec& spec) {
  onnx::ModelProto model;
  model.set_ir_version(spec.ir_version);
  model.set_producer_name("epctx");
  model.set_producer_version(EPCTX_ENGINE_VERSION);
  for (const auto& [domain, version] : spec.opsets) {
    if (domain == kEpContextDomain) continue;
    auto* op = model.add_opset_import();
    op->set_domain(domain);
    op->set_version(version);
  }
  auto* ms = model.add_opset_import();
  ms->set_domain(kEpContextDomain);
  ms->set_version(1);

  onnx::GraphProto* graph = model.mutable_graph();
  graph->set_name(spec.graph_name.empty() ? "epctx_graph" : spec.graph_name);
  onnx::NodeProto* node = graph->add_node();
  node->set_name(spec.node_name);
  node->set_op_type(kEpContextOp);
  node->set_domain(kEpContextDomain);
  for (const std::string& serialized : spec.input_value_infos) {
    onnx::ValueInfoProto* vi = graph->add_input();
    if (!vi->ParseFromString(serialized)) {
      return EPCTX_ERROR(kInternal, "cannot re-read an input declaration");
    }
    node->add_input(vi->name());
  }
  for (const std::string& serialized : spec.output_value_infos) {
    onnx::ValueInfoProto* vi = graph->add_output();
    if (!vi->ParseFromString(serialized)) {
      return EPCTX_ERROR(kInternal, "cannot re-read an output declaration");
    }
    node->add_output(vi->name());
  }
  AddInt(*node, "main_context", spec.main_context ? 1 : 0);
  AddInt(*node, "embed_mode", spec.embed ? 1 : 0);
  if (spec.embed) {
    if (spec.embedded_blob.size() > kMaxEmbeddedBlobBytes) {
      return EPCTX_ERROR(kInvalidArgument,
                         "blob of {} bytes is too large to embed (limit {} "
                         "bytes); use ep.context_embed_mode=0",
                         spec.embedded_blob.size(), kMaxEmbeddedBlobBytes);
    }
    AddString(*node, "ep_cache_context",
              std::string(reinterpret_cast<const char*>(spec.embedded_blob.data()),
                          spec.embedded_blob.size()));
  } else {
    AddString(*node, "ep_cache_context", spec.blob_reference);
  }
  AddString(*node, "ep_sdk_version", EPCTX_ENGINE_VERSION);
  AddString(*node, "partition_name", spec.partition_name);
  AddString(*node, "source", kEpContextSource);
  AddString(*node, "hardware_architecture", spec.hardware_architecture);
  if (!spec.notes.empty()) AddString(*node, "notes", spec.notes);

  model.set_domain(spec.domain);
  model.set_model_version(spec.model_version);
  model.set_doc_string(spec.doc_string);
  graph->set_doc_string(spec.graph_doc_string);
  for (const auto& [key, value] : spec.original_metadata_props) {
    if (!key.starts_with("epctx.")) AddMeta(model, key, value);
  }
  AddMeta(model, kMetaOriginalPath, spec.original_path);
  AddMeta(model, kMetaOriginalSize, std::to_string(spec.original_size));
  AddMeta(model, kMetaOriginalMtime, std::to_string(spec.original_mtime_ns));
  AddMeta(model, kMetaOriginalHash, fmt::format("{:016x}", spec.original_hash));
  if (!spec.original_external_data.empty()) {
    AddMeta(model, kMetaOriginalExternalData, FormatExternalData(spec.original_external_data));
  }
  AddMeta(model, kMetaBlobChecksum, fmt::format("{:016x}", spec.blob_identity));
  std::string out;
  if (!model.SerializeToString(&out)) {
    return EPCTX_ERROR(kInternal, "cannot serialize the context model");
  }
  return out;
}

Result<std::optional<ContextModelInfo>> ParseContextModel(std::span<const std::byte> bytes,
                                                          const std::string& name) {
  if (bytes.size() >= static_cast<size_t>(INT_MAX)) {
    return EPCTX_ERROR(kUnsupported, "'{}': model files of 2 GiB or more are not supported", name);
  }
  std::optional<bool> has_ep_context = HasEpContextNode(bytes);
  if (has_ep_context == false) return std::optional<ContextModelInfo>();
  onnx::ModelProto model;
  if (!model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return EPCTX_ERROR(kInvalidArgument, "'{}': not an ONNX model (protobuf parse failed)", name);
  }
  const onnx::NodeProto* ep = nullptr;
  for (const auto& n : model.graph().node()) {
    if (n.op_type() == kEpContextOp) {
      if (ep != nullptr) {
        return EPCTX_ERROR(kUnsupported,
                           "'{}': context models with several EPContext nodes are "
                           "not supported yet",
                           name);
      }
      ep = &n;
    }
  }
  if (ep == nullptr) return std::optional<ContextModelInfo>();
  if (model.graph().node_size() != 1) {
    return EPCTX_ERROR(kUnsupported,
                       "'{}': context model mixes an EPContext node with {} other "
                       "nodes; only whole-graph contexts are supported",
                       name, model.graph().node_size() - 1);
  }
  if (ep->domain() != kEpContextDomain) {
    return EPCTX_ERROR(kInvalidArgument, "'{}': EPContext node has domain '{}', not {}", name,
                       ep->domain(), kEpContextDomain);
  }
  ContextModelInfo info;
  info.node_name = ep->name();
  bool has_cache = false;
  for (const auto& a : ep->attribute()) {
    EPCTX_RETURN_IF_ERROR(CheckAttributeType(a, name));
    if (a.name() == "ep_cache_context") {
      has_cache = true;
      info.blob_reference = a.s();
    } else if (a.name() == "embed_mode") {
      if (a.i() != 0 && a.i() != 1) {
        return EPCTX_ERROR(kInvalidArgument, "'{}': EPContext embed_mode is {}, not 0 or 1", name,
                           a.i());
      }
      info.embed = a.i() != 0;
    } else if (a.name() == "main_context") {
      info.main_context = a.i() != 0;
    } else if (a.name() == "partition_name") {
      info.partition_name = a.s();
    } else if (a.name() == "source") {
      info.source = a.s();
    }
  }
  for (const auto& vi : model.graph().input()) info.inputs.push_back(Declaration(vi));
  for (const auto& vi : model.graph().output()) info.outputs.push_back(Declaration(vi));
  if (!info.source.empty() && info.source != kEpContextSource) {
    return EPCTX_ERROR(kUnsupported, "'{}': EPContext node was made by '{}', not by epctx", name,
                       info.source);
  }
  if (!has_cache) {
    return EPCTX_ERROR(kInvalidArgument, "'{}': EPContext node has no ep_cache_context", name);
  }
  if (info.embed) info.embedded_blob = std::move(info.blob_reference), info.blob_reference.clear();
  if (info.partition_name.empty()) {
    return EPCTX_ERROR(kInvalidArgument, "'{}': EPContext node has no partition_name", name);
  }
  for (const auto& p : model.metadata_props()) {
    if (p.key() == kMetaOriginalPath) info.original_path = p.value();
    if (p.key() == kMetaOriginalSize) info.original_size = ParseNumber<uint64_t>(p.value());
    if (p.key() == kMetaOriginalMtime) info.original_mtime_ns = ParseNumber<int64_t>(p.value());
    if (p.key() == kMetaOriginalHash) info.original_hash = ParseNumber<uint64_t>(p.value(), 16);
    if (p.key() == kMetaOriginalExternalData) {
      auto records = ParseExternalData(p.value());
      info.original_external_data_malformed = !records.has_value();
      if (records) info.original_external_data = std::move(*records);
    }
    if (p.key() == kMetaBlobChecksum) info.blob_identity = ParseNumber<uint64_t>(p.value(), 16);
  }
  return std::optional<ContextModelInfo>(std::move(info));
}

}  // namespace epctx::compile
