// Convolutional models through the whole program path (compile to a context model and blob,
// load with the fallback denied, run): the oneDNN kernels inside the executor's memory plan,
// symbolic batch and image sizes compiled once and run at several concrete shapes, and one
// session (and several sessions of one blob) run from four threads at once. References are the
// unoptimised graphs evaluated node by node with the reference kernels.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <thread>

#include "compile/dnnl_graph_helpers.h"
#include "compile/passes/passes.h"
#include "e2e/e2e_helpers.h"
#include "epctx/compiler.h"
#include "format/blob_reader.h"
#include "program_generated.h"

namespace epctx::testing {
namespace {

using dnnl::AttrInt;
using dnnl::AttrInts;
using dnnl::ModelBuilder;

// Relative to max|reference|, as in tests/compile/dnnl_*_test.cc (float32 in another summation
// order through a network of a few layers).
constexpr double kRel = 1e-5;

std::string Conv3(ModelBuilder& b, const std::string& x, int64_t c, int64_t m, int64_t stride = 1) {
  return b.Conv(x, c, m, {3, 3},
                {AttrInts("pads", {1, 1, 1, 1}), AttrInts("strides", {stride, stride})});
}

std::unique_ptr<Session> LoadContext(const std::string& ctx, const std::string& threads) {
  SessionOptions options;
  options.AddConfigEntry("epctx.fallback", "deny");
  options.AddConfigEntry("session.intra_op_num_threads", threads);
  auto session = Session::Create(ctx, options);
  EXPECT_TRUE(session.ok()) << session.status().ToString();
  if (!session.ok()) return nullptr;
  EXPECT_TRUE((*session)->origin().from_context_blob);
  return std::move(*session);
}

// Writes the model, compiles it into `dir` and loads the context model (fallback denied, so
// the blob is what runs).
std::unique_ptr<Session> CompileAndLoad(const ModelBuilder& b, const TempDir& dir,
                                        const std::string& threads = "2") {
  const std::string path = dir / "dnnl_model.onnx";
  std::ofstream(path, std::ios::binary) << b.Serialized();
  const std::string ctx = dir / "dnnl_model_ctx.onnx";
  auto report = ModelCompiler().CompileToFile(path, ctx);
  EXPECT_TRUE(report.ok()) << report.status().ToString();
  if (!report.ok()) return nullptr;
  return LoadContext(ctx, threads);
}

// The unoptimised graph's outputs for `x`.
std::vector<Tensor> Reference(const ModelBuilder& b, const Tensor& x) {
  auto graph = dnnl::ImportGraph(b);
  EXPECT_TRUE(graph.ok()) << graph.status().ToString();
  if (!graph.ok()) return {};
  return dnnl::Evaluate(*graph, {x});
}

std::string ShapeName(const std::vector<int64_t>& s) {
  return ShapeToString(s);
}

// x [N, 8, H, W] (N, H, W symbolic): conv+relu, strided conv, max pool, a depthwise conv with a
// skip Add, Concat of two branches (16 + 24 channels), a 1x1 conv, then two outputs: the
// feature map (plain, [N, 16, H', W']) and GAP -> Flatten -> Gemm logits ([N, 5]).
ModelBuilder DynamicModel() {
  ModelBuilder b(101);
  const std::string x = b.Input("x", {-1, 8, -1, -1}, {"N", "", "H", "W"});
  const std::string a = b.Node("Relu", {Conv3(b, x, 8, 16)});
  const std::string s = b.Node("Relu", {Conv3(b, a, 16, 24, 2)});
  const std::string p = b.Node("MaxPool", {s},
                               {AttrInts("kernel_shape", {3, 3}), AttrInts("strides", {1, 1}),
                                AttrInts("pads", {1, 1, 1, 1})});
  const std::string d =
      b.Conv(p, 24, 24, {3, 3}, {AttrInts("pads", {1, 1, 1, 1})}, true, /*group=*/24);
  const std::string skip = b.Node("Add", {d, p});
  const std::string branch = b.Node("Sigmoid", {b.Conv(s, 24, 16, {1, 1})});
  const std::string cat = b.Node("Concat", {branch, skip}, {AttrInt("axis", 1)});
  const std::string features = b.Conv(cat, 40, 16, {1, 1});
  const std::string flat = b.Node("Flatten", {b.Node("GlobalAveragePool", {features})});
  const std::string logits =
      b.Node("Gemm", {flat, b.Weight({5, 16}, -0.5f, 0.5f), b.Weight({5}, -0.5f, 0.5f)},
             {AttrInt("transB", 1)});
  b.Output(features);
  b.Output(logits);
  return b;
}

TEST(DnnlSession, SymbolicBatchAndImageSizeCompiledOnceRunAtManyShapes) {
  TempDir dir;
  ModelBuilder b = DynamicModel();
  {  // What the compiler makes of it: symbolic dims, every conv and the MaxPool on oneDNN (the
     // GAP reads the plain graph output).
    auto graph = dnnl::ImportGraph(b);
    ASSERT_TRUE(graph.ok()) << graph.status().ToString();
    EXPECT_EQ(graph->values[static_cast<size_t>(graph->inputs[0])].shape,
              (std::vector<int64_t>{-1, 8, -1, -1}));
    ASSERT_TRUE(compile::RunAllPasses(*graph).ok());
    EXPECT_EQ(dnnl::CountOps(*graph, "DnnlConv"), 5)
        << ::testing::PrintToString(dnnl::OpList(*graph));
    EXPECT_EQ(dnnl::CountOps(*graph, "DnnlPool"), 1)
        << ::testing::PrintToString(dnnl::OpList(*graph));
  }
  auto session = CompileAndLoad(b, dir);
  ASSERT_NE(session, nullptr);
  std::mt19937 rng(5);
  // Shapes other than the packing's representative one (batch 1, 32x32), tiny images (the 3x3
  // windows are mostly padding), odd sizes, and a first shape revisited after the others.
  const std::vector<std::vector<int64_t>> shapes{{1, 8, 16, 16}, {3, 8, 9, 7},   {2, 8, 2, 3},
                                                 {1, 8, 32, 32}, {4, 8, 45, 21}, {1, 8, 1, 1},
                                                 {1, 8, 16, 16}};
  for (const auto& shape : shapes) {
    Tensor x = dnnl::RandomTensor(shape, rng);
    const std::vector<Tensor> want = Reference(b, x);
    ASSERT_EQ(want.size(), 2u);
    auto got = session->Run({{"x", x}});
    ASSERT_TRUE(got.ok()) << ShapeName(shape) << ": " << got.status().ToString();
    ASSERT_EQ(got->size(), 2u);
    dnnl::ExpectMatches((*got)[0], want[0], kRel, dnnl::Cat("features at ", ShapeName(shape)));
    dnnl::ExpectMatches((*got)[1], want[1], kRel, dnnl::Cat("logits at ", ShapeName(shape)));
  }
}

// A static ResNet-style stage (two basic blocks with fused residuals, a block whose residual is
// the convolution's own input, a strided block with a 1x1 projection) through the executor's
// memory plan.
TEST(DnnlSession, StaticResidualStageMatchesReference) {
  for (int64_t c : {16, 24}) {
    ModelBuilder b(102);
    const std::string x = b.Input("x", {2, 3, 20, 18});
    std::string h = b.Node(
        "Relu",
        {b.Conv(x, 3, c, {7, 7}, {AttrInts("pads", {3, 3, 3, 3}), AttrInts("strides", {2, 2})})});
    h = b.Node("MaxPool", {h},
               {AttrInts("kernel_shape", {3, 3}), AttrInts("strides", {2, 2}),
                AttrInts("pads", {1, 1, 1, 1})});
    for (int block = 0; block < 2; ++block) {
      const std::string y = Conv3(b, b.Node("Relu", {Conv3(b, h, c, c)}), c, c);
      h = b.Node("Relu", {b.Node("Add", {y, h})});
    }
    // The residual is the fused convolution's own input.
    h = b.Node("Relu", {b.Node("Add", {h, Conv3(b, h, c, c)})});
    const std::string y = Conv3(b, b.Node("Relu", {Conv3(b, h, c, 2 * c, 2)}), 2 * c, 2 * c);
    const std::string proj = b.Conv(h, c, 2 * c, {1, 1}, {AttrInts("strides", {2, 2})});
    h = b.Node("Relu", {b.Node("Add", {proj, y})});
    b.Output(b.Node("Flatten", {b.Node("GlobalAveragePool", {h})}));
    b.Output(h);

    TempDir dir;
    auto session = CompileAndLoad(b, dir);
    ASSERT_NE(session, nullptr);
    std::mt19937 rng(6);
    Tensor input = dnnl::RandomTensor({2, 3, 20, 18}, rng);
    const std::vector<Tensor> want = Reference(b, input);
    ASSERT_EQ(want.size(), 2u);
    auto got = session->Run({{"x", input}});
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    ASSERT_EQ(got->size(), 2u);
    dnnl::ExpectMatches((*got)[0], want[0], kRel, dnnl::Cat("pooled c", c));
    dnnl::ExpectMatches((*got)[1], want[1], kRel, dnnl::Cat("stage output c", c));
  }
}

// Products with constant weights over no rows: empty outputs, for a shape known at compile (the
// preparation made oneDNN's matmul of 0 rows, which divides by zero: SIGFPE) and one known only
// at run time; and MatMul of two inputs over an empty inner dimension: zeros.
TEST(DnnlSession, ProductsWithEmptyDimensions) {
  for (const std::string prepare : {"creation", "background"}) {
    ModelBuilder b(7);
    const std::string fixed = b.Input("fixed", {0, 3});
    const std::string rows = b.Input("rows", {-1, 3}, {"n"});
    const std::string a = b.Input("a", {2, -1}, {"k"});
    const std::string c = b.Input("c", {-1, 4}, {"k"});
    const std::string w = b.Weight({3, 2}, -1, 1);
    b.Output(b.Node("MatMul", {fixed, w}));
    b.Output(b.Node("Gemm", {rows, b.Weight({5, 3}, -1, 1)}, {AttrInt("transB", 1)}));
    b.Output(b.Node("MatMul", {a, c}));
    TempDir dir;
    const std::string path = dir / "empty.onnx";
    std::ofstream(path, std::ios::binary) << b.Serialized();
    ASSERT_TRUE(ModelCompiler().CompileToFile(path, dir / "empty_ctx.onnx").ok());
    SessionOptions options;
    options.AddConfigEntry("epctx.fallback", "deny");
    options.AddConfigEntry("epctx.prepare_kernels", prepare);
    auto session = Session::Create(dir / "empty_ctx.onnx", options);
    ASSERT_TRUE(session.ok()) << session.status().ToString();
    auto empty = [](std::vector<int64_t> shape) {
      return *Tensor::Allocate(DataType::kFloat32, std::move(shape));
    };
    auto got = (*session)->Run({{"fixed", empty({0, 3})},
                                {"rows", empty({0, 3})},
                                {"a", empty({2, 0})},
                                {"c", empty({0, 4})}});
    ASSERT_TRUE(got.ok()) << prepare << ": " << got.status().ToString();
    EXPECT_EQ((*got)[0].shape(), (std::vector<int64_t>{0, 2}));
    EXPECT_EQ((*got)[1].shape(), (std::vector<int64_t>{0, 5}));
    ASSERT_EQ((*got)[2].shape(), (std::vector<int64_t>{2, 4}));
    const float* zeros = (*got)[2].data_as<float>();
    EXPECT_EQ(std::vector<float>(zeros, zeros + 8), std::vector<float>(8, 0.0f));
  }
}

// Blocked values, constants re-laid out per channel, Concat with a padded last input, an SE
// gate, graph outputs inside the chain and plain readers (Flatten, Reshape) of blocked values,
// all inside one memory plan.
TEST(DnnlSession, StaticMixedLayoutsMatchReference) {
  ModelBuilder b(103);
  const std::string x = b.Input("x", {2, 8, 10, 9});
  const std::string a = Conv3(b, x, 8, 24);
  const std::string scaled = b.Node("Add", {b.Node("Mul", {a, b.Weight({24, 1, 1}, 0.5f, 1.5f)}),
                                            b.Weight({1, 24, 1, 1}, -0.2f, 0.2f)});
  const std::string c = b.Node("Relu", {Conv3(b, scaled, 24, 32)});
  const std::string gate = b.Node(
      "Sigmoid", {b.Conv(b.Node("Relu", {b.Conv(b.Node("GlobalAveragePool", {c}), 32, 8, {1, 1})}),
                         8, 32, {1, 1})});
  const std::string se = b.Node("Mul", {c, gate});
  const std::string cat =
      b.Node("Concat", {se, b.Node("Relu", {Conv3(b, a, 24, 8)})}, {AttrInt("axis", 1)});  // 32 + 8
  const std::string pooled =
      b.Node("AveragePool", {cat}, {AttrInts("kernel_shape", {2, 2}), AttrInts("strides", {2, 2})});
  const std::string out = Conv3(b, pooled, 40, 16);
  b.Output(out);
  b.Output(scaled);  // inside the chain
  b.Output(b.Node("Flatten", {pooled}));
  b.Output(b.Node("Reshape", {c, b.Int64Constant({3}, {2, 32, -1})}));

  TempDir dir;
  auto session = CompileAndLoad(b, dir);
  ASSERT_NE(session, nullptr);
  std::mt19937 rng(8);
  Tensor input = dnnl::RandomTensor({2, 8, 10, 9}, rng);
  const std::vector<Tensor> want = Reference(b, input);
  ASSERT_EQ(want.size(), 4u);
  for (int repeat = 0; repeat < 2; ++repeat) {  // the second run reuses the arena
    auto got = session->Run({{"x", input}});
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    ASSERT_EQ(got->size(), 4u);
    for (size_t i = 0; i < 4; ++i) {
      dnnl::ExpectMatches((*got)[i], want[i], kRel, dnnl::Cat("output ", i, " run ", repeat));
    }
  }
}

// Per Concat node of the blob's main program, in order: whether its inputs sit where it puts them
// in its output (written there by their producers, so that it copies nothing).
std::vector<bool> ConcatsInPlace(const std::string& blob_path) {
  std::vector<char> bytes = ReadFileBytes(blob_path);
  format::OpenOptions options;
  options.available_cpu_features = ~uint64_t{0};
  auto view = format::BlobView::Open(std::as_bytes(std::span<const char>(bytes)), "blob", options);
  EXPECT_TRUE(view.ok()) << view.status().ToString();
  if (!view.ok()) return {};
  const fb::Program* program = view->GetProgram(*view->manifest().models()->Get(0), 0);
  EXPECT_NE(program, nullptr);
  if (program == nullptr) return {};
  std::vector<bool> in_place;
  for (const fb::Node* node : *program->nodes()) {
    if (node->op_type()->string_view() != "Concat") continue;
    const fb::Value* y = program->values()->Get(static_cast<uint32_t>(node->outputs()->Get(0)));
    int64_t at = y->arena_offset();
    bool placed = at >= 0;
    for (int32_t i : *node->inputs()) {
      const fb::Value* x = program->values()->Get(static_cast<uint32_t>(i));
      placed = placed && x->arena_offset() == at;
      at += x->arena_bytes();
    }
    in_place.push_back(placed && at == y->arena_offset() + y->arena_bytes());
  }
  return in_place;
}

// Two SqueezeNet fire modules (a squeeze conv, then 1x1 and 3x3 expand convs concatenated) at
// batch 1: the first Concat's inputs are written in place by their convs; the second also takes
// an input of the first (already a part of that output), so it copies. Outputs match the
// reference on the first run and on a second run over the same arena.
TEST(DnnlSession, ConcatInputsWrittenInPlaceMatchReference) {
  ModelBuilder b(104);
  const std::string x = b.Input("x", {1, 8, 12, 12});
  const std::string s1 = b.Node("Relu", {b.Conv(x, 8, 16, {1, 1})});
  const std::string e1 = b.Node("Relu", {b.Conv(s1, 16, 16, {1, 1})});
  const std::string e3 = b.Node("Relu", {Conv3(b, s1, 16, 32)});
  const std::string cat1 = b.Node("Concat", {e1, e3}, {AttrInt("axis", 1)});  // 48 channels
  const std::string s2 = b.Node("Relu", {b.Conv(cat1, 48, 16, {1, 1})});
  const std::string f1 = b.Node("Relu", {b.Conv(s2, 16, 16, {1, 1})});
  const std::string f3 = b.Node("Relu", {Conv3(b, s2, 16, 16)});
  const std::string cat2 = b.Node("Concat", {f1, f3, e1}, {AttrInt("axis", 1)});
  b.Output(b.Conv(cat2, 48, 8, {1, 1}));

  TempDir dir;
  auto session = CompileAndLoad(b, dir);
  ASSERT_NE(session, nullptr);
  EXPECT_EQ(ConcatsInPlace(dir / "dnnl_model_ctx.epctx"), (std::vector<bool>{true, false}));
  std::mt19937 rng(9);
  Tensor input = dnnl::RandomTensor({1, 8, 12, 12}, rng);
  const std::vector<Tensor> want = Reference(b, input);
  ASSERT_EQ(want.size(), 1u);
  for (int repeat = 0; repeat < 2; ++repeat) {
    auto got = session->Run({{"x", input}});
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    ASSERT_EQ(got->size(), 1u);
    dnnl::ExpectMatches((*got)[0], want[0], kRel, dnnl::Cat("run ", repeat));
  }
}

// A blocked value captured by the branches of an If: the branches read a plain copy.
TEST(DnnlSession, BlockedValueCapturedByIfBranches) {
  auto branch = [](const std::string& name, const std::string& op, const std::string& captured) {
    onnx::GraphProto g;
    g.set_name(name);
    auto* n = g.add_node();
    n->set_op_type(op);
    n->add_input(captured);
    n->add_output(name + "_out");
    auto* o = g.add_output();
    o->set_name(name + "_out");
    o->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
    onnx::AttributeProto a;
    a.set_name(name == "then" ? "then_branch" : "else_branch");
    a.set_type(onnx::AttributeProto::GRAPH);
    *a.mutable_g() = g;
    return a;
  };
  // The same graph without the If gives the reference: y is a graph output there.
  auto build = [&](bool with_if) {
    ModelBuilder b(104);
    const std::string x = b.Input("x", {1, 8, 6, 6});
    const std::string y = Conv3(b, x, 8, 24);
    b.Output(Conv3(b, y, 24, 16));  // so that y is stored blocked
    if (with_if) {
      const std::string mean =
          b.Node("ReduceMean", {x}, {AttrInts("axes", {0, 1, 2, 3}), AttrInt("keepdims", 0)});
      const std::string cond = b.Node("Greater", {mean, b.Constant({}, {0.0f})});
      b.Output(b.Node("If", {cond}, {branch("then", "Relu", y), branch("else", "Neg", y)}));
    } else {
      b.Output(y);
    }
    return b;
  };
  ModelBuilder with_if = build(true);
  ModelBuilder without_if = build(false);
  {  // The plan: y blocked for the second conv, one plain copy for the If (and, at the graph's
     // edge, the second conv's blocked output copied into the plain graph output).
    auto graph = dnnl::ImportGraph(with_if);
    ASSERT_TRUE(graph.ok()) << graph.status().ToString();
    ASSERT_TRUE(compile::RunAllPasses(*graph).ok());
    EXPECT_EQ(dnnl::CountInnerReorders(*graph), 1)
        << ::testing::PrintToString(dnnl::OpList(*graph));
  }
  TempDir dir;
  auto session = CompileAndLoad(with_if, dir);
  ASSERT_NE(session, nullptr);
  std::mt19937 rng(9);
  for (float shift : {0.5f, -0.5f}) {  // both branches
    Tensor input = dnnl::RandomTensor({1, 8, 6, 6}, rng);
    float* v = input.mutable_data_as<float>();
    for (int64_t i = 0; i < input.element_count(); ++i) v[i] += shift;
    const std::vector<Tensor> want = Reference(without_if, input);
    ASSERT_EQ(want.size(), 2u);
    Tensor branch_want = want[1];
    auto copy = Tensor::Allocate(DataType::kFloat32, branch_want.shape());
    ASSERT_TRUE(copy.ok());
    for (int64_t i = 0; i < branch_want.element_count(); ++i) {
      const float y = branch_want.data_as<float>()[i];
      copy->mutable_data_as<float>()[i] = shift > 0 ? std::max(y, 0.0f) : -y;
    }
    auto got = session->Run({{"x", input}});
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    ASSERT_EQ(got->size(), 2u);
    dnnl::ExpectMatches((*got)[0], want[0], kRel, "conv output");
    dnnl::ExpectMatches((*got)[1], *copy, kRel, shift > 0 ? "then branch" : "else branch");
  }
}

bool SameBytes(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() && a.byte_size() == b.byte_size() &&
         std::memcmp(a.data(), b.data(), a.byte_size()) == 0;
}

// The kernels keep a per-kernel primitive memo under a mutex, and primitives come from a
// process-wide cache: one session run from four threads at once, with two input shapes taking
// turns (so the memo changes between runs), gives the single-threaded outputs bit for bit; so
// do four sessions of the same blob run concurrently.
TEST(DnnlSession, ConcurrentRunsGiveIdenticalOutputs) {
  TempDir dir;
  ModelBuilder b = DynamicModel();
  auto session = CompileAndLoad(b, dir);
  ASSERT_NE(session, nullptr);
  std::mt19937 rng(7);
  const std::vector<Tensor> inputs{dnnl::RandomTensor({2, 8, 12, 10}, rng),
                                   dnnl::RandomTensor({1, 8, 7, 9}, rng)};
  std::vector<std::vector<Tensor>> expected;
  for (const Tensor& x : inputs) {
    auto out = session->Run({{"x", x}});
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    const std::vector<Tensor> want = Reference(b, x);
    ASSERT_EQ(want.size(), 2u);
    dnnl::ExpectMatches((*out)[1], want[1], kRel, "logits");
    expected.push_back(std::move(*out));
  }

  constexpr int kThreads = 4;
  constexpr int kRuns = 12;
  auto hammer = [&](Session* s, int t, std::vector<std::string>* failures) {
    for (int i = 0; i < kRuns; ++i) {
      const size_t which = static_cast<size_t>((t + i) % 2);
      auto out = s->Run({{"x", inputs[which]}});
      if (!out.ok()) {
        failures->push_back(out.status().ToString());
        return;
      }
      for (size_t o = 0; o < out->size(); ++o) {
        if (!SameBytes((*out)[o], expected[which][o])) {
          failures->push_back(dnnl::Cat("thread ", t, " run ", i, " output ", o, " differs"));
        }
      }
    }
  };

  {  // One session, four threads.
    std::vector<std::vector<std::string>> failures(kThreads);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back(hammer, session.get(), t, &failures[static_cast<size_t>(t)]);
    }
    for (std::thread& th : threads) th.join();
    for (const auto& f : failures) EXPECT_TRUE(f.empty()) << "one session: " << f.front();
  }
  {  // Four sessions of the same blob, one per thread.
    std::vector<std::unique_ptr<Session>> sessions;
    for (int t = 0; t < kThreads; ++t) {
      sessions.push_back(LoadContext(dir / "dnnl_model_ctx.onnx", "2"));
      ASSERT_NE(sessions.back(), nullptr);
    }
    std::vector<std::vector<std::string>> failures(kThreads);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back(hammer, sessions[static_cast<size_t>(t)].get(), t,
                           &failures[static_cast<size_t>(t)]);
    }
    for (std::thread& th : threads) th.join();
    for (const auto& f : failures) EXPECT_TRUE(f.empty()) << "four sessions: " << f.front();
  }
}

