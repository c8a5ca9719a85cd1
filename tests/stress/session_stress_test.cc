// Threads creating, running and destroying sessions of several models, in every load mode, while
// another thread keeps replacing the blobs atomically (a new file renamed over the old, as the
// compiler does). Built with ThreadSanitizer (EPCTX_TSAN=ON): any data race fails the test; and
// every run must give the reference outputs, since each replacement has the same content.
// EPCTX_STRESS_SECONDS bounds the run (default 3; the ThreadSanitizer build's CTest sets 20).
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <random>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "epctx/epctx.h"
#include "loader/loader_test_helpers.h"
#include "util/file.h"

namespace epctx {
namespace {

using loadertest::TempDir;

// y = Relu(x * W) + x * W with W[i][j] = scale * (i - j) / width: two nodes, an arena value.
void WriteModel(const std::string& path, int64_t width, float scale) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  onnx::GraphProto* g = m.mutable_graph();
  g->set_name("stress");
  auto declare = [width](onnx::ValueInfoProto* v, const char* n) {
    v->set_name(n);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto::FLOAT);
    t->mutable_shape()->add_dim()->set_dim_value(2);
    t->mutable_shape()->add_dim()->set_dim_value(width);
  };
  declare(g->add_input(), "x");
  declare(g->add_output(), "y");
  onnx::TensorProto* w = g->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(width);
  w->add_dims(width);
  std::vector<float> values(static_cast<size_t>(width * width));
  for (int64_t i = 0; i < width; ++i) {
    for (int64_t j = 0; j < width; ++j) {
      values[static_cast<size_t>(i * width + j)] = scale * static_cast<float>(i - j) / width;
    }
  }
  w->set_raw_data(values.data(), values.size() * sizeof(float));
  auto node = [g](const char* op, std::vector<const char*> in, const char* out) {
    onnx::NodeProto* n = g->add_node();
    n->set_op_type(op);
    for (const char* i : in) n->add_input(i);
    n->add_output(out);
  };
  node("MatMul", {"x", "w"}, "h");
  node("Relu", {"h"}, "r");
  node("Add", {"r", "h"}, "y");
  std::ofstream(path, std::ios::binary) << m.SerializeAsString();
}

struct Model {
  std::string ctx;
  std::string blob;
  std::string blob_bytes;  // the blob as compiled, written again by the replacer
  int64_t width = 0;
  std::vector<float> reference;
};

Tensor Input(int64_t width) {
  auto t = Tensor::Allocate(DataType::kFloat32, {2, width});
  for (int64_t i = 0; i < 2 * width; ++i) {
    t->mutable_data_as<float>()[i] = static_cast<float>(i % 7) - 3.0f;
  }
  return *t;
}

int StressSeconds() {
  const char* env = std::getenv("EPCTX_STRESS_SECONDS");
  int s = env != nullptr ? std::atoi(env) : 0;
  return s > 0 ? s : 3;
}

TEST(SessionStress, ThreadsShareAndReplaceBlobsWithoutRacesOrWrongOutputs) {
  TempDir dir;
  std::vector<Model> models;
  const float scales[] = {1.0f, -2.0f, 0.5f};
  const int64_t widths[] = {64, 96, 32};
  for (int m = 0; m < 3; ++m) {
    Model model;
    model.width = widths[m];
    std::string name = "model" + std::to_string(m);
    WriteModel(dir / (name + ".onnx"), model.width, scales[m]);
    model.ctx = dir / (name + "_ctx.onnx");
    auto report = ModelCompiler().CompileToFile(dir / (name + ".onnx"), model.ctx);
    ASSERT_TRUE(report.ok()) << report.status().ToString();
    model.blob = report->blob_path;
    auto bytes = ReadWholeFile(model.blob);
    ASSERT_TRUE(bytes.ok());
    model.blob_bytes = *bytes;
    auto session = Session::Create(model.ctx);
    ASSERT_TRUE(session.ok()) << session.status().ToString();
    auto out = (*session)->Run({{"x", Input(model.width)}});
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    const float* y = (*out)[0].data_as<float>();
    model.reference.assign(y, y + 2 * model.width);
    models.push_back(std::move(model));
  }

  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(StressSeconds());
  std::atomic<bool> stop{false};
  std::atomic<int64_t> runs{0}, replacements{0}, failures{0};
  std::string first_failure;
  std::mutex failure_mutex;
  auto fail = [&](const std::string& what) {
    std::lock_guard<std::mutex> lock(failure_mutex);
    if (failures++ == 0) first_failure = what;
  };

  std::thread replacer([&] {
    for (int i = 0; !stop; ++i) {
      const Model& m = models[static_cast<size_t>(i) % models.size()];
      Status s = WriteFileAtomically(m.blob, std::as_bytes(std::span(m.blob_bytes)));
      if (!s.ok()) fail("replacing: " + s.ToString());
      ++replacements;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  });
  const char* modes[] = {"mmap", "populate", "prefetch", "read"};
  std::vector<std::thread> workers;
  for (int t = 0; t < 4; ++t) {
    workers.emplace_back([&, t] {
      std::mt19937 rng(static_cast<uint32_t>(t));
      while (std::chrono::steady_clock::now() < deadline) {
        const Model& m = models[rng() % models.size()];
        SessionOptions options;
        options.AddConfigEntry("epctx.fallback", "deny");
        options.AddConfigEntry("epctx.load_mode", modes[rng() % 4]);
        options.AddConfigEntry("session.intra_op_num_threads", "1");
        auto session = Session::Create(m.ctx, options);
        if (!session.ok()) {
          fail("create: " + session.status().ToString());
          continue;
        }
        Tensor x = Input(m.width);
        for (int r = 0; r < 3; ++r) {
          auto out = (*session)->Run({{"x", x}});
          if (!out.ok()) {
            fail("run: " + out.status().ToString());
            break;
          }
          const float* y = (*out)[0].data_as<float>();
          if (!std::equal(m.reference.begin(), m.reference.end(), y)) fail("wrong outputs");
          ++runs;
        }
      }
    });
  }
  for (std::thread& w : workers) w.join();
  stop = true;
  replacer.join();
  EXPECT_EQ(failures.load(), 0) << first_failure;
  EXPECT_GT(runs.load(), 0);
  EXPECT_GT(replacements.load(), 0);
  std::printf("[ stress ] %lld runs, %lld blob replacements in %d s\n",
              static_cast<long long>(runs.load()), static_cast<long long>(replacements.load()),
              StressSeconds());
}

}  // namespace
}  // namespace epctx
