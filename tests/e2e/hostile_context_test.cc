// Context models from untrusted places: the files they name stay inside their folder unless
// epctx.allow_external_paths=1; only regular files are read (a FIFO never blocks a load); the
// EPContext node's domain and attribute types are checked; and a context model whose graph
// inputs or outputs differ from its blob's model is not paired with it silently.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <onnx/defs/parser.h>
#include <onnx/onnx_pb.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <thread>

#include "e2e/e2e_helpers.h"
#include "epctx/tensor_io.h"

namespace epctx::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

constexpr const char* kModel = R"(
<ir_version: 8, opset_import: ["" : 17]>
agraph (float[2, 3] x) => (float[2, 4] y)
<float[3, 4] w = {1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0}>
{
  y = MatMul(x, w)
}
)";

// Writes the model to `dir`/`sub`/model.onnx and compiles it to `dir`/`out`/model_ctx.onnx.
std::string Compile(const TempDir& dir, const std::string& sub = ".",
                    const std::string& out = ".") {
  onnx::ModelProto model;
  onnx::Status parsed = onnx::OnnxParser::Parse(model, kModel);
  EXPECT_TRUE(parsed.IsOK()) << parsed.ErrorMessage();
  fs::create_directories(dir.path() / sub);
  fs::create_directories(dir.path() / out);
  std::string original = (dir.path() / sub / "model.onnx").lexically_normal().string();
  std::ofstream(original, std::ios::binary) << model.SerializeAsString();
  std::string ctx = (dir.path() / out / "model_ctx.onnx").lexically_normal().string();
  auto report = ModelCompiler().CompileToFile(original, ctx);
  EXPECT_TRUE(report.ok()) << report.status().ToString();
  return ctx;
}

void EditContextModel(const std::string& path, const std::function<void(onnx::ModelProto&)>& edit) {
  onnx::ModelProto m;
  {
    std::ifstream in(path, std::ios::binary);
    ASSERT_TRUE(m.ParseFromIstream(&in));
  }
  edit(m);
  std::ofstream(path, std::ios::binary | std::ios::trunc) << m.SerializeAsString();
}

onnx::AttributeProto* Attribute(onnx::ModelProto& m, const std::string& name) {
  for (auto& a : *m.mutable_graph()->mutable_node(0)->mutable_attribute()) {
    if (a.name() == name) return &a;
  }
  ADD_FAILURE() << "no attribute " << name;
  return m.mutable_graph()->mutable_node(0)->add_attribute();
}

SessionOptions Options(std::initializer_list<std::pair<const char*, const char*>> entries) {
  SessionOptions o;
  for (const auto& [k, v] : entries) o.AddConfigEntry(k, v);
  return o;
}

