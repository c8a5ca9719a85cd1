// The on-disk layout of a context blob: a fixed header page followed by 4 KiB-aligned sections.
// All integers little-endian. This header knows nothing of ONNX or kernels.
#pragma once

#include <cstddef>
#include <cstdint>

namespace epctx::format {

inline constexpr char kBlobMagic[8] = {'E', 'P', 'C', 'T', 'X', 'B', 'L', 'B'};
inline constexpr uint32_t kFormatVersion = 1;

inline constexpr uint64_t kHeaderPageSize = 4096;
inline constexpr uint64_t kSectionAlignment = 4096;
inline constexpr uint64_t kTensorAlignment = 64;
inline constexpr uint64_t kProgramAlignment = 64;

// Limits on what a blob may declare; anything beyond is refused as corrupt.
inline constexpr uint32_t kMaxSections = 8;
inline constexpr uint32_t kMaxModels = 4096;
inline constexpr uint32_t kMaxPrograms = 65536;
inline constexpr uint32_t kMaxWeights = 1u << 22;
inline constexpr uint32_t kMaxValuesPerProgram = 1u << 22;
inline constexpr uint32_t kMaxNodesPerProgram = 1u << 22;
inline constexpr uint32_t kMaxRank = 16;
inline constexpr uint32_t kMaxNameLength = 4096;
inline constexpr uint64_t kMaxManifestBytes = 1ull << 30;
inline constexpr uint64_t kMaxProgramBytes = 1ull << 30;
// A program's planned activation arena (allocated at its first run).
inline constexpr int64_t kMaxArenaBytes = 1ll << 36;
inline constexpr uint32_t kMaxFlatbufferDepth = 64;
inline constexpr uint32_t kMaxFlatbufferTables = 1u << 24;

enum class SectionKind : uint32_t {
  kWeights = 1,
  kPrograms = 2,
  kManifest = 3,
};

struct SectionEntry {
  uint32_t kind;      // SectionKind
  uint32_t reserved;  // zero
  uint64_t offset;    // from the start of the file; a multiple of kSectionAlignment
  uint64_t size;      // bytes of content (the section may be followed by padding)
  uint64_t checksum;  // XXH3-64 of the content
};
static_assert(sizeof(SectionEntry) == 32);

// The instruction-set tier the kernel library packed the weights for (their layouts are that
// tier's): the oldest tier whose layouts these are, so that CPUs of one tier from different
// vendors accept each other's blobs.
enum class KernelIsa : uint32_t {
  kUnspecified = 0,  // no packed layouts depend on a tier
  kAvx2 = 1,         // AVX2 + FMA (oneDNN's avx2)
  kAvx512Core = 2,   // AVX-512 F/BW/DQ/VL (oneDNN's avx512_core and the tiers above it)
};

// What the packed weights and programs were made for. A loader accepts a blob only when the
// packing build id and layout version are its own and every required CPU feature is present.
struct TargetFingerprint {
  uint64_t required_cpu_features;  // bit set, see util/cpu_features.h; includes kernel_isa's
  uint32_t pack_layout_version;
  uint32_t kernel_isa;        // KernelIsa
  char packing_build_id[32];  // NUL-padded hex digest of the packing and kernel sources
};
static_assert(sizeof(TargetFingerprint) == 48);

struct BlobHeader {
  char magic[8];
  uint32_t format_version;
  uint32_t header_size;  // sizeof(BlobHeader)
  char engine_version[16];
  TargetFingerprint target;
  uint64_t file_size;  // the whole file, to detect truncation
  uint32_t section_count;
  uint32_t reserved;
  SectionEntry sections[kMaxSections];
  uint64_t header_checksum;  // XXH3-64 of all bytes above this field
};
// The header checksum covers every section's checksum, so it changes with any byte of content:
// it is the blob's identity, which a context model records to be paired with this blob only.
static_assert(sizeof(BlobHeader) == 8 + 4 + 4 + 16 + 48 + 8 + 4 + 4 + 32 * kMaxSections + 8);
static_assert(sizeof(BlobHeader) <= kHeaderPageSize);
static_assert(offsetof(BlobHeader, header_checksum) == sizeof(BlobHeader) - 8);

// Version of the packing layouts (bumped when any layout id changes meaning).
inline constexpr uint32_t kPackLayoutVersion = 2;

}  // namespace epctx::format
