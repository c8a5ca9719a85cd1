// Blobs written by BlobWriter read back through BlobView exactly as they went in.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <set>

#include "format/blob_helpers.h"
#include "format/blob_writer.h"
#include "format/target.h"
#include "util/cpu_features.h"
#include "util/file.h"
#include "util/hash.h"

namespace epctx::format {
namespace {

using blobtest::BlobSpec;
using blobtest::Bytes;
using blobtest::PatternBytes;
using blobtest::ProgramSpec;
using blobtest::StandardSpec;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

template <typename T>
std::vector<T> ToVector(const flatbuffers::Vector<T>* v) {
  if (v == nullptr) return {};
  return std::vector<T>(v->begin(), v->end());
}

std::vector<std::string> ToStrings(
    const flatbuffers::Vector<flatbuffers::Offset<flatbuffers::String>>* v) {
  std::vector<std::string> out;
  if (v == nullptr) return out;
  for (const flatbuffers::String* s : *v) out.push_back(s->str());
  return out;
}

std::span<const std::byte> AsBytes(const std::vector<uint8_t>& v) {
  return std::as_bytes(std::span(v));
}

void ExpectProgramMatches(const fb::Program& p, const ProgramSpec& spec) {
  SCOPED_TRACE("program " + spec.name);
  ASSERT_NE(p.name(), nullptr);
  EXPECT_EQ(p.name()->str(), spec.name);
  ASSERT_NE(p.values(), nullptr);
  ASSERT_EQ(p.values()->size(), spec.values.size());
  for (uint32_t i = 0; i < spec.values.size(); ++i) {
    const fb::Value* v = p.values()->Get(i);
    const blobtest::ValueSpec& s = spec.values[i];
    SCOPED_TRACE("value " + s.name);
    EXPECT_EQ(v->name()->str(), s.name);
    EXPECT_EQ(v->dtype(), static_cast<int32_t>(s.dtype));
    EXPECT_EQ(v->shape() != nullptr, s.has_shape);
    EXPECT_EQ(ToVector(v->shape()), s.shape);
    EXPECT_EQ(ToStrings(v->dim_names()), s.dim_names);
    EXPECT_EQ(v->weight(), s.weight);
    EXPECT_EQ(v->arena_offset(), s.arena_offset);
    EXPECT_EQ(v->arena_bytes(), s.arena_bytes);
  }
  ASSERT_NE(p.nodes(), nullptr);
  ASSERT_EQ(p.nodes()->size(), spec.nodes.size());
  for (uint32_t n = 0; n < spec.nodes.size(); ++n) {
    const fb::Node* node = p.nodes()->Get(n);
    const blobtest::NodeSpec& s = spec.nodes[n];
    SCOPED_TRACE("node " + s.name);
    EXPECT_EQ(node->name()->str(), s.name);
    EXPECT_EQ(node->op_type()->str(), s.op_type);
    EXPECT_EQ(node->domain()->str(), s.domain);
    EXPECT_EQ(ToVector(node->inputs()), s.inputs);
    EXPECT_EQ(ToVector(node->outputs()), s.outputs);
    ASSERT_NE(node->attributes(), nullptr);
    ASSERT_EQ(node->attributes()->size(), s.attributes.size());
    for (uint32_t k = 0; k < s.attributes.size(); ++k) {
      const fb::Attribute* a = node->attributes()->Get(k);
      const blobtest::AttrSpec& as = s.attributes[k];
      SCOPED_TRACE("attribute " + as.name);
      EXPECT_EQ(a->name()->str(), as.name);
      EXPECT_EQ(a->type(), as.type);
      EXPECT_EQ(a->i(), as.i);
      EXPECT_EQ(a->f(), as.f);
      EXPECT_EQ(ToVector(a->s()), as.s);
      EXPECT_EQ(ToVector(a->ints()), as.ints);
      EXPECT_EQ(ToVector(a->floats()), as.floats);
      EXPECT_EQ(ToStrings(a->strings()), as.strings);
      EXPECT_EQ(a->tensor_dtype(), as.tensor_dtype);
      EXPECT_EQ(a->graph(), as.graph);
    }
  }
  EXPECT_EQ(ToVector(p.inputs()), spec.inputs);
  EXPECT_EQ(ToVector(p.outputs()), spec.outputs);
  EXPECT_EQ(p.arena_bytes(), spec.arena_bytes);
  ASSERT_NE(p.opsets(), nullptr);
  ASSERT_EQ(p.opsets()->size(), spec.opsets.size());
  for (uint32_t k = 0; k < spec.opsets.size(); ++k) {
    EXPECT_EQ(p.opsets()->Get(k)->domain()->str(), spec.opsets[k].first);
    EXPECT_EQ(p.opsets()->Get(k)->version(), spec.opsets[k].second);
  }
}

// Adds every weight and model of `spec` to `writer`; weights are expected to be distinct.
void AddSpec(BlobWriter& writer, const BlobSpec& spec) {
  for (size_t i = 0; i < spec.weights.size(); ++i) {
    const blobtest::WeightSpec& w = spec.weights[i];
    auto index = writer.AddWeight({w.dtype, w.shape, w.layout, w.bytes, nullptr});
    ASSERT_TRUE(index.ok()) << index.status().ToString();
    ASSERT_EQ(*index, i);
  }
  for (const blobtest::ModelSpec& m : spec.models) {
    std::vector<std::vector<uint8_t>> programs;
    for (const ProgramSpec& p : m.programs) programs.push_back(blobtest::BuildProgram(p));
    ASSERT_TRUE(writer.AddModel(m.name, std::move(programs), m.source_size, m.source_hash).ok());
  }
}

TEST(BlobSpecTest, StandardSpecCoversWhatTheRoundTripClaims) {
  BlobSpec spec = StandardSpec();
  std::set<DataType> dtypes;
  bool has_scalar = false;
  bool has_empty = false;
  for (const auto& w : spec.weights) {
    dtypes.insert(w.dtype);
    has_scalar |= w.shape.empty();
    has_empty |= w.bytes.empty();
  }
  EXPECT_GE(dtypes.size(), 5u);
  EXPECT_TRUE(has_scalar);
  EXPECT_TRUE(has_empty);
  ASSERT_EQ(spec.models.size(), 2u);
  EXPECT_EQ(spec.models[0].programs.size(), 2u);
  EXPECT_EQ(spec.models[1].programs.size(), 1u);
  std::set<fb::AttrType> types;
  for (const auto& m : spec.models) {
    for (const auto& p : m.programs) {
      for (const auto& n : p.nodes) {
        for (const auto& a : n.attributes) types.insert(a.type);
      }
    }
  }
  EXPECT_EQ(types.size(), 9u) << "every AttrType, Undefined included";
}

class BlobRoundTripTest : public ::testing::Test {
 protected:
  void SetUp() override {
    spec_ = StandardSpec();
    ASSERT_NO_FATAL_FAILURE(AddSpec(writer_, spec_));
    auto buffer = writer_.WriteToMemory();
    ASSERT_TRUE(buffer.ok()) << buffer.status().ToString();
    buffer_ = std::move(*buffer);
    auto view = BlobView::Open(buffer_.bytes(), "memory.blob", blobtest::DefaultOptions());
    ASSERT_TRUE(view.ok()) << view.status().ToString();
    view_ = std::move(*view);
  }

