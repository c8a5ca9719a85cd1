// Values that lie, at the public C++ API: a path holding a NUL byte (the system would see only
// the part before it: another file, silently), a bool input whose bytes are not 0 or 1 (kernels
// read the byte: Not of 2 gave 3), and an empty input whose other dims multiply beyond int64
// (Flatten gave [0, 0]). Each is an error naming what is wrong, and a refused path writes nothing.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "e2e/e2e_helpers.h"

namespace epctx::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr const char* kNotModel = R"(
<ir_version: 8, opset_import: ["" : 17]>
agraph (bool[n] x) => (bool[n] y)
{
  y = Not(x)
}
)";

constexpr const char* kFlattenModel = R"(
<ir_version: 8, opset_import: ["" : 17]>
agraph (float[a, b, c] x) => (float[d, e] y)
{
  y = Flatten <axis = 1> (x)
}
)";

std::vector<std::string> FilesIn(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// "path '<path>\0<tail>' contains a NUL byte: ...", as util/file.h's CheckPath says it.
std::string NulMessage(const std::string& what, const std::string& path, const std::string& tail) {
  return what + " '" + path + "\\0" + tail + "' contains a NUL byte: the system would see only '" +
         path + "'";
}

TEST(NulPaths, SessionCreateDoesNotLoadTheFileBeforeTheNul) {
  TempDir dir;
  std::string model = WriteModel(dir, "model", kNotModel);
  std::string ctx = dir / "model_ctx.onnx";
  ASSERT_TRUE(ModelCompiler().CompileToFile(model, ctx).ok());
  auto session = Session::Create(ctx + std::string("\0.other", 7));
  ASSERT_FALSE(session.ok());
  EXPECT_EQ(session.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(session.status().message(), NulMessage("path", ctx, ".other"));
}

TEST(NulPaths, CompilesAreRefusedAndWriteNothing) {
  TempDir dir;
  std::string model = WriteModel(dir, "model", kNotModel);
  const std::string ctx = dir / "a_ctx.onnx";
  auto report = ModelCompiler().CompileToFile(model, ctx + std::string("\0.json", 6));
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(report.status().message(), NulMessage("context model path", ctx, ".json"));
  // The original given by path: refused when it is read, before anything is written.
  report = ModelCompiler().CompileToFile(model + std::string("\0.onnx", 6), ctx);
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.status().message(), NulMessage("path", model, ".onnx"));
  EXPECT_THAT(FilesIn(dir.path()), ElementsAre("model.onnx"));

  // Several models: the output folder is not created; a model path is that model's failure.
  const std::string out = dir / "out";
  auto multi = ModelCompiler().CompileModels({model}, out + std::string("\0/x", 3));
  ASSERT_FALSE(multi.ok());
  EXPECT_EQ(multi.status().message(), NulMessage("path", out, "/x"));
  EXPECT_THAT(FilesIn(dir.path()), ElementsAre("model.onnx"));
  multi = ModelCompiler().CompileModels({model, model + std::string("\0.onnx", 6)}, out);
  ASSERT_TRUE(multi.ok()) << multi.status().ToString();
  EXPECT_FALSE(multi->written);
  ASSERT_EQ(multi->models.size(), 2u);
  EXPECT_TRUE(multi->models[0].compiled);
  EXPECT_FALSE(multi->models[1].compiled);
  EXPECT_THAT(multi->models[1].error, HasSubstr(NulMessage("path", model, ".onnx")));
  EXPECT_TRUE(FilesIn(out).empty());
}

TEST(NulPaths, PathOptionsAreRefused) {
  const std::string nul("out/m_ctx.onnx\0.json", 20);
  for (const char* key : {"ep.context_file_path", "epctx.profile_file"}) {
    Status s = CheckConfigEntry(key, nul);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(s.message(), NulMessage(std::string("option ") + key, "out/m_ctx.onnx", ".json"));
  }
  TempDir dir;
  std::string model = WriteModel(dir, "model", kNotModel);
  SessionOptions options;
  options.AddConfigEntry("ep.context_file_path", (dir / "m_ctx.onnx") + std::string("\0.x", 3));
  options.AddConfigEntry("ep.context_embed_mode", "1");
  auto bytes = ModelCompiler(options).CompileToBytes(model);
  ASSERT_FALSE(bytes.ok());
  EXPECT_THAT(bytes.status().message(),
              HasSubstr(NulMessage("option ep.context_file_path", dir / "m_ctx.onnx", ".x")));
  SessionOptions profiled;
  profiled.AddConfigEntry("epctx.profile_file", (dir / "p.json") + std::string("\0.x", 3));
  auto session = Session::Create(model, profiled);
  ASSERT_FALSE(session.ok());
  EXPECT_THAT(session.status().message(),
              HasSubstr(NulMessage("option epctx.profile_file", dir / "p.json", ".x")));
  EXPECT_THAT(FilesIn(dir.path()), ElementsAre("model.onnx"));
}

// The blob a context model names is a path too: "model_ctx.epctx\0junk" named the real blob.
TEST(NulPaths, ContextModelReferenceWithANulIsNotOpened) {
  TempDir dir;
  std::string model = WriteModel(dir, "model", kNotModel);
  std::string ctx = dir / "model_ctx.onnx";
  ASSERT_TRUE(ModelCompiler().CompileToFile(model, ctx).ok());
  onnx::ModelProto m;
  {
    std::ifstream in(ctx, std::ios::binary);
    ASSERT_TRUE(m.ParseFromIstream(&in));
  }
  for (auto& a : *m.mutable_graph()->mutable_node(0)->mutable_attribute()) {
    if (a.name() == "ep_cache_context") a.set_s(std::string("model_ctx.epctx\0junk", 20));
  }
  std::ofstream(ctx, std::ios::binary | std::ios::trunc) << m.SerializeAsString();
  SessionOptions deny;
  deny.AddConfigEntry("epctx.fallback", "deny");
  auto refused = Session::Create(ctx, deny);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(),
              HasSubstr("the context blob '" + (dir / "model_ctx.epctx") +
                        "\\0junk' cannot be used, and epctx.fallback=deny: the blob "
                        "'model_ctx.epctx\\0junk' contains a NUL byte: the system would see "
                        "only 'model_ctx.epctx'"));
  EXPECT_EQ(refused.status().message().find('\0'), std::string::npos);
  auto fallback = Session::Create(ctx);
  ASSERT_TRUE(fallback.ok()) << fallback.status().ToString();
  EXPECT_FALSE((*fallback)->origin().from_context_blob);
  EXPECT_THAT((*fallback)->origin().fallback_reason, HasSubstr("contains a NUL byte"));
}

