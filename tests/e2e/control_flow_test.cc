// If, Loop and Scan through the context-cache path: each body is a program of its own in the
// blob, after the program that uses it, and bodies read values of the graphs around them
// (captures), also across two levels of nesting.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <limits>
#include <thread>

#include "e2e/e2e_helpers.h"
#include "epctx/compiler.h"
#include "format/blob_reader.h"
#include "program_generated.h"

namespace epctx::testing {
namespace {

// Number of programs the blob holds for its one model.
uint32_t ProgramCount(const TempDir& dir) {
  std::vector<char> bytes = ReadFileBytes(dir / "model_ctx.epctx");
  format::OpenOptions options;
  options.available_cpu_features = ~uint64_t{0};
  auto view = format::BlobView::Open(std::as_bytes(std::span<const char>(bytes)), "blob", options);
  EXPECT_TRUE(view.ok()) << view.status().ToString();
  if (!view.ok()) return 0;
  return view->manifest().models()->Get(0)->programs()->size();
}

template <typename T>
Tensor Make(DataType type, std::vector<int64_t> shape, std::vector<T> values) {
  auto t = Tensor::Allocate(type, std::move(shape));
  EXPECT_TRUE(t.ok());
  std::memcpy(t->mutable_data(), values.data(), values.size() * sizeof(T));
  return *t;
}

template <typename T>
std::vector<T> Values(const Tensor& t) {
  const T* p = t.data_as<T>();
  return std::vector<T>(p, p + t.element_count());
}

// The branches read the main graph's inputs (captures) in different orders and subsets, and the
// initializer k (a constant the branch gets as a weight of its own).
constexpr const char* kIfWithCapturesModel = R"(
<ir_version: 8, opset_import: ["" : 16]>
agraph (float[3] x, float[3] z, bool c) => (float[3] y)
<float[3] k = {10.0, 20.0, 30.0}>
{
  y = If(c) <
    then_branch = then_graph () => (float[3] t) { t = Add(x, k) },
    else_branch = else_graph () => (float[3] e) { e = Sub(z, x) }
  >
}
)";

TEST(ControlFlow, IfRunsTheChosenBranchOnCapturedValues) {
  TempDir dir;
  auto session = CompileAndLoad(dir, WriteModel(dir, "if", kIfWithCapturesModel));
  ASSERT_NE(session, nullptr);
  EXPECT_EQ(ProgramCount(dir), 3u);
  Tensor x = Make<float>(DataType::kFloat32, {3}, {1, 2, 3});
  Tensor z = Make<float>(DataType::kFloat32, {3}, {5, 7, 9});
  for (bool c : {true, false}) {
    auto out = session->Run({{"x", x}, {"z", z}, {"c", Make<uint8_t>(DataType::kBool, {}, {c})}});
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    ASSERT_EQ(out->size(), 1u);
    std::vector<float> want = c ? std::vector<float>{11, 22, 33} : std::vector<float>{4, 5, 6};
    EXPECT_EQ(Values<float>((*out)[0]), want) << "c=" << c;
  }
}

// A Loop whose body holds an If; the If's branches read x from the main graph, two scopes out.
// Iterations 0..2 add x, 2x, x to the carried sum; the scan output records each sum.
constexpr const char* kNestedModel = R"(
<ir_version: 8, opset_import: ["" : 16]>
agraph (float[2] x, int64 m) => (float[2] sum, float[N, 2] sums)
<float[2] zero = {0.0, 0.0}, int64 one = {1}, float two = {2.0}>
{
  sum, sums = Loop(m, , zero) <
    body = loop_body (int64 i, bool cond_in, float[2] acc) => (bool cond_out, float[2] acc_out,
                                                               float[2] scan) {
      cond_out = Identity(cond_in)
      is_one = Equal(i, one)
      step = If(is_one) <
        then_branch = double_x () => (float[2] d) { d = Mul(x, two) },
        else_branch = plain_x () => (float[2] p) { p = Identity(x) }
      >
      acc_out = Add(acc, step)
      scan = Identity(acc_out)
    }
  >
}
)";

