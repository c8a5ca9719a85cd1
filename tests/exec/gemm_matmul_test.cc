// Gemm / FusedGemm / MatMul against double-precision references: every transpose combination,
// alpha and beta, each way C broadcasts, and numpy MatMul with 1-D operands and batch dims that
// broadcast.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "kernel_test_helpers.h"

namespace epctx::exec::testing {
namespace {

struct GemmCase {
  int64_t m, n, k;
  bool ta, tb;
  float alpha, beta;
  std::vector<int64_t> c_shape;  // empty vector with has_c = false: no C
  bool has_c;
  std::string activation;
  int threads;
};

void CheckGemm(const GemmCase& g, std::mt19937& rng) {
  const std::string what = fmt::format("m{} n{} k{} ta{} tb{} C{} {}", g.m, g.n, g.k, g.ta, g.tb,
                                       ShapeToString(g.c_shape), g.activation);
  Tensor a =
      RandomFloats(g.ta ? std::vector<int64_t>{g.k, g.m} : std::vector<int64_t>{g.m, g.k}, rng);
  Tensor b =
      RandomFloats(g.tb ? std::vector<int64_t>{g.n, g.k} : std::vector<int64_t>{g.k, g.n}, rng);
  Tensor c = RandomFloats(g.c_shape, rng);
  AttrBuilder attrs;
  attrs.Float("alpha", g.alpha).Float("beta", g.beta).Int("transA", g.ta).Int("transB", g.tb);
  NodeSpec spec("Gemm", 13);
  if (!g.activation.empty()) {
    spec = NodeSpec("FusedGemm", 1, "com.epctx");
    attrs.String("activation", g.activation);
    if (g.activation == "Clip") attrs.Floats("activation_params", {-0.5f, 0.5f});
  }
  spec.threads = g.threads;
  std::vector<const Tensor*> inputs{&a, &b};
  if (g.has_c) inputs.push_back(&c);
  auto result = RunNode(spec, attrs, inputs);
  ASSERT_TRUE(result.ok()) << what << ": " << result.status().ToString();

  const auto av = FloatsOf(a), bv = FloatsOf(b), cv = FloatsOf(c);
  const int64_t c_rows = g.c_shape.size() == 2 ? g.c_shape[0] : 1;
  const int64_t c_cols = g.c_shape.empty() ? 1 : g.c_shape.back();
  std::vector<double> ref;
  for (int64_t i = 0; i < g.m; ++i) {
    for (int64_t j = 0; j < g.n; ++j) {
      double acc = 0;
      for (int64_t p = 0; p < g.k; ++p) {
        const double x = av[static_cast<size_t>(g.ta ? p * g.m + i : i * g.k + p)];
        const double y = bv[static_cast<size_t>(g.tb ? j * g.k + p : p * g.n + j)];
        acc += x * y;
      }
      double v = g.alpha * acc;
      if (g.has_c) {
        const int64_t ci = (c_rows == 1 ? 0 : i) * c_cols + (c_cols == 1 ? 0 : j);
        v += g.beta * cv[static_cast<size_t>(ci)];
      }
      if (g.activation == "Relu") v = std::max(v, 0.0);
      if (g.activation == "Sigmoid") v = 1 / (1 + std::exp(-v));
      if (g.activation == "Clip") v = std::clamp(v, -0.5, 0.5);
      ref.push_back(v);
    }
  }
  ExpectClose((*result)[0], {g.m, g.n}, ref, 1e-5 * static_cast<double>(g.k) + 1e-5, 1e-4, what);
}

TEST(GemmTest, RandomShapesTransposesAndBroadcasts) {
  std::mt19937 rng(11);
  for (int i = 0; i < 120; ++i) {
    GemmCase g;
    g.m = Pick(rng, 1, 40);
    g.n = Pick(rng, 1, 40);
    g.k = Pick(rng, 1, 50);
    g.ta = Pick(rng, 0, 1);
    g.tb = Pick(rng, 0, 1);
    g.alpha = std::vector<float>{1.0f, 0.5f, -2.0f}[static_cast<size_t>(Pick(rng, 0, 2))];
    g.beta = std::vector<float>{1.0f, 0.25f, 0.0f}[static_cast<size_t>(Pick(rng, 0, 2))];
    const std::vector<std::vector<int64_t>> c_shapes{{},       {1},        {g.n}, {1, g.n},
                                                     {g.m, 1}, {g.m, g.n}, {1, 1}};
    g.c_shape = c_shapes[static_cast<size_t>(Pick(rng, 0, 6))];
    g.has_c = Pick(rng, 0, 4) != 0;
    g.activation = std::vector<std::string>{"", "", "Relu", "Sigmoid", "Clip"}[Pick(rng, 0, 4)];
    g.threads = static_cast<int>(Pick(rng, 1, 2));
    CheckGemm(g, rng);
  }
}

TEST(GemmTest, LargeProductsSplitOverThreads) {
  std::mt19937 rng(12);
  // Wide (split along n), tall (split along m), and a classifier GEMV with packed [N,K] B.
  CheckGemm({64, 300, 128, false, false, 1.0f, 1.0f, {300}, true, "", 2}, rng);
  CheckGemm({300, 64, 128, true, false, 1.0f, 1.0f, {300, 1}, true, "Relu", 2}, rng);
  CheckGemm({1, 1000, 512, false, true, 1.0f, 1.0f, {1, 1000}, true, "", 2}, rng);
}

TEST(GemmTest, Errors) {
  std::mt19937 rng(13);
  Tensor a = RandomFloats({3, 4}, rng);
  Tensor b = RandomFloats({5, 6}, rng);
  AttrBuilder none;
  for (bool describe : {true, false}) {  // found at creation, or at run time
    NodeSpec spec("Gemm", 13);
    spec.describe_inputs = describe;
    ExpectError(RunNode(spec, none, {&a, &b}).status(), StatusCode::kInvalidArgument,
                "inner dimensions differ: A [3,4] (transA=0) and B [5,6] (transB=0)");
  }
  Tensor b2 = RandomFloats({4, 6}, rng);
  Tensor c = RandomFloats({2, 6}, rng);
  ExpectError(RunNode(NodeSpec("Gemm", 13), none, {&a, &b2, &c}).status(),
              StatusCode::kInvalidArgument,
              "input C has shape [2,6], which does not broadcast to [3,6]");
  Tensor a3 = RandomFloats({1, 3, 4}, rng);
  ExpectError(RunNode(NodeSpec("Gemm", 13), none, {&a3, &b2}).status(),
              StatusCode::kInvalidArgument, "input A has rank 3, expected 2");
}

// Numpy matmul in double: the batch dims broadcast, 1-D operands are promoted and dropped.
std::vector<double> ReferenceMatMul(const Tensor& a, const Tensor& b, std::vector<int64_t>& shape) {
  std::vector<int64_t> as = a.shape(), bs = b.shape();
  const bool va = as.size() == 1, vb = bs.size() == 1;
  if (va) as.insert(as.begin(), 1);
  if (vb) bs.push_back(1);
  const int64_t m = as[as.size() - 2], k = as.back(), n = bs.back();
  const size_t rank = std::max(as.size(), bs.size()) - 2;
  std::vector<int64_t> ab(rank, 1), bb(rank, 1), batch(rank);
  for (size_t i = 0; i < rank; ++i) {
    if (i + as.size() - 2 >= rank) ab[i] = as[i + as.size() - 2 - rank];
    if (i + bs.size() - 2 >= rank) bb[i] = bs[i + bs.size() - 2 - rank];
    batch[i] = std::max(ab[i], bb[i]);
  }
  const auto av = FloatsOf(a), bv = FloatsOf(b);
  std::vector<double> out;
  std::vector<int64_t> idx(rank, 0);
  for (int64_t t = 0; t < Count(batch); ++t) {
    int64_t rest = t, ao = 0, bo = 0, astride = 1, bstride = 1;
    for (size_t d = rank; d-- > 0;) {
      const int64_t i = rest % batch[d];
      rest /= batch[d];
      ao += (ab[d] == 1 ? 0 : i) * astride;
      bo += (bb[d] == 1 ? 0 : i) * bstride;
      astride *= ab[d];
      bstride *= bb[d];
    }
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double acc = 0;
        for (int64_t p = 0; p < k; ++p) {
          acc += double{av[static_cast<size_t>(ao * m * k + i * k + p)]} *
                 bv[static_cast<size_t>(bo * k * n + p * n + j)];
        }
        out.push_back(acc);
      }
    }
  }
  shape = batch;
  if (!va) shape.push_back(m);
  if (!vb) shape.push_back(n);
  return out;
}

