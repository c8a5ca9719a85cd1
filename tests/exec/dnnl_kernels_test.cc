// The oneDNN kernels one node at a time: com.epctx DnnlConv in every layout pair, with a
// residual, at shapes other than the one its weights were packed for; Reorder round trips;
// DnnlPool against the reference pools. Then the run-time validation of what a (possibly
// corrupt) program hands them: every refusal with its exact message.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <sstream>

#include "exec/kernels/families.h"
#include "exec/kernels/onednn/blocked_conv1x1.h"
#include "exec/kernels/onednn/blocked_depthwise_conv.h"
#include "exec/kernels/onednn/conv_primitive.h"
#include "exec/kernels/onednn/isa.h"
#include "exec/kernels/onednn/own_blocked_conv.h"
#include "exec/kernels/onednn/post_ops.h"
#include "exec/kernels/onednn/runtime.h"
#include "exec/kernels/onednn/weight_format.h"
#include "exec/kernels/onednn/weight_packing.h"
#include "format/target.h"
#include "kernel_test_helpers.h"

namespace epctx::exec::testing {
namespace {

namespace onednn = kernels::onednn;
using onednn::ActivationLayout;

// Strings and numbers joined (GCC 12 warns falsely on "text" + std::to_string(n)).
template <typename... Parts>
std::string Cat(const Parts&... parts) {
  std::ostringstream os;
  (os << ... << parts);
  return os.str();
}

NodeSpec Epctx(const std::string& op) {
  return NodeSpec(op, 1, "com.epctx");
}

// Between the plain and a blocked layout (`blocked`, when `to` is plain: the one x is in).
Tensor Reorder(const Tensor& x, ActivationLayout to, int64_t channels,
               ActivationLayout blocked = ActivationLayout::kBlocked16) {
  const ActivationLayout from = to == ActivationLayout::kPlain ? blocked : ActivationLayout::kPlain;
  AttrBuilder a;
  a.Int("to_layout", static_cast<int64_t>(to))
      .Int("from_layout", static_cast<int64_t>(from))
      .Int("channels", channels);
  auto out = RunNode(Epctx("Reorder"), a, {&x});
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  return out.ok() ? (*out)[0] : Tensor();
}

// The implementation a DnnlConv kernel made from `a` reports before any run; `x` (when given)
// is its input X as the compiler declares it.
std::string ConvImplementation(const AttrBuilder& a, size_t inputs, const Tensor* x = nullptr) {
  NodeInfo node;
  node.op_type = "DnnlConv";
  node.domain = "com.epctx";
  node.attrs = &a.attrs();
  node.inputs.resize(inputs);
  if (x != nullptr) {
    node.inputs[0].dtype = DataType::kFloat32;
    node.inputs[0].shape_known = true;
    node.inputs[0].shape = x->shape();
  }
  node.outputs.resize(1);
  auto kernel = onednn::CreateDnnlConv(node);
  EXPECT_TRUE(kernel.ok()) << kernel.status().ToString();
  return kernel.ok() ? std::string((*kernel)->implementation()) : std::string();
}

// A convolution problem with its filter packed as the compiler would pack it.
struct ConvProblem {
  std::vector<int64_t> x_shape{2, 24, 7, 6};
  std::vector<int64_t> w_shape{40, 24, 3, 3};
  std::vector<int64_t> pads{1, 1, 1, 1};
  std::vector<int64_t> strides;  // empty: 1
  int64_t group = 1;
  ActivationLayout src = ActivationLayout::kPlain, dst = ActivationLayout::kPlain;
  std::vector<int64_t> post_ops;  // kinds
  std::vector<float> alpha, beta;
  bool winograd = false;

  Tensor w, b;
  onednn::PackedWeight packed;

  // Packs for `x_shape` (in `format` when given: another implementation's layout than oneDNN's
  // first); the tensors are random.
  void Pack(std::mt19937& rng, std::span<const int64_t> format = {}) {
    w = RandomFloats(w_shape, rng, -0.3f, 0.3f);
    b = RandomFloats({w_shape[0]}, rng, -0.3f, 0.3f);
    kernels::WindowAttrs window;
    window.pads = pads;
    window.strides = strides;
    auto g = onednn::ResolveConvGeometry(window, group, w_shape, x_shape);
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    onednn::ConvConfig c;
    c.src_layout = src;
    c.dst_layout = dst;
    c.has_bias = true;
    c.winograd = winograd;
    for (size_t i = 0; i < post_ops.size(); ++i) {
      c.post_ops.push_back({static_cast<onednn::PostOpKind>(post_ops[i]), alpha[i], beta[i]});
    }
    auto p = onednn::PackConvWeights(*g, c, w.data_as<float>(), format);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    packed = std::move(*p);
  }

  // The node's attributes as the compiler writes them, but for `skip`.
  void Attrs(AttrBuilder& a, const std::string& skip = "") const {
    auto ints = [&](const std::string& name, std::vector<int64_t> v) {
      if (name != skip) a.Ints(name, std::move(v));
    };
    auto one = [&](const std::string& name, int64_t v) {
      if (name != skip) a.Int(name, v);
    };
    ints("kernel_shape", {w_shape.begin() + 2, w_shape.end()});
    ints("pads", pads);
    if (!strides.empty()) ints("strides", strides);
    one("group", group);
    ints("weights_shape", w_shape);
    ints("weights_format", packed.format);
    one("src_layout", static_cast<int64_t>(src));
    one("dst_layout", static_cast<int64_t>(dst));
    if (winograd) one("winograd", 1);
    if (!post_ops.empty()) {
      a.Ints("post_ops", post_ops).Floats("post_op_alpha", alpha).Floats("post_op_beta", beta);
    }
  }

