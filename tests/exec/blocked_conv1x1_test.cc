// The 1x1 convolution on 16-channel blocks (blocked_conv1x1.h) against a sum written out here,
// in every tile and chunk shape: channel counts off the block, pixel counts below, at and past
// a tile, batches, thread counts, bias and the post-ops it applies. Through a DnnlConv node:
// dnnl_kernels_test.cc.
#include "exec/kernels/onednn/blocked_conv1x1.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "blocked_conv_reference.h"
#include "kernel_test_helpers.h"

namespace epctx::exec::testing {
namespace {
// Named: the unity build compiles this file with the other kernel tests.
namespace pointwise {

namespace onednn = kernels::onednn;
using onednn::Blocked1x1Problem;
using onednn::PostOp;
using onednn::PostOpKind;

int64_t Blocks(int64_t channels) {
  return (channels + 15) / 16;
}

// A problem's tensors in the layouts the pass reads, and the expected output from plain sums.
struct Case {
  Blocked1x1Problem p;
  bool bias = true;
  std::vector<PostOp> ops;

  std::vector<float> x, w, b, r, want;

  void Make(std::mt19937& rng) {
    std::uniform_real_distribution<float> dist(-1, 1);
    const int64_t ib = Blocks(p.in_channels), ob = Blocks(p.out_channels);
    // Padded input lanes hold NaN: the pass must not read them.
    x.assign(p.batch * ib * p.pixels * 16, kBlockedNaN);
    w.assign(ob * ib * 256, 0.0f);
    b.resize(p.out_channels);
    r.assign(p.batch * ob * p.pixels * 16, 0.0f);
    want.assign(r.size(), 0.0f);
    auto x_at = [&](int64_t n, int64_t c, int64_t px) -> float& {
      return x[((n * ib + c / 16) * p.pixels + px) * 16 + c % 16];
    };
    auto y_at = [&](int64_t n, int64_t c, int64_t px) {
      return ((n * ob + c / 16) * p.pixels + px) * 16 + c % 16;
    };
    for (int64_t n = 0; n < p.batch; ++n) {
      for (int64_t c = 0; c < p.in_channels; ++c) {
        for (int64_t px = 0; px < p.pixels; ++px) x_at(n, c, px) = dist(rng);
      }
    }
    std::vector<float> plain_w(p.out_channels * p.in_channels);
    for (int64_t o = 0; o < p.out_channels; ++o) {
      for (int64_t i = 0; i < p.in_channels; ++i) {
        const float v = dist(rng);
        plain_w[o * p.in_channels + i] = v;
        w[((o / 16) * ib + i / 16) * 256 + (i % 16) * 16 + o % 16] = v;  // ABcd16b16a
      }
    }
    for (float& v : b) v = dist(rng);
    for (int64_t n = 0; n < p.batch; ++n) {
      for (int64_t o = 0; o < p.out_channels; ++o) {
        for (int64_t px = 0; px < p.pixels; ++px) r[y_at(n, o, px)] = dist(rng);
      }
    }
    for (int64_t n = 0; n < p.batch; ++n) {
      for (int64_t o = 0; o < p.out_channels; ++o) {
        for (int64_t px = 0; px < p.pixels; ++px) {
          double s = bias ? b[o] : 0.0;
          for (int64_t i = 0; i < p.in_channels; ++i) {
            s += double{plain_w[o * p.in_channels + i]} * x_at(n, i, px);
          }
          float v = static_cast<float>(s);
          v = ReferencePostOps(ops, v, r[y_at(n, o, px)]);
          want[y_at(n, o, px)] = v;
        }
      }
    }
  }

  std::string Name(int threads) const {
    std::ostringstream s;
    s << "batch " << p.batch << " in " << p.in_channels << " out " << p.out_channels << " pixels "
      << p.pixels << " threads " << threads << " ops " << ops.size() << (bias ? " bias" : "");
    return s.str();
  }
};

void ExpectOutput(const std::vector<float>& got, const Case& c, const std::string& what) {
  ExpectWithinSums(got, c.want, 1 + c.p.in_channels, what);
}

class Blocked1x1ConvTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!onednn::Blocked1x1ConvAvailable()) GTEST_SKIP() << "built without AVX-512";
  }
};

TEST_F(Blocked1x1ConvTest, MatchesPlainSumsInEveryTileAndChunkShape) {
  std::mt19937 rng(11);
  const std::vector<std::vector<PostOp>> op_lists = {
      {},
      {{PostOpKind::kClip, 0, 6}},
      {{PostOpKind::kAddTensor}, {PostOpKind::kRelu, 0.1f, 0}},
      {{PostOpKind::kLinear, 0.5f, 0.25f}, {PostOpKind::kRelu, 0, 0}},
  };
  // (batch, in, out, pixels): one pixel; a remainder of 1 after a whole tile (17) and after
  // several (49); a tile exactly; channels off the block on both sides; weights of more than
  // one task's group (in 1040: 65 input blocks of 16 KiB of weights per output block).
  const std::vector<Blocked1x1Problem> problems = {
      {1, 16, 16, 1}, {1, 17, 20, 17},  {2, 33, 5, 49},   {1, 48, 80, 16},
      {3, 3, 40, 50}, {1, 64, 64, 300}, {1, 1040, 40, 7}, {2, 24, 144, 33},
  };
  ForEachCaseAndThreadCount<Case>(problems, op_lists, rng, [&](const Case& c, int threads) {
    std::vector<float> y(c.want.size(), kBlockedNaN);  // every element written
    onednn::Blocked1x1Conv(c.p, c.x.data(), c.w.data(), c.bias ? c.b.data() : nullptr, c.ops,
                           c.r.data(), y.data(), threads);
    ExpectOutput(y, c, c.Name(threads));
  });
}

// The residual may be the output buffer itself (a value the planner reuses in place).
TEST_F(Blocked1x1ConvTest, ResidualMayBeTheOutputItself) {
  std::mt19937 rng(12);
  Case c;
  c.p = {2, 40, 36, 70};
  c.ops = {{PostOpKind::kAddTensor}, {PostOpKind::kClip, -0.5f, 0.5f}};
  c.Make(rng);
  std::vector<float> y = c.r;
  onednn::Blocked1x1Conv(c.p, c.x.data(), c.w.data(), c.b.data(), c.ops, y.data(), y.data(), 2);
  ExpectOutput(y, c, "in place");
}

}  // namespace pointwise
}  // namespace
}  // namespace epctx::exec::testing
