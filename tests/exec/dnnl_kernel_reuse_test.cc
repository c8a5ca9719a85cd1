// The oneDNN kernels as the executor uses them: created once, run many times on arena memory
// that still holds earlier values, and (for sessions sharing a blob, or kernels shared between
// runs) from several threads at once.
//   * Outputs handed out full of NaN: every element of a blocked output, padding lanes included,
//     must be written, or a NaN left in the padding reaches real channels through the next
//     convolution (0 x NaN = NaN).
//   * A Reorder makes its primitive in Prepare when the input's shape is known (the preparation
//     threads call it ahead of the first run), and its first run then makes none.
//   * One DnnlConv kernel object run from four threads with input shapes taking turns: the
//     per-kernel primitive memo and the process-wide cache stay consistent.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <thread>

#include "exec/kernels/onednn/blocked_gemv.h"
#include "exec/kernels/onednn/conv_primitive.h"
#include "exec/kernels/onednn/primitive_cache.h"
#include "exec/kernels/onednn/weight_packing.h"
#include "kernel_test_helpers.h"

namespace epctx::exec::testing {
namespace {

namespace onednn = kernels::onednn;
using onednn::ActivationLayout;

// A run context whose outputs start as NaN (arena memory is never cleared between runs).
class PoisonedContext final : public KernelContext {
 public:
  PoisonedContext(std::vector<const Tensor*> inputs, int threads)
      : inputs_(std::move(inputs)), threads_(threads) {}
  size_t input_count() const override { return inputs_.size(); }
  const Tensor* input(size_t i) const override { return i < inputs_.size() ? inputs_[i] : nullptr; }
  size_t output_count() const override { return 1; }
  Result<Tensor*> AllocateOutput(size_t index, DataType type, std::vector<int64_t> shape) override {
    if (index != 0) return Status(StatusCode::kInternal, "one output");
    auto t = Tensor::Allocate(type, std::move(shape));
    if (!t.ok()) return t.status();
    out_ = std::move(*t);
    float* p = out_.mutable_data_as<float>();
    for (int64_t i = 0; i < out_.element_count(); ++i)
      p[i] = std::numeric_limits<float>::quiet_NaN();
    return &out_;
  }
  Status SetOutput(size_t, Tensor) override {
    return Status(StatusCode::kInternal, "the dnnl kernels allocate their output");
  }
  int num_threads() const override { return threads_; }
  const Tensor& output() const { return out_; }

 private:
  std::vector<const Tensor*> inputs_;
  int threads_;
  Tensor out_;
};

// The node description the registry creates a kernel from (inputs described as the compiler
// describes them).
struct Node {
  AttrBuilder attrs;
  NodeInfo info;
  std::string op;