// Runs `create` and fails the test if it takes more than two seconds. A FIFO the code under
// test would block on is opened for writing meanwhile (and closed), so that even a blocking
// implementation returns and the test reports it instead of hanging.
template <typename Create>
auto WithinTwoSeconds(const std::vector<std::string>& fifos, Create create) {
  std::atomic<bool> done{false};
  std::thread unblocker([&] {
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(3);
    while (!done && std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    while (!done) {
      for (const std::string& f : fifos) {
        int fd = ::open(f.c_str(), O_WRONLY | O_NONBLOCK);
        if (fd >= 0) ::close(fd);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  });
  auto start = std::chrono::steady_clock::now();
  auto result = create();
  auto elapsed = std::chrono::steady_clock::now() - start;
  done = true;
  unblocker.join();
  EXPECT_LT(elapsed, std::chrono::seconds(2)) << "the call blocked on a FIFO";
  return result;
}

TEST(ContextPaths, BlobOutsideTheFolderIsReadOnlyWhenAllowed) {
  TempDir dir;
  std::string ctx = Compile(dir, ".", "a");
  fs::create_directories(dir.path() / "other");
  fs::rename(dir / "a/model_ctx.epctx", dir / "other/model_ctx.epctx");
  EditContextModel(ctx, [](onnx::ModelProto& m) {
    Attribute(m, "ep_cache_context")->set_s("../other/model_ctx.epctx");
  });
  auto refused = Session::Create(ctx, Options({{"epctx.fallback", "deny"}}));
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(),
              HasSubstr("the blob '../other/model_ctx.epctx' lies outside the context model's "
                        "folder '" +
                        (dir / "a") + "' (epctx.allow_external_paths=1 allows it)"));
  // The blob is not used, but the original (also outside: ../model.onnx) is not read either.
  auto fallback = Session::Create(ctx);
  ASSERT_FALSE(fallback.ok());
  EXPECT_THAT(fallback.status().message(),
              HasSubstr("original model '" + (dir / "model.onnx") +
                        "': the original model '../model.onnx' lies outside the context "
                        "model's folder"));
  auto allowed = Session::Create(
      ctx, Options({{"epctx.fallback", "deny"}, {"epctx.allow_external_paths", "1"}}));
  ASSERT_TRUE(allowed.ok()) << allowed.status().ToString();
  EXPECT_TRUE((*allowed)->origin().from_context_blob);
}

TEST(ContextPaths, AbsoluteBlobPathIsNeverOpened) {
  TempDir dir;
  std::string ctx = Compile(dir);
  // Any readable file would have been mapped, and its size echoed in the error.
  EditContextModel(
      ctx, [](onnx::ModelProto& m) { Attribute(m, "ep_cache_context")->set_s("/etc/passwd"); });
  auto session = Session::Create(ctx, Options({{"epctx.fallback", "deny"}}));
  ASSERT_FALSE(session.ok());
  EXPECT_THAT(session.status().message(),
              HasSubstr("the blob '/etc/passwd' lies outside the context model's folder"));
  EXPECT_THAT(session.status().message(), ::testing::Not(HasSubstr("bytes")));
  auto checks = VerifyModel(ctx);
  ASSERT_FALSE(checks.ok());
  EXPECT_THAT(checks.status().message(), HasSubstr("lies outside the context model's folder"));
}

TEST(ContextPaths, OriginalOutsideTheFolderIsStatedButNotRead) {
  TempDir dir;
  std::string ctx = Compile(dir, "src", "out");
  fs::remove(dir / "out/model_ctx.epctx");
  auto refused = Session::Create(ctx);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(),
              HasSubstr("the original model '../src/model.onnx' lies outside the context "
                        "model's folder"));
  auto allowed = Session::Create(ctx, Options({{"epctx.allow_external_paths", "1"}}));
  ASSERT_TRUE(allowed.ok()) << allowed.status().ToString();
  EXPECT_FALSE((*allowed)->origin().from_context_blob);
}

TEST(ContextPaths, CompileWarnsWhenTheOriginalLiesOutsideTheFolder) {
  TempDir dir;
  onnx::ModelProto model;
  ASSERT_TRUE(onnx::OnnxParser::Parse(model, kModel).IsOK());
  fs::create_directories(dir.path() / "src");
  std::ofstream(dir / "src/model.onnx", std::ios::binary) << model.SerializeAsString();
  auto report = ModelCompiler().CompileToFile(dir / "src/model.onnx", dir / "model_ctx.onnx");
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  ASSERT_EQ(report->warnings.size(), 0u) << "src/model.onnx is inside the folder";
  fs::create_directories(dir.path() / "out");
  report = ModelCompiler().CompileToFile(dir / "src/model.onnx", dir / "out/model_ctx.onnx");
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  ASSERT_EQ(report->warnings.size(), 1u);
  EXPECT_EQ(report->warnings[0], "'" + (dir / "out/model_ctx.onnx") +
                                     "' names the original model '../src/model.onnx', outside "
                                     "its folder: loads read it only with "
                                     "epctx.allow_external_paths=1");
}

TEST(ContextPaths, StalenessIsStillDetectedForAnOriginalOutside) {
  TempDir dir;
  std::string ctx = Compile(dir, "src", "out");
  fs::last_write_time(dir / "src/model.onnx",
                      fs::last_write_time(dir / "src/model.onnx") + std::chrono::seconds(5));
  auto session = Session::Create(ctx, Options({{"epctx.fallback", "deny"}}));
  ASSERT_FALSE(session.ok());
  EXPECT_EQ(session.status().code(), StatusCode::kStale);
  // The blob is named although it was never opened (the message said "context blob ''").
  EXPECT_EQ(session.status().message(),
            "'" + ctx + "': the context blob '" + (dir / "out/model_ctx.epctx") +
                "' cannot be used, and epctx.fallback=deny: original model '" +
                (dir / "src/model.onnx") +
                "' changed since it was compiled (modified after compilation)");
}

TEST(ContextFiles, FifoAtTheBlobPathFallsBackWithoutBlocking) {
  TempDir dir;
  std::string ctx = Compile(dir);
  fs::remove(dir / "model_ctx.epctx");
  ASSERT_EQ(::mkfifo((dir / "model_ctx.epctx").c_str(), 0644), 0);
  auto session = WithinTwoSeconds({dir / "model_ctx.epctx"}, [&] { return Session::Create(ctx); });
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  EXPECT_FALSE((*session)->origin().from_context_blob);
  EXPECT_THAT((*session)->origin().fallback_reason,
              HasSubstr("'" + (dir / "model_ctx.epctx") + "' is not a regular file (a FIFO)"));
  auto inspected = WithinTwoSeconds({dir / "model_ctx.epctx"}, [&] { return InspectModel(ctx); });
  ASSERT_FALSE(inspected.ok());
  EXPECT_THAT(inspected.status().message(), HasSubstr("is not a regular file (a FIFO)"));
}

TEST(ContextFiles, FifoAtTheOriginalPathFailsWithoutBlocking) {
  TempDir dir;
  std::string ctx = Compile(dir);
  fs::remove(dir / "model_ctx.epctx");
  fs::remove(dir / "model.onnx");
  ASSERT_EQ(::mkfifo((dir / "model.onnx").c_str(), 0644), 0);
  auto session = WithinTwoSeconds({dir / "model.onnx"}, [&] { return Session::Create(ctx); });
  ASSERT_FALSE(session.ok());
  EXPECT_THAT(session.status().message(),
              HasSubstr("original model '" + (dir / "model.onnx") + "': '" + (dir / "model.onnx") +
                        "' is not a regular file (a FIFO)"));
}

TEST(ContextFiles, FifoOrDeviceAsTheModelOrAnInputIsRefused) {
  TempDir dir;
  ASSERT_EQ(::mkfifo((dir / "fifo.onnx").c_str(), 0644), 0);
  auto session =
      WithinTwoSeconds({dir / "fifo.onnx"}, [&] { return Session::Create(dir / "fifo.onnx"); });
  ASSERT_FALSE(session.ok());
  EXPECT_THAT(session.status().message(), HasSubstr("is not a regular file (a FIFO)"));
  // A .npy that is a link to /dev/zero was read until the allocation failed.
  fs::create_symlink("/dev/zero", dir / "zero.npy");
  auto start = std::chrono::steady_clock::now();
  auto tensor = ReadTensorFile(dir / "zero.npy");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
  ASSERT_FALSE(tensor.ok());
  EXPECT_EQ(tensor.status().message(),
            "'" + (dir / "zero.npy") + "' is not a regular file (a character device)");
}

struct NodeCase {
  const char* name;
  std::function<void(onnx::ModelProto&)> edit;
  std::string message;
};

class EpContextNodeTest : public ::testing::TestWithParam<NodeCase> {};

TEST_P(EpContextNodeTest, IsRefused) {
  TempDir dir;
  std::string ctx = Compile(dir);
  EditContextModel(ctx, GetParam().edit);
  auto session = Session::Create(ctx);
  ASSERT_FALSE(session.ok());
  EXPECT_EQ(session.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(session.status().message(), "'" + ctx + "': " + GetParam().message);
}

INSTANTIATE_TEST_SUITE_P(
    Catalogue, EpContextNodeTest,
    ::testing::Values(
        NodeCase{"OtherDomain",
                 [](onnx::ModelProto& m) { m.mutable_graph()->mutable_node(0)->set_domain(""); },
                 "EPContext node has domain '', not com.microsoft"},
        NodeCase{"StringEmbedMode",
                 [](onnx::ModelProto& m) {
                   auto* a = Attribute(m, "embed_mode");
                   a->set_type(onnx::AttributeProto::STRING);
                   a->set_s("1");
                 },
                 "EPContext attribute 'embed_mode' must be INT, not STRING"},
        NodeCase{"FloatEmbedMode",
                 [](onnx::ModelProto& m) {
                   auto* a = Attribute(m, "embed_mode");
                   a->set_type(onnx::AttributeProto::FLOAT);
                   a->set_f(1.0f);
                 },
                 "EPContext attribute 'embed_mode' must be INT, not FLOAT"},
        NodeCase{"EmbedModeTwo", [](onnx::ModelProto& m) { Attribute(m, "embed_mode")->set_i(2); },
                 "EPContext embed_mode is 2, not 0 or 1"},
        NodeCase{"IntegerCacheContext",
                 [](onnx::ModelProto& m) {
                   auto* a = Attribute(m, "ep_cache_context");
                   a->set_type(onnx::AttributeProto::INT);
                   a->set_i(7);
                 },
                 "EPContext attribute 'ep_cache_context' must be STRING, not INT"}),
    [](const ::testing::TestParamInfo<NodeCase>& info) { return info.param.name; });

TEST(ContextInterface, RenamedInputIsAMismatchedPair) {
  TempDir dir;
  std::string ctx = Compile(dir);
  EditContextModel(ctx, [](onnx::ModelProto& m) {
    m.mutable_graph()->mutable_input(0)->set_name("renamed");
    m.mutable_graph()->mutable_node(0)->set_input(0, "renamed");
  });
  auto denied = Session::Create(ctx, Options({{"epctx.fallback", "deny"}}));
  ASSERT_FALSE(denied.ok());
  EXPECT_EQ(denied.status().code(), StatusCode::kCorrupt);
  EXPECT_THAT(denied.status().message(),
              HasSubstr("declares input 0 as 'renamed' float32 [2,3], but the blob's model "
                        "'model' has 'x' float32 [2,3]: the context model and the blob do not "
                        "belong together"));
  auto fallback = Session::Create(ctx);
  ASSERT_TRUE(fallback.ok()) << fallback.status().ToString();
  EXPECT_FALSE((*fallback)->origin().from_context_blob);
  auto checks = VerifyModel(ctx);
  ASSERT_TRUE(checks.ok());
  bool reported = false;
  for (const VerifyCheck& c : *checks) {
    if (c.what == "context model interface") {
      reported = true;
      EXPECT_FALSE(c.passed);
      EXPECT_THAT(c.detail, HasSubstr("declares input 0 as 'renamed'"));
    }
  }
  EXPECT_TRUE(reported);
}

TEST(ContextInterface, OtherOutputTypeOrShapeIsAMismatchedPair) {
  TempDir dir;
  std::string ctx = Compile(dir);
  EditContextModel(ctx, [](onnx::ModelProto& m) {
    m.mutable_graph()->mutable_output(0)->mutable_type()->mutable_tensor_type()->set_elem_type(
        onnx::TensorProto::DOUBLE);
  });
  auto dtype = Session::Create(ctx, Options({{"epctx.fallback", "deny"}}));
  ASSERT_FALSE(dtype.ok());
  EXPECT_THAT(dtype.status().message(),
              HasSubstr("declares output 0 as 'y' float64 [2,4], but the blob's model 'model' "
                        "has 'y' float32 [2,4]"));
  EditContextModel(ctx, [](onnx::ModelProto& m) {
    auto* tt = m.mutable_graph()->mutable_output(0)->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto::FLOAT);
    tt->mutable_shape()->mutable_dim(1)->set_dim_value(5);
  });
  auto shape = Session::Create(ctx, Options({{"epctx.fallback", "deny"}}));
  ASSERT_FALSE(shape.ok());
  EXPECT_THAT(shape.status().message(), HasSubstr("declares output 0 as 'y' float32 [2,5]"));
}

// The same graph as kModel with other weights: a context model for one paired with the blob of
// the other would run silently, with the wrong weights.
constexpr const char* kOtherWeights = R"(
<ir_version: 8, opset_import: ["" : 17]>
agraph (float[2, 3] x) => (float[2, 4] y)
<float[3, 4] w = {-1.0, -2.0, -3.0, -4.0, -5.0, -6.0, -7.0, -8.0, -9.0, -10.0, -11.0, -12.0}>
{
  y = MatMul(x, w)
}
)";

