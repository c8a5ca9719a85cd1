// The depthwise convolution on 16-channel blocks (blocked_depthwise_conv.h) against sums written
// out here: windows 3 and 5 wide at strides 1 and 2, paddings from none to past the window,
// channel counts off the block, rows shorter and longer than a tile, batches, thread counts,
// bias and the post-ops it applies. Through a DnnlConv node: dnnl_kernels_test.cc.
#include "exec/kernels/onednn/blocked_depthwise_conv.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "blocked_conv_reference.h"

namespace epctx::exec::testing {
namespace {
// Named: the unity build compiles this file with the other kernel tests.
namespace depthwise {

namespace onednn = kernels::onednn;
using onednn::BlockedDepthwiseProblem;
using onednn::PostOp;
using onednn::PostOpKind;

struct Case {
  BlockedDepthwiseProblem p;
  bool bias = true;
  std::vector<PostOp> ops;
  std::vector<float> x, w, b, r, want;

  int64_t blocks() const { return (p.channels + 15) / 16; }
  int64_t XAt(int64_t n, int64_t c, int64_t h, int64_t w_) const {
    return (((n * blocks() + c / 16) * p.in_h + h) * p.in_w + w_) * 16 + c % 16;
  }
  int64_t YAt(int64_t n, int64_t c, int64_t h, int64_t w_) const {
    return (((n * blocks() + c / 16) * p.out_h + h) * p.out_w + w_) * 16 + c % 16;
  }

  void Make(std::mt19937& rng) {
    std::uniform_real_distribution<float> dist(-1, 1);
    const int64_t cb = blocks();
    // Padded input lanes hold NaN: the pass must not let them into a real channel.
    x.assign(p.batch * cb * p.in_h * p.in_w * 16, kBlockedNaN);
    w.assign(cb * p.kernel_h * p.kernel_w * 16, 0.0f);
    b.resize(p.channels);
    r.assign(p.batch * cb * p.out_h * p.out_w * 16, 0.0f);
    want.assign(r.size(), 0.0f);
    for (int64_t n = 0; n < p.batch; ++n) {
      for (int64_t c = 0; c < p.channels; ++c) {
        for (int64_t h = 0; h < p.in_h; ++h) {
          for (int64_t i = 0; i < p.in_w; ++i) x[XAt(n, c, h, i)] = dist(rng);
        }
      }
    }
    for (int64_t c = 0; c < p.channels; ++c) {
      for (int64_t k = 0; k < p.kernel_h * p.kernel_w; ++k) {
        w[((c / 16) * p.kernel_h * p.kernel_w + k) * 16 + c % 16] = dist(rng);  // Goihw16g
      }
    }
    for (float& v : b) v = dist(rng);
    for (int64_t n = 0; n < p.batch; ++n) {
      for (int64_t c = 0; c < p.channels; ++c) {
        for (int64_t oh = 0; oh < p.out_h; ++oh) {
          for (int64_t ow = 0; ow < p.out_w; ++ow) {
            r[YAt(n, c, oh, ow)] = dist(rng);
            double s = bias ? b[c] : 0.0;
            for (int64_t kh = 0; kh < p.kernel_h; ++kh) {
              for (int64_t kw = 0; kw < p.kernel_w; ++kw) {
                const int64_t ih = oh * p.stride_h - p.pad_top + kh;
                const int64_t iw = ow * p.stride_w - p.pad_left + kw;
                if (ih < 0 || ih >= p.in_h || iw < 0 || iw >= p.in_w) continue;
                s += double{w[((c / 16) * p.kernel_h * p.kernel_w + kh * p.kernel_w + kw) * 16 +
                              c % 16]} *
                     x[XAt(n, c, ih, iw)];
              }
            }
            float v = static_cast<float>(s);
            v = ReferencePostOps(ops, v, r[YAt(n, c, oh, ow)]);
            want[YAt(n, c, oh, ow)] = v;
          }
        }
      }
    }
  }