  // The reference Conv kernel's output on plain `x`.
  Tensor Reference(const Tensor& x) const {
    AttrBuilder a;
    a.Ints("pads", pads).Int("group", group);
    if (!strides.empty()) a.Ints("strides", strides);
    auto out = RunNode(NodeSpec("Conv", 17), a, {&x, &w, &b});
    EXPECT_TRUE(out.ok()) << out.status().ToString();
    return out.ok() ? (*out)[0] : Tensor();
  }
};

// ---------------------------------------------------------------------------------------------
// Results.

TEST(DnnlConvKernel, EveryLayoutPairMatchesTheReferenceConv) {
  for (ActivationLayout src : {ActivationLayout::kPlain, ActivationLayout::kBlocked16}) {
    for (ActivationLayout dst : {ActivationLayout::kPlain, ActivationLayout::kBlocked16}) {
      std::mt19937 rng(1);
      ConvProblem p;
      p.src = src;
      p.dst = dst;
      p.post_ops = {1};  // Relu
      p.alpha = {0};
      p.beta = {0};
      p.Pack(rng);
      Tensor x = RandomFloats(p.x_shape, rng);
      Tensor want = p.Reference(x);
      float* v = want.mutable_data_as<float>();
      for (int64_t i = 0; i < want.element_count(); ++i) v[i] = std::max(v[i], 0.0f);

      Tensor x_in = src == ActivationLayout::kBlocked16 ? Reorder(x, src, 24) : x;
      AttrBuilder a;
      p.Attrs(a);
      auto out = RunNode(Epctx("DnnlConv"), a, {&x_in, &p.packed.bytes, &p.b});
      ASSERT_TRUE(out.ok()) << out.status().ToString();
      const std::string what = Cat("src ", static_cast<int>(src), " dst ", static_cast<int>(dst));
      if (dst == ActivationLayout::kBlocked16) {
        EXPECT_EQ((*out)[0].shape(), (std::vector<int64_t>{2, 3, 7, 6, 16})) << what;
        ExpectNear(Reorder((*out)[0], ActivationLayout::kPlain, 40), want, what);
      } else {
        ExpectNear((*out)[0], want, what);
      }
    }
  }
}

TEST(DnnlConvKernel, ResidualPostOpAddsR) {
  for (ActivationLayout layout : {ActivationLayout::kPlain, ActivationLayout::kBlocked16}) {
    std::mt19937 rng(2);
    ConvProblem p;
    p.src = p.dst = layout;
    p.post_ops = {9, 1};  // + R, then Relu
    p.alpha = {0, 0.1f};  // LeakyRelu slope
    p.beta = {0, 0};
    p.Pack(rng);
    Tensor x = RandomFloats(p.x_shape, rng);
    Tensor r = RandomFloats({2, 40, 7, 6}, rng);
    Tensor want = p.Reference(x);
    float* v = want.mutable_data_as<float>();
    for (int64_t i = 0; i < want.element_count(); ++i) {
      const float s = v[i] + r.data_as<float>()[i];
      v[i] = s > 0 ? s : 0.1f * s;
    }
    const bool blocked = layout == ActivationLayout::kBlocked16;
    Tensor x_in = blocked ? Reorder(x, layout, 24) : x;
    Tensor r_in = blocked ? Reorder(r, layout, 40) : r;
    AttrBuilder a;
    p.Attrs(a);
    auto out = RunNode(Epctx("DnnlConv"), a, {&x_in, &p.packed.bytes, &p.b, &r_in});
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    ExpectNear(blocked ? Reorder((*out)[0], ActivationLayout::kPlain, 40) : (*out)[0], want,
               blocked ? "blocked" : "plain");
  }
}

// 1x1 windows at stride 1 on blocked activations run without a primitive (blocked_conv1x1.h),
// with the fused post-ops and a trailing Swish; at stride 2 the primitive's. Both match the
// reference Conv, channel counts off the block (24 in, 40 out).
TEST(DnnlConvKernel, OneByOneWindowsOnBlocksRunWithoutAPrimitive) {
  for (int64_t stride : {1, 2}) {
    std::mt19937 rng(4);
    ConvProblem p;
    p.x_shape = {2, 24, 9, 7};
    p.w_shape = {40, 24, 1, 1};
    p.pads = {0, 0, 0, 0};
    p.src = p.dst = ActivationLayout::kBlocked16;
    p.post_ops = {9, 2, 4};  // + R, Clip, Swish
    p.alpha = {0, 0, 1};
    p.beta = {0, 6, 0};
    p.strides = {stride, stride};
    p.Pack(rng);
    Tensor x = RandomFloats(p.x_shape, rng);
    Tensor want = p.Reference(x);
    Tensor r = RandomFloats(want.shape(), rng);
    float* v = want.mutable_data_as<float>();
    for (int64_t i = 0; i < want.element_count(); ++i) {
      const float c = std::min(std::max(v[i] + r.data_as<float>()[i], 0.0f), 6.0f);
      v[i] = c / (1 + std::exp(-c));
    }
    AttrBuilder a;
    p.Attrs(a);
    Tensor x_in = Reorder(x, p.src, 24);
    Tensor r_in = Reorder(r, p.dst, 40);
    auto out = RunNode(Epctx("DnnlConv"), a, {&x_in, &p.packed.bytes, &p.b, &r_in});
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    ExpectNear(Reorder((*out)[0], ActivationLayout::kPlain, 40), want, Cat("stride ", stride));

    const bool direct = stride == 1 && onednn::Blocked1x1ConvAvailable();
    EXPECT_EQ(ConvImplementation(a, 4) == "epctx:blocked_1x1", direct) << "stride " << stride;
  }
}

// A squeeze-and-excitation expansion (EfficientNet's): a 1x1 convolution of a 1x1 image with a
// Sigmoid, which no primitive fuses as a trailing activation (Sigmoid(0) is not 0). Our code
// computes it, the Sigmoid applied after; the padded lanes of the last block stay zeros.
TEST(DnnlConvKernel, SigmoidAfterOurOneByOneConvolutionKeepsThePaddingZero) {
  std::mt19937 rng(6);
  ConvProblem p;
  p.x_shape = {2, 24, 1, 1};
  p.w_shape = {20, 24, 1, 1};
  p.pads = {0, 0, 0, 0};
  p.src = p.dst = ActivationLayout::kBlocked16;
  p.post_ops = {3};  // Sigmoid
  p.alpha = {0};
  p.beta = {0};
  p.Pack(rng);
  Tensor x = RandomFloats(p.x_shape, rng);
  Tensor want = p.Reference(x);
  float* v = want.mutable_data_as<float>();
  for (int64_t i = 0; i < want.element_count(); ++i) v[i] = 1 / (1 + std::exp(-v[i]));
  AttrBuilder a;
  p.Attrs(a);
  Tensor x_in = Reorder(x, p.src, 24);
  auto out = RunNode(Epctx("DnnlConv"), a, {&x_in, &p.packed.bytes, &p.b});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ExpectNear(Reorder((*out)[0], ActivationLayout::kPlain, 20), want, "sigmoid");
  const Tensor& y = (*out)[0];
  ASSERT_EQ(y.shape(), (std::vector<int64_t>{2, 2, 1, 1, 16}));
  for (int64_t n = 0; n < 2; ++n) {
    for (int64_t lane = 4; lane < 16; ++lane) {
      EXPECT_EQ(y.data_as<float>()[(n * 2 + 1) * 16 + lane], 0.0f) << n << " " << lane;
    }
  }
  EXPECT_EQ(ConvImplementation(a, 3) == "epctx:blocked_1x1", onednn::Blocked1x1ConvAvailable());
}

// Depthwise windows on blocked activations with output rows of kMinOwnDepthwiseWidth pixels or
// more run without a primitive (blocked_depthwise_conv.h), narrower ones with oneDNN's; both
// match the reference Conv (24 channels: a block and a half; a trailing Swish after Clip).
TEST(DnnlConvKernel, DepthwiseWindowsOfWideRowsRunWithoutAPrimitive) {
  for (int64_t width : {onednn::kMinOwnDepthwiseWidth + 1, int64_t{7}}) {
    std::mt19937 rng(5);
    ConvProblem p;
    p.x_shape = {2, 24, 9, width};
    p.w_shape = {24, 1, 3, 3};
    p.group = 24;
    p.src = p.dst = ActivationLayout::kBlocked16;
    p.post_ops = {2, 4};  // Clip, Swish
    p.alpha = {0, 1};
    p.beta = {6, 0};
    p.Pack(rng);
    Tensor x = RandomFloats(p.x_shape, rng);
    Tensor want = p.Reference(x);
    float* v = want.mutable_data_as<float>();
    for (int64_t i = 0; i < want.element_count(); ++i) {
      const float c = std::min(std::max(v[i], 0.0f), 6.0f);
      v[i] = c / (1 + std::exp(-c));
    }
    AttrBuilder a;
    p.Attrs(a);
    Tensor x_in = Reorder(x, p.src, 24);
    NodeSpec spec = Epctx("DnnlConv");
    auto out = RunNode(spec, a, {&x_in, &p.packed.bytes, &p.b});
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    ExpectNear(Reorder((*out)[0], ActivationLayout::kPlain, 24), want, Cat("width ", width));

    const bool ours =
        width >= onednn::kMinOwnDepthwiseWidth && onednn::BlockedDepthwiseConvAvailable();
    EXPECT_EQ(ConvImplementation(a, 3, &x_in) == "epctx:blocked_dw", ours) << "width " << width;
  }
}

// Packed for one input shape (as the compiler packs dynamic models for a representative one),
// run at others: the kernel reads the stored layout, whatever oneDNN would have preferred.
TEST(DnnlConvKernel, InputShapesOtherThanThePackedOne) {
  for (ActivationLayout layout : {ActivationLayout::kPlain, ActivationLayout::kBlocked16}) {
    std::mt19937 rng(3);
    ConvProblem p;
    p.x_shape = {1, 24, 32, 32};
    p.src = p.dst = layout;
    p.Pack(rng);
    AttrBuilder a;
    p.Attrs(a);
    for (const std::vector<int64_t>& shape : std::vector<std::vector<int64_t>>{
             {1, 24, 32, 32}, {3, 24, 5, 9}, {8, 24, 1, 1}, {2, 24, 64, 3}, {1, 24, 32, 32}}) {
      Tensor x = RandomFloats(shape, rng);
      const bool blocked = layout == ActivationLayout::kBlocked16;
      Tensor x_in = blocked ? Reorder(x, layout, 24) : x;
      auto out = RunNode(Epctx("DnnlConv"), a, {&x_in, &p.packed.bytes, &p.b});
      ASSERT_TRUE(out.ok()) << ShapeToString(shape) << ": " << out.status().ToString();
      ExpectNear(blocked ? Reorder((*out)[0], ActivationLayout::kPlain, 40) : (*out)[0],
                 p.Reference(x), ShapeToString(shape));
    }
  }
}

// Which post-ops the primitive applies and which the kernel applies after it: only a chain's
// trailing transcendental activations with f(0) = 0 move out of the primitive.
TEST(DnnlPostOps, TrailingTranscendentalActivationsLeaveThePrimitive) {
  using K = onednn::PostOpKind;
  auto count = [](std::vector<K> kinds) {
    std::vector<onednn::PostOp> ops;
    for (K k : kinds) ops.push_back({k, 1.0f, 0.0f});
    return onednn::PrimitivePostOpCount(ops);
  };
  EXPECT_EQ(count({}), 0u);
  EXPECT_EQ(count({K::kSwish}), 0u);
  EXPECT_EQ(count({K::kAddTensor, K::kSwish}), 1u);
  EXPECT_EQ(count({K::kSwish, K::kAddTensor}), 2u);
  EXPECT_EQ(count({K::kRelu, K::kGeluErf, K::kTanh}), 1u);
  EXPECT_EQ(count({K::kGeluTanh}), 0u);
  EXPECT_EQ(count({K::kSigmoid}), 1u);  // sigmoid(0) = 1/2 would fill a blocked layout's padding
  EXPECT_EQ(count({K::kRelu, K::kClip, K::kHardSwish, K::kLinear, K::kElu}), 5u);
}

TEST(DnnlPostOps, TrailingActivationsMatchTheirDefinitions) {
  using K = onednn::PostOpKind;
  std::vector<float> x;
  for (int i = -4000; i <= 4000; ++i) x.push_back(i * 0.0025f);  // [-10, 10]
  auto reference = [](K kind, double v) {
    switch (kind) {
      case K::kSwish:
        return v / (1 + std::exp(-0.5 * v));  // alpha 0.5
      case K::kTanh:
        return std::tanh(v);
      case K::kGeluErf:
        return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)));
      default:
        return 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
    }
  };
  for (K kind : {K::kSwish, K::kTanh, K::kGeluErf, K::kGeluTanh}) {
    for (int threads : {1, 2}) {
      std::vector<float> y = x;
      const onednn::PostOp ops[] = {{K::kRelu, 0, 0}, {kind, 0.5f, 0}};
      // The leading Relu is the primitive's: only `kind` is applied here.
      onednn::ApplyTrailingPostOps(ops, y.data(), static_cast<int64_t>(y.size()), threads);
      double worst = 0;
      for (size_t i = 0; i < x.size(); ++i) {
        worst = std::max(worst, std::abs(y[i] - reference(kind, x[i])));
      }
      EXPECT_LT(worst, 2e-6) << onednn::PostOpName(kind) << " threads " << threads;
    }
  }
}