TEST(BoolInputs, RunRefusesBytesOtherThanZeroOrOne) {
  TempDir dir;
  auto session = CompileAndLoad(dir, WriteModel(dir, "not", kNotModel));
  ASSERT_NE(session, nullptr);
  // A view of caller memory, as the C API and NumPy arrays give one: read in place, so refused.
  static const uint8_t kLying[4] = {0, 1, 2, 255};
  Tensor lying = Tensor::View(DataType::kBool, {4}, kLying, nullptr);
  auto r = session->Run({{"x", lying}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().ToString(), "InvalidArgument: input 'x': bool element 2 is 2, not 0 or 1");
  static const uint8_t kLast[9] = {0, 1, 1, 0, 1, 0, 1, 1, 255};
  r = session->Run({{"x", Tensor::View(DataType::kBool, {9}, kLast, nullptr)}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().ToString(), "InvalidArgument: input 'x': bool element 8 is 255, not 0 or 1");
  static const uint8_t kTruthful[4] = {0, 1, 1, 0};
  r = session->Run({{"x", Tensor::View(DataType::kBool, {4}, kTruthful, nullptr)}});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(std::string(static_cast<const char*>((*r)[0].data()), 4),
            std::string("\x01\x00\x00\x01", 4));
  // CheckInput, which `epctx run` applies to its input files, checks sequence elements too.
  ValueInfo seq;
  seq.name = "s";
  seq.kind = ValueKind::kSequence;
  seq.dtype = DataType::kBool;
  Tensor elements =
      Tensor::Sequence(DataType::kBool, {Tensor::View(DataType::kBool, {4}, kTruthful, nullptr),
                                         Tensor::View(DataType::kBool, {4}, kLying, nullptr)});
  Status s = CheckInput(seq, elements);
  EXPECT_EQ(s.ToString(), "InvalidArgument: input 's' element 1: bool element 2 is 2, not 0 or 1");
}

TEST(HugeEmptyShapes, FlattenOverflowIsAnErrorNamingTheNode) {
  TempDir dir;
  auto session = CompileAndLoad(dir, WriteModel(dir, "flatten", kFlattenModel));
  ASSERT_NE(session, nullptr);
  auto x = Tensor::Allocate(DataType::kFloat32, {0, int64_t{1} << 32, int64_t{1} << 32});
  ASSERT_TRUE(x.ok()) << x.status().ToString();
  auto r = session->Run({{"x", *x}});
  ASSERT_FALSE(r.ok()) << "output shape " << ShapeToString((*r)[0].shape());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(),
              ::testing::MatchesRegex("model '.*': Flatten node '.*': the product of dims "
                                      "\\[4294967296,4294967296\\] overflows int64"));
  // Products that fit stay exact.
  auto fits = Tensor::Allocate(DataType::kFloat32, {int64_t{1} << 32, 0, int64_t{1} << 32});
  ASSERT_TRUE(fits.ok());
  r = session->Run({{"x", *fits}});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)[0].shape(), (std::vector<int64_t>{int64_t{1} << 32, 0}));
}

}  // namespace
}  // namespace epctx::testing