  std::string Name(int threads) const {
    std::ostringstream s;
    s << "batch " << p.batch << " channels " << p.channels << " in " << p.in_h << "x" << p.in_w
      << " out " << p.out_h << "x" << p.out_w << " kernel " << p.kernel_h << "x" << p.kernel_w
      << " stride " << p.stride_h << "x" << p.stride_w << " pads " << p.pad_top << "," << p.pad_left
      << " threads " << threads << " ops " << ops.size() << (bias ? " bias" : "");
    return s.str();
  }
};

void ExpectOutput(const std::vector<float>& got, const Case& c, const std::string& what) {
  ExpectWithinSums(got, c.want, 26, what);
}

// A problem of `size` x `size` input, window k at stride s with padding pad on every side.
BlockedDepthwiseProblem Square(int64_t batch, int64_t channels, int64_t size, int64_t k, int64_t s,
                               int64_t pad) {
  BlockedDepthwiseProblem p;
  p.batch = batch;
  p.channels = channels;
  p.in_h = p.in_w = size;
  p.out_h = p.out_w = (size + 2 * pad - k) / s + 1;
  p.kernel_h = p.kernel_w = k;
  p.stride_h = p.stride_w = s;
  p.pad_top = p.pad_left = pad;
  return p;
}

class BlockedDepthwiseConvTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!onednn::BlockedDepthwiseConvAvailable()) GTEST_SKIP() << "built without AVX-512";
  }
};

TEST_F(BlockedDepthwiseConvTest, MatchesPlainSumsForEveryWindowStrideAndPadding) {
  std::mt19937 rng(21);
  const std::vector<std::vector<PostOp>> op_lists = {
      {{PostOpKind::kClip, 0, 6}},
      {},
      {{PostOpKind::kAddTensor}, {PostOpKind::kRelu, 0.1f, 0}},
      {{PostOpKind::kLinear, 0.5f, 0.25f}},
  };
  std::vector<BlockedDepthwiseProblem> problems;
  for (int64_t k : {3, 5}) {
    for (int64_t s : {1, 2}) {
      for (int64_t pad : {int64_t{0}, k / 2, k + 1}) {  // none, "same", past the window
        problems.push_back(Square(1, 20, 30, k, s, pad));
      }
    }
  }
  problems.push_back(Square(2, 48, 17, 3, 1, 1));            // a row of 2 tiles and 1 pixel
  problems.push_back(Square(1, 16, 5, 5, 1, 2));             // every window reaches past the input
  BlockedDepthwiseProblem odd = Square(1, 33, 19, 3, 2, 1);  // rectangles and uneven pads
  odd.in_h = 11;
  odd.kernel_h = 5;
  odd.stride_h = 1;
  odd.pad_top = 3;
  odd.out_h = (odd.in_h + 3 + 1 - odd.kernel_h) / odd.stride_h + 1;  // 1 more row at the bottom
  problems.push_back(odd);
  ForEachCaseAndThreadCount<Case>(problems, op_lists, rng, [&](const Case& c, int threads) {
    std::vector<float> y(c.want.size(), kBlockedNaN);  // every element written
    onednn::BlockedDepthwiseConv(c.p, c.x.data(), c.w.data(), c.bias ? c.b.data() : nullptr, c.ops,
                                 c.r.data(), y.data(), threads);
    ExpectOutput(y, c, c.Name(threads));
  });
}

// The residual may be the output buffer itself.
TEST_F(BlockedDepthwiseConvTest, ResidualMayBeTheOutputItself) {
  std::mt19937 rng(22);
  Case c;
  c.p = Square(2, 40, 20, 3, 1, 1);
  c.ops = {{PostOpKind::kAddTensor}, {PostOpKind::kClip, -0.5f, 0.5f}};
  c.Make(rng);
  std::vector<float> y = c.r;
  onednn::BlockedDepthwiseConv(c.p, c.x.data(), c.w.data(), c.b.data(), c.ops, y.data(), y.data(),
                               2);
  ExpectOutput(y, c, "in place");
}

TEST_F(BlockedDepthwiseConvTest, TakesWindowsOf3And5AtStrides1And2) {
  for (int64_t k : {1, 2, 3, 4, 5, 7}) {
    for (int64_t s : {1, 2, 3}) {
      EXPECT_EQ(onednn::BlockedDepthwiseWindowSupported(k, s), (k == 3 || k == 5) && s <= 2)
          << k << " " << s;
    }
  }
}

}  // namespace depthwise
}  // namespace
}  // namespace epctx::exec::testing
