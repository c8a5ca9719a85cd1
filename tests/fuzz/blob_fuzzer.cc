// Fuzz target: a context blob as an attacker would forge it (every checksum recomputed, so the
// input reaches the meaning-level checks), through the verifying reader, then every program of
// every model bound to this build's kernels, as a session and `epctx verify` do, and each bound
// program run once on zero inputs of its declared shapes, as a session's first run would.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "exec/executor.h"
#include "format/blob_layout.h"
#include "format/blob_reader.h"
#include "program_generated.h"
#include "util/aligned_buffer.h"
#include "util/hash.h"
#include "util/overflow.h"
#include "zero_input.h"

namespace {

using namespace epctx;

const format::SectionEntry* FindSection(const format::BlobHeader& h, format::SectionKind kind,
                                        uint64_t file_size) {
  for (uint32_t i = 0; i < std::min(h.section_count, format::kMaxSections); ++i) {
    const format::SectionEntry& s = h.sections[i];
    // Unaligned sections are refused by the reader; verifying one here would read misaligned
    // FlatBuffers (undefined behaviour in the harness, not in epctx).
    if (s.kind == static_cast<uint32_t>(kind) && s.offset % format::kSectionAlignment == 0 &&
        RangeInside(s.offset, s.size, file_size)) {
      return &s;
    }
  }
  return nullptr;
}

// What an attacker does after editing a blob: program checksums in the manifest, section
// checksums, the file size and the header checksum made to match.
void Resign(std::span<std::byte> blob) {
  if (blob.size() < sizeof(format::BlobHeader)) return;
  format::BlobHeader h;
  std::memcpy(&h, blob.data(), sizeof h);
  h.file_size = blob.size();
  const format::SectionEntry* programs =
      FindSection(h, format::SectionKind::kPrograms, blob.size());
  const format::SectionEntry* manifest =
      FindSection(h, format::SectionKind::kManifest, blob.size());
  if (programs != nullptr && manifest != nullptr) {
    auto* m = reinterpret_cast<const uint8_t*>(blob.data() + manifest->offset);
    flatbuffers::Verifier verifier(m, manifest->size, format::kMaxFlatbufferDepth,
                                   format::kMaxFlatbufferTables);
    if (verifier.VerifyBuffer<fb::Manifest>(nullptr)) {
      // Read every program reference first, then write the checksums: a written checksum may
      // overlap another reference's fields (tables may overlap in a crafted buffer), and the
      // verified manifest must not be read after it changed.
      struct Patch {
        uint8_t* field;
        uint64_t offset;
        uint64_t size;
      };
      std::vector<Patch> patches;
      const fb::Manifest* root = flatbuffers::GetRoot<fb::Manifest>(m);
      for (uint32_t mi = 0; root->models() != nullptr && mi < root->models()->size(); ++mi) {
        const fb::Model* model = root->models()->Get(mi);
        if (model->programs() == nullptr) continue;
        for (const fb::ProgramRef* ref : *model->programs()) {
          if (!RangeInside(ref->offset(), ref->size(), programs->size)) continue;
          const uint8_t* field = reinterpret_cast<const flatbuffers::Table*>(ref)->GetAddressOf(
              fb::ProgramRef::VT_CHECKSUM);
          if (field != nullptr) {
            patches.push_back({const_cast<uint8_t*>(field), ref->offset(), ref->size()});
          }
        }
      }
      for (const Patch& p : patches) {
        uint64_t sum =
            Hash64(std::span<const std::byte>(blob).subspan(programs->offset + p.offset, p.size));
        std::memcpy(p.field, &sum, sizeof sum);
      }
    }
  }
  for (uint32_t i = 0; i < std::min(h.section_count, format::kMaxSections); ++i) {
    format::SectionEntry& s = h.sections[i];
    if (RangeInside(s.offset, s.size, blob.size())) {
      s.checksum = Hash64(std::span<const std::byte>(blob).subspan(s.offset, s.size));
    }
  }
  h.header_checksum =
      Hash64(std::as_bytes(std::span(&h, 1)).first(offsetof(format::BlobHeader, header_checksum)));
  std::memcpy(blob.data(), &h, sizeof h);
}

// Arenas larger than this are not made (nor large inputs, zero_input.h).
constexpr uint64_t kMaxArenaBytes = uint64_t{256} << 20;

// Runs `bound` (whose main program is `main`) once on zero inputs of its declarations, loops
// capped.
void RunOnZeros(const exec::BoundProgram& bound, const fb::Program& main) {
  if (bound.arena_bytes() > kMaxArenaBytes || main.inputs() == nullptr) return;
  std::vector<Tensor> inputs;
  for (int32_t id : *main.inputs()) {
    if (main.values() == nullptr || id < 0 || static_cast<uint32_t>(id) >= main.values()->size()) {
      return;  // Bind refuses these; not this harness's business
    }
    const fb::Value& v = *main.values()->Get(static_cast<uint32_t>(id));
    std::span<const int64_t> shape;
    if (v.shape() != nullptr) shape = {v.shape()->data(), v.shape()->size()};
    std::optional<Tensor> zero =
        fuzz::ZeroInput(static_cast<ValueKind>(v.kind()), static_cast<DataType>(v.dtype()), shape);
    if (!zero) return;
    inputs.push_back(std::move(*zero));
  }
  AlignedBuffer arena(static_cast<size_t>(bound.arena_bytes()),
                      AlignedBuffer::Fill::kUninitialized);
  if (!arena.valid()) return;
  exec::RunControl control;
  control.max_loop_iterations = 1000;
  control.max_value_bytes = int64_t{1} << 30;  // as run_fuzzer.cc
  (void)bound.Run(inputs, std::span<std::byte>(arena.data(), bound.arena_bytes()), control);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Exactly sized (a read past the end is an AddressSanitizer error), 16-byte aligned.
  std::unique_ptr<std::byte[]> copy(new std::byte[size]);
  std::memcpy(copy.get(), data, size);
  std::span<std::byte> blob(copy.get(), size);
  Resign(blob);
  format::OpenOptions options;
  options.available_cpu_features = ~uint64_t{0};
  options.check_target = false;  // the build id is just bytes an attacker would copy
  auto view = format::BlobView::Open(blob, "fuzz.epctx", options);
  if (!view.ok()) return 0;
  exec::WeightResolver weights = [&view](uint32_t index) -> Result<Tensor> {
    const fb::Weight* w = view->manifest().weights()->Get(index);
    std::vector<int64_t> shape;
    if (w->shape() != nullptr) shape.assign(w->shape()->begin(), w->shape()->end());
    return Tensor::View(static_cast<DataType>(w->dtype()), std::move(shape),
                        view->WeightBytes(index).data(), nullptr);
  };
  for (const fb::Model* model : *view->manifest().models()) {
    std::vector<const fb::Program*> programs;
    for (uint32_t i = 0; i < model->programs()->size(); ++i) {
      programs.push_back(view->GetProgram(*model, i));
    }
    auto bound = exec::BoundProgram::Bind(programs, 0, weights, 1);
    if (bound.ok() && !programs.empty() && programs[0] != nullptr)
      RunOnZeros(**bound, *programs[0]);
  }
  return 0;
}