TEST(DnnlReorderKernel, RoundTripIsExactAndPaddingIsZero) {
  for (const std::vector<int64_t>& shape : std::vector<std::vector<int64_t>>{
           {2, 24, 5, 3}, {1, 3, 7}, {2, 40, 2, 3, 4}, {1, 16, 4, 4}}) {
    std::mt19937 rng(4);
    Tensor x = RandomFloats(shape, rng);
    const int64_t c = shape[1];
    Tensor blocked = Reorder(x, ActivationLayout::kBlocked16, c);
    std::vector<int64_t> physical = shape;
    physical[1] = (c + 15) / 16;
    physical.push_back(16);
    ASSERT_EQ(blocked.shape(), physical);
    // Channel k of block b sits at lane k % 16; lanes past the last channel are zero.
    const std::vector<float> v = FloatsOf(blocked);
    int64_t spatial = 1;
    for (size_t i = 2; i < shape.size(); ++i) spatial *= shape[i];
    for (int64_t n = 0; n < shape[0]; ++n) {
      for (int64_t ch = c; ch < physical[1] * 16; ++ch) {
        for (int64_t s = 0; s < spatial; ++s) {
          const int64_t at = ((n * physical[1] + ch / 16) * spatial + s) * 16 + ch % 16;
          ASSERT_EQ(v[static_cast<size_t>(at)], 0.0f) << ShapeToString(shape) << " lane " << ch;
        }
      }
      const int64_t at = ((n * physical[1] + (c - 1) / 16) * spatial + 1) * 16 + (c - 1) % 16;
      EXPECT_EQ(v[static_cast<size_t>(at)], x.data_as<float>()[(n * c + c - 1) * spatial + 1]);
    }
    Tensor back = Reorder(blocked, ActivationLayout::kPlain, c);
    EXPECT_EQ(back.shape(), shape);
    EXPECT_EQ(FloatsOf(back), FloatsOf(x)) << ShapeToString(shape);
  }
}

