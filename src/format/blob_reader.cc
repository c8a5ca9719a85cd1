#include "format/blob_reader.h"

#include <cstdint>
#include <cstring>
#include <vector>

#include "format/control_flow_validation.h"
#include "format/program_validation.h"
#include "format/target.h"
#include "program_generated.h"
#include "util/hash.h"
#include "util/overflow.h"
#include "util/status_macros.h"

namespace epctx::format {
namespace {

const char* SectionName(uint32_t kind) {
  switch (static_cast<SectionKind>(kind)) {
    case SectionKind::kWeights:
      return "WEIGHTS";
    case SectionKind::kPrograms:
      return "PROGRAMS";
    case SectionKind::kManifest:
      return "MANIFEST";
  }
  return "unknown";
}

flatbuffers::Verifier MakeVerifier(std::span<const std::byte> bytes) {
  return flatbuffers::Verifier(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(),
                               kMaxFlatbufferDepth, kMaxFlatbufferTables);
}

Status CheckHeader(std::span<const std::byte> bytes, const std::string& name) {
  if (bytes.size() < kHeaderPageSize) {
    return EPCTX_ERROR(kCorrupt, "'{}': truncated: {} bytes is smaller than the {}-byte header",
                       name, bytes.size(), kHeaderPageSize);
  }
  // Mappings and AlignedBuffer are page aligned; anything less than 8 would make every 64-bit
  // field of the header and the FlatBuffers a misaligned (undefined) read.
  if (reinterpret_cast<uintptr_t>(bytes.data()) % alignof(BlobHeader) != 0) {
    return EPCTX_ERROR(kInvalidArgument, "'{}': blob bytes at {} are not {}-byte aligned", name,
                       fmt::ptr(bytes.data()), alignof(BlobHeader));
  }
  const auto* h = reinterpret_cast<const BlobHeader*>(bytes.data());
  if (std::memcmp(h->magic, kBlobMagic, sizeof kBlobMagic) != 0) {
    return EPCTX_ERROR(kCorrupt, "'{}': not an epctx blob (bad magic)", name);
  }
  if (h->format_version != kFormatVersion) {
    return EPCTX_ERROR(kVersionMismatch, "'{}': blob format version {} (this build reads {})", name,
                       h->format_version, kFormatVersion);
  }
  if (h->header_size != sizeof(BlobHeader)) {
    return EPCTX_ERROR(kCorrupt, "'{}': header size {} (expected {})", name, h->header_size,
                       sizeof(BlobHeader));
  }
  uint64_t checksum = Hash64(bytes.first(offsetof(BlobHeader, header_checksum)));
  if (checksum != h->header_checksum) {
    return EPCTX_ERROR(kCorrupt, "'{}': header checksum mismatch", name);
  }
  if (h->file_size != bytes.size()) {
    return EPCTX_ERROR(kCorrupt, "'{}': truncated or extended: header says {} bytes, file has {}",
                       name, h->file_size, bytes.size());
  }
  return Status::Ok();
}

}  // namespace

Result<BlobView> BlobView::Open(std::span<const std::byte> bytes, std::string name,
                                const OpenOptions& options) {
  EPCTX_RETURN_IF_ERROR(CheckHeader(bytes, name));
  BlobView view;
  view.bytes_ = bytes;
  view.header_ = reinterpret_cast<const BlobHeader*>(bytes.data());
  const BlobHeader& h = *view.header_;
  if (options.check_target) {
    EPCTX_RETURN_IF_ERROR_CTX(CheckTarget(h.target, options.available_cpu_features), "'{}'", name);
  }

  if (h.section_count == 0 || h.section_count > kMaxSections) {
    return EPCTX_ERROR(kCorrupt, "'{}': section count {} outside 1..{}", name, h.section_count,
                       kMaxSections);
  }
  const SectionEntry* found[4] = {};
  for (uint32_t i = 0; i < h.section_count; ++i) {
    const SectionEntry& s = h.sections[i];
    if (s.kind < 1 || s.kind > 3) {
      return EPCTX_ERROR(kCorrupt, "'{}': section {} has unknown kind {}", name, i, s.kind);
    }
    if (found[s.kind] != nullptr) {
      return EPCTX_ERROR(kCorrupt, "'{}': section {} appears twice", name, SectionName(s.kind));
    }
    if (s.offset % kSectionAlignment != 0 || s.offset < kHeaderPageSize) {
      return EPCTX_ERROR(kCorrupt,
                         "'{}': section {} at offset {} is not 4 KiB-aligned after the "
                         "header",
                         name, SectionName(s.kind), s.offset);
    }
    if (!RangeInside(s.offset, s.size, bytes.size())) {
      return EPCTX_ERROR(kCorrupt, "'{}': section {} ({} bytes at {}) exceeds the file size {}",
                         name, SectionName(s.kind), s.size, s.offset, bytes.size());
    }
    found[s.kind] = &s;
  }
  for (uint32_t k = 1; k <= 3; ++k) {
    if (found[k] == nullptr) {
      return EPCTX_ERROR(kCorrupt, "'{}': section {} is missing", name, SectionName(k));
    }
  }
  // Sections must not overlap (each is checked against the others).
  for (uint32_t a = 1; a <= 3; ++a) {
    for (uint32_t b = a + 1; b <= 3; ++b) {
      const SectionEntry& x = *found[a];
      const SectionEntry& y = *found[b];
      if (x.size && y.size && x.offset < y.offset + y.size && y.offset < x.offset + x.size) {
        return EPCTX_ERROR(kCorrupt, "'{}': sections {} and {} overlap", name, SectionName(a),
                           SectionName(b));
      }
    }
  }
  auto section_bytes = [&](SectionKind k) {
    const SectionEntry& s = *found[static_cast<uint32_t>(k)];
    return bytes.subspan(s.offset, s.size);
  };
  view.weights_ = section_bytes(SectionKind::kWeights);
  view.programs_ = section_bytes(SectionKind::kPrograms);
  std::span<const std::byte> manifest_bytes = section_bytes(SectionKind::kManifest);

  if (manifest_bytes.size() > kMaxManifestBytes) {
    return EPCTX_ERROR(kCorrupt, "'{}': manifest of {} bytes exceeds the limit", name,
                       manifest_bytes.size());
  }
  if (Hash64(manifest_bytes) != found[3]->checksum) {
    return EPCTX_ERROR(kCorrupt, "'{}': MANIFEST checksum mismatch", name);
  }
  if (Hash64(view.programs_) != found[2]->checksum) {
    return EPCTX_ERROR(kCorrupt, "'{}': PROGRAMS checksum mismatch", name);
  }
  auto verifier = MakeVerifier(manifest_bytes);
  if (!verifier.VerifyBuffer<fb::Manifest>(nullptr)) {
    return EPCTX_ERROR(kCorrupt, "'{}': manifest fails FlatBuffers verification", name);
  }
  view.manifest_ = flatbuffers::GetRoot<fb::Manifest>(manifest_bytes.data());
  EPCTX_RETURN_IF_ERROR_CTX(ValidateWeights(*view.manifest_, view.weights_.size()), "'{}'", name);

  const auto* models = view.manifest_->models();
  if (models == nullptr || models->size() == 0 || models->size() > kMaxModels) {
    return EPCTX_ERROR(kCorrupt, "'{}': manifest must list 1..{} models", name, kMaxModels);
  }
  uint32_t weight_count = view.manifest_->weights() ? view.manifest_->weights()->size() : 0;
  for (const fb::Model* model : *models) {
    const auto* refs = model->programs();
    std::vector<const fb::Program*> programs;
    if (refs == nullptr || refs->size() == 0 || refs->size() > kMaxPrograms) {
      return EPCTX_ERROR(kCorrupt, "'{}': model '{}' must have 1..{} programs", name,
                         model->name()->string_view(), kMaxPrograms);
    }
    if (model->name()->size() > kMaxNameLength) {
      return EPCTX_ERROR(kCorrupt, "'{}': model name longer than {}", name, kMaxNameLength);
    }
    for (uint32_t pi = 0; pi < refs->size(); ++pi) {
      const fb::ProgramRef* ref = refs->Get(pi);
      std::string where =
          fmt::format("'{}': model '{}' program {}", name, model->name()->string_view(), pi);
      if (!RangeInside(ref->offset(), ref->size(), view.programs_.size()) ||
          ref->offset() % kProgramAlignment != 0 || ref->size() > kMaxProgramBytes) {
        return EPCTX_ERROR(kCorrupt,
                           "{}: range {}+{} outside the PROGRAMS section ({} bytes) or "
                           "misaligned",
                           where, ref->offset(), ref->size(), view.programs_.size());
      }
      auto program_bytes = view.programs_.subspan(ref->offset(), ref->size());
      if (Hash64(program_bytes) != ref->checksum()) {
        return EPCTX_ERROR(kCorrupt, "{}: checksum mismatch", where);
      }
      auto pv = MakeVerifier(program_bytes);
      if (!pv.VerifyBuffer<fb::Program>(nullptr)) {
        return EPCTX_ERROR(kCorrupt, "{}: fails FlatBuffers verification", where);
      }
      const auto* program = flatbuffers::GetRoot<fb::Program>(program_bytes.data());
      EPCTX_RETURN_IF_ERROR_CTX(ValidateProgram(*program, *view.manifest_, pi, refs->size()), "{}",
                                where);
      programs.push_back(program);
    }
    EPCTX_RETURN_IF_ERROR_CTX(ValidateControlFlow(programs), "'{}': model '{}'", name,
                              model->name()->string_view());
  }

  if (options.verify_weight_checksums) {
    if (Hash64(view.weights_) != found[1]->checksum) {
      return EPCTX_ERROR(kCorrupt, "'{}': WEIGHTS checksum mismatch", name);
    }
    for (uint32_t i = 0; i < weight_count; ++i) {
      if (Hash64(view.WeightBytes(i)) != view.manifest_->weights()->Get(i)->checksum()) {
        return EPCTX_ERROR(kCorrupt, "'{}': weight {} checksum mismatch", name, i);
      }
    }
  }
  view.name_ = std::move(name);
  return view;
}

Result<const fb::Model*> BlobView::FindModel(std::string_view model_name) const {
  std::string present;
  for (const fb::Model* m : *manifest_->models()) {
    if (m->name()->string_view() == model_name) return m;
    if (!present.empty()) present += ", ";
    present += m->name()->str();
  }
  return EPCTX_ERROR(kNotFound, "'{}': no model named '{}' (models: {})", name_, model_name,
                     present);
}

const fb::Program* BlobView::GetProgram(const fb::Model& model, uint32_t index) const {
  const fb::ProgramRef* ref = model.programs()->Get(index);
  return flatbuffers::GetRoot<fb::Program>(programs_.data() + ref->offset());
}

std::span<const std::byte> BlobView::WeightBytes(uint32_t index) const {
  const fb::Weight* w = manifest_->weights()->Get(index);
  return weights_.subspan(w->offset(), w->size());
}

}  // namespace epctx::format
