// A session's activation arena is mapped (faulted in for writing) ahead of its first run by the
// same preparation that makes its kernels: in the background by default, in creation with
// epctx.prepare_kernels=creation, and not at all with first_run, where the run faults it in.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "epctx/epctx.h"
#include "loader/loader_test_helpers.h"
#include "util/anonymous_memory.h"

namespace epctx {
namespace {

using loadertest::TempDir;

constexpr int64_t kRowWidth = int64_t{4} << 20;  // floats: a 16 MiB intermediate
constexpr int64_t kIntermediateBytes = kRowWidth * 4;

// y = -Relu(x), x: [1, kRowWidth]: the Relu output lives in the arena, and neither node makes a
// oneDNN primitive (no generated code's memory in the figures).
void WriteReluNeg(const std::string& path) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  onnx::GraphProto* g = m.mutable_graph();
  g->set_name("relu_neg");
  loadertest::DeclareRowInputAndOutput(*g, kRowWidth);
  // std::string, not const char*: GCC 12 warns falsely (-Wrestrict) inside protobuf's overload.
  onnx::NodeProto* relu = g->add_node();
  relu->set_op_type("Relu");
  relu->add_input(std::string("x"));
  relu->add_output(std::string("r"));
  onnx::NodeProto* neg = g->add_node();
  neg->set_op_type("Neg");
  neg->add_input(std::string("r"));
  neg->add_output(std::string("y"));
  std::ofstream(path, std::ios::binary) << m.SerializeAsString();
}

// Resident anonymous memory of this process (Anonymous: in /proc/self/smaps_rollup), bytes.
int64_t AnonymousResidentBytes() {
  std::ifstream rollup("/proc/self/smaps_rollup");
  std::string line;
  while (std::getline(rollup, line)) {
    if (line.rfind("Anonymous:", 0) == 0) return std::stoll(line.substr(10)) * 1024;
  }
  return -1;
}

// Pages of [data, data + bytes) resident in memory.
size_t ResidentPages(const std::byte* data, size_t bytes) {
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> in_core((bytes + page - 1) / page);
  if (::mincore(const_cast<std::byte*>(data), bytes, in_core.data()) != 0) return 0;
  size_t n = 0;
  for (unsigned char c : in_core) n += c & 1;
  return n;
}

TEST(AnonymousMemoryMapAhead, MapsEveryPageAndKeepsWhatWasWritten) {
  const size_t bytes = size_t{6} << 20;
  auto memory = AnonymousMemory::Allocate(bytes, AnonymousMemory::kHugePageSize, true);
  ASSERT_TRUE(memory.ok()) << memory.status().ToString();
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const size_t pages = memory->capacity() / page;
  std::byte* data = memory->data();
  data[0] = std::byte{42};  // in use already: its page must keep the byte
  EXPECT_LT(ResidentPages(data, memory->capacity()), pages);
  std::atomic<bool> stop{false};
  ASSERT_TRUE(memory->MapAheadForWriting(stop));
  EXPECT_EQ(ResidentPages(data, memory->capacity()), pages);
  EXPECT_EQ(data[0], std::byte{42});
  EXPECT_EQ(data[memory->capacity() - 1], std::byte{0});
}

TEST(AnonymousMemoryMapAhead, StopsWhenAsked) {
  auto memory = AnonymousMemory::Allocate(size_t{6} << 20, AnonymousMemory::kHugePageSize, true);
  ASSERT_TRUE(memory.ok()) << memory.status().ToString();
  std::atomic<bool> stop{true};
  EXPECT_FALSE(memory->MapAheadForWriting(stop));
  EXPECT_EQ(ResidentPages(memory->data(), memory->capacity()), 0u);
}

class ArenaMapAhead : public ::testing::Test {
 protected:
  void SetUp() override {
    ctx_ = dir_ / "relu_neg_ctx.onnx";
    const std::string original = dir_ / "relu_neg.onnx";
    WriteReluNeg(original);
    auto report = ModelCompiler().CompileToFile(original, ctx_);
    ASSERT_TRUE(report.ok()) << report.status().ToString();
  }

  // A session of the model with epctx.prepare_kernels=`placement`.
  std::unique_ptr<Session> Create(const std::string& placement) {
    SessionOptions options;
    options.AddConfigEntry("epctx.fallback", "deny");
    options.AddConfigEntry("epctx.prepare_kernels", placement);
    auto session = Session::Create(ctx_, options);
    EXPECT_TRUE(session.ok()) << session.status().ToString();
    return session.ok() ? std::move(*session) : nullptr;
  }

  // Growth of resident anonymous memory since `before`, waiting up to 10 s (a busy machine) for
  // it to reach `at_least`.
  static int64_t GrowthReaching(int64_t before, int64_t at_least) {
    int64_t growth = AnonymousResidentBytes() - before;
    for (int i = 0; i < 500 && growth < at_least; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      growth = AnonymousResidentBytes() - before;
    }
    return growth;
  }

  TempDir dir_;
  std::string ctx_;
};

TEST_F(ArenaMapAhead, BackgroundPreparationMapsTheArenaBeforeAnyRun) {
  const int64_t before = AnonymousResidentBytes();
  ASSERT_GT(before, 0);
  std::unique_ptr<Session> session = Create("background");
  ASSERT_NE(session, nullptr);
  EXPECT_GE(GrowthReaching(before, kIntermediateBytes), kIntermediateBytes);
}

TEST_F(ArenaMapAhead, CreationPlacementMapsTheArenaBeforeCreateReturns) {
  const int64_t before = AnonymousResidentBytes();
  std::unique_ptr<Session> session = Create("creation");
  ASSERT_NE(session, nullptr);
  EXPECT_GE(AnonymousResidentBytes() - before, kIntermediateBytes);
}

TEST_F(ArenaMapAhead, FirstRunPlacementLeavesTheArenaToTheRun) {
  const int64_t before = AnonymousResidentBytes();
  std::unique_ptr<Session> session = Create("first_run");
  ASSERT_NE(session, nullptr);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_LT(AnonymousResidentBytes() - before, kIntermediateBytes / 2);
  // The run writes the intermediate itself, and the answer is right.
  std::vector<float> x(static_cast<size_t>(kRowWidth));
  for (size_t i = 0; i < x.size(); ++i) x[i] = (i % 2 == 0) ? 1.5f : -2.0f;
  Tensor input = Tensor::View(DataType::kFloat32, {1, kRowWidth}, x.data(), nullptr);
  auto out = session->Run({{"x", input}});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const float* y = static_cast<const float*>((*out)[0].data());
  EXPECT_EQ(y[0], -1.5f);
  EXPECT_EQ(y[1], 0.0f);
  EXPECT_EQ(y[kRowWidth - 2], -1.5f);
}

}  // namespace
}  // namespace epctx