// Both blocked layouts (8-channel max pooling is our own pass, blocked_max_pool.h), channels
// that fill the last block or not, windows over the padding and past the end (ceil_mode).
TEST(DnnlPoolKernel, MatchesReferencePoolsOnBlockedTensors) {
  struct Case {
    std::string op;    // the reference op
    std::string pool;  // DnnlPool's pool
    bool global;
    int64_t include_pad;
    bool ceil;
  };
  for (ActivationLayout layout : {ActivationLayout::kBlocked16, ActivationLayout::kBlocked8}) {
    for (int64_t channels : {24, 20}) {
      for (const Case& k :
           {Case{"MaxPool", "max", false, 0, false}, Case{"MaxPool", "max", false, 0, true},
            Case{"AveragePool", "avg", false, 0, true}, Case{"AveragePool", "avg", false, 1, false},
            Case{"GlobalAveragePool", "avg", true, 0, false},
            Case{"GlobalMaxPool", "max", true, 0, false}}) {
        SCOPED_TRACE(::testing::Message()
                     << k.op << (k.ceil ? " ceil" : "") << ", layout " << static_cast<int>(layout)
                     << ", " << channels << " channels");
        std::mt19937 rng(5);
        Tensor x = RandomFloats({2, channels, 9, 8}, rng);
        AttrBuilder ref_attrs, attrs;
        attrs.String("pool", k.pool)
            .Int("global", k.global ? 1 : 0)
            .Int("layout", static_cast<int64_t>(layout))
            .Int("channels", channels);
        if (!k.global) {
          for (AttrBuilder* a : {&ref_attrs, &attrs}) {
            a->Ints("kernel_shape", {3, 3}).Ints("strides", {2, 2}).Ints("pads", {1, 0, 0, 1});
            if (k.ceil) a->Int("ceil_mode", 1);
            if (k.op == "AveragePool") a->Int("count_include_pad", k.include_pad);
          }
        }
        auto want = RunNode(NodeSpec(k.op, 17), ref_attrs, {&x});
        ASSERT_TRUE(want.ok()) << want.status().ToString();
        Tensor xb = Reorder(x, layout, channels);
        for (int threads : {1, 2}) {
          NodeSpec spec = Epctx("DnnlPool");
          spec.threads = threads;
          auto got = RunNode(spec, attrs, {&xb});
          ASSERT_TRUE(got.ok()) << got.status().ToString();
          ExpectNear(Reorder((*got)[0], ActivationLayout::kPlain, channels, layout), (*want)[0],
                     k.op);
        }
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// ConcatChannelAffine: ChannelAffine of the blocked concatenation, without writing it.

// Inputs of a ChannelAffine / ConcatChannelAffine over `channels` channels (16-channel blocks;
// padding lanes of S and T zero) with a Relu.
struct AffineParams {
  Tensor s, t;
  AttrBuilder attrs;
  AffineParams(int64_t channels, std::mt19937& rng) {
    const int64_t padded = (channels + 15) / 16 * 16;
    s = RandomFloats({padded}, rng, 0.5f, 1.5f);
    t = RandomFloats({padded}, rng, -0.5f, 0.5f);
    for (int64_t c = channels; c < padded; ++c) {
      s.mutable_data_as<float>()[c] = 0;
      t.mutable_data_as<float>()[c] = 0;
    }
    attrs.Int("layout", static_cast<int64_t>(ActivationLayout::kBlocked16))
        .Int("channels", channels)
        .Ints("post_ops", {static_cast<int64_t>(onednn::PostOpKind::kRelu)})
        .Floats("post_op_alpha", {0.0f})
        .Floats("post_op_beta", {0.0f});
  }
};

TEST(ConcatChannelAffineKernel, EqualsChannelAffineOfTheConcatenation) {
  std::mt19937 rng(12);
  // Two batches; 2 + 1 + 2 blocks, the last holding 20 channels (12 padding lanes, zero).
  Tensor a = RandomFloats({2, 2, 3, 5, 16}, rng), b = RandomFloats({2, 1, 3, 5, 16}, rng);
  Tensor c = RandomFloats({2, 2, 3, 5, 16}, rng);
  for (int64_t i = 0; i < c.element_count(); ++i) {
    const int64_t block = i / (3 * 5 * 16) % 2, lane = i % 16;
    if (block == 1 && lane >= 4) c.mutable_data_as<float>()[i] = 0;  // c's second block: 4 real
  }
  AffineParams p(16 * 2 + 16 + 20, rng);
  AttrBuilder axis;
  axis.Int("axis", 1);
  auto cat = RunNode(NodeSpec("Concat", 13), axis, {&a, &b, &c});
  ASSERT_TRUE(cat.ok()) << cat.status().ToString();
  auto want = RunNode(Epctx("ChannelAffine"), p.attrs, {&(*cat)[0], &p.s, &p.t});
  ASSERT_TRUE(want.ok()) << want.status().ToString();
  auto got = RunNode(Epctx("ConcatChannelAffine"), p.attrs, {&p.s, &p.t, &a, &b, &c});
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_EQ((*got)[0].shape(), (std::vector<int64_t>{2, 5, 3, 5, 16}));
  EXPECT_EQ(FloatsOf((*got)[0]), FloatsOf((*want)[0]));  // the same arithmetic, bit for bit
}

TEST(ConcatChannelAffineKernel, Refusals) {
  std::mt19937 rng(13);
  Tensor a = RandomFloats({1, 2, 3, 5, 16}, rng), b = RandomFloats({1, 1, 3, 4, 16}, rng);
  AffineParams p(48, rng);
  Status s = RunNode(Epctx("ConcatChannelAffine"), p.attrs, {&p.s, &p.t, &a, &b}).status();
  EXPECT_EQ(s.message(),
            "input X1 has shape [1,1,3,4,16], which does not concatenate with [1,2,3,5,16] along "
            "the channel blocks");
  Tensor b5 = RandomFloats({1, 1, 3, 5, 16}, rng);
  AffineParams wide(64, rng);
  s = RunNode(Epctx("ConcatChannelAffine"), wide.attrs, {&wide.s, &wide.t, &a, &b5}).status();
  EXPECT_EQ(s.message(), "the inputs hold 3 channel blocks of 16, not 64 channels");
  Tensor plain = RandomFloats({1, 16, 3, 5}, rng);
  s = RunNode(Epctx("ConcatChannelAffine"), p.attrs, {&p.s, &p.t, &plain}).status();
  EXPECT_EQ(s.message(), "input X0 has shape [1,16,3,5], not a 16-channel-blocked activation");
  AttrBuilder plain_layout;
  plain_layout.Int("layout", 0).Int("channels", 16);
  s = RunNode(Epctx("ConcatChannelAffine"), plain_layout, {&p.s, &p.t, &plain}).status();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("in a blocked layout (got 3 inputs, layout 0)"), std::string::npos)
      << s.message();
}

// ---------------------------------------------------------------------------------------------
// Run-time validation: DnnlConv.

class DnnlConvChecks : public ::testing::Test {
 protected:
  void SetUp() override {
    std::mt19937 rng(6);
    p_.x_shape = {1, 8, 6, 6};
    p_.w_shape = {16, 8, 3, 3};
    p_.Pack(rng);
    ASSERT_FALSE(HasFailure());
    x_ = RandomFloats(p_.x_shape, rng);
  }

  // Creates and runs the node; `edit` changes the attributes after the good ones.
  Status Run(void (*edit)(AttrBuilder&), std::vector<const Tensor*> inputs = {}) {
    AttrBuilder a;
    p_.Attrs(a);
    if (edit != nullptr) edit(a);
    if (inputs.empty()) inputs = {&x_, &p_.packed.bytes, &p_.b};
    return RunNode(Epctx("DnnlConv"), a, inputs).status();
  }

  // The good node's attributes, minus `skip`, plus `edit`.
  Status RunWithout(const std::string& skip, void (*edit)(AttrBuilder&) = nullptr) {
    AttrBuilder a;
    p_.Attrs(a, skip);
    if (edit != nullptr) edit(a);
    return RunNode(Epctx("DnnlConv"), a, {&x_, &p_.packed.bytes, &p_.b}).status();
  }

  ConvProblem p_;
  Tensor x_;
};

TEST_F(DnnlConvChecks, TheGoodNodeRuns) {
  EXPECT_TRUE(Run(nullptr).ok());
}

TEST_F(DnnlConvChecks, PackedWeightOfTheWrongByteSize) {
  const int64_t n = p_.packed.bytes.element_count();
  std::mt19937 rng(1);
  Tensor short_w = RandomFloats({n - 1}, rng);
  Status s = Run(nullptr, {&x_, &short_w, &p_.b});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), Cat("packed W holds ", 4 * (n - 1), " bytes; its layout needs ", 4 * n));
  Tensor long_w = RandomFloats({n + 16}, rng);
  s = Run(nullptr, {&x_, &long_w, &p_.b});
  EXPECT_EQ(s.message(), Cat("packed W holds ", 4 * (n + 16), " bytes; its layout needs ", 4 * n));
}

TEST_F(DnnlConvChecks, BiasOfTheWrongLength) {
  Tensor b = FloatTensor({15}, std::vector<float>(15, 1));
  Status s = Run(nullptr, {&x_, &p_.packed.bytes, &b});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "input B has shape [15], expected [16]");
}

