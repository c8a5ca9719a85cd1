// Blobs forged the way an attacker would: a compiled program edited in place and every checksum
// recomputed (they are XXH3; anyone can redo them). Each forgery below crashed or hung a run
// before programs were verified for safety; now the load refuses the blob, naming the node, and
// `epctx verify` fails it with the same message.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <onnx/defs/parser.h>
#include <onnx/onnx_pb.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "epctx/epctx.h"
#include "epctx/inspect.h"
#include "format/blob_layout.h"
#include "loader/loader_test_helpers.h"
#include "program_generated.h"
#include "util/hash.h"

namespace epctx {
namespace {

using loadertest::Bytes;
using loadertest::ReadBytes;
using loadertest::TempDir;
using loadertest::WriteBytes;
using ::testing::HasSubstr;

// Compiles the model given in ONNX's textual syntax to `dir`/model_ctx.onnx + model_ctx.epctx.
void Compile(const TempDir& dir, const char* text) {
  onnx::ModelProto model;
  onnx::Status parsed = onnx::OnnxParser::Parse(model, text);
  ASSERT_TRUE(parsed.IsOK()) << parsed.ErrorMessage();
  std::ofstream(dir / "model.onnx", std::ios::binary) << model.SerializeAsString();
  auto report = ModelCompiler().CompileToFile(dir / "model.onnx", dir / "model_ctx.onnx");
  ASSERT_TRUE(report.ok()) << report.status().ToString();
}

const format::SectionEntry& Section(const format::BlobHeader& h, format::SectionKind kind) {
  for (uint32_t i = 0; i < h.section_count; ++i) {
    if (h.sections[i].kind == static_cast<uint32_t>(kind)) return h.sections[i];
  }
  ADD_FAILURE() << "no section " << static_cast<int>(kind);
  return h.sections[0];
}

// Edits program `index` of the blob's first model in place through `edit`, then recomputes the
// program's checksum in the manifest, the section checksums and the header checksum.
void Forge(Bytes& blob, uint32_t index, const std::function<void(const fb::Program&)>& edit) {
  auto* h = reinterpret_cast<format::BlobHeader*>(blob.data());
  format::SectionEntry& programs =
      const_cast<format::SectionEntry&>(Section(*h, format::SectionKind::kPrograms));
  format::SectionEntry& manifest =
      const_cast<format::SectionEntry&>(Section(*h, format::SectionKind::kManifest));
  const auto* m = flatbuffers::GetRoot<fb::Manifest>(blob.data() + manifest.offset);
  const fb::ProgramRef* ref = m->models()->Get(0)->programs()->Get(index);
  std::byte* program_bytes = blob.data() + programs.offset + ref->offset();
  edit(*flatbuffers::GetRoot<fb::Program>(program_bytes));
  uint64_t checksum = Hash64(std::span<const std::byte>(program_bytes, ref->size()));
  const uint8_t* field =
      reinterpret_cast<const flatbuffers::Table*>(ref)->GetAddressOf(fb::ProgramRef::VT_CHECKSUM);
  ASSERT_NE(field, nullptr);
  std::memcpy(const_cast<uint8_t*>(field), &checksum, sizeof checksum);
  programs.checksum =
      Hash64(std::span<const std::byte>(blob).subspan(programs.offset, programs.size));
  manifest.checksum =
      Hash64(std::span<const std::byte>(blob).subspan(manifest.offset, manifest.size));
  h->header_checksum =
      Hash64(std::span<const std::byte>(blob).first(offsetof(format::BlobHeader, header_checksum)));
}

// Writes `value` over one entry of a FlatBuffers int vector inside the blob being forged.
void Poke(const flatbuffers::Vector<int32_t>* list, uint32_t at, int32_t value) {
  ASSERT_NE(list, nullptr);
  ASSERT_LT(at, list->size());
  std::memcpy(const_cast<int32_t*>(list->data() + at), &value, sizeof value);
}

int32_t FindValue(const fb::Program& p, std::string_view name) {
  for (uint32_t v = 0; v < p.values()->size(); ++v) {
    if (p.values()->Get(v)->name()->string_view() == name) return static_cast<int32_t>(v);
  }
  ADD_FAILURE() << "no value " << name;
  return 0;
}

uint32_t FindNode(const fb::Program& p, std::string_view op) {
  for (uint32_t n = 0; n < p.nodes()->size(); ++n) {
    if (p.nodes()->Get(n)->op_type()->string_view() == op) return n;
  }
  ADD_FAILURE() << "no node " << op;
  return 0;
}

Result<std::unique_ptr<Session>> LoadDenyingFallback(const TempDir& dir) {
  SessionOptions options;
  options.AddConfigEntry("epctx.fallback", "deny");
  return Session::Create(dir / "model_ctx.onnx", options);
}

// The blob must be refused by loads and by `verify` alike, with `message`.
void ExpectRefused(const TempDir& dir, const std::string& message) {
  auto session = LoadDenyingFallback(dir);
  ASSERT_FALSE(session.ok()) << "the forged blob was loaded";
  EXPECT_EQ(session.status().code(), StatusCode::kCorrupt);
  EXPECT_THAT(session.status().message(), HasSubstr(message));
  auto checks = VerifyModel(dir / "model_ctx.onnx", {});
  ASSERT_TRUE(checks.ok()) << checks.status().ToString();
  ASSERT_FALSE(checks->empty());
  EXPECT_EQ((*checks)[0].what, "blob structure");
  EXPECT_FALSE((*checks)[0].passed);
  EXPECT_THAT((*checks)[0].detail, HasSubstr(message));
}

constexpr const char* kMatMulModel = R"(
<ir_version: 8, opset_import: ["" : 17]>
agraph (float[2, 3] x) => (float[2, 8] y)
<float[3, 4] w = {1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0}>
{
  h = MatMul(x, w)
  y = Concat<axis = 1>(h, h)
}
)";

TEST(ForgedBlob, UnforgedBlobLoadsAndVerifies) {
  TempDir dir;
  ASSERT_NO_FATAL_FAILURE(Compile(dir, kMatMulModel));
  auto session = LoadDenyingFallback(dir);
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  auto checks = VerifyModel(dir / "model_ctx.onnx", {});
  ASSERT_TRUE(checks.ok());
  for (const VerifyCheck& c : *checks) EXPECT_TRUE(c.passed) << c.what << ": " << c.detail;
}

TEST(ForgedBlob, NodeWritingAWeightIsRefused) {
  TempDir dir;
  ASSERT_NO_FATAL_FAILURE(Compile(dir, kMatMulModel));
  Bytes blob = ReadBytes(dir / "model_ctx.epctx");
  // MatMul by a constant runs as DnnlMatMul on the weight packed for it (input 1).
  std::string weight;
  Forge(blob, 0, [&](const fb::Program& p) {
    const fb::Node* matmul = p.nodes()->Get(FindNode(p, "DnnlMatMul"));
    ASSERT_GE(matmul->inputs()->size(), 2u);
    const fb::Value* w = p.values()->Get(static_cast<uint32_t>(matmul->inputs()->Get(1)));
    ASSERT_GE(w->weight(), 0);
    weight = w->name()->str();
    Poke(matmul->outputs(), 0, matmul->inputs()->Get(1));
  });
  WriteBytes(dir / "model_ctx.epctx", blob);
  ExpectRefused(dir, "(DnnlMatMul 'MatMul_0') writes '" + weight + "', which is a weight");
}

TEST(ForgedBlob, NodeWritingItsOwnInputIsRefused) {
  TempDir dir;
  ASSERT_NO_FATAL_FAILURE(Compile(dir, kMatMulModel));
  Bytes blob = ReadBytes(dir / "model_ctx.epctx");
  Forge(blob, 0, [](const fb::Program& p) {
    Poke(p.nodes()->Get(FindNode(p, "Concat"))->outputs(), 0, FindValue(p, "h"));
  });
  WriteBytes(dir / "model_ctx.epctx", blob);
  ExpectRefused(dir, "(Concat 'Concat_1') writes 'h', which is written by an earlier node");
}

// The trip count is computed by the node after the Loop in the forged program: it would be
// absent when the Loop runs, and without a trip count the Loop never ends.
constexpr const char* kLoopModel = R"(
<ir_version: 8, opset_import: ["" : 17]>
agraph (int64 m, float[1] start) => (float[1] count, int64 m2)
<float[1] one = {1.0}>
{
  m1 = Identity(m)
  count = Loop(m1, , start) <
    body = count_up (int64 i, bool c, float[1] n) => (bool c_out, float[1] n_out) {
      c_out = Identity(c)
      n_out = Add(n, one)
    }
  >
  m2 = Identity(m1)
}
)";

TEST(ForgedBlob, LoopTripCountWrittenAfterTheLoopIsRefused) {
  TempDir dir;
  ASSERT_NO_FATAL_FAILURE(Compile(dir, kLoopModel));
  Bytes blob = ReadBytes(dir / "model_ctx.epctx");
  Forge(blob, 0, [](const fb::Program& p) {
    Poke(p.nodes()->Get(FindNode(p, "Loop"))->inputs(), 0, FindValue(p, "m2"));
  });
  WriteBytes(dir / "model_ctx.epctx", blob);
  ExpectRefused(dir, "(Loop 'Loop_1') reads 'm2' before any node writes it");
}

}  // namespace
}  // namespace epctx
