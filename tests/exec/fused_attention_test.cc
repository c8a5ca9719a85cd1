// com.epctx Attention (what FuseAttention makes of a PyTorch export's attention) against the
// nodes it replaces, computed in double: scores = scale * Q K^T per query head over its key head
// (n / (N / kvN)), masked entries replaced by the fill, softmax over the keys, times V.
// The fill is the lowest float, as Hugging Face's masks hold, so that a row masked whole is the
// mean of the values (every score equal) rather than NaN.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <optional>
#include <random>

#include "exec/kernels/attention/attention_op.h"
#include "kernel_test_helpers.h"

namespace epctx::exec::testing {
namespace {

struct AttentionCase {
  const char* name;
  int64_t b, n, kvn, s, t, h;
  enum { kNone, kCausal, kRandom, kCausalPlane, kRowMaskedWhole } mask;
  int64_t layout;
  int threads;
};

std::vector<double> Reference(const AttentionCase& c, const std::vector<float>& q,
                              const std::vector<float>& k, const std::vector<float>& v,
                              const std::vector<uint8_t>& mask, float scale, float fill) {
  const int64_t group = c.n / c.kvn;
  std::vector<double> out(static_cast<size_t>(c.b * c.n * c.s * c.h));
  for (int64_t b = 0; b < c.b; ++b) {
    for (int64_t n = 0; n < c.n; ++n) {
      const int64_t kv = n / group;
      for (int64_t s = 0; s < c.s; ++s) {
        std::vector<double> p(static_cast<size_t>(c.t));
        double top = -INFINITY;
        for (int64_t t = 0; t < c.t; ++t) {
          double dot = 0;
          for (int64_t i = 0; i < c.h; ++i) {
            dot += q[static_cast<size_t>(((b * c.n + n) * c.s + s) * c.h + i)] *
                   k[static_cast<size_t>(((b * c.kvn + kv) * c.t + t) * c.h + i)];
          }
          const bool masked = !mask.empty() && mask[static_cast<size_t>(s * c.t + t)];
          p[static_cast<size_t>(t)] = masked ? fill : scale * dot;
          top = std::max(top, p[static_cast<size_t>(t)]);
        }
        double sum = 0;
        for (double& x : p) sum += (x = std::exp(x - top));
        for (int64_t i = 0; i < c.h; ++i) {
          double acc = 0;
          for (int64_t t = 0; t < c.t; ++t) {
            acc += p[static_cast<size_t>(t)] / sum *
                   v[static_cast<size_t>(((b * c.kvn + kv) * c.t + t) * c.h + i)];
          }
          const int64_t at = c.layout == kernels::kAttentionOutputBnsh
                                 ? ((b * c.n + n) * c.s + s) * c.h + i
                                 : ((b * c.s + s) * c.n + n) * c.h + i;
          out[static_cast<size_t>(at)] = acc;
        }
      }
    }
  }
  return out;
}

class FusedAttentionTest : public ::testing::TestWithParam<AttentionCase> {};

TEST_P(FusedAttentionTest, MatchesTheNodesItReplaces) {
  const AttentionCase& c = GetParam();
  std::mt19937 rng(static_cast<uint32_t>(c.b * 131 + c.n * 17 + c.s * 7 + c.t));
  Tensor q = RandomFloats({c.b, c.n, c.s, c.h}, rng);
  Tensor k = RandomFloats({c.b, c.kvn, c.t, c.h}, rng);
  Tensor v = RandomFloats({c.b, c.kvn, c.t, c.h}, rng);
  std::vector<uint8_t> mask;
  std::vector<int64_t> mask_shape = {c.s, c.t};
  if (c.mask != AttentionCase::kNone) {
    mask.resize(static_cast<size_t>(c.s * c.t));
    std::bernoulli_distribution coin(0.3);
    for (int64_t s = 0; s < c.s; ++s) {
      for (int64_t t = 0; t < c.t; ++t) {
        // A random mask keeps each row's first key, so that no row is masked whole.
        const bool causal = t > s + c.t - c.s;
        if (c.mask == AttentionCase::kRowMaskedWhole) {
          mask[static_cast<size_t>(s * c.t + t)] = s == 1 || (t > 0 && coin(rng));
        } else {
          mask[static_cast<size_t>(s * c.t + t)] =
              c.mask == AttentionCase::kRandom ? (t > 0 && coin(rng)) : causal;
        }
      }
    }
    if (c.mask == AttentionCase::kCausalPlane) mask_shape = {1, 1, c.s, c.t};
  }
  // No mask: the node's optional input is absent (and no tensor is made of no bytes).
  std::optional<Tensor> m;
  if (!mask.empty()) m = MakeTensor(DataType::kBool, mask_shape, mask.data());
  const float scale = 1.0f / std::sqrt(static_cast<float>(c.h));
  NodeSpec spec("Attention", 1, "com.epctx");
  spec.threads = c.threads;
  AttrBuilder attrs;
  attrs.Float("scale", scale).Int("output_layout", c.layout);
  const float fill = std::numeric_limits<float>::lowest();
  if (!mask.empty()) attrs.Float("mask_fill", fill);
  auto out = RunNode(spec, attrs, {&q, &k, &v, m ? &*m : nullptr});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const std::vector<int64_t> shape = c.layout == kernels::kAttentionOutputBnsh
                                         ? std::vector<int64_t>{c.b, c.n, c.s, c.h}
                                         : std::vector<int64_t>{c.b, c.s, c.n, c.h};
  ExpectClose((*out)[0], shape,
              Reference(c, FloatsOf(q), FloatsOf(k), FloatsOf(v), mask, scale, fill), 1e-5, 1e-4,
              c.name);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, FusedAttentionTest,
    ::testing::Values(
        // A decode step after 37 tokens: one row, SmolLM's 3 query heads per KV head.
        AttentionCase{"decode", 1, 9, 3, 1, 38, 64, AttentionCase::kCausal,
                      kernels::kAttentionOutputBsnh, 2},
        // A prompt: the causal mask of a square block, as PyTorch exports it ([S, T]).
        AttentionCase{"prompt", 1, 4, 2, 17, 17, 16, AttentionCase::kCausal,
                      kernels::kAttentionOutputBsnh, 2},
        // The mask as [1, 1, S, T], a prompt continued after a past, heads first.
        AttentionCase{"continued", 2, 4, 4, 5, 12, 8, AttentionCase::kCausalPlane,
                      kernels::kAttentionOutputBnsh, 1},
        // Any other mask goes through the additive bias.
        AttentionCase{"random_mask", 1, 6, 2, 7, 9, 24, AttentionCase::kRandom,
                      kernels::kAttentionOutputBsnh, 2},
        // Row 1 masked whole: every score is the fill, the weights are equal.
        AttentionCase{"row_masked_whole", 1, 4, 2, 3, 10, 16, AttentionCase::kRowMaskedWhole,
                      kernels::kAttentionOutputBnsh, 1},
        AttentionCase{"no_mask", 2, 3, 1, 4, 6, 8, AttentionCase::kNone,
                      kernels::kAttentionOutputBnsh, 1}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(FusedAttention, RefusesMismatchedShapes) {
  std::mt19937 rng(3);
  Tensor q = RandomFloats({1, 4, 2, 8}, rng);
  Tensor k = RandomFloats({1, 3, 5, 8}, rng);  // 4 heads over 3: not a multiple
  Tensor v = RandomFloats({1, 3, 5, 8}, rng);
  NodeSpec spec("Attention", 1, "com.epctx");
  AttrBuilder attrs;
  ExpectError(RunNode(spec, attrs, {&q, &k, &v, nullptr}).status(), StatusCode::kInvalidArgument,
              "Q [1,4,2,8] with K [1,3,5,8] and V [1,3,5,8]: K and V must be [B, kvN, T, H] "
              "alike, with N a multiple of kvN");
  Tensor k1 = RandomFloats({1, 2, 1, 8}, rng);
  Tensor v1 = RandomFloats({1, 2, 1, 8}, rng);
  ExpectError(RunNode(spec, attrs, {&q, &k1, &v1, nullptr}).status(), StatusCode::kInvalidArgument,
              "K has 1 rows, fewer than Q's 2");
}

}  // namespace
}  // namespace epctx::exec::testing