TEST_F(DnnlConvChecks, ResidualOfTheWrongShape) {
  std::mt19937 rng(7);
  ConvProblem q = p_;
  q.post_ops = {9};
  q.alpha = {0};
  q.beta = {0};
  q.Pack(rng);
  AttrBuilder qa;
  q.Attrs(qa);
  Tensor r = RandomFloats({1, 16, 6, 5}, rng);
  auto out = RunNode(Epctx("DnnlConv"), qa, {&x_, &q.packed.bytes, &q.b, &r});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(out.status().message(), "residual R has shape [1,16,6,5], expected [1,16,6,6]");
  // Plain R for a blocked output.
  ConvProblem bq = q;
  bq.dst = ActivationLayout::kBlocked16;
  bq.Pack(rng);
  AttrBuilder ba;
  bq.Attrs(ba);
  Tensor plain_r = RandomFloats({1, 16, 6, 6}, rng);
  out = RunNode(Epctx("DnnlConv"), ba, {&x_, &bq.packed.bytes, &bq.b, &plain_r});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().message(), "residual R has shape [1,16,6,6], expected [1,1,6,6,16]");
}

TEST_F(DnnlConvChecks, UnknownPostOpIds) {
  Status s = Run([](AttrBuilder& a) {
    a.Ints("post_ops", {13}).Floats("post_op_alpha", {0}).Floats("post_op_beta", {0});
  });
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "DnnlConv node 'n': post_ops[0] = 13 is not a known post-op");
  s = Run([](AttrBuilder& a) {
    a.Ints("post_ops", {1, 0}).Floats("post_op_alpha", {0, 0}).Floats("post_op_beta", {0, 0});
  });
  EXPECT_EQ(s.message(), "DnnlConv node 'n': post_ops[1] = 0 is not a known post-op");
}

TEST_F(DnnlConvChecks, PostOpListsOfDifferentLengths) {
  Status s = Run([](AttrBuilder& a) {
    a.Ints("post_ops", {1, 6}).Floats("post_op_alpha", {0}).Floats("post_op_beta", {0, 0});
  });
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "DnnlConv node 'n': post_ops has 2 entries but post_op_alpha 1 and post_op_beta 2");
  s = Run([](AttrBuilder& a) { a.Ints("post_ops", {1}).Floats("post_op_alpha", {0}); });
  EXPECT_EQ(s.message(),
            "DnnlConv node 'n': post_ops has 1 entries but post_op_alpha 1 and post_op_beta 0");
}

TEST_F(DnnlConvChecks, ResidualPostOpAndInputMustAgree) {
  Status s = Run([](AttrBuilder& a) {
    a.Ints("post_ops", {9}).Floats("post_op_alpha", {0}).Floats("post_op_beta", {0});
  });
  EXPECT_EQ(s.message(), "DnnlConv node 'n': post_ops adds a residual, but input R is absent");
  std::mt19937 rng(2);
  Tensor r = RandomFloats({1, 16, 6, 6}, rng);
  s = Run(nullptr, {&x_, &p_.packed.bytes, &p_.b, &r});
  EXPECT_EQ(s.message(),
            "DnnlConv node 'n': post_ops does not add a residual, but input R is present");
  s = Run([](AttrBuilder& a) {
    a.Ints("post_ops", {9, 9}).Floats("post_op_alpha", {0, 0}).Floats("post_op_beta", {0, 0});
  });
  EXPECT_EQ(s.message(), "DnnlConv node 'n': post_ops adds more than one tensor");
}

TEST_F(DnnlConvChecks, MissingWeightsFormat) {
  Status s = RunWithout("weights_format");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "DnnlConv node 'n': weights_format is missing");
}

TEST_F(DnnlConvChecks, UnknownActivationLayouts) {
  Status s = RunWithout("src_layout", [](AttrBuilder& a) { a.Int("src_layout", 7); });
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "DnnlConv node 'n': activation layout 7 is not known");
  s = RunWithout("dst_layout", [](AttrBuilder& a) { a.Int("dst_layout", -1); });
  EXPECT_EQ(s.message(), "DnnlConv node 'n': activation layout -1 is not known");
}