TEST(MatMulTest, RandomBroadcastAndPromotion) {
  std::mt19937 rng(14);
  for (int i = 0; i < 150; ++i) {
    const int64_t m = Pick(rng, 1, 9), k = Pick(rng, 1, 9), n = Pick(rng, 1, 9);
    const size_t batch_rank = static_cast<size_t>(Pick(rng, 0, 3));
    std::vector<int64_t> batch;
    for (size_t d = 0; d < batch_rank; ++d) batch.push_back(Pick(rng, 1, 3));
    auto operand_batch = [&]() {
      // A suffix of the batch dims, each kept or set to 1 for broadcasting.
      std::vector<int64_t> b(batch.begin() + Pick(rng, 0, static_cast<int64_t>(batch.size())),
                             batch.end());
      for (int64_t& d : b) {
        if (Pick(rng, 0, 2) == 0) d = 1;
      }
      return b;
    };
    std::vector<int64_t> as = operand_batch(), bs = operand_batch();
    as.push_back(m);
    as.push_back(k);
    bs.push_back(k);
    bs.push_back(n);
    if (Pick(rng, 0, 5) == 0) as = {k};
    if (Pick(rng, 0, 5) == 0) bs = {k};
    Tensor a = RandomFloats(as, rng);
    Tensor b = RandomFloats(bs, rng);
    NodeSpec spec("MatMul", 13);
    spec.threads = static_cast<int>(Pick(rng, 1, 2));
    AttrBuilder none;
    auto result = RunNode(spec, none, {&a, &b});
    const std::string what = fmt::format("A{} B{}", ShapeToString(as), ShapeToString(bs));
    ASSERT_TRUE(result.ok()) << what << ": " << result.status().ToString();
    std::vector<int64_t> shape;
    const auto ref = ReferenceMatMul(a, b, shape);
    ExpectClose((*result)[0], shape, ref, 1e-5, 1e-5, what);
  }
}

