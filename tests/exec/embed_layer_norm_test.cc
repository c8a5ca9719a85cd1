// com.microsoft EmbedLayerNormalization against a double-precision reference of its definition
// (with and without segments and position ids, one and two threads, every output), and the
// inputs it refuses, with their messages. tests/genai/bert_contrib_models.json runs the op
// against ONNX Runtime itself.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "kernel_test_helpers.h"

namespace epctx::exec::testing {
namespace {

struct Tables {
  Tensor words, positions, segments, gamma, beta;
};

Tables MakeTables(int64_t hidden, std::mt19937& rng) {
  return {RandomFloats({20, hidden}, rng, -2, 2), RandomFloats({8, hidden}, rng, -2, 2),
          RandomFloats({3, hidden}, rng, -2, 2), RandomFloats({hidden}, rng, 0.5, 1.5),
          RandomFloats({hidden}, rng, -0.5, 0.5)};
}

// Row t of the output and of the sums, from the rows the token reads.
void Reference(const Tables& t, int64_t hidden, int32_t word, int64_t position, int32_t segment,
               bool with_segment, double epsilon, std::vector<double>& out,
               std::vector<double>& sums) {
  const auto w = FloatsOf(t.words), p = FloatsOf(t.positions), s = FloatsOf(t.segments);
  const auto g = FloatsOf(t.gamma), b = FloatsOf(t.beta);
  std::vector<double> row(static_cast<size_t>(hidden));
  double mean = 0;
  for (int64_t i = 0; i < hidden; ++i) {
    double v = w[word * hidden + i] + p[position * hidden + i];
    if (with_segment) v += s[segment * hidden + i];
    row[i] = v;
    mean += v / static_cast<double>(hidden);
  }
  double var = 0;
  for (double v : row) var += (v - mean) * (v - mean) / static_cast<double>(hidden);
  for (int64_t i = 0; i < hidden; ++i) {
    out.push_back((row[i] - mean) / std::sqrt(var + epsilon) * g[i] + b[i]);
    sums.push_back(row[i]);
  }
}

TEST(EmbedLayerNormTest, MatchesItsDefinition) {
  std::mt19937 rng(31);
  const int64_t batch = 2, seq = 4;
  const std::vector<int32_t> ids = {3, 19, 0, 7, 7, 11, 2, 5};
  const std::vector<int32_t> segment_ids = {0, 0, 1, 2, 1, 1, 0, 0};
  const std::vector<int32_t> mask = {1, 1, 1, 1, 1, 1, 0, 0};
  const std::vector<int32_t> row_positions = {7, 0, 3, 3, 1, 2, 6, 5};
  for (int64_t hidden : {24, 45}) {
    const Tables t = MakeTables(hidden, rng);
    Tensor ids_t = Int32Tensor({batch, seq}, ids);
    Tensor segment_t = Int32Tensor({batch, seq}, segment_ids);
    Tensor mask_t = Int32Tensor({batch, seq}, mask);
    Tensor positions_t = Int32Tensor({batch, seq}, row_positions);
    for (bool with_segment : {true, false}) {
      for (bool with_positions : {true, false}) {
        std::vector<double> out, sums;
        for (int64_t k = 0; k < batch * seq; ++k) {
          Reference(t, hidden, ids[k], with_positions ? row_positions[k] : k % seq, segment_ids[k],
                    with_segment, 1e-5, out, sums);
        }
        AttrBuilder attrs;
        attrs.Float("epsilon", 1e-5f);
        const std::string what = "hidden " + std::to_string(hidden) +
                                 (with_segment ? ", segments" : "") +
                                 (with_positions ? ", position ids" : "");
        for (int threads : {1, 2}) {
          NodeSpec spec("EmbedLayerNormalization", 1, kMs);
          spec.outputs = 3;
          spec.threads = threads;
          auto r = RunNode(spec, attrs,
                           {&ids_t, with_segment ? &segment_t : nullptr, &t.words, &t.positions,
                            with_segment ? &t.segments : nullptr, &t.gamma, &t.beta, &mask_t,
                            with_positions ? &positions_t : nullptr});
          ASSERT_TRUE(r.ok()) << r.status().ToString();
          ExpectClose((*r)[0], {batch, seq, hidden}, out, 1e-5, 1e-5, what);
          ExpectClose((*r)[2], {batch, seq, hidden}, sums, 1e-6, 1e-6, what + " (sums)");
          EXPECT_EQ(ValuesOf<int32_t>((*r)[1]), (std::vector<int32_t>{4, 2})) << what;
        }
      }
    }
  }
}

TEST(EmbedLayerNormTest, BroadcastPositionIdsAndNoMask) {
  std::mt19937 rng(8);
  const int64_t hidden = 16;
  const Tables t = MakeTables(hidden, rng);
  Tensor ids = Int32Tensor({3, 2}, {1, 2, 3, 4, 5, 6});
  Tensor positions = Int32Tensor({1, 2}, {5, 1});
  std::vector<double> out, sums;
  const std::vector<int32_t> id_values = {1, 2, 3, 4, 5, 6};
  for (int64_t k = 0; k < 6; ++k) {
    Reference(t, hidden, id_values[k], k % 2 == 0 ? 5 : 1, 0, false, 1e-12, out, sums);
  }
  NodeSpec spec("EmbedLayerNormalization", 1, kMs);
  spec.outputs = 2;
  auto r = RunNode(
      spec, AttrBuilder(),
      {&ids, nullptr, &t.words, &t.positions, nullptr, &t.gamma, &t.beta, nullptr, &positions});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ExpectClose((*r)[0], {3, 2, hidden}, out, 1e-5, 1e-5, "position ids [1, S]");
  EXPECT_EQ(ValuesOf<int32_t>((*r)[1]), (std::vector<int32_t>{0, 0, 0}));
}

TEST(EmbedLayerNormTest, Refusals) {
  std::mt19937 rng(2);
  const Tables t = MakeTables(8, rng);
  Tensor ids = Int32Tensor({1, 3}, {1, 20, 2});
  Tensor good_ids = Int32Tensor({1, 3}, {1, 2, 3});
  Tensor long_ids = Int32Tensor({1, 9}, std::vector<int32_t>(9, 1));
  Tensor segments = Int32Tensor({1, 3}, {0, 1, 3});
  Tensor negative_positions = Int32Tensor({1, 3}, {0, -1, 2});
  Tensor wrong_mask = Int32Tensor({1, 2}, {1, 1});
  NodeSpec spec("EmbedLayerNormalization", 1, kMs);
  AttrBuilder none;
  auto run = [&](const Tensor* input_ids, const Tensor* segment_ids, const Tensor* segment_table,
                 const Tensor* mask, const Tensor* position_ids) {
    return RunNode(spec, none,
                   {input_ids, segment_ids, &t.words, &t.positions, segment_table, &t.gamma,
                    &t.beta, mask, position_ids})
        .status();
  };
  ExpectError(run(&ids, nullptr, nullptr, nullptr, nullptr), StatusCode::kInvalidArgument,
              "input_ids of token 1 is 20, outside the embedding table's 20 rows");
  ExpectError(run(&long_ids, nullptr, nullptr, nullptr, nullptr), StatusCode::kInvalidArgument,
              "the position (place in its row) of token 8 is 8, outside the embedding table's 8 "
              "rows");
  ExpectError(run(&good_ids, &segments, &t.segments, nullptr, nullptr),
              StatusCode::kInvalidArgument,
              "segment_ids of token 2 is 3, outside the embedding table's 3 rows");
  ExpectError(run(&good_ids, nullptr, nullptr, nullptr, &negative_positions),
              StatusCode::kInvalidArgument,
              "position_ids of token 1 is -1, outside the embedding table's 8 rows");
  ExpectError(run(&good_ids, &segments, nullptr, nullptr, nullptr), StatusCode::kInvalidArgument,
              "segment_ids and segment_embedding must be both given or both omitted");
  ExpectError(run(&good_ids, nullptr, nullptr, &wrong_mask, nullptr), StatusCode::kInvalidArgument,
              "input mask has shape [1,2], expected input_ids' shape [1,3]");
  Tensor float_ids = FloatTensor({1, 3}, {1, 2, 3});
  ExpectError(run(&float_ids, nullptr, nullptr, nullptr, nullptr), StatusCode::kUnsupported,
              "input input_ids has type float32, expected int32");
}

}  // namespace
}  // namespace epctx::exec::testing
