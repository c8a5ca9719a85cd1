#include "format/blob_helpers.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <filesystem>
#include <type_traits>

#include "format/blob_writer.h"
#include "util/cpu_features.h"
#include "util/hash.h"
#include "util/overflow.h"

namespace epctx::format::blobtest {
namespace {

using flatbuffers::FlatBufferBuilder;
using flatbuffers::Offset;

// A [long] vector; when `misalign`, written as int32 halves after `pad` bytes of padding, so that
// (for one of pad = 0 or 4) its elements are 4 bytes off 8-byte alignment, which the FlatBuffers
// Verifier does not check.
Offset<flatbuffers::Vector<int64_t>> CreateLongs(FlatBufferBuilder& fbb,
                                                 const std::vector<int64_t>& values, bool misalign,
                                                 size_t pad) {
  if (!misalign) return fbb.CreateVector(values);
  std::vector<int32_t> halves;
  for (int64_t v : values) {
    halves.push_back(static_cast<int32_t>(static_cast<uint64_t>(v) & 0xffffffffu));
    halves.push_back(static_cast<int32_t>(static_cast<uint64_t>(v) >> 32));
  }
  fbb.Pad(pad);
  return Offset<flatbuffers::Vector<int64_t>>(fbb.CreateVector(halves).o);
}

template <typename T>
bool Misaligned(const flatbuffers::Vector<T>* v, const uint8_t* buffer) {
  return v != nullptr && (v->Data() - buffer) % 8 != 0;
}

// Builds with pad 0, then 4, until every requested misalignment happened.
template <typename BuildFn, typename CheckFn>
std::vector<uint8_t> BuildMisaligned(BuildFn build, CheckFn all_misaligned) {
  for (size_t pad : {0, 4}) {
    FlatBufferBuilder fbb;
    build(fbb, pad);
    if (all_misaligned(fbb.GetBufferPointer())) {
      return std::vector<uint8_t>(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
    }
  }
  ADD_FAILURE() << "could not misalign the requested vector";
  return {};
}

Offset<fb::Attribute> BuildAttribute(FlatBufferBuilder& fbb, const AttrSpec& a, size_t pad) {
  auto name = fbb.CreateString(a.name);
  Offset<flatbuffers::Vector<uint8_t>> s = 0;
  Offset<flatbuffers::Vector<int64_t>> ints = 0;
  Offset<flatbuffers::Vector<float>> floats = 0;
  Offset<flatbuffers::Vector<Offset<flatbuffers::String>>> strings = 0;
  if (a.has_s || !a.s.empty()) s = fbb.CreateVector(a.s);
  if (!a.ints.empty()) ints = CreateLongs(fbb, a.ints, a.misalign_ints, pad);
  if (!a.floats.empty()) floats = fbb.CreateVector(a.floats);
  if (!a.strings.empty()) strings = fbb.CreateVectorOfStrings(a.strings);
  return fb::CreateAttribute(fbb, name, a.type, a.i, a.f, s, ints, floats, strings, a.tensor_dtype,
                             a.graph);
}

Offset<fb::Value> BuildValue(FlatBufferBuilder& fbb, const ValueSpec& v, size_t pad) {
  auto name = fbb.CreateString(v.name);
  Offset<flatbuffers::Vector<int64_t>> shape = 0;
  if (v.has_shape) shape = CreateLongs(fbb, v.shape, v.misalign_shape, pad);
  Offset<flatbuffers::Vector<Offset<flatbuffers::String>>> dim_names = 0;
  if (!v.dim_names.empty()) dim_names = fbb.CreateVectorOfStrings(v.dim_names);
  return fb::CreateValue(fbb, name, static_cast<int32_t>(v.dtype), shape, dim_names, v.weight,
                         v.arena_offset, v.arena_bytes);
}

Offset<fb::Node> BuildNode(FlatBufferBuilder& fbb, const NodeSpec& n, size_t pad) {
  std::vector<Offset<fb::Attribute>> attrs;
  for (const AttrSpec& a : n.attributes) attrs.push_back(BuildAttribute(fbb, a, pad));
  return fb::CreateNode(fbb, fbb.CreateString(n.name), fbb.CreateString(n.op_type),
                        fbb.CreateString(n.domain), fbb.CreateVector(n.inputs),
                        fbb.CreateVector(n.outputs), fbb.CreateVector(attrs), n.implicit_inputs);
}

AttrSpec Attr(std::string name, fb::AttrType type) {
  AttrSpec a;
  a.name = std::move(name);
  a.type = type;
  return a;
}

WeightSpec Weight(DataType dtype, std::vector<int64_t> shape, uint32_t layout, uint8_t seed) {
  WeightSpec w;
  w.dtype = dtype;
  w.shape = std::move(shape);
  w.layout = layout;
  int64_t count = 1;
  for (int64_t d : w.shape) count *= d;
  w.bytes = PatternBytes(static_cast<size_t>(count) * DataTypeSize(dtype), seed);
  return w;
}

}  // namespace

std::vector<uint8_t> BuildProgram(const ProgramSpec& spec) {
  auto build = [&](FlatBufferBuilder& fbb, size_t pad) {
    std::vector<Offset<fb::Value>> values;
    for (const ValueSpec& v : spec.values) values.push_back(BuildValue(fbb, v, pad));
    std::vector<Offset<fb::Node>> nodes;
    for (const NodeSpec& n : spec.nodes) nodes.push_back(BuildNode(fbb, n, pad));
    std::vector<Offset<fb::OpsetImport>> opsets;
    for (const auto& [domain, version] : spec.opsets) {
      opsets.push_back(fb::CreateOpsetImport(fbb, fbb.CreateString(domain), version));
    }
    fbb.Finish(fb::CreateProgram(fbb, fbb.CreateString(spec.name), fbb.CreateVector(values),
                                 fbb.CreateVector(nodes), fbb.CreateVector(spec.inputs),
                                 fbb.CreateVector(spec.outputs), spec.arena_bytes,
                                 fbb.CreateVector(opsets)));
  };
  auto all_misaligned = [&](const uint8_t* buffer) {
    const auto* p = flatbuffers::GetRoot<fb::Program>(buffer);
    for (uint32_t i = 0; i < spec.values.size(); ++i) {
      if (spec.values[i].misalign_shape && !Misaligned(p->values()->Get(i)->shape(), buffer)) {
        return false;
      }
    }
    for (uint32_t n = 0; n < spec.nodes.size(); ++n) {
      for (uint32_t k = 0; k < spec.nodes[n].attributes.size(); ++k) {
        const fb::Attribute* a = p->nodes()->Get(n)->attributes()->Get(k);
        if (spec.nodes[n].attributes[k].misalign_ints && !Misaligned(a->ints(), buffer)) {
          return false;
        }
      }
    }
    return true;
  };
  return BuildMisaligned(build, all_misaligned);
}

Bytes PatternBytes(size_t size, uint8_t seed) {
  Bytes out(size);
  uint32_t x = seed * 2654435761u + 12345u;
  for (size_t i = 0; i < size; ++i) {
    x = x * 1103515245u + 12345u;
    out[i] = static_cast<std::byte>(x >> 24);
  }
  return out;
}

BlobSpec StandardSpec() {
  BlobSpec spec;
  spec.weights = {
      Weight(DataType::kFloat32, {2, 3}, 0, 1),      // 0: used by vision/main
      Weight(DataType::kInt8, {7}, 0, 2),            // 1: odd size, the next weight must realign
      Weight(DataType::kFloat16, {}, 0, 3),          // 2: 0-d, used by vision/main
      Weight(DataType::kInt64, {0, 4}, 0, 4),        // 3: empty
      Weight(DataType::kUint8, {300}, 3, 5),         // 4: used by head
      Weight(DataType::kFloat64, {2, 2}, 0, 6),      // 5
      Weight(DataType::kBFloat16, {3, 1, 5}, 2, 7),  // 6
  };

  ProgramSpec main;
  main.name = "main";
  main.values = {
      {.name = "input", .shape = {-1, 3}, .dim_names = {"batch", ""}},
      {.name = "w", .shape = {2, 3}, .weight = 0},
      {.name = "cond", .dtype = DataType::kBool, .shape = {}},
      {.name = "hidden", .shape = {-1, 2}, .dim_names = {"batch", ""}},
      {.name = "out", .shape = {-1, 2}, .dim_names = {"batch", ""}},
      {.name = "table", .shape = {2, 2}, .arena_offset = 64, .arena_bytes = 16},
      {.name = "bias", .dtype = DataType::kFloat16, .shape = {}, .weight = 2},
      {.name = "unshaped", .has_shape = false},
  };
  NodeSpec gemm{.name = "gemm", .op_type = "Gemm", .inputs = {0, 1, -1}, .outputs = {3}};
  AttrSpec alpha = Attr("alpha", fb::AttrType::Float);
  alpha.f = 1.5f;
  AttrSpec trans_b = Attr("transB", fb::AttrType::Int);
  trans_b.i = 1;
  gemm.attributes = {alpha, trans_b};
  NodeSpec constant{.name = "constant", .op_type = "Constant", .outputs = {5}};
  AttrSpec value = Attr("value", fb::AttrType::Tensor);
  value.tensor_dtype = static_cast<int32_t>(DataType::kFloat32);
  value.ints = {2, 2};
  value.s = std::vector<uint8_t>(16, 0x3f);
  constant.attributes = {value};
  // The body reads `hidden` from the main graph: an implicit input of the node.
  NodeSpec branch{
      .name = "if", .op_type = "If", .inputs = {2, 3}, .outputs = {4}, .implicit_inputs = 1};
  AttrSpec then_branch = Attr("then_branch", fb::AttrType::Graph);
  then_branch.graph = 1;
  AttrSpec else_branch = Attr("else_branch", fb::AttrType::Graph);
  else_branch.graph = 1;
  AttrSpec note = Attr("note", fb::AttrType::String);
  note.s = {'h', 'e', 'l', 'l', 'o'};
  AttrSpec pads = Attr("pads", fb::AttrType::Ints);
  pads.ints = {1, 2, 3, -4};
  AttrSpec scales = Attr("scales", fb::AttrType::Floats);
  scales.floats = {0.5f, 2.0f};
  AttrSpec labels = Attr("labels", fb::AttrType::Strings);
  labels.strings = {"cat", "dog", ""};
  AttrSpec unset = Attr("unset", fb::AttrType::Undefined);
  branch.attributes = {then_branch, else_branch, note, pads, scales, labels, unset};
  NodeSpec fused{.name = "fused",
                 .op_type = "FusedMatMul",
                 .domain = "com.microsoft",
                 .inputs = {3, 6},
                 .outputs = {-1, 7}};
  main.nodes = {gemm, constant, branch, fused};
  main.inputs = {0, 2};
  main.outputs = {4};
  main.arena_bytes = 128;
  main.opsets = {{"", 17}, {"com.microsoft", 1}};

  ProgramSpec body;
  body.name = "then_body";
  body.values = {{.name = "x", .shape = {-1, 2}, .dim_names = {"batch", ""}},
                 {.name = "y", .shape = {-1, 2}, .dim_names = {"n", "m"}}};
  body.nodes = {{.name = "identity", .op_type = "Identity", .inputs = {0}, .outputs = {1}}};
  body.inputs = {0};
  body.outputs = {1};
  body.opsets = {{"", 17}};

  ProgramSpec head;
  head.name = "head_main";
  head.values = {{.name = "features", .dtype = DataType::kUint8, .shape = {300}, .weight = 4},
                 {.name = "in", .shape = {1}},
                 {.name = "out", .shape = {1}},
                 {.name = "relu_out", .shape = {1}}};
  head.nodes = {{.name = "relu", .op_type = "Relu", .inputs = {1}, .outputs = {3}},
                {.name = "add", .op_type = "Add", .inputs = {3, 0}, .outputs = {2}}};
  head.inputs = {1};
  head.outputs = {2};
  head.opsets = {{"", 13}};

  spec.models = {{.name = "vision",
                  .programs = {main, body},
                  .source_size = 123456,
                  .source_hash = 0x0123456789abcdefull},
                 {.name = "head", .programs = {head}, .source_size = 42, .source_hash = 7}};
  return spec;
}

Result<Bytes> BuildBlob(const BlobSpec& spec) {
  BlobWriter writer;
  for (size_t i = 0; i < spec.weights.size(); ++i) {
    const WeightSpec& w = spec.weights[i];
    WeightInput input;
    input.dtype = w.dtype;
    input.shape = w.shape;
    input.layout = w.layout;
    input.bytes = w.bytes;
    auto index = writer.AddWeight(std::move(input));
    if (!index.ok()) return index.status();
    if (*index != i) {
      return Status(StatusCode::kInternal, "BlobSpec weights must be distinct");
    }
  }
  for (const ModelSpec& m : spec.models) {
    std::vector<std::vector<uint8_t>> programs;
    for (const ProgramSpec& p : m.programs) programs.push_back(BuildProgram(p));
    Status s = writer.AddModel(m.name, std::move(programs), m.source_size, m.source_hash);
    if (!s.ok()) return s;
  }
  auto buffer = writer.WriteToMemory();
  if (!buffer.ok()) return buffer.status();
  std::span<const std::byte> bytes = buffer->bytes();
  return Bytes(bytes.begin(), bytes.end());
}

const Bytes& StandardBlob() {
  static const Bytes blob = [] {
    auto built = BuildBlob(StandardSpec());
    if (!built.ok()) {
      ADD_FAILURE() << "the standard blob cannot be built: " << built.status().ToString();
      return Bytes();
    }
    return std::move(*built);
  }();
  return blob;
}

OpenOptions DefaultOptions() {
  OpenOptions options;
  options.available_cpu_features = DetectedCpuFeatures();
  return options;
}

Result<BlobView> OpenBlob(std::span<const std::byte> bytes, const OpenOptions& options) {
  return BlobView::Open(bytes, "test.blob", options);
}

BlobHeader ReadHeader(std::span<const std::byte> blob) {
  BlobHeader header{};
  if (blob.size() < sizeof header) {
    ADD_FAILURE() << "blob of " << blob.size() << " bytes has no header";
    return header;
  }
  std::memcpy(&header, blob.data(), sizeof header);
  return header;
}

void WriteHeader(Bytes& blob, BlobHeader header, bool resign) {
  if (blob.size() < sizeof header) {
    ADD_FAILURE() << "blob of " << blob.size() << " bytes has no header";
    return;
  }
  if (resign) {
    header.header_checksum =
        Hash64(std::as_bytes(std::span(&header, 1)).first(offsetof(BlobHeader, header_checksum)));
  }
  std::memcpy(blob.data(), &header, sizeof header);
}

int SectionIndex(const BlobHeader& header, SectionKind kind) {
  uint32_t count = std::min(header.section_count, kMaxSections);
  for (uint32_t i = 0; i < count; ++i) {
    if (header.sections[i].kind == static_cast<uint32_t>(kind)) return static_cast<int>(i);
  }
  return -1;
}

std::span<const std::byte> SectionBytes(std::span<const std::byte> blob, SectionKind kind) {
  BlobHeader header = ReadHeader(blob);
  int index = SectionIndex(header, kind);
  if (index < 0) {
    ADD_FAILURE() << "no section of kind " << static_cast<uint32_t>(kind);
    return {};
  }
  const SectionEntry& s = header.sections[index];
  if (!RangeInside(s.offset, s.size, blob.size())) {
    ADD_FAILURE() << "section of kind " << s.kind << " lies outside the blob";
    return {};
  }
  return blob.subspan(s.offset, s.size);
}

std::span<std::byte> SectionBytes(Bytes& blob, SectionKind kind) {
  std::span<const std::byte> bytes = SectionBytes(std::span<const std::byte>(blob), kind);
  if (bytes.empty()) return {};
  return std::span(blob).subspan(static_cast<size_t>(bytes.data() - blob.data()), bytes.size());
}

void ResignAll(Bytes& blob) {
  BlobHeader header = ReadHeader(blob);
  uint32_t count = std::min(header.section_count, kMaxSections);
  for (uint32_t i = 0; i < count; ++i) {
    SectionEntry& s = header.sections[i];
    if (RangeInside(s.offset, s.size, blob.size())) {
      s.checksum = Hash64(std::span<const std::byte>(blob).subspan(s.offset, s.size));
    }
  }
  WriteHeader(blob, header);
}

ManifestSpec ReadManifest(std::span<const std::byte> blob) {
  ManifestSpec spec;
  std::span<const std::byte> bytes = SectionBytes(blob, SectionKind::kManifest);
  flatbuffers::Verifier verifier(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  if (!verifier.VerifyBuffer<fb::Manifest>(nullptr)) {
    ADD_FAILURE() << "ReadManifest: the manifest does not verify";
    return spec;
  }
  const auto* manifest = flatbuffers::GetRoot<fb::Manifest>(bytes.data());
  if (manifest->weights() != nullptr) {
    for (const fb::Weight* w : *manifest->weights()) {
      WeightEntry e;
      e.offset = w->offset();
      e.size = w->size();
      e.dtype = w->dtype();
      if (w->shape() != nullptr) e.shape.assign(w->shape()->begin(), w->shape()->end());
      e.layout = w->layout();
      e.hash_low = w->hash_low();
      e.hash_high = w->hash_high();
      e.checksum = w->checksum();
      spec.weights.push_back(std::move(e));
    }
  }
  if (manifest->models() != nullptr) {
    for (const fb::Model* m : *manifest->models()) {
      ModelEntry e;
      e.name = m->name()->str();
      e.source_size = m->source_size();
      e.source_hash = m->source_hash();
      if (m->programs() != nullptr) {
        for (const fb::ProgramRef* r : *m->programs()) {
          e.programs.push_back({r->offset(), r->size(), r->checksum()});
        }
      }
      spec.models.push_back(std::move(e));
    }
  }
  return spec;
}

std::vector<uint8_t> BuildManifest(const ManifestSpec& spec) {
  auto build = [&](FlatBufferBuilder& fbb, size_t pad) {
    std::vector<Offset<fb::Weight>> weights;
    for (const WeightEntry& w : spec.weights) {
      auto shape = CreateLongs(fbb, w.shape, w.misalign_shape, pad);
      weights.push_back(fb::CreateWeight(fbb, w.offset, w.size, w.dtype, shape, w.layout,
                                         w.hash_low, w.hash_high, w.checksum));
    }
    std::vector<Offset<fb::Model>> models;
    for (const ModelEntry& m : spec.models) {
      std::vector<Offset<fb::ProgramRef>> refs;
      for (const ProgramRefEntry& r : m.programs) {
        refs.push_back(fb::CreateProgramRef(fbb, r.offset, r.size, r.checksum));
      }
      models.push_back(fb::CreateModel(fbb, fbb.CreateString(m.name), fbb.CreateVector(refs),
                                       m.source_size, m.source_hash));
    }
    fbb.Finish(fb::CreateManifest(fbb, fbb.CreateVector(models), fbb.CreateVector(weights)));
  };
  auto all_misaligned = [&](const uint8_t* buffer) {
    const auto* m = flatbuffers::GetRoot<fb::Manifest>(buffer);
    for (uint32_t i = 0; i < spec.weights.size(); ++i) {
      if (spec.weights[i].misalign_shape && !Misaligned(m->weights()->Get(i)->shape(), buffer)) {
        return false;
      }
    }
    return true;
  };
  return BuildMisaligned(build, all_misaligned);
}

void ReplaceManifest(Bytes& blob, std::span<const uint8_t> manifest) {
  BlobHeader header = ReadHeader(blob);
  int index = SectionIndex(header, SectionKind::kManifest);
  if (index < 0) {
    ADD_FAILURE() << "ReplaceManifest: no MANIFEST section";
    return;
  }
  SectionEntry& s = header.sections[index];
  if (s.offset + s.size != blob.size()) {
    ADD_FAILURE() << "ReplaceManifest: the MANIFEST section is not the last bytes of the blob";
    return;
  }
  blob.resize(s.offset + manifest.size());
  std::memcpy(blob.data() + s.offset, manifest.data(), manifest.size());
  s.size = manifest.size();
  header.file_size = blob.size();
  WriteHeader(blob, header);
  ResignAll(blob);
}

void RefreshProgramChecksums(Bytes& blob) {
  ManifestSpec manifest = ReadManifest(blob);
  std::span<const std::byte> programs =
      SectionBytes(std::span<const std::byte>(blob), SectionKind::kPrograms);
  for (ModelEntry& m : manifest.models) {
    for (ProgramRefEntry& r : m.programs) {
      if (!RangeInside(r.offset, r.size, programs.size())) {
        ADD_FAILURE() << "RefreshProgramChecksums: program outside the section";
        return;
      }
      r.checksum = Hash64(programs.subspan(r.offset, r.size));
    }
  }
  ReplaceManifest(blob, BuildManifest(manifest));
}

namespace {

// Reads with instrumented code (not the uninstrumented xxHash library), so ASan checks each byte.
uint64_t Digest(uint64_t d, std::span<const std::byte> bytes) {
  for (std::byte b : bytes) d = d * 1099511628211ull + static_cast<uint8_t>(b);
  return d;
}
uint64_t Digest(uint64_t d, const flatbuffers::String* s) {
  if (s == nullptr) return d * 3;
  return Digest(d, std::as_bytes(std::span(s->data(), s->size())));
}
template <typename T>
uint64_t Digest(uint64_t d, const flatbuffers::Vector<T>* v) {
  if (v == nullptr) return d * 5;
  for (T x : *v) {
    // Floats by their bits: a float beyond uint64_t's range has no defined conversion.
    if constexpr (std::is_floating_point_v<T>) {
      using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
      d = d * 31 + std::bit_cast<Bits>(x);
    } else {
      d = d * 31 + static_cast<uint64_t>(x);
    }
  }
  return d;
}

uint64_t TouchProgram(const BlobView& view, const fb::Model& model, const fb::Program& p) {
  uint64_t d = Digest(17, p.name());
  uint32_t weight_count = view.manifest().weights() ? view.manifest().weights()->size() : 0;
  uint32_t value_count = p.values() ? p.values()->size() : 0;
  auto touch_value = [&](int32_t index) {
    if (index < 0) return;
    EXPECT_LT(static_cast<uint32_t>(index), value_count);
    d = Digest(d, p.values()->Get(static_cast<uint32_t>(index))->name());
  };
  if (p.values() != nullptr) {
    for (const fb::Value* v : *p.values()) {
      d = Digest(d, v->name());
      d = d * 7 + static_cast<uint32_t>(v->dtype());
      d = Digest(d, v->shape());
      if (v->dim_names() != nullptr) {
        for (const flatbuffers::String* s : *v->dim_names()) d = Digest(d, s);
      }
      if (v->weight() >= 0) {
        EXPECT_LT(static_cast<uint32_t>(v->weight()), weight_count);
        d = Digest(d, view.WeightBytes(static_cast<uint32_t>(v->weight())));
      }
      d = d * 11 + static_cast<uint64_t>(v->arena_offset()) +
          static_cast<uint64_t>(v->arena_bytes());
    }
  }
  if (p.nodes() != nullptr) {
    for (const fb::Node* n : *p.nodes()) {
      d = Digest(Digest(Digest(d, n->name()), n->op_type()), n->domain());
      if (n->inputs() != nullptr) {
        for (int32_t i : *n->inputs()) touch_value(i);
      }
      if (n->outputs() != nullptr) {
        for (int32_t o : *n->outputs()) touch_value(o);
      }
      if (n->attributes() == nullptr) continue;
      for (const fb::Attribute* a : *n->attributes()) {
        d = Digest(d, a->name());
        d = d * 13 + static_cast<uint8_t>(a->type()) + static_cast<uint64_t>(a->i());
        d = d * 13 + static_cast<uint64_t>(a->f());
        d = Digest(d, a->s());
        d = Digest(d, a->ints());
        d = Digest(d, a->floats());
        if (a->strings() != nullptr) {
          for (const flatbuffers::String* s : *a->strings()) d = Digest(d, s);
        }
        d = d * 13 + static_cast<uint32_t>(a->tensor_dtype());
        if (a->type() == fb::AttrType::Graph) {
          EXPECT_GE(a->graph(), 0);
          EXPECT_LT(static_cast<uint32_t>(a->graph()), model.programs()->size());
          // Only the body's name: following bodies recursively could loop on a self-reference.
          d = Digest(d, view.GetProgram(model, static_cast<uint32_t>(a->graph()))->name());
        }
      }
    }
  }
  if (p.inputs() != nullptr) {
    for (int32_t i : *p.inputs()) touch_value(i);
  }
  if (p.outputs() != nullptr) {
    for (int32_t o : *p.outputs()) touch_value(o);
  }
  if (p.opsets() != nullptr) {
    for (const fb::OpsetImport* o : *p.opsets()) {
      d = Digest(d, o->domain()) * 3 + static_cast<uint64_t>(o->version());
    }
  }
  return d;
}

}  // namespace

uint64_t TouchEverything(const BlobView& view) {
  uint64_t d = Digest(0, std::as_bytes(std::span(&view.header(), 1)));
  const fb::Manifest& manifest = view.manifest();
  uint32_t weight_count = manifest.weights() ? manifest.weights()->size() : 0;
  for (uint32_t i = 0; i < weight_count; ++i) {
    const fb::Weight* w = manifest.weights()->Get(i);
    d = Digest(d, w->shape()) * 3 + w->layout() + w->hash_low() + w->hash_high() + w->checksum();
    d = Digest(d, view.WeightBytes(i));
  }
  for (const fb::Model* model : *manifest.models()) {
    d = Digest(d, model->name()) + model->source_size() + model->source_hash();
    for (uint32_t pi = 0; pi < model->programs()->size(); ++pi) {
      d = d * 5 + TouchProgram(view, *model, *view.GetProgram(*model, pi));
    }
  }
  return d;
}

BlobContents ContentsOf(const BlobView& view) {
  BlobContents out;
  const auto* programs = view.header().sections;
  uint64_t programs_offset = 0;
  for (uint32_t i = 0; i < view.header().section_count; ++i) {
    if (programs[i].kind == static_cast<uint32_t>(SectionKind::kPrograms)) {
      programs_offset = programs[i].offset;
    }
  }
  for (const fb::Model* m : *view.manifest().models()) {
    out.models.push_back(m->name()->str());
    for (const fb::ProgramRef* r : *m->programs()) {
      auto bytes = view.bytes().subspan(programs_offset + r->offset(), r->size());
      out.programs.emplace_back(bytes.begin(), bytes.end());
    }
  }
  uint32_t weight_count = view.manifest().weights() ? view.manifest().weights()->size() : 0;
  for (uint32_t i = 0; i < weight_count; ++i) {
    auto bytes = view.WeightBytes(i);
    out.weights.emplace_back(bytes.begin(), bytes.end());
  }
  return out;
}

TempDir::TempDir() {
  std::string pattern = ::testing::TempDir() + "epctx_format_XXXXXX";
  std::vector<char> buffer(pattern.begin(), pattern.end());
  buffer.push_back('\0');
  if (::mkdtemp(buffer.data()) == nullptr) {
    ADD_FAILURE() << "mkdtemp(" << pattern << ") failed";
    return;
  }
  path_ = buffer.data();
}

TempDir::~TempDir() {
  if (path_.empty()) return;
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::vector<std::string> TempDir::List() const {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(path_, ec)) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace epctx::format::blobtest