TEST(MatMulTest, LargeBatchedAndSharedWeights) {
  std::mt19937 rng(15);
  for (const auto& [as, bs] : std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>>{
           {{4, 50, 64}, {64, 70}},       // stacked into one tall product
           {{3, 40, 64}, {3, 64, 80}},    // one product per batch, batches over threads
           {{1, 200, 64}, {2, 64, 100}},  // A broadcast, each product split over threads
           {{64}, {2, 64, 100}}}) {       // vector times batch
    Tensor a = RandomFloats(as, rng);
    Tensor b = RandomFloats(bs, rng);
    NodeSpec spec("MatMul", 13);
    spec.threads = 2;
    AttrBuilder none;
    auto result = RunNode(spec, none, {&a, &b});
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    std::vector<int64_t> shape;
    const auto ref = ReferenceMatMul(a, b, shape);
    ExpectClose((*result)[0], shape, ref, 1e-4, 1e-4, ShapeToString(as) + ShapeToString(bs));
  }
}

TEST(MatMulTest, Errors) {
  std::mt19937 rng(16);
  AttrBuilder none;
  Tensor a = RandomFloats({2, 3, 4}, rng);
  Tensor b = RandomFloats({3, 5}, rng);
  for (bool describe : {true, false}) {  // found at creation, or at run time
    NodeSpec spec("MatMul", 13);
    spec.describe_inputs = describe;
    ExpectError(RunNode(spec, none, {&a, &b}).status(), StatusCode::kInvalidArgument,
                "inner dimensions differ: A [2,3,4] and B [3,5]");
  }
  Tensor b2 = RandomFloats({3, 4, 5}, rng);
  ExpectError(RunNode(NodeSpec("MatMul", 13), none, {&a, &b2}).status(),
              StatusCode::kInvalidArgument, "shapes [2] and [3] cannot be broadcast");
}

}  // namespace
}  // namespace epctx::exec::testing