TEST_F(DnnlConvChecks, WeightsShapeThatIsNoConvolutions) {
  Status s = RunWithout("weights_shape", [](AttrBuilder& a) { a.Ints("weights_shape", {16, 8}); });
  EXPECT_EQ(s.message(),
            "DnnlConv node 'n': weights_shape [16,8] / group 1 is not a convolution's");
  s = RunWithout("weights_shape", [](AttrBuilder& a) { a.Ints("weights_shape", {16, 0, 3, 3}); });
  EXPECT_EQ(s.message(), "DnnlConv node 'n': weights_shape [16,0,3,3]");
}

// A forged pads attribute that makes the output rows millions of columns wide: oneDNN would take
// ~128 bytes per column creating the primitive (2 GB for a fuzzer's 16.7M), so the width is
// refused before oneDNN sees it.
TEST_F(DnnlConvChecks, OutputRowsWiderThanOneDnnIsMadeFor) {
  Status s = RunWithout("pads", [](AttrBuilder& a) { a.Ints("pads", {1, 1, 1, 1 << 22}); });
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  EXPECT_EQ(s.message(),
            "a convolution of 1x8x6x6 by 16x8x3x3 writes rows 4194309 wide; oneDNN's convolutions "
            "are made here for at most 2097152 (creating one takes memory per column)");
}

TEST_F(DnnlConvChecks, BlockedInputOfTheWrongChannelCount) {
  Status s = RunWithout("src_layout", [](AttrBuilder& a) { a.Int("src_layout", 1); });
  // A plain [1, 8, 6, 6] tensor read as blocked: its last dim is not 16.
  EXPECT_EQ(s.message(), "a channel-blocked tensor of 8 channels cannot have shape [1,8,6,6]");
}

// A corrupt layout in the program: the shape is the packed one, so the encodings are compared,
// differ, and the stored one cannot be decoded.
TEST_F(DnnlConvChecks, CorruptWeightsFormat) {
  std::vector<int64_t> bad = p_.packed.format;
  bad.push_back(0);
  AttrBuilder a;
  ConvProblem q = p_;
  q.packed.format = bad;
  q.Attrs(a);  // weights_format: the corrupt one
  auto out = RunNode(Epctx("DnnlConv"), a, {&x_, &p_.packed.bytes, &p_.b});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kUnsupported);
  EXPECT_EQ(out.status().message(),
            Cat("the weights were packed as malformed, but for this input oneDNN wants ",
                onednn::DescribeWeightFormat(p_.packed.format),
                " and the stored layout cannot be used instead: packed weight layout is "
                "malformed: trailing values"));
}

// A 3x3 Winograd convolution of `channels` to as many on a size x size image, blocked in and
// out (not packed yet).
ConvProblem BlockedWinograd(int64_t channels, int64_t size) {
  ConvProblem p;
  p.x_shape = {1, channels, size, size};
  p.w_shape = {channels, channels, 3, 3};
  p.src = p.dst = ActivationLayout::kBlocked16;
  p.winograd = true;
  return p;
}

// Why a Winograd test cannot run on this CPU, or "" when it can.
std::string NoWinogradHere() {
  if (onednn::HasWinogradConvolutions()) return "";
  return Cat("oneDNN 2.6 has Winograd convolutions for AVX-512 only; this CPU's kernels are ",
             format::KernelIsaName(onednn::PackingIsa()));
}

// The geometry of `p`'s convolution and its config (blocked, with bias), as the compiler sees it.
void BlockedConvWithBias(const ConvProblem& p, onednn::ConvGeometry* g, onednn::ConvConfig* c) {
  kernels::WindowAttrs window;
  window.pads = p.pads;
  auto resolved = onednn::ResolveConvGeometry(window, 1, p.w_shape, p.x_shape);
  ASSERT_TRUE(resolved.ok()) << resolved.status().ToString();
  *g = *resolved;
  c->src_layout = c->dst_layout = ActivationLayout::kBlocked16;
  c->has_bias = true;
}

// Runs `p`'s packed weights in sessions of `threads` threads each against the reference.
void ExpectEachThreadCountMatches(const ConvProblem& p, std::mt19937& rng,
                                  std::initializer_list<int> thread_counts) {
  AttrBuilder a;
  p.Attrs(a);
  Tensor x = RandomFloats(p.x_shape, rng);
  Tensor xb = Reorder(x, ActivationLayout::kBlocked16, p.x_shape[1]);
  const Tensor ref = p.Reference(x);
  for (int threads : thread_counts) {
    NodeSpec spec = Epctx("DnnlConv");
    spec.threads = threads;
    auto out = RunNode(spec, a, {&xb, &p.packed.bytes, &p.b});
    ASSERT_TRUE(out.ok()) << threads << " threads: " << out.status().ToString();
    ExpectNear(Reorder((*out)[0], ActivationLayout::kPlain, p.w_shape[0]), ref,
               Cat("winograd at ", threads, " threads"));
  }
}

// oneDNN makes a Winograd convolution exactly where HasWinogradConvolutions (which the compiler
// asks) says so; elsewhere asking for one is an error naming the problem, not a crash.
TEST(DnnlConvKernel, WinogradExactlyWhereOneDnnHasIt) {
  ConvProblem p = BlockedWinograd(64, 28);
  kernels::WindowAttrs window;
  window.pads = p.pads;
  auto g = onednn::ResolveConvGeometry(window, 1, p.w_shape, p.x_shape);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  onednn::ConvConfig c;
  c.src_layout = c.dst_layout = ActivationLayout::kBlocked16;
  c.has_bias = true;
  c.winograd = true;
  const std::vector<float> filter(64 * 64 * 9, 0.25f);
  auto packed = onednn::PackConvWeights(*g, c, filter.data());
  if (onednn::HasWinogradConvolutions()) {
    ASSERT_TRUE(packed.ok()) << packed.status().ToString();
    EXPECT_EQ(packed->format[1], 2) << onednn::DescribeWeightFormat(packed->format);
  } else {
    ASSERT_FALSE(packed.ok()) << onednn::DescribeWeightFormat(packed->format);
    EXPECT_EQ(packed.status().code(), StatusCode::kUnsupported);
    EXPECT_EQ(packed.status().message(),
              "oneDNN has no implementation for a Winograd convolution of 1x64x28x28 by "
              "64x64x3x3: could not create a primitive descriptor iterator");
  }
}

