// The session factory on its own (loader::CreateSession, below the public Session): which path a
// model takes (blob, in-memory compile, ep.context_enable), the fallback from a blob that cannot
// serve to the original model, and the messages when there is none.
#include "loader/session_factory.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>

#include "epctx/compiler.h"
#include "loader/loader_test_helpers.h"
#include "util/file.h"

namespace epctx::loader {
namespace {

using loadertest::TempDir;
using ::testing::HasSubstr;

constexpr int64_t kWidth = 16;

// y[0][0] for x = ones: scale * (kWidth + 1) / 2.
float RunOnes(SessionImpl& session) {
  auto x = Tensor::Allocate(DataType::kFloat32, {1, kWidth});
  for (int64_t i = 0; i < kWidth; ++i) x->mutable_data_as<float>()[i] = 1.0f;
  auto out = session.Run({{"x", *x}}, {}, nullptr);
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  return out.ok() ? (*out)[0].data_as<float>()[0] : -1.0f;
}

struct Opened {
  MappedFile file;
  ModelSource source;
};

std::unique_ptr<Opened> Open(const std::string& path) {
  auto file = MappedFile::Open(path);
  EXPECT_TRUE(file.ok()) << file.status().ToString();
  auto opened = std::make_unique<Opened>(Opened{std::move(*file), {}});
  opened->source = {opened->file.bytes(), path, DirName(path), path};
  return opened;
}

class SessionFactory : public ::testing::Test {
 protected:
  void SetUp() override {
    loadertest::WriteScaledMatMul(dir_ / "m.onnx", kWidth, 2.0f);
    auto report = ModelCompiler().CompileToFile(dir_ / "m.onnx", ctx_);
    ASSERT_TRUE(report.ok()) << report.status().ToString();
  }
  TempDir dir_;
  std::string ctx_ = dir_ / "m_ctx.onnx";
  std::string blob_ = DefaultBlobPathFor(ctx_);
  const float expected_ = 2.0f * (kWidth + 1) / 2;
};

TEST_F(SessionFactory, ContextModelRunsFromItsBlob) {
  auto opened = Open(ctx_);
  auto session = CreateSession(opened->source, EngineOptions{});
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  const SessionOrigin& origin = (*session)->origin();
  EXPECT_TRUE(origin.from_context_blob);
  EXPECT_EQ(origin.blob_path, blob_);
  EXPECT_EQ(origin.original_model_path, dir_ / "m.onnx");
  EXPECT_EQ(origin.fallback_reason, "");
  EXPECT_FLOAT_EQ(RunOnes(**session), expected_);
}

TEST_F(SessionFactory, OriginalModelIsCompiledInMemory) {
  auto opened = Open(dir_ / "m.onnx");
  auto session = CreateSession(opened->source, EngineOptions{});
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  EXPECT_FALSE((*session)->origin().from_context_blob);
  EXPECT_EQ((*session)->origin().original_model_path, dir_ / "m.onnx");
  EXPECT_FLOAT_EQ(RunOnes(**session), expected_);
}

TEST_F(SessionFactory, MissingBlobFallsBackToTheOriginalWithTheReason) {
  std::filesystem::remove(blob_);
  auto opened = Open(ctx_);
  auto session = CreateSession(opened->source, EngineOptions{});
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  const SessionOrigin& origin = (*session)->origin();
  EXPECT_FALSE(origin.from_context_blob);
  EXPECT_EQ(origin.context_model_path, ctx_);
  EXPECT_THAT(origin.fallback_reason, HasSubstr(blob_));
  EXPECT_FLOAT_EQ(RunOnes(**session), expected_);
}

TEST_F(SessionFactory, FallbackDenyNamesTheModelTheBlobAndThePolicy) {
  std::filesystem::remove(blob_);
  auto opened = Open(ctx_);
  EngineOptions deny;
  deny.fallback = FallbackPolicy::kDeny;
  auto session = CreateSession(opened->source, deny);
  ASSERT_FALSE(session.ok());
  EXPECT_THAT(session.status().message(), HasSubstr("'" + ctx_ + "': the context blob '" + blob_ +
                                                    "' cannot be used, and epctx.fallback=deny: "));
}

TEST_F(SessionFactory, NoOriginalToFallBackToIsAnError) {
  std::filesystem::remove(blob_);
  std::filesystem::remove(dir_ / "m.onnx");
  auto opened = Open(ctx_);
  auto session = CreateSession(opened->source, EngineOptions{});
  ASSERT_FALSE(session.ok());
  EXPECT_THAT(session.status().message(),
              HasSubstr("'" + ctx_ + "' cannot be loaded: context blob '"));
  EXPECT_THAT(session.status().message(), HasSubstr("original model"));
}

// ep.context_enable=1 compiles the original to a context model (at ep.context_file_path) and
// loads that; the sharing options are ModelCompiler's and do not apply.
TEST_F(SessionFactory, ContextEnableWritesTheContextModelAndLoadsIt) {
  auto opened = Open(dir_ / "m.onnx");
  EngineOptions options;
  options.context_enable = true;
  options.compile.context_file_path = dir_ / "out_ctx.onnx";
  options.compile.share_ep_contexts = true;
  auto session = CreateSession(opened->source, options);
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  EXPECT_TRUE((*session)->origin().from_context_blob);
  EXPECT_EQ((*session)->origin().context_model_path, dir_ / "out_ctx.onnx");
  EXPECT_TRUE(std::filesystem::exists(dir_ / "out_ctx.epctx"));
  EXPECT_FLOAT_EQ(RunOnes(**session), expected_);
}

TEST_F(SessionFactory, ContextEnableNeedsAFile) {
  auto file = MappedFile::Open(dir_ / "m.onnx");
  ASSERT_TRUE(file.ok());
  ModelSource from_memory{file->bytes(), "<model in memory>", "", ""};
  EngineOptions options;
  options.context_enable = true;
  auto session = CreateSession(from_memory, options);
  ASSERT_FALSE(session.ok());
  EXPECT_EQ(session.status().message(),
            "ep.context_enable=1 needs the original model as a file, not from memory");
}

}  // namespace
}  // namespace epctx::loader