Tensor Ones() {
  auto t = Tensor::Allocate(DataType::kFloat32, {2, 3});
  EXPECT_TRUE(t.ok());
  for (int i = 0; i < 6; ++i) t->mutable_data_as<float>()[i] = 1.0f;
  return *t;
}

// A compile of new weights killed between its two renames: the new blob is in place, the old
// context model still beside it.
TEST(ContextPair, BlobOfAnInterruptedCompileIsNotServedUnderTheOldContextModel) {
  TempDir dir;
  std::string ctx = Compile(dir);
  fs::create_directories(dir.path() / "next");
  onnx::ModelProto other;
  ASSERT_TRUE(onnx::OnnxParser::Parse(other, kOtherWeights).IsOK());
  std::ofstream(dir / "next/model.onnx", std::ios::binary) << other.SerializeAsString();
  ASSERT_TRUE(
      ModelCompiler().CompileToFile(dir / "next/model.onnx", dir / "next/model_ctx.onnx").ok());
  fs::rename(dir / "next/model_ctx.epctx", dir / "model_ctx.epctx");

  auto denied = Session::Create(ctx, Options({{"epctx.fallback", "deny"}}));
  ASSERT_FALSE(denied.ok());
  EXPECT_EQ(denied.status().code(), StatusCode::kStale);
  EXPECT_THAT(denied.status().message(),
              HasSubstr("the blob '" + (dir / "model_ctx.epctx") + "' is not the one '" + ctx +
                        "' was compiled with (blob checksum "));
  // Falling back runs the original model, with its own weights: 1+5+9 = 15 in column 0.
  auto session = Session::Create(ctx);
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  EXPECT_FALSE((*session)->origin().from_context_blob);
  auto out = (*session)->Run({{"x", Ones()}});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0].data_as<float>()[0], 15.0f);

  auto checks = VerifyModel(ctx);
  ASSERT_TRUE(checks.ok());
  bool reported = false;
  for (const VerifyCheck& c : *checks) {
    if (c.what != "blob identity") continue;
    reported = true;
    EXPECT_FALSE(c.passed);
    EXPECT_THAT(c.detail, HasSubstr("is not the one"));
  }
  EXPECT_TRUE(reported);
}

TEST(ContextPair, ContextModelWithoutABlobChecksumIsNotPaired) {
  TempDir dir;
  std::string ctx = Compile(dir);
  EditContextModel(ctx, [](onnx::ModelProto& m) {
    auto* props = m.mutable_metadata_props();
    for (int i = 0; i < props->size(); ++i) {
      if (props->Get(i).key() == "epctx.blob_checksum") props->DeleteSubrange(i, 1);
    }
  });
  auto denied = Session::Create(ctx, Options({{"epctx.fallback", "deny"}}));
  ASSERT_FALSE(denied.ok());
  EXPECT_THAT(denied.status().message(),
              HasSubstr("records no blob checksum, so its blob '" + (dir / "model_ctx.epctx") +
                        "' cannot be confirmed to be the one it was compiled with"));
}

}  // namespace
}  // namespace epctx::testing