// Winograd weights serve only the shape they were packed for.
TEST(DnnlConvKernel, WinogradWeightsAtAnotherShapeAreRefused) {
  if (const std::string why = NoWinogradHere(); !why.empty()) GTEST_SKIP() << why;
  std::mt19937 rng(8);
  ConvProblem p = BlockedWinograd(64, 28);
  ASSERT_NO_FATAL_FAILURE(p.Pack(rng));
  ASSERT_EQ(p.packed.format[1], 2)
      << "not a Winograd layout: " << onednn::DescribeWeightFormat(p.packed.format);
  AttrBuilder a;
  p.Attrs(a);
  Tensor x = RandomFloats(p.x_shape, rng);
  Tensor xb = Reorder(x, ActivationLayout::kBlocked16, 64);
  auto out = RunNode(Epctx("DnnlConv"), a, {&xb, &p.packed.bytes, &p.b});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ExpectNear(Reorder((*out)[0], ActivationLayout::kPlain, 64), p.Reference(x), "winograd");

  Tensor other = Reorder(RandomFloats({1, 64, 14, 14}, rng), ActivationLayout::kBlocked16, 64);
  out = RunNode(Epctx("DnnlConv"), a, {&other, &p.packed.bytes, &p.b});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kUnsupported);
  const std::string tail =
      "and the stored layout cannot be used instead: a Winograd weight layout only serves the "
      "input shape it was packed for";
  const std::string& m = out.status().message();
  EXPECT_EQ(m.rfind("the weights were packed as onednn-winograd [64,64,3,3], but for this input "
                    "oneDNN wants ",
                    0),
            0u)
      << m;
  EXPECT_EQ(m.substr(m.size() - std::min(m.size(), tail.size())), tail) << m;
}

// A problem's geometry and configuration (BlockedConvWithBias) and the layout the compiler packs
// its Winograd weights in (PortableWinogradFormat), or why there is no such layout here.
struct PortableWinograd {
  onednn::ConvGeometry g;
  onednn::ConvConfig c;
  std::vector<int64_t> format;
  std::string none;
};

// Fills `w` for `p` and packs p's weights in that layout at one thread (unless there is none).
void PackInPortableWinogradLayout(ConvProblem& p, std::mt19937& rng, PortableWinograd* w) {
  ASSERT_NO_FATAL_FAILURE(BlockedConvWithBias(p, &w->g, &w->c));
  auto format = onednn::PortableWinogradFormat(w->g, w->c);
  if (!format.ok()) {
    w->none = "no portable Winograd layout here: " + format.status().ToString();
    return;
  }
  w->format = std::move(*format);
  onednn::ThreadBudget one(1);
  ASSERT_NO_FATAL_FAILURE(p.Pack(rng, w->format));
}

// Below 27 pixels a side the compiler packs no F(4x4, 3x3) (PortableWinogradFormat): ResNet-50's
// 14x14 layers take F(2x2, 3x3) where its 1-thread layout serves every thread count (then every
// count matches the reference), and otherwise no Winograd (on a Zen 5, whose F(2x2) layout
// changes with the count: the direct convolution). On 28x28 F(4x4) stays first.
TEST(DnnlConvKernel, NoLargeWinogradTileBelow27PixelsASide) {
  if (const std::string why = NoWinogradHere(); !why.empty()) GTEST_SKIP() << why;
  std::mt19937 rng(9);
  ConvProblem p = BlockedWinograd(256, 14);
  PortableWinograd w;
  ASSERT_NO_FATAL_FAILURE(PackInPortableWinogradLayout(p, rng, &w));
  if (w.none.empty()) {
    EXPECT_EQ(onednn::WinogradTile(w.format), 4) << onednn::DescribeWeightFormat(w.format);
    ASSERT_NO_FATAL_FAILURE(ExpectEachThreadCountMatches(p, rng, {1, 2, 3, 4}));
  } else {
    EXPECT_NE(w.none.find("(1 F(4x4, 3x3) left out: an image under 27 pixels a side takes none)"),
              std::string::npos)
        << w.none;
  }
  ConvProblem large = BlockedWinograd(128, 28);
  PortableWinograd on_large;
  ASSERT_NO_FATAL_FAILURE(PackInPortableWinogradLayout(large, rng, &on_large));
  ASSERT_TRUE(on_large.none.empty()) << on_large.none;
  EXPECT_EQ(onednn::WinogradTile(on_large.format), 6)
      << onednn::DescribeWeightFormat(on_large.format);
}

// A session looks at its own count, up to twice it, then above that only for primitives without
// per-thread buffers, and last at fewer threads, run with that count.
TEST(DnnlConvKernel, WinogradCandidatesOfTwoThreads) {
  std::vector<std::string> got;
  for (const onednn::WinogradCandidate& c : onednn::WinogradCandidates(2)) {
    got.push_back(Cat(c.made_for, "/", c.run_with, c.only_without_per_thread_buffers ? "s" : ""));
  }
  const std::vector<std::string> want = {"2/0",   "3/0",   "4/0",   "6/0s",  "8/0s",
                                         "12/0s", "16/0s", "32/0s", "64/0s", "1/1"};
  EXPECT_EQ(got, want);
}

// DenseNet-121's 56x56 128 -> 32 layers: oneDNN's 4x3 Winograd has one layout for 1 and for 6 or
// more threads (a data-parallel schedule) and another for 2 to 4 (per-thread buffers) on a Zen 4.
// Packed in a portable layout, the weights serve 1 to 4 threads and match the reference.
TEST(DnnlConvKernel, WinogradWeightsOfDenseNetsFirstBlockServeEveryThreadCount) {
  if (const std::string why = NoWinogradHere(); !why.empty()) GTEST_SKIP() << why;
  std::mt19937 rng(13);
  ConvProblem p = BlockedWinograd(128, 56);
  p.w_shape = {32, 128, 3, 3};
  PortableWinograd w;
  ASSERT_NO_FATAL_FAILURE(PackInPortableWinogradLayout(p, rng, &w));
  if (!w.none.empty()) GTEST_SKIP() << w.none;
  ASSERT_NO_FATAL_FAILURE(ExpectEachThreadCountMatches(p, rng, {1, 2, 3, 4}));
}

// oneDNN's first Winograd implementation of a problem is not its only one: weights packed in
// another's layout (as the compiler packs them where the first one's layout changes with the
// thread count) are found in that implementation and run.
TEST(DnnlConvKernel, WinogradWeightsInAnotherImplementationsLayoutRun) {
  if (const std::string why = NoWinogradHere(); !why.empty()) GTEST_SKIP() << why;
  std::mt19937 rng(11);
  ConvProblem p = BlockedWinograd(256, 14);
  onednn::ConvGeometry g;
  onednn::ConvConfig c;
  ASSERT_NO_FATAL_FAILURE(BlockedConvWithBias(p, &g, &c));
  c.winograd = true;
  onednn::ThreadBudget one(1);
  auto implementations = onednn::ConvImplementations(g, c);
  ASSERT_TRUE(implementations.ok()) << implementations.status().ToString();
  if (implementations->size() < 2) {
    GTEST_SKIP() << "oneDNN has one Winograd implementation of it here";
  }
  const std::vector<int64_t>& last = implementations->back().layout;
  ASSERT_NE(last, implementations->front().layout);
  auto found = onednn::ConvPrimitiveDescReading(g, c, last);
  ASSERT_TRUE(found.ok()) << found.status().ToString();
  ASSERT_TRUE(found->has_value()) << "no implementation reads "
                                  << onednn::DescribeWeightFormat(last);
  auto got = onednn::EncodeWeightFormat((*found)->weights_desc());
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, last);
  ASSERT_NO_FATAL_FAILURE(p.Pack(rng, last));
  ASSERT_EQ(p.packed.format, last);
  ASSERT_NO_FATAL_FAILURE(ExpectEachThreadCountMatches(p, rng, {1}));
}