  BlobSpec spec_;
  BlobWriter writer_;
  AlignedBuffer buffer_;
  BlobView view_;
};

TEST_F(BlobRoundTripTest, HeaderDescribesTheFile) {
  const BlobHeader& h = view_.header();
  EXPECT_EQ(std::memcmp(h.magic, kBlobMagic, sizeof h.magic), 0);
  EXPECT_EQ(h.format_version, kFormatVersion);
  EXPECT_EQ(h.header_size, sizeof(BlobHeader));
  EXPECT_GT(strnlen(h.engine_version, sizeof h.engine_version), 0u);
  TargetFingerprint mine = CurrentTarget();
  EXPECT_EQ(std::memcmp(&h.target, &mine, sizeof mine), 0);
  EXPECT_EQ(h.file_size, buffer_.size());
  EXPECT_EQ(view_.bytes().data(), buffer_.data());
  EXPECT_EQ(view_.name(), "memory.blob");
  // Unused section slots and every reserved field stay zero.
  EXPECT_EQ(h.reserved, 0u);
  EXPECT_EQ(h.target.kernel_isa, 0u);  // the default writer packs for no kernel tier
  for (uint32_t i = 0; i < kMaxSections; ++i) {
    EXPECT_EQ(h.sections[i].reserved, 0u);
    if (i >= h.section_count) {
      SectionEntry zero{};
      EXPECT_EQ(std::memcmp(&h.sections[i], &zero, sizeof zero), 0) << "slot " << i;
    }
  }
  // Everything after the header struct on the header page is zero.
  for (size_t i = sizeof(BlobHeader); i < kHeaderPageSize; ++i) {
    ASSERT_EQ(buffer_.bytes()[i], std::byte{0}) << "header page byte " << i;
  }
}

TEST_F(BlobRoundTripTest, SectionsArePageAlignedDisjointAndChecksummed) {
  const BlobHeader& h = view_.header();
  ASSERT_EQ(h.section_count, 3u);
  std::set<uint32_t> kinds;
  uint64_t previous_end = kHeaderPageSize;
  for (uint32_t i = 0; i < h.section_count; ++i) {
    const SectionEntry& s = h.sections[i];
    SCOPED_TRACE("section " + std::to_string(i));
    kinds.insert(s.kind);
    EXPECT_EQ(s.offset % kSectionAlignment, 0u);
    EXPECT_GE(s.offset, previous_end);
    EXPECT_LE(s.offset + s.size, buffer_.size());
    EXPECT_EQ(s.checksum, Hash64(buffer_.bytes().subspan(s.offset, s.size)));
    previous_end = s.offset + s.size;
  }
  EXPECT_THAT(kinds, ElementsAre(1u, 2u, 3u));
  // The manifest ends the file.
  EXPECT_EQ(previous_end, buffer_.size());
}

TEST_F(BlobRoundTripTest, WeightsReadBackByteForByteAndAligned) {
  const auto* weights = view_.manifest().weights();
  ASSERT_NE(weights, nullptr);
  ASSERT_EQ(weights->size(), spec_.weights.size());
  const std::byte* file_start = view_.bytes().data();
  for (uint32_t i = 0; i < spec_.weights.size(); ++i) {
    SCOPED_TRACE("weight " + std::to_string(i));
    const blobtest::WeightSpec& expected = spec_.weights[i];
    const fb::Weight* w = weights->Get(i);
    EXPECT_EQ(w->dtype(), static_cast<int32_t>(expected.dtype));
    EXPECT_EQ(ToVector(w->shape()), expected.shape);
    EXPECT_EQ(w->layout(), expected.layout);
    EXPECT_EQ(w->size(), expected.bytes.size());
    std::span<const std::byte> bytes = view_.WeightBytes(i);
    ASSERT_EQ(bytes.size(), expected.bytes.size());
    EXPECT_TRUE(std::equal(bytes.begin(), bytes.end(), expected.bytes.begin()));
    EXPECT_EQ(w->checksum(), Hash64(bytes));
    EXPECT_EQ((bytes.data() - file_start) % kTensorAlignment, 0);
    // The in-memory blob is page aligned, so the pointers themselves are aligned too.
    EXPECT_EQ(reinterpret_cast<uintptr_t>(bytes.data()) % kTensorAlignment, 0u);
  }
}

TEST_F(BlobRoundTripTest, ProgramsReadBackExactly) {
  for (const blobtest::ModelSpec& m : spec_.models) {
    SCOPED_TRACE("model " + m.name);
    auto model = view_.FindModel(m.name);
    ASSERT_TRUE(model.ok()) << model.status().ToString();
    EXPECT_EQ((*model)->name()->str(), m.name);
    EXPECT_EQ((*model)->source_size(), m.source_size);
    EXPECT_EQ((*model)->source_hash(), m.source_hash);
    ASSERT_EQ((*model)->programs()->size(), m.programs.size());
    const SectionEntry& programs_section = view_.header().sections[1];
    ASSERT_EQ(programs_section.kind, static_cast<uint32_t>(SectionKind::kPrograms));
    for (uint32_t pi = 0; pi < m.programs.size(); ++pi) {
      std::vector<uint8_t> expected = blobtest::BuildProgram(m.programs[pi]);
      const fb::ProgramRef* ref = (*model)->programs()->Get(pi);
      EXPECT_EQ(ref->size(), expected.size());
      EXPECT_EQ(ref->offset() % kProgramAlignment, 0u);
      EXPECT_EQ(ref->checksum(), Hash64(AsBytes(expected)));
      std::span<const std::byte> stored =
          view_.bytes().subspan(programs_section.offset + ref->offset(), ref->size());
      EXPECT_TRUE(std::ranges::equal(stored, AsBytes(expected)));
      const fb::Program* program = view_.GetProgram(**model, pi);
      const auto* root = reinterpret_cast<const std::byte*>(program);
      EXPECT_GT(root, stored.data());
      EXPECT_LT(root, stored.data() + stored.size());
      ExpectProgramMatches(*program, m.programs[pi]);
    }
  }
}

TEST_F(BlobRoundTripTest, FindModelMissNamesTheModelsPresent) {
  auto model = view_.FindModel("nope");
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(model.status().message(), HasSubstr("'memory.blob'"));
  EXPECT_THAT(model.status().message(), HasSubstr("no model named 'nope'"));
  EXPECT_THAT(model.status().message(), HasSubstr("(models: vision, head)"));
  // A prefix of a real name is not a hit.
  EXPECT_FALSE(view_.FindModel("vis").ok());
  EXPECT_FALSE(view_.FindModel("").ok());
}

TEST_F(BlobRoundTripTest, WeightChecksumVerificationPassesOnAGoodBlob) {
  OpenOptions options = blobtest::DefaultOptions();
  options.verify_weight_checksums = true;
  auto view = BlobView::Open(buffer_.bytes(), "memory.blob", options);
  EXPECT_TRUE(view.ok()) << view.status().ToString();
}

TEST_F(BlobRoundTripTest, WriteToFileAndWriteToMemoryProduceIdenticalBytes) {
  blobtest::TempDir dir;
  std::string path = dir.File("model.blob");
  Status written = writer_.WriteToFile(path);
  ASSERT_TRUE(written.ok()) << written.ToString();
  EXPECT_THAT(dir.List(), ElementsAre("model.blob")) << "no temporary file left behind";
  auto file = ReadWholeFile(path);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  ASSERT_EQ(file->size(), buffer_.size());
  EXPECT_EQ(std::memcmp(file->data(), buffer_.data(), buffer_.size()), 0);

  auto mapped = MappedFile::Open(path);
  ASSERT_TRUE(mapped.ok()) << mapped.status().ToString();
  auto view = BlobView::Open(mapped->bytes(), path, blobtest::DefaultOptions());
  ASSERT_TRUE(view.ok()) << view.status().ToString();
  EXPECT_EQ(blobtest::TouchEverything(*view), blobtest::TouchEverything(view_));
}

// The file sink gathers writes into 2 MiB chunks; weights that straddle chunk boundaries, gaps of
// alignment padding and the header written last must still land byte for byte where
// WriteToMemory puts them.
TEST(BlobWriterTest, ABlobOfSeveralChunksIsWrittenToFileAsInMemory) {
  std::vector<Bytes> weights;
  for (size_t size :
       {size_t{1500000}, size_t{3}, size_t{2097152}, size_t{777777}, size_t{4200001}}) {
    weights.push_back(PatternBytes(size, static_cast<uint8_t>(weights.size() + 7)));
  }
  BlobWriter writer;
  for (const Bytes& w : weights) {
    auto index =
        writer.AddWeight({DataType::kUint8, {static_cast<int64_t>(w.size())}, 0, w, nullptr});
    ASSERT_TRUE(index.ok()) << index.status().ToString();
  }
  ASSERT_TRUE(writer.AddModel("m", {blobtest::BuildProgram({.name = "p"})}, 0, 0).ok());
  auto memory = writer.WriteToMemory();
  ASSERT_TRUE(memory.ok()) << memory.status().ToString();
  ASSERT_GT(memory->size(), size_t{8} << 20);

  blobtest::TempDir dir;
  std::string path = dir.File("big.blob");
  Status written = writer.WriteToFile(path);
  ASSERT_TRUE(written.ok()) << written.ToString();
  auto file = ReadWholeFile(path);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  ASSERT_EQ(file->size(), memory->size());
  EXPECT_EQ(std::memcmp(file->data(), memory->data(), memory->size()), 0);
  auto view = blobtest::OpenBlob(std::as_bytes(std::span(file->data(), file->size())));
  ASSERT_TRUE(view.ok()) << view.status().ToString();
  for (uint32_t i = 0; i < weights.size(); ++i) {
    EXPECT_TRUE(std::ranges::equal(view->WeightBytes(i), weights[i])) << "weight " << i;
  }
}

TEST_F(BlobRoundTripTest, WritingTwiceGivesTheSameBytes) {
  auto again = writer_.WriteToMemory();
  ASSERT_TRUE(again.ok());
  ASSERT_EQ(again->size(), buffer_.size());
  EXPECT_EQ(std::memcmp(again->data(), buffer_.data(), buffer_.size()), 0);
}

TEST(BlobWriterTest, DeduplicatesIdenticalWeightsByContent) {
  Bytes a = PatternBytes(24, 1);
  Bytes a_copy = a;  // equal bytes at another address
  ASSERT_NE(a.data(), a_copy.data());
  Bytes b = PatternBytes(24, 2);
  BlobWriter writer;
  auto add = [&](DataType dtype, std::vector<int64_t> shape, uint32_t layout,
                 std::span<const std::byte> bytes) {
    auto index = writer.AddWeight({dtype, std::move(shape), layout, bytes, nullptr});
    EXPECT_TRUE(index.ok()) << index.status().ToString();
    return index.ok() ? *index : UINT32_MAX;
  };
  EXPECT_EQ(add(DataType::kFloat32, {2, 3}, 0, a), 0u);
  EXPECT_EQ(add(DataType::kFloat32, {2, 3}, 0, a_copy), 0u) << "same content: same index";
  EXPECT_EQ(add(DataType::kFloat32, {2, 3}, 0, b), 1u) << "other bytes";
  EXPECT_EQ(add(DataType::kFloat32, {2, 3}, 5, a), 2u) << "other layout id";
  EXPECT_EQ(add(DataType::kFloat32, {3, 2}, 0, a), 3u) << "other shape";
  EXPECT_EQ(add(DataType::kFloat32, {6}, 0, a), 4u) << "other rank";
  EXPECT_EQ(add(DataType::kInt32, {2, 3}, 0, a), 5u) << "other dtype";
  EXPECT_EQ(add(DataType::kFloat32, {2, 3}, 5, a_copy), 2u);
  // Empty weights carry no bytes (and possibly no pointer); they still dedup by shape and type.
  EXPECT_EQ(add(DataType::kInt64, {0, 4}, 0, {}), 6u);
  EXPECT_EQ(add(DataType::kInt64, {0, 4}, 0, {}), 6u);
  EXPECT_EQ(add(DataType::kInt64, {4, 0}, 0, {}), 7u);
  // A 0-d tensor and a one-element 1-d tensor with the same bytes are different weights.
  EXPECT_EQ(add(DataType::kFloat32, {}, 0, std::span(a).first(4)), 8u);
  EXPECT_EQ(add(DataType::kFloat32, {1}, 0, std::span(a).first(4)), 9u);
  EXPECT_EQ(add(DataType::kFloat32, {}, 0, std::span(a_copy).first(4)), 8u);

  EXPECT_EQ(writer.weight_count(), 10u);
  EXPECT_EQ(writer.dedup_hits(), 4u);
  EXPECT_EQ(writer.unique_weight_bytes(), 6u * 24 + 2u * 4) << "each stored weight counted once";

  ASSERT_TRUE(writer.AddModel("m", {blobtest::BuildProgram({.name = "p"})}, 0, 0).ok());
  auto buffer = writer.WriteToMemory();
  ASSERT_TRUE(buffer.ok()) << buffer.status().ToString();
  auto view = blobtest::OpenBlob(buffer->bytes());
  ASSERT_TRUE(view.ok()) << view.status().ToString();
  ASSERT_EQ(view->manifest().weights()->size(), 10u);
  EXPECT_TRUE(std::ranges::equal(view->WeightBytes(0), a));
  EXPECT_TRUE(std::ranges::equal(view->WeightBytes(1), b));
  EXPECT_TRUE(std::ranges::equal(view->WeightBytes(2), a));
  EXPECT_TRUE(view->WeightBytes(6).empty());
  EXPECT_TRUE(std::ranges::equal(view->WeightBytes(8), std::span(a).first(4)));
  EXPECT_EQ(view->manifest().weights()->Get(2)->layout(), 5u);
  EXPECT_THAT(ToVector(view->manifest().weights()->Get(3)->shape()), ElementsAre(3, 2));
  // Stored weights occupy distinct, aligned ranges.
  std::set<uint64_t> offsets;
  for (const fb::Weight* w : *view->manifest().weights()) {
    EXPECT_EQ(w->offset() % kTensorAlignment, 0u);
    if (w->size() > 0) {
      EXPECT_TRUE(offsets.insert(w->offset()).second);
    }
  }
}

TEST(BlobWriterTest, RefusesWeightsItCannotStore) {
  BlobWriter writer;
  Bytes four = PatternBytes(4, 1);
  auto string_weight = writer.AddWeight({DataType::kString, {1}, 0, four, nullptr});
  EXPECT_EQ(string_weight.status().code(), StatusCode::kUnsupported);
  auto undefined = writer.AddWeight({DataType::kUndefined, {1}, 0, four, nullptr});
  EXPECT_EQ(undefined.status().code(), StatusCode::kUnsupported);
  auto too_deep = writer.AddWeight(
      {DataType::kFloat32, std::vector<int64_t>(kMaxRank + 1, 1), 0, four, nullptr});
  EXPECT_EQ(too_deep.status().code(), StatusCode::kUnsupported);
  EXPECT_THAT(too_deep.status().message(), HasSubstr("rank 17"));
  auto wrong_size = writer.AddWeight({DataType::kFloat32, {2}, 0, four, nullptr});
  EXPECT_EQ(wrong_size.status().code(), StatusCode::kInternal);
  EXPECT_THAT(wrong_size.status().message(), HasSubstr("has 4 bytes, expected 8"));
  auto negative = writer.AddWeight({DataType::kFloat32, {-1}, 0, four, nullptr});
  EXPECT_FALSE(negative.ok());
  auto overflow = writer.AddWeight({DataType::kFloat32, {1ll << 62}, 0, four, nullptr});
  EXPECT_FALSE(overflow.ok());
  // Exactly kMaxRank dims is fine.
  auto max_rank =
      writer.AddWeight({DataType::kFloat32, std::vector<int64_t>(kMaxRank, 1), 0, four, nullptr});
  EXPECT_TRUE(max_rank.ok()) << max_rank.status().ToString();
  EXPECT_EQ(writer.weight_count(), 1u);
  EXPECT_EQ(writer.unique_weight_bytes(), 4u);
}

TEST(BlobWriterTest, RefusesBadModels) {
  BlobWriter writer;
  std::vector<uint8_t> program = blobtest::BuildProgram({.name = "p"});
  EXPECT_EQ(writer.AddModel("", {program}, 0, 0).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(writer.AddModel(std::string(kMaxNameLength + 1, 'x'), {program}, 0, 0).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(writer.AddModel("m", {}, 0, 0).code(), StatusCode::kInvalidArgument);
  auto empty = writer.WriteToMemory();
  EXPECT_EQ(empty.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(empty.status().message(), HasSubstr("no model"));
  ASSERT_TRUE(writer.AddModel("m", {program}, 0, 0).ok());
  Status twice = writer.AddModel("m", {program}, 0, 0);
  EXPECT_EQ(twice.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(twice.message(), HasSubstr("'m' added twice"));
  EXPECT_TRUE(writer.AddModel(std::string(kMaxNameLength, 'x'), {program}, 0, 0).ok());
  EXPECT_TRUE(writer.WriteToMemory().ok());
  // The reader's limits hold at write time too.
  std::vector<std::vector<uint8_t>> too_many(kMaxPrograms + 1, program);
  Status programs = writer.AddModel("many", std::move(too_many), 0, 0);
  EXPECT_EQ(programs.code(), StatusCode::kUnsupported);
  EXPECT_EQ(programs.message(), "model 'many' has 65537 programs, above the limit 65536");
}

TEST(BlobWriterTest, RefusesMoreModelsThanTheReaderAccepts) {
  BlobWriter writer;
  std::vector<uint8_t> program = blobtest::BuildProgram({.name = "p"});
  for (uint32_t i = 0; i < kMaxModels; ++i) {
    ASSERT_TRUE(writer.AddModel(std::to_string(i), {program}, 0, 0).ok()) << i;
  }
  Status one_more = writer.AddModel("last", {program}, 0, 0);
  EXPECT_EQ(one_more.code(), StatusCode::kUnsupported);
  EXPECT_EQ(one_more.message(), "model 'last': a blob holds at most 4096 models");
  auto blob = writer.WriteToMemory();
  ASSERT_TRUE(blob.ok()) << blob.status().ToString();
  auto view = BlobView::Open(blob->bytes(), "limits", blobtest::DefaultOptions());
  ASSERT_TRUE(view.ok()) << view.status().ToString();
  EXPECT_EQ(view->manifest().models()->size(), kMaxModels);
}

TEST(BlobWriterTest, BlobWithoutWeightsRoundTrips) {
  BlobSpec spec;
  ProgramSpec p{
      .name = "only", .values = {{.name = "x", .shape = {1}}}, .inputs = {0}, .outputs = {0}};
  spec.models = {{.name = "m", .programs = {p}}};
  auto blob = blobtest::BuildBlob(spec);
  ASSERT_TRUE(blob.ok()) << blob.status().ToString();
  auto view = blobtest::OpenBlob(*blob);
  ASSERT_TRUE(view.ok()) << view.status().ToString();
  EXPECT_EQ(view->manifest().weights()->size(), 0u);
  auto model = view->FindModel("m");
  ASSERT_TRUE(model.ok());
  ExpectProgramMatches(*view->GetProgram(**model, 0), p);
  blobtest::TouchEverything(*view);
}

TEST(BlobWriterTest, ManyModelsShareOneWeight) {
  Bytes shared = PatternBytes(4096, 9);
  BlobWriter writer;
  for (int m = 0; m < 5; ++m) {
    auto index = writer.AddWeight({DataType::kFloat32, {1024}, 1, shared, nullptr});
    ASSERT_TRUE(index.ok());
    EXPECT_EQ(*index, 0u);
    ProgramSpec p{.name = "main", .values = {{.name = "w", .shape = {1024}, .weight = 0}}};
    ASSERT_TRUE(
        writer.AddModel("model" + std::to_string(m), {blobtest::BuildProgram(p)}, 0, 0).ok());
  }
  EXPECT_EQ(writer.unique_weight_bytes(), shared.size());
  EXPECT_EQ(writer.dedup_hits(), 4u);
  auto buffer = writer.WriteToMemory();
  ASSERT_TRUE(buffer.ok());
  auto view = blobtest::OpenBlob(buffer->bytes());
  ASSERT_TRUE(view.ok()) << view.status().ToString();
  EXPECT_EQ(view->header().sections[0].size, shared.size());
  EXPECT_EQ(view->manifest().models()->size(), 5u);
  EXPECT_TRUE(view->FindModel("model4").ok());
}

// A weight whose kernel needs a CPU feature beyond the writer's target (oneDNN's int8 kernels on
// weights beyond [-64, 64] need VNNI) makes the blob require it, so a CPU without it refuses the
// blob instead of computing wrong products.
TEST(BlobWriterTest, AWeightsRequiredFeaturesJoinTheFingerprint) {
  const TargetFingerprint target = CurrentTarget();
  ASSERT_EQ(target.required_cpu_features & cpu::kAvx512Vnni, 0u);
  BlobWriter writer(target);
  Bytes plain = PatternBytes(256, 3), int8 = PatternBytes(256, 4);
  ASSERT_TRUE(writer.AddWeight({DataType::kFloat32, {64}, 1, plain, nullptr}).ok());
  auto index = writer.AddWeight({DataType::kInt8, {256}, 4, int8, nullptr, cpu::kAvx512Vnni});
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  ProgramSpec p{.name = "main",
                .values = {{.name = "w", .dtype = DataType::kInt8, .shape = {256}, .weight = 1}}};
  ASSERT_TRUE(writer.AddModel("m", {blobtest::BuildProgram(p)}, 0, 0).ok());
  auto buffer = writer.WriteToMemory();
  ASSERT_TRUE(buffer.ok()) << buffer.status().ToString();
  OpenOptions options = blobtest::DefaultOptions();
  options.available_cpu_features = ~0ull;
  auto view = BlobView::Open(buffer->bytes(), "int8.blob", options);
  ASSERT_TRUE(view.ok()) << view.status().ToString();
  const TargetFingerprint& written = view->header().target;
  EXPECT_EQ(written.required_cpu_features, target.required_cpu_features | cpu::kAvx512Vnni);
  EXPECT_THAT(HardwareArchitecture(written), HasSubstr("avx512vnni"));
  options.available_cpu_features = ~cpu::kAvx512Vnni;
  auto refused = BlobView::Open(buffer->bytes(), "int8.blob", options);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kTargetMismatch);
  EXPECT_THAT(refused.status().message(),
              HasSubstr("packed for CPU features this CPU lacks: avx512vnni"));
}

TEST(TargetTest, CurrentTargetIsAcceptedOnThisMachine) {
  TargetFingerprint mine = CurrentTarget();
  EXPECT_EQ(mine.pack_layout_version, kPackLayoutVersion);
  EXPECT_GT(strnlen(mine.packing_build_id, sizeof mine.packing_build_id), 0u);
  EXPECT_TRUE(CheckTarget(mine, blobtest::DefaultOptions().available_cpu_features).ok());
  EXPECT_TRUE(CheckTarget(mine, ~0ull).ok());
  EXPECT_THAT(HardwareArchitecture(mine), ::testing::StartsWith("x86_64:"));
}

TEST(TargetTest, BuildIdWithoutTerminatorIsComparedWithinItsField) {
  TargetFingerprint t = CurrentTarget();
  std::memset(t.packing_build_id, 'f', sizeof t.packing_build_id);  // no NUL anywhere
  Status s = CheckTarget(t, ~0ull);
  EXPECT_EQ(s.code(), StatusCode::kTargetMismatch);
  EXPECT_THAT(s.message(),
              HasSubstr(fmt::format("{}'", std::string(sizeof t.packing_build_id, 'f'))));
}

TEST(TargetTest, KernelIsaAddsItsFeaturesAndIsChecked) {
  const uint64_t avx512 = KernelIsaFeatures(KernelIsa::kAvx512Core);
  const uint64_t avx2 = KernelIsaFeatures(KernelIsa::kAvx2);
  EXPECT_EQ(avx2 & ~avx512, 0u) << "avx512_core includes avx2's features";
  EXPECT_NE(avx512 & ~avx2, 0u);
  TargetFingerprint t = CurrentTarget(KernelIsa::kAvx2);
  EXPECT_EQ(t.kernel_isa, static_cast<uint32_t>(KernelIsa::kAvx2));
  EXPECT_EQ(t.required_cpu_features & avx2, avx2);
  EXPECT_THAT(HardwareArchitecture(t), ::testing::EndsWith(";kernels=avx2"));
  // A fingerprint whose feature set leaves out its tier's features still needs them.
  t = CurrentTarget(KernelIsa::kAvx512Core);
  t.required_cpu_features = 0;
  Status s = CheckTarget(t, avx2);
  EXPECT_EQ(s.code(), StatusCode::kTargetMismatch);
  EXPECT_THAT(s.message(), HasSubstr("packed for CPU features this CPU lacks: avx512f"));
  t.kernel_isa = 9;
  s = CheckTarget(t, ~0ull);
  EXPECT_EQ(s.message(), "packed for kernel ISA 9, which this build does not know");
}

TEST(TargetTest, KernelIsaNames) {
  EXPECT_EQ(*ParseKernelIsa("avx2"), KernelIsa::kAvx2);
  EXPECT_EQ(*ParseKernelIsa("avx512_core"), KernelIsa::kAvx512Core);
  EXPECT_EQ(ParseKernelIsa("sse").status().message(),
            "unknown kernel ISA 'sse' (known: avx2, avx512_core)");
}

}  // namespace
}  // namespace epctx::format
