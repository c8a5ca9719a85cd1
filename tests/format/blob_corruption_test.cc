// A catalogue of deliberately corrupted blobs, one enum value per corruption, each with the verdict
// BlobView::Open must give (after llama.cpp's tests/test-gguf.cpp).
//
// Most corruptions are re-signed after the edit (section checksums and the header checksum
// recomputed) so that the check under test, not a checksum, is what must catch them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <limits>

#include "format/blob_helpers.h"
#include "util/cpu_features.h"
#include "util/hash.h"
#include "util/status_macros.h"

namespace epctx::format {
namespace {

using blobtest::BlobSpec;
using blobtest::Bytes;
using blobtest::ManifestSpec;
using blobtest::ProgramSpec;
using ::testing::HasSubstr;

constexpr uint64_t kU64Max = std::numeric_limits<uint64_t>::max();

enum class Corruption {
  // Header.
  kEmptyFile,
  kTruncatedHeader,
  kBadMagic,
  kFormatVersionPlusOne,
  kWrongHeaderSize,
  kHeaderChecksum,
  kFileSizeMismatch,
  kFileExtended,
  // Target fingerprint.
  kTargetBuildId,
  kPackLayoutVersion,
  kMissingCpuFeature,
  kNoCpuFeaturesAvailable,
  kUnknownCpuFeatureBit,
  // Section table.
  kSectionCountZero,
  kSectionCountAboveMax,
  kUnknownSectionKind,
  kSectionKindZero,
  kDuplicateSection,
  kMisalignedSection,
  kSectionInHeaderPage,
  kSectionPastEnd,
  kSectionOffsetPastEnd,
  kSectionRangeWraps,
  kOverlappingSections,
  kOverlappingManifest,
  kMissingSection,
  // Section checksums and FlatBuffers structure.
  kManifestChecksum,
  kProgramsChecksum,
  kManifestFailsVerification,
  kManifestVtableOutOfRange,
  kManifestTruncated,
  kProgramRefChecksum,
  kProgramFailsVerification,
  kEmptyProgram,
  // Manifest meaning.
  kNoModels,
  kModelWithoutPrograms,
  kModelNameTooLong,
  kProgramRefOutsideSection,
  kProgramRefRangeWraps,
  kProgramRefMisaligned,
  kWeightOffsetOutsideSection,
  kWeightRangeWraps,
  kWeightMisaligned,
  kWeightSizeNotMatchingShape,
  kWeightUnknownDtype,
  kWeightStringDtype,
  kWeightRankAboveLimit,
  kWeightNegativeDim,
  kWeightElementCountOverflows,
  kWeightByteSizeOverflows,
  kWeightShapeMisaligned,
  // Program meaning.
  kProgramInputOutOfRange,
  kProgramOutputAbsent,
  kNodeInputOutOfRange,
  kNodeOutputBelowAbsent,
  kBodyNodeInputOutOfRange,
  kValueWeightOutOfRange,
  kValueWeightBelowAbsent,
  kValueRankAboveLimit,
  kValueDimBelowUnknown,
  kValueUnknownDtype,
  kValueDimNamesMismatch,
  kValueNameTooLong,
  kValueArenaOutside,
  kValueArenaMisaligned,
  kValueArenaNegativeOffset,
  kValueArenaNegativeSize,
  kNegativeProgramArena,
  kGraphAttributeOutOfRange,
  kGraphAttributeNegative,
  kValueWeightDtypeMismatch,
  kValueWeightShapeMismatch,
  kArenaAboveLimit,
  kGraphAttributeSelf,
  kBodyGraphAttributeBackward,
  kImplicitInputsAboveInputs,
  kImplicitInputsNegative,
  kTensorAttributeSizeMismatch,
  kTensorAttributeMissingData,
  kTensorAttributeBadDtype,
  kTensorAttributeRankAboveLimit,
  kTensorAttributeShapeOverflows,
  kTensorAttributeNegativeDim,
  kValueShapeMisaligned,
  kAttributeIntsMisaligned,
  kTensorAttributeDimsMisaligned,
  // Program data flow (forged programs with valid checksums: each would make a kernel write over
  // what it reads, or read what does not exist yet).
  kNodeWritesAWeight,
  kNodeWritesAProgramInput,
  kNodeWritesItsOwnInput,
  kNodeWritesAnOutputTwice,
  kNodeReadsAValueWrittenLater,
  kNodesOutOfOrder,
  kProgramOutputNeverWritten,
  kProgramInputTwice,
  kProgramInputIsAWeight,
  kArenaOverlapWhileLive,
  kArenaOnAValueNoNodeWrites,
  // Control flow against its bodies.
  kIfCondNotBool,
  kIfBranchOutputType,
  kIfCaptureType,
  kIfBranchInputCount,
  // Weight bytes (checked only with verify_weight_checksums).
  kWeightsSectionChecksum,
  kWeightChecksum,
  kCount,
};

struct CorruptionCase {
  Corruption corruption;
  std::string name;
  StatusCode code;
  std::string message;  // a substring of the expected message
  bool verify_weights = false;
};

void PrintTo(const CorruptionCase& c, std::ostream* os) {
  *os << c.name;
}

std::string PrintCase(const ::testing::TestParamInfo<CorruptionCase>& info) {
  return info.param.name;
}

const std::vector<CorruptionCase>& Catalogue() {
  using C = Corruption;
  constexpr auto kCorrupt = StatusCode::kCorrupt;
  constexpr auto kTarget = StatusCode::kTargetMismatch;
  static const std::vector<CorruptionCase> catalogue = {
      {C::kEmptyFile, "EmptyFile", kCorrupt, "truncated: 0 bytes is smaller than the 4096-byte"},
      {C::kTruncatedHeader, "TruncatedHeader", kCorrupt, "truncated: 100 bytes"},
      {C::kBadMagic, "BadMagic", kCorrupt, "not an epctx blob (bad magic)"},
      {C::kFormatVersionPlusOne, "FormatVersionPlusOne", StatusCode::kVersionMismatch,
       fmt::format("blob format version {} (this build reads {})", kFormatVersion + 1,
                   kFormatVersion)},
      {C::kWrongHeaderSize, "WrongHeaderSize", kCorrupt,
       fmt::format("header size {} (expected {})", sizeof(BlobHeader) + 8, sizeof(BlobHeader))},
      {C::kHeaderChecksum, "HeaderChecksum", kCorrupt, "header checksum mismatch"},
      {C::kFileSizeMismatch, "FileSizeMismatch", kCorrupt, "truncated or extended: header says"},
      {C::kFileExtended, "FileExtended", kCorrupt, "truncated or extended: header says"},
      {C::kTargetBuildId, "TargetBuildId", kTarget, "packed by kernel build"},
      {C::kPackLayoutVersion, "PackLayoutVersion", kTarget,
       fmt::format("packing layout version {} (this build uses {})", kPackLayoutVersion + 1,
                   kPackLayoutVersion)},
      {C::kMissingCpuFeature, "MissingCpuFeature", kTarget,
       "packed for CPU features this CPU lacks: amx-tile"},
      {C::kNoCpuFeaturesAvailable, "NoCpuFeaturesAvailable", kTarget,
       "packed for CPU features this CPU lacks: sse4.2"},
      {C::kUnknownCpuFeatureBit, "UnknownCpuFeatureBit", kTarget,
       "packed for CPU features this CPU lacks: unknown feature bit 40"},
      {C::kSectionCountZero, "SectionCountZero", kCorrupt, "section count 0 outside 1..8"},
      {C::kSectionCountAboveMax, "SectionCountAboveMax", kCorrupt, "section count 9 outside 1..8"},
      {C::kUnknownSectionKind, "UnknownSectionKind", kCorrupt, "section 1 has unknown kind 4"},
      {C::kSectionKindZero, "SectionKindZero", kCorrupt, "section 2 has unknown kind 0"},
      {C::kDuplicateSection, "DuplicateSection", kCorrupt, "section WEIGHTS appears twice"},
      {C::kMisalignedSection, "MisalignedSection", kCorrupt, "is not 4 KiB-aligned"},
      {C::kSectionInHeaderPage, "SectionInHeaderPage", kCorrupt,
       "section WEIGHTS at offset 0 is not 4 KiB-aligned after the header"},
      {C::kSectionPastEnd, "SectionPastEnd", kCorrupt, "exceeds the file size"},
      {C::kSectionOffsetPastEnd, "SectionOffsetPastEnd", kCorrupt, "section PROGRAMS (0 bytes at"},
      {C::kSectionRangeWraps, "SectionRangeWraps", kCorrupt,
       fmt::format("section WEIGHTS ({} bytes at 4096) exceeds the file size", kU64Max - 4095)},
      {C::kOverlappingSections, "OverlappingSections", kCorrupt,
       "sections WEIGHTS and PROGRAMS overlap"},
      {C::kOverlappingManifest, "OverlappingManifest", kCorrupt,
       "sections PROGRAMS and MANIFEST overlap"},
      {C::kMissingSection, "MissingSection", kCorrupt, "section MANIFEST is missing"},
      {C::kManifestChecksum, "ManifestChecksum", kCorrupt, "MANIFEST checksum mismatch"},
      {C::kProgramsChecksum, "ProgramsChecksum", kCorrupt, "PROGRAMS checksum mismatch"},
      {C::kManifestFailsVerification, "ManifestFailsVerification", kCorrupt,
       "manifest fails FlatBuffers verification"},
      {C::kManifestVtableOutOfRange, "ManifestVtableOutOfRange", kCorrupt,
       "manifest fails FlatBuffers verification"},
      {C::kManifestTruncated, "ManifestTruncated", kCorrupt,
       "manifest fails FlatBuffers verification"},
      {C::kProgramRefChecksum, "ProgramRefChecksum", kCorrupt,
       "model 'vision' program 1: checksum mismatch"},
      {C::kProgramFailsVerification, "ProgramFailsVerification", kCorrupt,
       "model 'head' program 0: fails FlatBuffers verification"},
      {C::kEmptyProgram, "EmptyProgram", kCorrupt,
       "model 'head' program 0: fails FlatBuffers verification"},
      {C::kNoModels, "NoModels", kCorrupt, "manifest must list 1..4096 models"},
      {C::kModelWithoutPrograms, "ModelWithoutPrograms", kCorrupt,
       "model 'head' must have 1..65536 programs"},
      {C::kModelNameTooLong, "ModelNameTooLong", kCorrupt, "model name longer than 4096"},
      {C::kProgramRefOutsideSection, "ProgramRefOutsideSection", kCorrupt,
       "model 'vision' program 1: range"},
      {C::kProgramRefRangeWraps, "ProgramRefRangeWraps", kCorrupt,
       fmt::format("model 'vision' program 1: range 64+{} outside the PROGRAMS section",
                   kU64Max - 63)},
      {C::kProgramRefMisaligned, "ProgramRefMisaligned", kCorrupt,
       "model 'vision' program 0: range 8+"},
      {C::kWeightOffsetOutsideSection, "WeightOffsetOutsideSection", kCorrupt,
       "weight 6 (30 bytes at"},
      {C::kWeightRangeWraps, "WeightRangeWraps", kCorrupt,
       fmt::format("weight 0 ({} bytes at 64) lies outside the WEIGHTS section", kU64Max - 63)},
      {C::kWeightMisaligned, "WeightMisaligned", kCorrupt,
       "weight 0 at offset 4 is not 64-byte aligned"},
      {C::kWeightSizeNotMatchingShape, "WeightSizeNotMatchingShape", kCorrupt,
       "weight 0 size 20 does not match its shape and type"},
      {C::kWeightUnknownDtype, "WeightUnknownDtype", kCorrupt, "weight 1 has unknown data type 99"},
      {C::kWeightStringDtype, "WeightStringDtype", kCorrupt, "weight 1 has unknown data type 8"},
      {C::kWeightRankAboveLimit, "WeightRankAboveLimit", kCorrupt,
       "weight 2 has rank 17 above the limit 16"},
      {C::kWeightNegativeDim, "WeightNegativeDim", kCorrupt,
       "weight 0 size 24 does not match its shape"},
      {C::kWeightElementCountOverflows, "WeightElementCountOverflows", kCorrupt,
       "weight 4 size 300 does not match its shape"},
      {C::kWeightByteSizeOverflows, "WeightByteSizeOverflows", kCorrupt,
       "weight 5 size 32 does not match its shape"},
      {C::kWeightShapeMisaligned, "WeightShapeMisaligned", kCorrupt,
       "weight 6 has a misaligned shape"},
      {C::kProgramInputOutOfRange, "ProgramInputOutOfRange", kCorrupt,
       "model 'vision' program 0: program input refers to value 8 of 8"},
      {C::kProgramOutputAbsent, "ProgramOutputAbsent", kCorrupt,
       "program output refers to value -1 of 8"},
      {C::kNodeInputOutOfRange, "NodeInputOutOfRange", kCorrupt,
       "node 0 (Gemm) refers to value 8 of 8"},
      {C::kNodeOutputBelowAbsent, "NodeOutputBelowAbsent", kCorrupt,
       "node 3 (FusedMatMul) refers to value -2 of 8"},
      {C::kBodyNodeInputOutOfRange, "BodyNodeInputOutOfRange", kCorrupt,
       "model 'vision' program 1: node 0 (Identity) refers to value 2 of 2"},
      {C::kValueWeightOutOfRange, "ValueWeightOutOfRange", kCorrupt,
       "value 'w' refers to weight 7 of 7"},
      {C::kValueWeightBelowAbsent, "ValueWeightBelowAbsent", kCorrupt,
       "value 'w' refers to weight -2 of 7"},
      {C::kValueRankAboveLimit, "ValueRankAboveLimit", kCorrupt,
       "value 'input' has rank 17 above the limit 16"},
      {C::kValueDimBelowUnknown, "ValueDimBelowUnknown", kCorrupt,
       "value 'hidden' has dimension -2"},
      {C::kValueUnknownDtype, "ValueUnknownDtype", kCorrupt,
       "value 'hidden' has unknown data type 35"},
      {C::kValueDimNamesMismatch, "ValueDimNamesMismatch", kCorrupt,
       "value 'input' has 1 dim names for rank 2"},
      {C::kValueNameTooLong, "ValueNameTooLong", kCorrupt, "value 7 has a name longer than 4096"},
      {C::kValueArenaOutside, "ValueArenaOutside", kCorrupt,
       "value 'table' arena range 128+16 outside the arena of 128 bytes"},
      {C::kValueArenaMisaligned, "ValueArenaMisaligned", kCorrupt,
       "value 'table' arena range 32+16 outside"},
      {C::kValueArenaNegativeOffset, "ValueArenaNegativeOffset", kCorrupt,
       "value 'table' arena range -64+16 outside"},
      {C::kValueArenaNegativeSize, "ValueArenaNegativeSize", kCorrupt,
       "value 'table' arena range 64+-16 outside"},
      {C::kNegativeProgramArena, "NegativeProgramArena", kCorrupt, "negative arena size -1"},
      {C::kGraphAttributeOutOfRange, "GraphAttributeOutOfRange", kCorrupt,
       "node 2 (If) attribute 'then_branch' refers to program 2 of 2"},
      {C::kGraphAttributeNegative, "GraphAttributeNegative", kCorrupt,
       "node 2 (If) attribute 'else_branch' refers to program -1 of 2"},
      {C::kValueWeightDtypeMismatch, "ValueWeightDtypeMismatch", kCorrupt,
       "value 'w' has type int32 but its weight float32"},
      {C::kValueWeightShapeMismatch, "ValueWeightShapeMismatch", kCorrupt,
       "value 'w' has shape [3,2] but its weight [2,3]"},
      {C::kArenaAboveLimit, "ArenaAboveLimit", kCorrupt,
       "arena size 68719476737 above the limit 68719476736"},
      {C::kGraphAttributeSelf, "GraphAttributeSelf", kCorrupt,
       "model 'vision' program 0: node 2 (If) attribute 'then_branch' refers to program 0, which "
       "does not come after program 0"},
      {C::kBodyGraphAttributeBackward, "BodyGraphAttributeBackward", kCorrupt,
       "model 'vision' program 1: node 0 (Identity) attribute 'body' refers to program 0, which "
       "does not come after program 1"},
      {C::kImplicitInputsAboveInputs, "ImplicitInputsAboveInputs", kCorrupt,
       "node 2 (If) has 3 implicit inputs but 2 inputs"},
      {C::kImplicitInputsNegative, "ImplicitInputsNegative", kCorrupt,
       "node 2 (If) has -1 implicit inputs but 2 inputs"},
      {C::kTensorAttributeSizeMismatch, "TensorAttributeSizeMismatch", kCorrupt,
       "node 1 (Constant) tensor attribute 'value' has 15 bytes for its shape"},
      {C::kTensorAttributeMissingData, "TensorAttributeMissingData", kCorrupt,
       "tensor attribute 'value' has 0 bytes for its shape"},
      {C::kTensorAttributeBadDtype, "TensorAttributeBadDtype", kCorrupt,
       "tensor attribute 'value' has bad type or rank"},
      {C::kTensorAttributeRankAboveLimit, "TensorAttributeRankAboveLimit", kCorrupt,
       "tensor attribute 'value' has bad type or rank"},
      {C::kTensorAttributeShapeOverflows, "TensorAttributeShapeOverflows", kCorrupt,
       "tensor attribute 'value' has 16 bytes for its shape"},
      {C::kTensorAttributeNegativeDim, "TensorAttributeNegativeDim", kCorrupt,
       "tensor attribute 'value' has 16 bytes for its shape"},
      {C::kValueShapeMisaligned, "ValueShapeMisaligned", kCorrupt,
       "value 'hidden' has a misaligned shape"},
      {C::kAttributeIntsMisaligned, "AttributeIntsMisaligned", kCorrupt,
       "node 2 (If) attribute 'pads' has misaligned ints"},
      {C::kTensorAttributeDimsMisaligned, "TensorAttributeDimsMisaligned", kCorrupt,
       "node 1 (Constant) attribute 'value' has misaligned ints"},
      {C::kNodeWritesAWeight, "NodeWritesAWeight", kCorrupt,
       "model 'head' program 0: node 1 (Add 'add') writes 'features', which is a weight"},
      {C::kNodeWritesAProgramInput, "NodeWritesAProgramInput", kCorrupt,
       "node 0 (Relu 'relu') writes 'in', which is a program input"},
      {C::kNodeWritesItsOwnInput, "NodeWritesItsOwnInput", kCorrupt,
       "node 1 (Add 'add') writes 'relu_out', which is written by an earlier node"},
      {C::kNodeWritesAnOutputTwice, "NodeWritesAnOutputTwice", kCorrupt,
       "node 3 (FusedMatMul 'fused') writes 'unshaped', which is written twice by this node"},
      {C::kNodeReadsAValueWrittenLater, "NodeReadsAValueWrittenLater", kCorrupt,
       "node 0 (Relu 'relu') reads 'out' before any node writes it"},
      {C::kNodesOutOfOrder, "NodesOutOfOrder", kCorrupt,
       "node 0 (Add 'add') reads 'relu_out' before any node writes it"},
      {C::kProgramOutputNeverWritten, "ProgramOutputNeverWritten", kCorrupt,
       "model 'head' program 0: program output 'out' is never written"},
      {C::kProgramInputTwice, "ProgramInputTwice", kCorrupt,
       "value 'input' is listed twice as a program input"},
      {C::kProgramInputIsAWeight, "ProgramInputIsAWeight", kCorrupt,
       "program input 'w' is a weight"},
      {C::kArenaOverlapWhileLive, "ArenaOverlapWhileLive", kCorrupt,
       "values 'table' (arena 64+16) and 'hidden' (arena 64+16) are live at the same time at "
       "node 1 (Constant 'constant') and share arena bytes"},
      {C::kArenaOnAValueNoNodeWrites, "ArenaOnAValueNoNodeWrites", kCorrupt,
       "value 'input' has an arena range but no node writes it"},
      {C::kIfCondNotBool, "IfCondNotBool", kCorrupt,
       "model 'vision': program 0 node 2 (If 'if'): cond has type int32, but bool is required"},
      {C::kIfBranchOutputType, "IfBranchOutputType", kCorrupt,
       "then_branch output 0 has type int64, but float32 is required"},
      {C::kIfCaptureType, "IfCaptureType", kCorrupt,
       "captured value 0 in the body has type float16, but float32 is required"},
      {C::kIfBranchInputCount, "IfBranchInputCount", kCorrupt,
       "body 'then_branch' takes 1 inputs and returns 1 outputs; the node needs 0 and 1"},
      {C::kWeightsSectionChecksum, "WeightsSectionChecksum", kCorrupt, "WEIGHTS checksum mismatch",
       true},
      {C::kWeightChecksum, "WeightChecksum", kCorrupt, "weight 4 checksum mismatch", true},
  };
  return catalogue;
}

// ---- Making the corrupt blobs ------------------------------------------------------------------

SectionEntry& Section(BlobHeader& h, SectionKind kind) {
  int index = blobtest::SectionIndex(h, kind);
  EXPECT_GE(index, 0);
  return h.sections[index < 0 ? 0 : index];
}

Bytes EditHeader(const std::function<void(BlobHeader&)>& edit, bool resign = true) {
  Bytes blob = blobtest::StandardBlob();
  BlobHeader h = blobtest::ReadHeader(blob);
  edit(h);
  blobtest::WriteHeader(blob, h, resign);
  return blob;
}

Bytes EditManifest(const std::function<void(ManifestSpec&)>& edit) {
  Bytes blob = blobtest::StandardBlob();
  ManifestSpec manifest = blobtest::ReadManifest(blob);
  edit(manifest);
  blobtest::ReplaceManifest(blob, blobtest::BuildManifest(manifest));
  return blob;
}

// A blob the writer makes from StandardSpec() after `edit` (the writer does not validate
// programs, so bad values reach the file with correct checksums).
Bytes EditSpec(const std::function<void(BlobSpec&)>& edit) {
  BlobSpec spec = blobtest::StandardSpec();
  edit(spec);
  auto blob = blobtest::BuildBlob(spec);
  if (!blob.ok()) {
    ADD_FAILURE() << "BuildBlob: " << blob.status().ToString();
    return {};
  }
  return std::move(*blob);
}

ProgramSpec& Main(BlobSpec& spec) {
  return spec.models[0].programs[0];
}
ProgramSpec& Head(BlobSpec& spec) {
  return spec.models[1].programs[0];
}

// File offset of weight `index`'s bytes, and of program `program` of model `model`.
uint64_t WeightAt(const Bytes& blob, uint32_t index) {
  ManifestSpec m = blobtest::ReadManifest(blob);
  return blobtest::SectionBytes(std::span<const std::byte>(blob), SectionKind::kWeights).data() -
         blob.data() + m.weights.at(index).offset;
}
blobtest::ProgramRefEntry ProgramAt(const Bytes& blob, size_t model, size_t program) {
  ManifestSpec m = blobtest::ReadManifest(blob);
  blobtest::ProgramRefEntry ref = m.models.at(model).programs.at(program);
  ref.offset +=
      blobtest::SectionBytes(std::span<const std::byte>(blob), SectionKind::kPrograms).data() -
      blob.data();
  return ref;
}

void FlipByte(Bytes& blob, uint64_t at) {
  ASSERT_LT(at, blob.size());
  blob[at] ^= std::byte{0x5a};
}

void StoreU32(Bytes& blob, uint64_t at, uint32_t value) {
  ASSERT_LE(at + 4, blob.size());
  std::memcpy(blob.data() + at, &value, sizeof value);
}

Bytes MakeCorruptBlob(Corruption c, OpenOptions& options) {
  using C = Corruption;
  const Bytes& good = blobtest::StandardBlob();
  switch (c) {
    case C::kEmptyFile:
      return {};
    case C::kTruncatedHeader:
      return Bytes(good.begin(), good.begin() + 100);
    case C::kBadMagic:
      return EditHeader([](BlobHeader& h) { h.magic[0] = 'X'; });
    case C::kFormatVersionPlusOne:
      return EditHeader([](BlobHeader& h) { ++h.format_version; });
    case C::kWrongHeaderSize:
      return EditHeader([](BlobHeader& h) { h.header_size += 8; });
    case C::kHeaderChecksum:
      return EditHeader([](BlobHeader& h) { h.header_checksum ^= 1; }, /*resign=*/false);
    case C::kFileSizeMismatch:
      return EditHeader([](BlobHeader& h) { h.file_size += kSectionAlignment; });
    case C::kFileExtended: {
      Bytes blob = good;
      blob.push_back(std::byte{0});
      return blob;
    }
    case C::kTargetBuildId:
      return EditHeader([](BlobHeader& h) { h.target.packing_build_id[0] ^= 1; });
    case C::kPackLayoutVersion:
      return EditHeader([](BlobHeader& h) { ++h.target.pack_layout_version; });
    case C::kMissingCpuFeature:
      options.available_cpu_features = DetectedCpuFeatures() & ~cpu::kAmxTile;
      return EditHeader([](BlobHeader& h) { h.target.required_cpu_features |= cpu::kAmxTile; });
    case C::kNoCpuFeaturesAvailable:
      options.available_cpu_features = 0;
      return EditHeader([](BlobHeader& h) { h.target.required_cpu_features |= cpu::kSse42; });
    case C::kUnknownCpuFeatureBit:
      return EditHeader([](BlobHeader& h) { h.target.required_cpu_features |= 1ull << 40; });
    case C::kSectionCountZero:
      return EditHeader([](BlobHeader& h) { h.section_count = 0; });
    case C::kSectionCountAboveMax:
      return EditHeader([](BlobHeader& h) { h.section_count = kMaxSections + 1; });
    case C::kUnknownSectionKind:
      return EditHeader([](BlobHeader& h) { h.sections[1].kind = 4; });
    case C::kSectionKindZero:
      return EditHeader([](BlobHeader& h) { h.sections[2].kind = 0; });
    case C::kDuplicateSection:
      return EditHeader(
          [](BlobHeader& h) { h.sections[1].kind = static_cast<uint32_t>(SectionKind::kWeights); });
    case C::kMisalignedSection:
      return EditHeader([](BlobHeader& h) { Section(h, SectionKind::kManifest).offset += 64; });
    case C::kSectionInHeaderPage:
      return EditHeader([](BlobHeader& h) { Section(h, SectionKind::kWeights).offset = 0; });
    case C::kSectionPastEnd:
      return EditHeader([](BlobHeader& h) { Section(h, SectionKind::kManifest).size += 1; });
    case C::kSectionOffsetPastEnd:
      return EditHeader([](BlobHeader& h) {
        SectionEntry& s = Section(h, SectionKind::kPrograms);
        s.offset = (h.file_size / kSectionAlignment + 2) * kSectionAlignment;
        s.size = 0;
      });
    case C::kSectionRangeWraps:
      // offset + size wraps around to 0: only a check written as size <= total && offset <=
      // total - size catches it.
      return EditHeader([](BlobHeader& h) {
        SectionEntry& s = Section(h, SectionKind::kWeights);
        EXPECT_EQ(s.offset, 4096u);
        s.size = kU64Max - 4095;
      });
    case C::kOverlappingSections:
      return EditHeader([](BlobHeader& h) {
        Section(h, SectionKind::kPrograms).offset = Section(h, SectionKind::kWeights).offset;
      });
    case C::kOverlappingManifest:
      return EditHeader([](BlobHeader& h) {
        Section(h, SectionKind::kManifest).offset = Section(h, SectionKind::kPrograms).offset;
      });
    case C::kMissingSection:
      return EditHeader([](BlobHeader& h) {
        int index = blobtest::SectionIndex(h, SectionKind::kManifest);
        h.sections[index] = h.sections[h.section_count - 1];
        h.sections[h.section_count - 1] = {};
        --h.section_count;
      });
    case C::kManifestChecksum: {
      Bytes blob = good;
      auto manifest = blobtest::SectionBytes(blob, SectionKind::kManifest);
      manifest[manifest.size() / 2] ^= std::byte{1};
      return blob;
    }
    case C::kProgramsChecksum: {
      Bytes blob = good;
      auto programs = blobtest::SectionBytes(blob, SectionKind::kPrograms);
      programs[programs.size() / 2] ^= std::byte{1};
      return blob;
    }
    case C::kManifestFailsVerification: {
      // The root offset points far past the end; re-signed, so only the Verifier can object.
      Bytes blob = good;
      auto manifest = blobtest::SectionBytes(blob, SectionKind::kManifest);
      StoreU32(blob, manifest.data() - blob.data(), 0x7ffffff0u);
      blobtest::ResignAll(blob);
      return blob;
    }
    case C::kManifestVtableOutOfRange: {
      // The root table's vtable offset (its first 4 bytes) points outside the buffer.
      Bytes blob = good;
      auto manifest = blobtest::SectionBytes(blob, SectionKind::kManifest);
      uint32_t root = 0;
      std::memcpy(&root, manifest.data(), sizeof root);
      EXPECT_LT(root + 4, manifest.size());
      StoreU32(blob, manifest.data() - blob.data() + root, 0x40000000u);
      blobtest::ResignAll(blob);
      return blob;
    }
    case C::kManifestTruncated: {
      Bytes blob = good;
      auto manifest = blobtest::SectionBytes(blob, SectionKind::kManifest);
      std::vector<uint8_t> shorter(
          reinterpret_cast<const uint8_t*>(manifest.data()),
          reinterpret_cast<const uint8_t*>(manifest.data()) + manifest.size() - 16);
      blobtest::ReplaceManifest(blob, shorter);
      return blob;
    }
    case C::kProgramRefChecksum: {
      Bytes blob = good;
      blobtest::ProgramRefEntry ref = ProgramAt(blob, 0, 1);
      FlipByte(blob, ref.offset + ref.size / 2);
      blobtest::ResignAll(blob);  // the PROGRAMS section checksum now matches; the ref's does not
      return blob;
    }
    case C::kProgramFailsVerification: {
      Bytes blob = good;
      StoreU32(blob, ProgramAt(blob, 1, 0).offset, 0x7ffffffcu);
      blobtest::RefreshProgramChecksums(blob);
      return blob;
    }
    case C::kEmptyProgram:
      return EditManifest([](ManifestSpec& m) {
        m.models[1].programs[0].size = 0;
        m.models[1].programs[0].checksum = Hash64({});
      });
    case C::kNoModels:
      return EditManifest([](ManifestSpec& m) { m.models.clear(); });
    case C::kModelWithoutPrograms:
      return EditManifest([](ManifestSpec& m) { m.models[1].programs.clear(); });
    case C::kModelNameTooLong:
      return EditManifest(
          [](ManifestSpec& m) { m.models[1].name = std::string(kMaxNameLength + 1, 'm'); });
    case C::kProgramRefOutsideSection: {
      uint64_t programs_size =
          blobtest::SectionBytes(std::span<const std::byte>(good), SectionKind::kPrograms).size();
      return EditManifest([&](ManifestSpec& m) {
        m.models[0].programs[1].offset = (programs_size + 63) / 64 * 64;
      });
    }
    case C::kProgramRefRangeWraps:
      return EditManifest([](ManifestSpec& m) {
        m.models[0].programs[1].offset = 64;
        m.models[0].programs[1].size = kU64Max - 63;
      });
    case C::kProgramRefMisaligned:
      return EditManifest([](ManifestSpec& m) {
        EXPECT_EQ(m.models[0].programs[0].offset, 0u);
        m.models[0].programs[0].offset = 8;
      });
    case C::kWeightOffsetOutsideSection: {
      uint64_t weights_size =
          blobtest::SectionBytes(std::span<const std::byte>(good), SectionKind::kWeights).size();
      return EditManifest(
          [&](ManifestSpec& m) { m.weights[6].offset = (weights_size + 63) / 64 * 64; });
    }
    case C::kWeightRangeWraps:
      return EditManifest([](ManifestSpec& m) {
        m.weights[0].offset = 64;
        m.weights[0].size = kU64Max - 63;
      });
    case C::kWeightMisaligned:
      return EditManifest([](ManifestSpec& m) {
        EXPECT_EQ(m.weights[0].offset, 0u);
        m.weights[0].offset = 4;
      });
    case C::kWeightSizeNotMatchingShape:
      return EditManifest([](ManifestSpec& m) { m.weights[0].size -= 4; });
    case C::kWeightUnknownDtype:
      return EditManifest([](ManifestSpec& m) { m.weights[1].dtype = 99; });
    case C::kWeightStringDtype:
      return EditManifest(
          [](ManifestSpec& m) { m.weights[1].dtype = static_cast<int32_t>(DataType::kString); });
    case C::kWeightRankAboveLimit:
      // 17 dims of 1 keep the byte size right: only the rank limit is broken.
      return EditManifest([](ManifestSpec& m) {
        EXPECT_TRUE(m.weights[2].shape.empty());
        m.weights[2].shape.assign(kMaxRank + 1, 1);
      });
    case C::kWeightNegativeDim:
      // The product of the dims is right (-2 * -3 = 6 floats = 24 bytes); the signs are not.
      return EditManifest([](ManifestSpec& m) { m.weights[0].shape = {-2, -3}; });
    case C::kWeightElementCountOverflows:
      // (2^62 + 75) * 4 wraps to exactly 300 elements: only a checked product refuses it.
      return EditManifest([](ManifestSpec& m) { m.weights[4].shape = {(1ll << 62) + 75, 4}; });
    case C::kWeightByteSizeOverflows:
      // 2^61 + 4 elements is a valid count; times 8 bytes it wraps to exactly 32.
      return EditManifest([](ManifestSpec& m) { m.weights[5].shape = {(1ll << 61) + 4}; });
    case C::kWeightShapeMisaligned:
      // The FlatBuffers Verifier accepts a [long] that is only 4-byte aligned.
      return EditManifest([](ManifestSpec& m) { m.weights[6].misalign_shape = true; });
    case C::kProgramInputOutOfRange:
      return EditSpec([](BlobSpec& s) { Main(s).inputs.push_back(8); });
    case C::kProgramOutputAbsent:
      return EditSpec([](BlobSpec& s) { Main(s).outputs = {-1}; });
    case C::kNodeInputOutOfRange:
      return EditSpec([](BlobSpec& s) { Main(s).nodes[0].inputs[1] = 8; });
    case C::kNodeOutputBelowAbsent:
      return EditSpec([](BlobSpec& s) { Main(s).nodes[3].outputs[0] = -2; });
    case C::kBodyNodeInputOutOfRange:
      return EditSpec([](BlobSpec& s) { s.models[0].programs[1].nodes[0].inputs[0] = 2; });
    case C::kValueWeightOutOfRange:
      return EditSpec([](BlobSpec& s) { Main(s).values[1].weight = 7; });
    case C::kValueWeightBelowAbsent:
      return EditSpec([](BlobSpec& s) { Main(s).values[1].weight = -2; });
    case C::kValueRankAboveLimit:
      return EditSpec([](BlobSpec& s) {
        Main(s).values[0].shape.assign(kMaxRank + 1, 1);
        Main(s).values[0].dim_names.clear();
      });
    case C::kValueDimBelowUnknown:
      return EditSpec([](BlobSpec& s) { Main(s).values[3].shape = {-2, 2}; });
    case C::kValueUnknownDtype:
      return EditSpec([](BlobSpec& s) { Main(s).values[3].dtype = static_cast<DataType>(35); });
    case C::kValueDimNamesMismatch:
      return EditSpec([](BlobSpec& s) { Main(s).values[0].dim_names = {"batch"}; });
    case C::kValueNameTooLong:
      return EditSpec(
          [](BlobSpec& s) { Main(s).values[7].name = std::string(kMaxNameLength + 1, 'v'); });
    case C::kValueArenaOutside:
      return EditSpec([](BlobSpec& s) { Main(s).values[5].arena_offset = 128; });
    case C::kValueArenaMisaligned:
      return EditSpec([](BlobSpec& s) { Main(s).values[5].arena_offset = 32; });
    case C::kValueArenaNegativeOffset:
      return EditSpec([](BlobSpec& s) { Main(s).values[5].arena_offset = -64; });
    case C::kValueArenaNegativeSize:
      return EditSpec([](BlobSpec& s) { Main(s).values[5].arena_bytes = -16; });
    case C::kNegativeProgramArena:
      return EditSpec([](BlobSpec& s) {
        Main(s).arena_bytes = -1;
        Main(s).values[5].arena_offset = -1;
      });
    case C::kGraphAttributeOutOfRange:
      return EditSpec([](BlobSpec& s) { Main(s).nodes[2].attributes[0].graph = 2; });
    case C::kGraphAttributeNegative:
      return EditSpec([](BlobSpec& s) { Main(s).nodes[2].attributes[1].graph = -1; });
    case C::kValueWeightDtypeMismatch:
      return EditSpec([](BlobSpec& s) { Main(s).values[1].dtype = DataType::kInt32; });
    case C::kValueWeightShapeMismatch:
      return EditSpec([](BlobSpec& s) { Main(s).values[1].shape = {3, 2}; });
    case C::kArenaAboveLimit:
      return EditSpec([](BlobSpec& s) { Main(s).arena_bytes = kMaxArenaBytes + 1; });
    case C::kGraphAttributeSelf:
      return EditSpec([](BlobSpec& s) { Main(s).nodes[2].attributes[0].graph = 0; });
    case C::kBodyGraphAttributeBackward:
      return EditSpec([](BlobSpec& s) {
        blobtest::AttrSpec body{.name = "body", .type = fb::AttrType::Graph, .graph = 0};
        s.models[0].programs[1].nodes[0].attributes.push_back(body);
      });
    case C::kImplicitInputsAboveInputs:
      return EditSpec([](BlobSpec& s) { Main(s).nodes[2].implicit_inputs = 3; });
    case C::kImplicitInputsNegative:
      return EditSpec([](BlobSpec& s) { Main(s).nodes[2].implicit_inputs = -1; });
    case C::kTensorAttributeSizeMismatch:
      return EditSpec([](BlobSpec& s) { Main(s).nodes[1].attributes[0].s.pop_back(); });
    case C::kTensorAttributeMissingData:
      return EditSpec([](BlobSpec& s) { Main(s).nodes[1].attributes[0].s.clear(); });
    case C::kTensorAttributeBadDtype:
      return EditSpec([](BlobSpec& s) {
        Main(s).nodes[1].attributes[0].tensor_dtype = static_cast<int32_t>(DataType::kString);
      });
    case C::kTensorAttributeRankAboveLimit:
      return EditSpec([](BlobSpec& s) {
        auto& a = Main(s).nodes[1].attributes[0];
        a.ints.assign(kMaxRank + 1, 1);
        a.s.resize(4);
      });
    case C::kTensorAttributeShapeOverflows:
      // (2^62 + 4) floats is 2^64 + 16 bytes, which wraps to exactly the 16 bytes present.
      return EditSpec([](BlobSpec& s) { Main(s).nodes[1].attributes[0].ints = {(1ll << 62) + 4}; });
    case C::kTensorAttributeNegativeDim:
      return EditSpec([](BlobSpec& s) { Main(s).nodes[1].attributes[0].ints = {-2, -2}; });
    case C::kValueShapeMisaligned:
      return EditSpec([](BlobSpec& s) { Main(s).values[3].misalign_shape = true; });
    case C::kAttributeIntsMisaligned:
      return EditSpec([](BlobSpec& s) { Main(s).nodes[2].attributes[3].misalign_ints = true; });
    case C::kTensorAttributeDimsMisaligned:
      return EditSpec([](BlobSpec& s) { Main(s).nodes[1].attributes[0].misalign_ints = true; });
    case C::kNodeWritesAWeight:
      return EditSpec([](BlobSpec& s) { Head(s).nodes[1].outputs = {0}; });
    case C::kNodeWritesAProgramInput:
      return EditSpec([](BlobSpec& s) { Head(s).nodes[0].outputs = {1}; });
    case C::kNodeWritesItsOwnInput:
      return EditSpec([](BlobSpec& s) { Head(s).nodes[1].outputs = {3}; });
    case C::kNodeWritesAnOutputTwice:
      return EditSpec([](BlobSpec& s) { Main(s).nodes[3].outputs = {7, 7}; });
    case C::kNodeReadsAValueWrittenLater:
      // As a Loop whose trip count is computed after it: the value would be absent at run time.
      return EditSpec([](BlobSpec& s) { Head(s).nodes[0].inputs = {2}; });
    case C::kNodesOutOfOrder:
      return EditSpec([](BlobSpec& s) { std::swap(Head(s).nodes[0], Head(s).nodes[1]); });
    case C::kProgramOutputNeverWritten:
      return EditSpec([](BlobSpec& s) { Head(s).nodes[1].outputs = {-1}; });
    case C::kProgramInputTwice:
      return EditSpec([](BlobSpec& s) { Main(s).inputs.push_back(0); });
    case C::kProgramInputIsAWeight:
      return EditSpec([](BlobSpec& s) { Main(s).inputs.push_back(1); });
    case C::kArenaOverlapWhileLive:
      // `hidden` is live from node 0 to node 3, `table` at node 1.
      return EditSpec([](BlobSpec& s) {
        Main(s).values[3].arena_offset = 64;
        Main(s).values[3].arena_bytes = 16;
      });
    case C::kArenaOnAValueNoNodeWrites:
      return EditSpec([](BlobSpec& s) {
        Main(s).values[0].arena_offset = 0;
        Main(s).values[0].arena_bytes = 16;
      });
    case C::kIfCondNotBool:
      return EditSpec([](BlobSpec& s) { Main(s).values[2].dtype = DataType::kInt32; });
    case C::kIfBranchOutputType:
      return EditSpec(
          [](BlobSpec& s) { s.models[0].programs[1].values[1].dtype = DataType::kInt64; });
    case C::kIfCaptureType:
      return EditSpec(
          [](BlobSpec& s) { s.models[0].programs[1].values[0].dtype = DataType::kFloat16; });
    case C::kIfBranchInputCount:
      return EditSpec([](BlobSpec& s) {
        Main(s).nodes[2].inputs = {2};
        Main(s).nodes[2].implicit_inputs = 0;
      });
    case C::kWeightsSectionChecksum: {
      Bytes blob = good;
      FlipByte(blob, WeightAt(blob, 4) + 10);
      return blob;
    }
    case C::kWeightChecksum: {
      Bytes blob = good;
      FlipByte(blob, WeightAt(blob, 4) + 10);
      blobtest::ResignAll(blob);  // the WEIGHTS section checksum matches; weight 4's does not
      return blob;
    }
    case C::kCount:
      break;
  }
  ADD_FAILURE() << "no recipe for corruption " << static_cast<int>(c);
  return good;
}

// ---- Tests -------------------------------------------------------------------------------------

TEST(CorruptionCatalogueTest, HasOneCaseForEveryCorruptionInOrder) {
  const auto& catalogue = Catalogue();
  ASSERT_EQ(catalogue.size(), static_cast<size_t>(Corruption::kCount));
  for (size_t i = 0; i < catalogue.size(); ++i) {
    EXPECT_EQ(static_cast<size_t>(catalogue[i].corruption), i) << catalogue[i].name;
  }
}

TEST(CorruptionCatalogueTest, StandardBlobIsValidBeforeCorruption) {
  const Bytes& good = blobtest::StandardBlob();
  ASSERT_FALSE(good.empty());
  OpenOptions options = blobtest::DefaultOptions();
  options.verify_weight_checksums = true;
  auto view = blobtest::OpenBlob(good, options);
  ASSERT_TRUE(view.ok()) << view.status().ToString();
  // The indices the recipes poke at exist and hold what the recipes assume.
  ManifestSpec m = blobtest::ReadManifest(good);
  ASSERT_EQ(m.weights.size(), 7u);
  ASSERT_EQ(m.models.size(), 2u);
  EXPECT_EQ(m.models[0].name, "vision");
  EXPECT_EQ(m.models[0].programs.size(), 2u);
  EXPECT_EQ(m.models[1].name, "head");
  EXPECT_EQ(m.weights[4].size, 300u);
  EXPECT_EQ(m.weights[6].size, 30u);
  BlobHeader h = blobtest::ReadHeader(good);
  EXPECT_EQ(h.section_count, 3u);
  EXPECT_EQ(h.sections[0].kind, static_cast<uint32_t>(SectionKind::kWeights));
  EXPECT_EQ(h.sections[1].kind, static_cast<uint32_t>(SectionKind::kPrograms));
  EXPECT_EQ(h.sections[2].kind, static_cast<uint32_t>(SectionKind::kManifest));
  EXPECT_EQ(h.target.required_cpu_features & cpu::kAmxTile, 0u)
      << "the CPU-feature recipe needs AMX not to be required already";
}

TEST(CorruptionCatalogueTest, EditingToolsKeepAValidBlobValid) {
  // Re-signing and rebuilding the manifest without changes must not by themselves break a blob,
  // or the catalogue would test the tools instead of the reader.
  Bytes blob = blobtest::StandardBlob();
  blobtest::ResignAll(blob);
  EXPECT_EQ(blob, blobtest::StandardBlob()) << "re-signing an unchanged blob changes nothing";
  blobtest::WriteHeader(blob, blobtest::ReadHeader(blob));
  EXPECT_EQ(blob, blobtest::StandardBlob());
  blobtest::ReplaceManifest(blob, blobtest::BuildManifest(blobtest::ReadManifest(blob)));
  auto view = blobtest::OpenBlob(blob);
  ASSERT_TRUE(view.ok()) << view.status().ToString();
  blobtest::RefreshProgramChecksums(blob);
  view = blobtest::OpenBlob(blob);
  ASSERT_TRUE(view.ok()) << view.status().ToString();
  auto good = blobtest::OpenBlob(blobtest::StandardBlob());
  ASSERT_TRUE(good.ok());
  EXPECT_EQ(blobtest::ContentsOf(*view), blobtest::ContentsOf(*good));
}

class CorruptionTest : public ::testing::TestWithParam<CorruptionCase> {};

TEST_P(CorruptionTest, IsRefusedWithTheExpectedError) {
  const CorruptionCase& c = GetParam();
  OpenOptions options = blobtest::DefaultOptions();
  options.verify_weight_checksums = c.verify_weights;
  Bytes blob = MakeCorruptBlob(c.corruption, options);
  ASSERT_FALSE(HasFailure()) << "the recipe itself failed";
  bool options_changed =
      options.available_cpu_features != blobtest::DefaultOptions().available_cpu_features;
  ASSERT_TRUE(blob != blobtest::StandardBlob() || options_changed) << "the recipe changed nothing";
  auto view = blobtest::OpenBlob(blob, options);
  ASSERT_FALSE(view.ok()) << c.name << " was accepted";
  EXPECT_EQ(view.status().code(), c.code) << view.status().ToString();
  EXPECT_THAT(view.status().message(), HasSubstr(c.message));
  EXPECT_THAT(view.status().message(), HasSubstr("'test.blob'")) << "errors name the file";
}

INSTANTIATE_TEST_SUITE_P(Catalogue, CorruptionTest, ::testing::ValuesIn(Catalogue()), PrintCase);

// Weight bytes are not read on the default load path: the same corruptions are accepted (and the
// corrupt byte is visible) when verify_weight_checksums is false.
class WeightCorruptionWithoutVerificationTest : public ::testing::TestWithParam<CorruptionCase> {};

TEST_P(WeightCorruptionWithoutVerificationTest, IsAccepted) {
  const CorruptionCase& c = GetParam();
  OpenOptions options = blobtest::DefaultOptions();
  Bytes blob = MakeCorruptBlob(c.corruption, options);
  ASSERT_FALSE(options.verify_weight_checksums);
  auto view = blobtest::OpenBlob(blob, options);
  ASSERT_TRUE(view.ok()) << view.status().ToString();
  auto good = blobtest::OpenBlob(blobtest::StandardBlob());
  ASSERT_TRUE(good.ok());
  EXPECT_NE(view->WeightBytes(4)[10], good->WeightBytes(4)[10]);
  EXPECT_TRUE(std::ranges::equal(view->WeightBytes(3), good->WeightBytes(3)));
}

std::vector<CorruptionCase> WeightCases() {
  std::vector<CorruptionCase> out;
  for (const CorruptionCase& c : Catalogue()) {
    if (c.verify_weights) out.push_back(c);
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Catalogue, WeightCorruptionWithoutVerificationTest,
                         ::testing::ValuesIn(WeightCases()), PrintCase);

}  // namespace
}  // namespace epctx::format
