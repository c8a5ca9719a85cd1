#include "e2e/e2e_helpers.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <onnx/defs/parser.h>
#include <onnx/onnx_pb.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <random>

#include "epctx/tensor_io.h"

namespace epctx::testing {

std::string ModelPath(const std::string& name) {
  std::string path = ModelsDir() + "/" + name + ".onnx";
  EXPECT_TRUE(std::filesystem::exists(path))
      << path << " is missing: run /usr/bin/python3 tests/models/export_torchvision.py --out "
      << ModelsDir() << " (and export_transformers.py for bert_tiny, gpt2_tiny, logmel)";
  return path;
}

Tensor LoadNpyOrDie(const std::string& path) {
  auto t = ReadNpy(path);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return t.ok() ? *t : Tensor();
}

Comparison CompareFloat(const Tensor& actual, const Tensor& reference, double rtol, double atol) {
  Comparison c;
  c.count = static_cast<size_t>(reference.element_count());
  const float* a = actual.data_as<float>();
  const float* b = reference.data_as<float>();
  for (size_t i = 0; i < c.count; ++i) {
    double diff = std::fabs(static_cast<double>(a[i]) - b[i]);
    if (!(diff <= atol + rtol * std::fabs(static_cast<double>(b[i])))) c.mismatches++;
    c.max_abs_diff = std::max(c.max_abs_diff, std::isnan(diff) ? INFINITY : diff);
    c.max_abs_ref = std::max(c.max_abs_ref, std::fabs(static_cast<double>(b[i])));
  }
  return c;
}

TempDir::TempDir() {
  std::random_device rd;
  path_ = std::filesystem::temp_directory_path() /
          ("epctx-test-" + std::to_string(::getpid()) + "-" + std::to_string(rd()));
  std::filesystem::create_directories(path_);
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::string CopyModelInto(const std::string& model_path, const std::filesystem::path& dir) {
  auto target = dir / std::filesystem::path(model_path).filename();
  std::filesystem::copy_file(model_path, target, std::filesystem::copy_options::overwrite_existing);
  return target.string();
}

std::vector<char> ReadFileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  return std::vector<char>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

int CountMappings(const std::string& path) {
  std::string canonical = std::filesystem::weakly_canonical(path).string();
  std::ifstream maps("/proc/self/maps");
  std::string line;
  int count = 0;
  while (std::getline(maps, line)) {
    if (line.size() >= canonical.size() &&
        line.compare(line.size() - canonical.size(), canonical.size(), canonical) == 0) {
      count++;
    }
  }
  return count;
}

CpuFeaturesMask::CpuFeaturesMask(uint64_t removed) {
  ::setenv("EPCTX_CPU_FEATURES_MASK", fmt::format("{:x}", removed).c_str(), 1);
}

CpuFeaturesMask::~CpuFeaturesMask() {
  ::unsetenv("EPCTX_CPU_FEATURES_MASK");
}

std::string WriteModel(const TempDir& dir, const std::string& name, const char* text) {
  onnx::ModelProto model;
  onnx::Status parsed = onnx::OnnxParser::Parse(model, text);
  EXPECT_TRUE(parsed.IsOK()) << parsed.ErrorMessage();
  std::string path = dir / (name + ".onnx");
  std::ofstream(path, std::ios::binary) << model.SerializeAsString();
  return path;
}

std::unique_ptr<Session> CompileAndLoad(const TempDir& dir, const std::string& model_path,
                                        SessionOptions options) {
  std::string ctx = dir / "model_ctx.onnx";
  auto report = ModelCompiler().CompileToFile(model_path, ctx);
  EXPECT_TRUE(report.ok()) << report.status().ToString();
  if (!report.ok()) return nullptr;
  options.AddConfigEntry("epctx.fallback", "deny");
  auto session = Session::Create(ctx, options);
  EXPECT_TRUE(session.ok()) << session.status().ToString();
  if (!session.ok()) return nullptr;
  EXPECT_TRUE((*session)->origin().from_context_blob);
  return std::move(*session);
}

}  // namespace epctx::testing