TEST(ControlFlow, LoopWithNestedIfCapturesAcrossTwoScopes) {
  TempDir dir;
  auto session = CompileAndLoad(dir, WriteModel(dir, "nested", kNestedModel));
  ASSERT_NE(session, nullptr);
  EXPECT_EQ(ProgramCount(dir), 4u);  // main, loop body, two branches
  Tensor x = Make<float>(DataType::kFloat32, {2}, {1, -3});
  auto out = session->Run({{"x", x}, {"m", Make<int64_t>(DataType::kInt64, {}, {3})}});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_EQ(out->size(), 2u);
  EXPECT_EQ(Values<float>((*out)[0]), (std::vector<float>{4, -12}));
  EXPECT_EQ((*out)[1].shape(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(Values<float>((*out)[1]), (std::vector<float>{1, -3, 3, -9, 4, -12}));

  // No iteration: the carried value is the initial one, the scan output [0, 2] from the body's
  // declared per-iteration shape.
  out = session->Run({{"x", x}, {"m", Make<int64_t>(DataType::kInt64, {}, {0})}});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(Values<float>((*out)[0]), (std::vector<float>{0, 0}));
  EXPECT_EQ((*out)[1].shape(), (std::vector<int64_t>{0, 2}));
}

// Scan reading its input rows last to first and writing the running sums along axis 1.
constexpr const char* kScanModel = R"(
<ir_version: 8, opset_import: ["" : 16]>
agraph (float[2] init, float[3, 2] rows) => (float[2] total, float[2, 3] running)
{
  total, running = Scan(init, rows) <
    num_scan_inputs = 1, scan_input_directions = [1], scan_output_axes = [1],
    body = scan_body (float[2] sum_in, float[2] row) => (float[2] sum_out, float[2] seen) {
      sum_out = Add(sum_in, row)
      seen = Identity(sum_out)
    }
  >
}
)";

TEST(ControlFlow, ScanHonoursDirectionsAndOutputAxes) {
  TempDir dir;
  auto session = CompileAndLoad(dir, WriteModel(dir, "scan", kScanModel));
  ASSERT_NE(session, nullptr);
  EXPECT_EQ(ProgramCount(dir), 2u);
  auto out = session->Run({{"init", Make<float>(DataType::kFloat32, {2}, {100, 200})},
                           {"rows", Make<float>(DataType::kFloat32, {3, 2}, {1, 2, 3, 4, 5, 6})}});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(Values<float>((*out)[0]), (std::vector<float>{109, 212}));
  // Rows in the order 2, 1, 0; sums laid along axis 1: [[105, 108, 109], [206, 210, 212]].
  EXPECT_EQ((*out)[1].shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(Values<float>((*out)[1]), (std::vector<float>{105, 108, 109, 206, 210, 212}));
}

// The carried value doubles in length each iteration, so its per-iteration copies cannot be
// stacked into one scan output.
constexpr const char* kRaggedModel = R"(
<ir_version: 8, opset_import: ["" : 16]>
agraph (float[1] v, int64 m) => (float[K] last, float[N, K] all)
{
  last, all = Loop(m, , v) <
    body = grow (int64 i, bool c, float[K] acc) => (bool c_out, float[K] acc_out, float[K] scan) {
      c_out = Identity(c)
      acc_out = Concat<axis = 0>(acc, acc)
      scan = Identity(acc_out)
    }
  >
}
)";

TEST(ControlFlow, LoopScanOutputsOfChangingShapeAreAnError) {
  TempDir dir;
  auto session = CompileAndLoad(dir, WriteModel(dir, "ragged", kRaggedModel));
  ASSERT_NE(session, nullptr);
  auto out = session->Run({{"v", Make<float>(DataType::kFloat32, {1}, {1})},
                           {"m", Make<int64_t>(DataType::kInt64, {}, {2})}});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().message(),
            "model 'ragged': Loop node 'Loop_0': scan outputs differ between iterations: float32 "
            "[2] and float32 "
            "[4] cannot be stacked");
}

// A Loop that runs until its condition turns false, which it never does, or M iterations; the
// body only adds one to a counter.
constexpr const char* kEndlessModel = R"(
<ir_version: 8, opset_import: ["" : 16]>
agraph (int64 m, bool go, float[1] start) => (float[1] count)
<float[1] one = {1.0}>
{
  count = Loop(m, go, start) <
    body = count_up (int64 i, bool c, float[1] n) => (bool c_out, float[1] n_out) {
      c_out = Identity(c)
      n_out = Add(n, one)
    }
  >
}
)";

std::unordered_map<std::string, Tensor> EndlessFeeds(int64_t m) {
  return {{"m", Make<int64_t>(DataType::kInt64, {}, {m})},
          {"go", Make<uint8_t>(DataType::kBool, {}, {1})},
          {"start", Make<float>(DataType::kFloat32, {1}, {0})}};
}