// ---------------------------------------------------------------------------------------------
// Run-time validation: Reorder and DnnlPool.

TEST(DnnlReorderKernel, Refusals) {
  std::mt19937 rng(9);
  Tensor plain = RandomFloats({1, 24, 4, 4}, rng);
  Tensor blocked = RandomFloats({1, 2, 4, 4, 16}, rng);
  auto run = [](const Tensor& x, std::vector<std::pair<std::string, int64_t>> ints) {
    AttrBuilder a;
    for (const auto& [k, v] : ints) a.Int(k, v);
    return RunNode(Epctx("Reorder"), a, {&x}).status();
  };
  Status s = run(plain, {{"to_layout", 1}, {"from_layout", 0}, {"channels", 0}});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "Reorder node 'n': channels is 0, expected at least 1");
  s = run(plain, {{"to_layout", 1}, {"from_layout", 0}});
  EXPECT_EQ(s.message(), "Reorder node 'n': channels is 0, expected at least 1");
  s = run(plain, {{"to_layout", 7}, {"from_layout", 0}, {"channels", 24}});
  EXPECT_EQ(s.message(), "Reorder node 'n': activation layout 7 is not known");
  s = run(plain, {{"from_layout", 0}, {"channels", 24}});
  EXPECT_EQ(s.message(), "Reorder node 'n': activation layout -1 is not known");
  s = run(plain, {{"to_layout", 1}, {"channels", 24}});
  EXPECT_EQ(s.message(), "Reorder node 'n': activation layout -1 is not known");
  s = run(plain, {{"to_layout", 1}, {"from_layout", 1}, {"channels", 24}});
  EXPECT_EQ(s.message(), "Reorder node 'n': from_layout and to_layout are both 1");
  // Blocked input whose blocks cannot hold the channels: 40 needs 3 blocks of 16.
  s = run(blocked, {{"to_layout", 0}, {"from_layout", 1}, {"channels", 40}});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "a channel-blocked tensor of 40 channels cannot have shape [1,2,4,4,16]");
  s = run(blocked, {{"to_layout", 0}, {"from_layout", 1}, {"channels", 8}});  // 1 block, not 2
  EXPECT_EQ(s.message(), "a channel-blocked tensor of 8 channels cannot have shape [1,2,4,4,16]");
  Tensor lanes8 = RandomFloats({1, 3, 4, 4, 8}, rng);
  s = run(lanes8, {{"to_layout", 0}, {"from_layout", 1}, {"channels", 40}});
  EXPECT_EQ(s.message(), "a channel-blocked tensor of 40 channels cannot have shape [1,3,4,4,8]");
  // In the 8-channel blocked layout the same tensor holds 17 to 24 channels.
  s = run(lanes8, {{"to_layout", 0}, {"from_layout", 2}, {"channels", 40}});
  EXPECT_EQ(s.message(), "a channel-blocked tensor of 40 channels cannot have shape [1,3,4,4,8]");
  EXPECT_TRUE(run(lanes8, {{"to_layout", 0}, {"from_layout", 2}, {"channels", 20}}).ok());
  // Plain input with another channel count, or of rank 2.
  s = run(plain, {{"to_layout", 1}, {"from_layout", 0}, {"channels", 40}});
  EXPECT_EQ(s.message(), "input X has shape [1,24,4,4], expected rank 3 to 5 with 40 channels");
  Tensor flat = RandomFloats({4, 24}, rng);
  s = run(flat, {{"to_layout", 1}, {"from_layout", 0}, {"channels", 24}});
  EXPECT_EQ(s.message(), "input X has shape [4,24], expected rank 3 to 5 with 24 channels");
}

TEST(DnnlPoolKernel, Refusals) {
  std::mt19937 rng(10);
  Tensor xb = RandomFloats({1, 2, 5, 5, 16}, rng);
  auto run = [&](void (*fill)(AttrBuilder&)) {
    AttrBuilder a;
    fill(a);
    return RunNode(Epctx("DnnlPool"), a, {&xb}).status();
  };
  Status s = run([](AttrBuilder& a) {
    a.String("pool", "min").Int("layout", 1).Int("channels", 24).Ints("kernel_shape", {2, 2});
  });
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "DnnlPool node 'n': pool is 'min', expected 'max' or 'avg'");
  s = run([](AttrBuilder& a) {
    a.Int("layout", 1).Int("channels", 24).Ints("kernel_shape", {2, 2});
  });
  EXPECT_EQ(s.message(), "DnnlPool node 'n': pool is '', expected 'max' or 'avg'");
  s = run([](AttrBuilder& a) {
    a.String("pool", "max").Int("layout", 1).Ints("kernel_shape", {2, 2});
  });
  EXPECT_EQ(s.message(), "DnnlPool node 'n': channels is 0, expected at least 1");
  s = run([](AttrBuilder& a) { a.String("pool", "max").Int("layout", 1).Int("channels", 24); });
  EXPECT_EQ(s.message(), "DnnlPool node 'n': kernel_shape is required");
  s = run([](AttrBuilder& a) {
    a.String("pool", "avg").Int("layout", 3).Int("channels", 24).Ints("kernel_shape", {2, 2});
  });
  EXPECT_EQ(s.message(), "DnnlPool node 'n': activation layout 3 is not known");
  s = run([](AttrBuilder& a) {
    a.String("pool", "max").Int("layout", 1).Int("channels", 24).Ints("kernel_shape", {2});
  });
  EXPECT_EQ(s.message(), "input X has 2 spatial dims, kernel_shape 1");
  s = run([](AttrBuilder& a) {
    a.String("pool", "max").Int("layout", 1).Int("channels", 40).Ints("kernel_shape", {2, 2});
  });
  EXPECT_EQ(s.message(), "a channel-blocked tensor of 40 channels cannot have shape [1,2,5,5,16]");
  // Counting padding past the pads (ceil mode): oneDNN has no such average.
  s = run([](AttrBuilder& a) {
    a.String("pool", "avg")
        .Int("layout", 1)
        .Int("channels", 24)
        .Ints("kernel_shape", {2, 2})
        .Ints("strides", {2, 2})
        .Int("ceil_mode", 1)
        .Int("count_include_pad", 1);
  });
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  EXPECT_EQ(s.message(),
            "average pooling counting padding with ceil_mode windows past the padding");
}

}  // namespace
}  // namespace epctx::exec::testing