  Node(const std::string& op_type, const std::vector<const Tensor*>& inputs) : op(op_type) {
    info.name = "n";
    info.op_type = op;
    info.domain = "com.epctx";
    info.opset = 1;
    for (const Tensor* t : inputs) {
      ValueDesc d;
      d.present = t != nullptr;
      if (t != nullptr) d.dtype = t->dtype();
      info.inputs.push_back(d);
    }
    info.outputs.resize(1);
  }
  std::unique_ptr<Kernel> Create() {
    info.attrs = &attrs.attrs();
    auto k = KernelRegistry::Global().Create(info);
    EXPECT_TRUE(k.ok()) << k.status().ToString();
    return k.ok() ? std::move(*k) : nullptr;
  }
};

// Runs `kernel` on a poisoned output; returns the output.
Tensor RunPoisoned(Kernel& kernel, std::vector<const Tensor*> inputs, int threads = 1) {
  PoisonedContext ctx(std::move(inputs), threads);
  Status s = kernel.Run(ctx);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return ctx.output();
}

int64_t NanCount(const Tensor& t) {
  int64_t n = 0;
  for (float v : FloatsOf(t)) n += std::isnan(v) ? 1 : 0;
  return n;
}

struct Packed {
  Tensor w, b;
  onednn::PackedWeight packed;
};

// A 3x3 pad-1 convolution of `c` to `m` channels packed for `x_shape` and the layouts.
Packed Pack(int64_t c, int64_t m, const std::vector<int64_t>& x_shape, ActivationLayout src,
            ActivationLayout dst, std::mt19937& rng) {
  Packed p;
  p.w = RandomFloats({m, c, 3, 3}, rng, -0.3f, 0.3f);
  p.b = RandomFloats({m}, rng, -0.3f, 0.3f);
  kernels::WindowAttrs window;
  window.pads = {1, 1, 1, 1};
  auto g = onednn::ResolveConvGeometry(window, 1, std::vector<int64_t>{m, c, 3, 3}, x_shape);
  EXPECT_TRUE(g.ok()) << g.status().ToString();
  onednn::ConvConfig config;
  config.src_layout = src;
  config.dst_layout = dst;
  config.has_bias = true;
  auto packed = onednn::PackConvWeights(*g, config, p.w.data_as<float>());
  EXPECT_TRUE(packed.ok()) << packed.status().ToString();
  if (packed.ok()) p.packed = std::move(*packed);
  return p;
}

void ConvAttrs(AttrBuilder& a, const Packed& p, int64_t c, int64_t m, ActivationLayout src,
               ActivationLayout dst) {
  a.Ints("kernel_shape", {3, 3})
      .Ints("pads", {1, 1, 1, 1})
      .Ints("weights_shape", {m, c, 3, 3})
      .Ints("weights_format", p.packed.format)
      .Int("src_layout", static_cast<int64_t>(src))
      .Int("dst_layout", static_cast<int64_t>(dst));
}

Tensor ReferenceConv(const Tensor& x, const Packed& p) {
  AttrBuilder a;
  a.Ints("pads", {1, 1, 1, 1});
  auto out = RunNode(NodeSpec("Conv", 17), a, {&x, &p.w, &p.b});
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  return out.ok() ? (*out)[0] : Tensor();
}

TEST(DnnlKernelReuse, BlockedOutputsAreWrittenEverywhere) {
  std::mt19937 rng(1);
  const std::vector<int64_t> shape{2, 8, 5, 6};
  Tensor x = RandomFloats(shape, rng);

  // Reorder to 24-channel blocked (8 padding lanes per position).
  Tensor x24 = RandomFloats({2, 24, 5, 6}, rng);
  Node reorder("Reorder", {&x24});
  reorder.attrs.Int("to_layout", 1).Int("from_layout", 0).Int("channels", 24);
  auto reorder_kernel = reorder.Create();
  ASSERT_NE(reorder_kernel, nullptr);
  Tensor blocked = RunPoisoned(*reorder_kernel, {&x24});
  EXPECT_EQ(NanCount(blocked), 0) << "Reorder left lanes unwritten";

  // DnnlConv writing 24 blocked channels, then one reading them.
  Packed first = Pack(8, 24, shape, ActivationLayout::kPlain, ActivationLayout::kBlocked16, rng);
  Node conv1("DnnlConv", {&x, &first.packed.bytes, &first.b});
  ConvAttrs(conv1.attrs, first, 8, 24, ActivationLayout::kPlain, ActivationLayout::kBlocked16);
  auto k1 = conv1.Create();
  ASSERT_NE(k1, nullptr);
  Tensor y = RunPoisoned(*k1, {&x, &first.packed.bytes, &first.b});
  EXPECT_EQ(NanCount(y), 0) << "DnnlConv left padding lanes unwritten";

  Packed second =
      Pack(24, 16, {2, 24, 5, 6}, ActivationLayout::kBlocked16, ActivationLayout::kPlain, rng);
  Node conv2("DnnlConv", {&y, &second.packed.bytes, &second.b});
  ConvAttrs(conv2.attrs, second, 24, 16, ActivationLayout::kBlocked16, ActivationLayout::kPlain);
  auto k2 = conv2.Create();
  ASSERT_NE(k2, nullptr);
  Tensor z = RunPoisoned(*k2, {&y, &second.packed.bytes, &second.b});
  EXPECT_EQ(NanCount(z), 0);
  ExpectNear(z, ReferenceConv(ReferenceConv(x, first), second), "conv -> conv");

  // DnnlPool on the blocked tensor.
  Node pool("DnnlPool", {&y});
  pool.attrs.String("pool", "avg")
      .Int("layout", 1)
      .Int("channels", 24)
      .Ints("kernel_shape", {2, 2})
      .Ints("strides", {2, 2})
      .Int("ceil_mode", 1);
  auto kp = pool.Create();
  ASSERT_NE(kp, nullptr);
  Tensor pooled = RunPoisoned(*kp, {&y});
  EXPECT_EQ(pooled.shape(), (std::vector<int64_t>{2, 2, 3, 3, 16}));
  EXPECT_EQ(NanCount(pooled), 0) << "DnnlPool left lanes unwritten";
}

TEST(DnnlKernelReuse, ReorderMakesItsPrimitiveInPrepare) {
  std::mt19937 rng(3);
  // A shape no other test reorders, so that the process-wide cache has no primitive for it.
  const std::vector<int64_t> shape{1, 21, 3, 13};
  Tensor x = RandomFloats(shape, rng);
  Node reorder("Reorder", {&x});
  reorder.attrs.Int("to_layout", 1).Int("from_layout", 0).Int("channels", 21);
  auto kernel = reorder.Create();
  ASSERT_NE(kernel, nullptr);

  const size_t before = onednn::CachedPrimitiveCount();
  const std::vector<int64_t>* unknown = nullptr;
  kernel->Prepare(std::span(&unknown, 1), 2);
  EXPECT_EQ(onednn::CachedPrimitiveCount(), before) << "nothing to make without a shape";
  const std::vector<int64_t>* known = &shape;
  kernel->Prepare(std::span(&known, 1), 2);
  EXPECT_EQ(onednn::CachedPrimitiveCount(), before + 1);

  Tensor blocked = RunPoisoned(*kernel, {&x}, 2);
  EXPECT_EQ(onednn::CachedPrimitiveCount(), before + 1) << "the run made another primitive";
  ASSERT_EQ(blocked.shape(), (std::vector<int64_t>{1, 2, 3, 13, 16}));
  // nChw16c: channel c of pixel (h, w) at [c / 16][h][w][c % 16]; the padding lanes are zero.
  const std::vector<float> in = FloatsOf(x), out = FloatsOf(blocked);
  int wrong = 0;
  for (int64_t c = 0; c < 32; ++c) {
    for (int64_t hw = 0; hw < 3 * 13; ++hw) {
      const float got = out[static_cast<size_t>(((c / 16) * 39 + hw) * 16 + c % 16)];
      const float want = c < 21 ? in[static_cast<size_t>(c * 39 + hw)] : 0.0f;
      wrong += got != want ? 1 : 0;
    }
  }
  EXPECT_EQ(wrong, 0);
}

// A one-row product with its shape known takes our own pass over the packed weight
// (blocked_gemv.h), so preparing it makes no primitive (oneDNN's one-row matmul took 6.5 ms to
// make for ResNet-50's classifier); more rows do make one.
TEST(DnnlKernelReuse, OneRowMatMulMakesNoPrimitiveInPrepare) {
  std::mt19937 rng(4);
  // Dims no other test multiplies, so that the process-wide cache has no primitive for them.
  const int64_t k = 517, n = 2100;
  onednn::MatMulConfig config;
  config.has_bias = true;
  Tensor w = RandomFloats({k, n}, rng), b = RandomFloats({n}, rng);
  auto packed = onednn::PackMatMulWeights({1, k, n}, config, w.data_as<float>(), false, 1.f);
  ASSERT_TRUE(packed.ok()) << packed.status().ToString();
  if (onednn::GemvLayoutOf(packed->format, k, n) == onednn::GemvLayout::kNone) {
    GTEST_SKIP() << "this build reads no such layout itself";
  }
  Tensor one_row = RandomFloats({1, k}, rng);
  Node matmul("DnnlMatMul", {&one_row, &packed->bytes, &b});
  matmul.attrs.Ints("weights_shape", {k, n}).Ints("weights_format", packed->format);
  auto kernel = matmul.Create();
  ASSERT_NE(kernel, nullptr);

  const size_t before = onednn::CachedPrimitiveCount();
  const std::vector<int64_t> one_shape{1, k}, rows_shape{8, k};
  const std::vector<int64_t>* one = &one_shape;
  kernel->Prepare(std::span(&one, 1), 2);
  EXPECT_EQ(onednn::CachedPrimitiveCount(), before) << "a primitive for one row";
  Tensor y = RunPoisoned(*kernel, {&one_row, &packed->bytes, &b}, 2);
  EXPECT_EQ(onednn::CachedPrimitiveCount(), before) << "the one-row run made a primitive";
  EXPECT_EQ(kernel->implementation(), "epctx:one-row");
  EXPECT_EQ(NanCount(y), 0);
  const std::vector<int64_t>* rows = &rows_shape;
  kernel->Prepare(std::span(&rows, 1), 2);
  EXPECT_EQ(onednn::CachedPrimitiveCount(), before + 1) << "no primitive for 8 rows";
}

// One kernel object, four threads, two input shapes taking turns on every thread.
TEST(DnnlKernelReuse, OneConvKernelRunFromFourThreads) {
  std::mt19937 rng(2);
  Packed p = Pack(16, 24, {1, 16, 32, 32}, ActivationLayout::kPlain, ActivationLayout::kPlain, rng);
  const std::vector<Tensor> inputs{RandomFloats({1, 16, 9, 11}, rng),
                                   RandomFloats({3, 16, 6, 5}, rng)};
  Node conv("DnnlConv", {&inputs[0], &p.packed.bytes, &p.b});
  ConvAttrs(conv.attrs, p, 16, 24, ActivationLayout::kPlain, ActivationLayout::kPlain);
  auto kernel = conv.Create();
  ASSERT_NE(kernel, nullptr);
  // want[shape][threads - 1], from runs one at a time.
  std::vector<std::vector<std::vector<float>>> want(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    for (int threads : {1, 2}) {
      Tensor out = RunPoisoned(*kernel, {&inputs[i], &p.packed.bytes, &p.b}, threads);
      ExpectNear(out, ReferenceConv(inputs[i], p), "one run at a time");
      want[i].push_back(FloatsOf(out));
    }
  }

  constexpr int kThreads = 4, kRuns = 25;
  std::vector<int> mismatches(kThreads, 0), errors(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kRuns; ++i) {
        const size_t which = static_cast<size_t>((t + i) % 2);
        PoisonedContext ctx({&inputs[which], &p.packed.bytes, &p.b}, 1 + (t % 2));
        if (!kernel->Run(ctx).ok()) {
          ++errors[static_cast<size_t>(t)];
          continue;
        }
        // Bit for bit: the same primitive per (shape, threads) computes the same sums.
        if (FloatsOf(ctx.output()) != want[which][static_cast<size_t>(ctx.num_threads() - 1)]) {
          ++mismatches[static_cast<size_t>(t)];
        }
      }
    });
  }
  for (std::thread& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(errors[static_cast<size_t>(t)], 0) << "thread " << t;
    EXPECT_EQ(mismatches[static_cast<size_t>(t)], 0) << "thread " << t;
  }
}

}  // namespace
}  // namespace epctx::exec::testing