TEST(RunLimits, LoopStopsAtMaxLoopIterations) {
  TempDir dir;
  SessionOptions options;
  options.AddConfigEntry("epctx.max_loop_iterations", "1000");
  auto session = CompileAndLoad(dir, WriteModel(dir, "endless", kEndlessModel), options);
  ASSERT_NE(session, nullptr);
  // Below the limit the loop runs to its trip count.
  auto out = session->Run(EndlessFeeds(1000));
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(Values<float>((*out)[0]), std::vector<float>{1000});
  out = session->Run(EndlessFeeds(std::numeric_limits<int64_t>::max()));
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kCancelled);
  EXPECT_EQ(out.status().message(),
            "model 'endless': Loop node 'Loop_0': the loop was stopped after 1000 iterations, the "
            "limit "
            "epctx.max_loop_iterations sets");
}

TEST(RunLimits, MaxLoopIterationsOptionIsChecked) {
  SessionOptions options;
  options.AddConfigEntry("epctx.max_loop_iterations", "-1");
  auto session = Session::Create(ModelPath("resnet18_cls"), options);
  ASSERT_FALSE(session.ok());
  EXPECT_EQ(session.status().message(),
            "option epctx.max_loop_iterations must be an integer >= 0, got \"-1\"");
}

// A sum over the empty axis of a [0, 262144, 1] input: 262144 zeros, 1 MiB, from a model of a
// few bytes and an empty input.
constexpr const char* kEmptyAxisSumModel = R"(
<ir_version: 8, opset_import: ["" : 13]>
agraph (float[0, 262144, 1] x) => (float[1, 262144, 1] y)
<int64[2] axes = {0, 2}>
{
  y = ReduceSum<keepdims = 1>(x, axes)
}
)";

TEST(RunLimits, AValueOverMaxValueBytesStopsTheRun) {
  TempDir dir;
  const std::string model = WriteModel(dir, "empty_axis_sum", kEmptyAxisSumModel);
  const std::unordered_map<std::string, Tensor> feeds = {
      {"x", Make<float>(DataType::kFloat32, {0, 262144, 1}, {})}};
  {
    auto session = CompileAndLoad(dir, model);  // no limit: the zeros
    ASSERT_NE(session, nullptr);
    auto out = session->Run(feeds);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_EQ((*out)[0].shape(), (std::vector<int64_t>{1, 262144, 1}));
    EXPECT_EQ(Values<float>((*out)[0]), std::vector<float>(262144, 0.0f));
  }
  SessionOptions options;
  options.AddConfigEntry("epctx.max_value_bytes", "1048575");
  auto session = CompileAndLoad(dir, model, options);
  ASSERT_NE(session, nullptr);
  auto out = session->Run(feeds);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kCancelled);
  EXPECT_EQ(out.status().message(),
            "model 'empty_axis_sum': ReduceSum node 'ReduceSum_0': output 'y' of shape "
            "[1,262144,1] would take 1048576 bytes, more than the 1048575 epctx.max_value_bytes "
            "allows");
  SessionOptions bad;
  bad.AddConfigEntry("epctx.max_value_bytes", "-1");
  auto refused = Session::Create(ModelPath("resnet18_cls"), bad);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().message(),
            "option epctx.max_value_bytes must be an integer >= 0, got \"-1\"");
}

TEST(RunLimits, TerminateStopsARunningLoopFromAnotherThread) {
  TempDir dir;
  SessionOptions options;
  options.AddConfigEntry("epctx.max_loop_iterations", "0");  // no limit: only terminate stops it
  auto session = CompileAndLoad(dir, WriteModel(dir, "endless", kEndlessModel), options);
  ASSERT_NE(session, nullptr);
  RunOptions run_options;
  // Timed from before the stopper exists: its 200 ms may start before this thread runs again.
  auto start = std::chrono::steady_clock::now();
  std::thread stopper([run_options]() mutable {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    run_options.SetTerminate();  // a copy: copies share the flag
  });
  auto out = session->Run(run_options, EndlessFeeds(std::numeric_limits<int64_t>::max()));
  auto elapsed = std::chrono::steady_clock::now() - start;
  stopper.join();
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kCancelled);
  EXPECT_THAT(out.status().message(),
              ::testing::MatchesRegex(
                  "model 'endless': Loop node 'Loop_0': (Loop 'Loop_0' attribute 'body': )?the "
                  "run was terminated \\(its RunOptions' terminate flag is set\\), .*"));
  EXPECT_GE(elapsed, std::chrono::milliseconds(200));
  EXPECT_TRUE(run_options.terminate());

  // A run started while the flag is set stops before its first node; cleared, it runs.
  out = session->Run(run_options, EndlessFeeds(3));
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().message(),
            "model 'endless': the run was terminated (its RunOptions' terminate flag is set), "
            "before Loop node "
            "'Loop_0'");
  run_options.UnsetTerminate();
  out = session->Run(run_options, EndlessFeeds(3));
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(Values<float>((*out)[0]), std::vector<float>{3});
}

}  // namespace
}  // namespace epctx::testing
