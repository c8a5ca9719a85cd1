// Option parsing: one table over the keys session creation owns and the compile's, so a session
// and ModelCompiler accept the same keys and refuse the same mistakes.
#include "loader/engine_options.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "epctx/compiler.h"
#include "loader/loader_test_helpers.h"

namespace epctx {
namespace {

using ::testing::HasSubstr;

constexpr const char* kAllKeys =
    "ep.context_enable, ep.context_file_path, ep.context_embed_mode, ep.context_node_name_prefix, "
    "ep.share_ep_contexts, ep.stop_share_ep_contexts, epctx.target_isa, "
    "session.model_external_initializers_file_folder_path, epctx.precision, "
    "epctx.free_dimension_overrides, epctx.allow_unsupported, "
    "epctx.fallback, "
    "epctx.verify_weights, epctx.allow_external_paths, epctx.load_mode, epctx.profile_file, "
    "epctx.prepare_kernels, epctx.max_loop_iterations, epctx.max_value_bytes, "
    "session.intra_op_num_threads";

TEST(EngineOptions, UnknownKeyListsEveryKnownKey) {
  SessionOptions o;
  o.AddConfigEntry("ep.context_enabel", "1");
  auto parsed = loader::ParseEngineOptions(o);
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().message(),
            fmt::format("unknown option \"ep.context_enabel\" (known: {})", kAllKeys));
}

TEST(EngineOptions, CompileKeysLandInTheCompileOptions) {
  SessionOptions o;
  o.AddConfigEntry("ep.context_file_path", "out/m_ctx.onnx");
  o.AddConfigEntry("ep.context_embed_mode", "1");
  o.AddConfigEntry("ep.context_node_name_prefix", "p_");
  o.AddConfigEntry("ep.share_ep_contexts", "1");
  o.AddConfigEntry("epctx.target_isa", "avx2");
  o.AddConfigEntry("epctx.load_mode", "read");
  o.AddConfigEntry("session.intra_op_num_threads", "3");
  auto parsed = loader::ParseEngineOptions(o);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->compile.context_file_path, "out/m_ctx.onnx");
  EXPECT_TRUE(parsed->compile.embed_mode);
  EXPECT_EQ(parsed->compile.node_name_prefix, "p_");
  EXPECT_TRUE(parsed->compile.share_ep_contexts);
  EXPECT_FALSE(parsed->compile.stop_share_ep_contexts);
  EXPECT_EQ(parsed->compile.target_isa, "avx2");
  EXPECT_EQ(parsed->load_mode, loader::LoadMode::kRead);
  EXPECT_EQ(parsed->intra_op_num_threads, 3);
}

TEST(EngineOptions, BadValuesNameTheKeyAndTheValue) {
  const std::pair<const char*, const char*> cases[] = {
      {"ep.context_embed_mode", "option ep.context_embed_mode must be \"0\" or \"1\", got \"yes\""},
      {"epctx.target_isa",
       "option epctx.target_isa must be \"native\", \"avx2\" or \"avx512_core\", got \"yes\""},
      {"epctx.fallback", "option epctx.fallback must be \"allow\" or \"deny\", got \"yes\""},
      {"session.intra_op_num_threads",
       "option session.intra_op_num_threads must be an integer from 0 to 1024, got \"yes\""},
  };
  for (const auto& [key, message] : cases) {
    SessionOptions o;
    o.AddConfigEntry(key, "yes");
    auto parsed = loader::ParseEngineOptions(o);
    ASSERT_FALSE(parsed.ok()) << key;
    EXPECT_EQ(parsed.status().message(), message);
  }
}

TEST(EngineOptions, HelpDescribesEachKeyOnceWithItsDefault) {
  std::string help = DescribeConfigKeys();
  EXPECT_EQ(std::count(help.begin(), help.end(), '\n'), 20);
  EXPECT_THAT(help, HasSubstr("  epctx.max_value_bytes (default \"0\"): bytes one value made at "
                              "run time may take before the run stops with an error; 0 = no "
                              "limit"));
  EXPECT_THAT(help, HasSubstr("  epctx.precision (default \"fp32\"): fp32: compute in float32"));
  EXPECT_THAT(help, HasSubstr("  epctx.target_isa (default \"native\"): compile: the CPU tier"));
  EXPECT_THAT(help, HasSubstr("  epctx.load_mode (default \"auto\"): how the blob is brought in: "
                              "auto (mmap when the blob file's pages are in the page cache"));
}

// ModelCompiler reads the same table: a session-only key is accepted (one SessionOptions can serve
// both), a mistake in one is refused before anything is compiled.
TEST(EngineOptions, ModelCompilerAcceptsSessionKeysAndRefusesMistakes) {
  loadertest::TempDir dir;
  std::string model = dir / "m.onnx";
  loadertest::WriteScaledMatMul(model, 8, 2.0f);
  SessionOptions ok;
  ok.AddConfigEntry("session.intra_op_num_threads", "1");
  ok.AddConfigEntry("epctx.load_mode", "populate");
  auto report = ModelCompiler(ok).CompileToFile(model, dir / "m_ctx.onnx");
  ASSERT_TRUE(report.ok()) << report.status().ToString();

  SessionOptions bad;
  bad.AddConfigEntry("epctx.load_mode", "lazy");
  auto refused = ModelCompiler(bad).CompileToFile(model, dir / "m2_ctx.onnx");
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("option epctx.load_mode must be"));
  EXPECT_FALSE(std::filesystem::exists(dir / "m2_ctx.onnx"));
}

}  // namespace
}  // namespace epctx