// epctx.prepare_kernels: primitives made by the background thread and primitives made by the
// first run are the same, so both give the same bytes; with `creation` they exist before the
// first run; a session destroyed right after creation
// (its preparation queued or under way) and sessions made from several threads at once leave
// nothing behind that a later run trips over; an unknown value is refused with the choices.
TEST(DnnlSession, KernelPreparationModesGiveIdenticalOutputs) {
  TempDir dir;
  ModelBuilder b = DynamicModel();
  auto first = CompileAndLoad(b, dir);
  ASSERT_NE(first, nullptr);
  const std::string ctx = dir / "dnnl_model_ctx.onnx";
  std::mt19937 rng(8);
  const Tensor x = dnnl::RandomTensor({1, 8, 16, 16}, rng);

  auto load = [&](const std::string& mode) -> std::unique_ptr<Session> {
    SessionOptions options;
    options.AddConfigEntry("epctx.fallback", "deny");
    options.AddConfigEntry("epctx.prepare_kernels", mode);
    auto session = Session::Create(ctx, options);
    EXPECT_TRUE(session.ok()) << session.status().ToString();
    return session.ok() ? std::move(*session) : nullptr;
  };
  for (int i = 0; i < 20; ++i) ASSERT_NE(load("background"), nullptr);  // dropped at once
  {
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&] {
        for (int i = 0; i < 5; ++i) load("background");
      });
    }
    for (std::thread& th : threads) th.join();
  }

  // creation: the session's primitives are made inside Create, on every core (three threads:
  // a thread count no other session here used, so nothing comes from the process's cache).
  SessionOptions three;
  three.AddConfigEntry("epctx.fallback", "deny");
  three.AddConfigEntry("epctx.prepare_kernels", "creation");
  three.AddConfigEntry("session.intra_op_num_threads", "3");
  auto at_creation = Session::Create(ctx, three);
  ASSERT_TRUE(at_creation.ok()) << at_creation.status().ToString();
  auto made_at_creation = (*at_creation)->Run({{"x", x}});
  ASSERT_TRUE(made_at_creation.ok()) << made_at_creation.status().ToString();

  auto background = load("background");
  auto first_run = load("first_run");
  ASSERT_NE(background, nullptr);
  ASSERT_NE(first_run, nullptr);
  auto a = background->Run({{"x", x}});
  auto c = first_run->Run({{"x", x}});
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_EQ(a->size(), c->size());
  for (size_t o = 0; o < a->size(); ++o) EXPECT_TRUE(SameBytes((*a)[o], (*c)[o])) << "output " << o;
  ASSERT_EQ(made_at_creation->size(), a->size());
  for (size_t o = 0; o < a->size(); ++o) {
    dnnl::ExpectMatches((*made_at_creation)[o], (*a)[o], kRel, "creation vs background");
  }
  const std::vector<Tensor> want = Reference(b, x);
  ASSERT_EQ(want.size(), 2u);
  dnnl::ExpectMatches((*a)[1], want[1], kRel, "logits");

  SessionOptions bad;
  bad.AddConfigEntry("epctx.prepare_kernels", "eager");
  auto refused = Session::Create(ctx, bad);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().message(),
            "option epctx.prepare_kernels must be \"background\", \"creation\" or \"first_run\", "
            "got \"eager\"");
}

}  // namespace
}  // namespace epctx::testing
