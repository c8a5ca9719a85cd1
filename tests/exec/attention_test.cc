// The attention/ family: com.microsoft GroupQueryAttention and RotaryEmbedding. Their outputs are
// checked against ONNX Runtime by tests/genai (CTest GenAI.AttentionMatchesOnnxRuntime); here,
// against a double-precision reference written from the same semantics, go the cases that suite
// does not reach: several threads (a decode step's cache blocks, copied and attended to in
// parallel, then merged; prompt rows in blocks), every query-group size, head sinks through the
// merge, the present that is the past's own buffer (written in place), and the errors, with
// their messages.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include <fmt/format.h>

#include "exec/kernels/attention/rotary_f32.h"
#include "kernel_test_helpers.h"
#include "util/status_macros.h"

namespace epctx::exec::testing {
namespace {

// cos and sin of position * 10000^(-i / width), [rows, width].
void RopeCaches(int64_t rows, int64_t width, Tensor* cos, Tensor* sin) {
  std::vector<float> c(static_cast<size_t>(rows * width)), s(c.size());
  for (int64_t p = 0; p < rows; ++p) {
    for (int64_t i = 0; i < width; ++i) {
      const double a = static_cast<double>(p) * std::pow(10000.0, -static_cast<double>(i) / width);
      c[p * width + i] = static_cast<float>(std::cos(a));
      s[p * width + i] = static_cast<float>(std::sin(a));
    }
  }
  *cos = FloatTensor({rows, width}, c);
  *sin = FloatTensor({rows, width}, s);
}

void RotateReference(std::vector<double>& x, const float* c, const float* s, int64_t rotary,
                     bool interleaved) {
  const int64_t half = rotary / 2;
  std::vector<double> y = x;
  for (int64_t i = 0; i < half; ++i) {
    const int64_t a = interleaved ? 2 * i : i;
    const int64_t b = interleaved ? 2 * i + 1 : i + half;
    y[a] = x[a] * c[i] - x[b] * s[i];
    y[b] = x[b] * c[i] + x[a] * s[i];
  }
  x = y;
}

// One GroupQueryAttention problem and its inputs (not packed).
struct Gqa {
  int64_t batch = 1, seq = 1, heads = 9, kv_heads = 3, head = 64, past = 0;
  bool with_past = true;
  std::vector<int32_t> seqlens;
  int32_t total = 1;
  bool rotary = false, interleaved = false;
  int64_t window = -1;
  float softcap = 0.0f;
  bool sink = false, smooth = false;
  int threads = 1;

  Tensor q, k, v, past_k, past_v, cos, sin, head_sink, seqlens_t, total_t;

  void Make(std::mt19937& rng) {
    q = RandomFloats({batch, seq, heads * head}, rng);
    k = RandomFloats({batch, seq, kv_heads * head}, rng);
    v = RandomFloats({batch, seq, kv_heads * head}, rng);
    past_k = RandomFloats({batch, kv_heads, past, head}, rng);
    past_v = RandomFloats({batch, kv_heads, past, head}, rng);
    RopeCaches(std::max<int64_t>(total, past) + 8, head / 2, &cos, &sin);
    head_sink = RandomFloats({heads}, rng, -2, 2);
    seqlens_t = Int32Tensor({batch}, seqlens);
    total_t = Int32Tensor({}, {total});
  }

  AttrBuilder Attrs() const {
    AttrBuilder a;
    a.Int("num_heads", heads).Int("kv_num_heads", kv_heads);
    if (rotary) a.Int("do_rotary", 1).Int("rotary_interleaved", interleaved ? 1 : 0);
    if (window > 0) a.Int("local_window_size", window);
    if (softcap > 0) a.Float("softcap", softcap);
    if (smooth) a.Int("smooth_softmax", 1);
    return a;
  }

  std::vector<const Tensor*> Inputs() const {
    std::vector<const Tensor*> in = {&q,
                                     &k,
                                     &v,
                                     with_past ? &past_k : nullptr,
                                     with_past ? &past_v : nullptr,
                                     &seqlens_t,
                                     &total_t,
                                     rotary ? &cos : nullptr,
                                     rotary ? &sin : nullptr,
                                     nullptr,
                                     nullptr,
                                     sink ? &head_sink : nullptr};
    while (in.back() == nullptr) in.pop_back();
    return in;
  }

  Result<std::vector<Tensor>> Run() const {
    NodeSpec spec("GroupQueryAttention", 1, kMs);
    spec.outputs = 3;
    spec.threads = threads;
    return RunNode(spec, Attrs(), Inputs());
  }

  // The output, from ONNX Runtime's semantics (those tests/genai checks against it).
  std::vector<double> Reference() const {
    const int64_t cache = std::max<int64_t>(total, past);
    const bool first = seq == total;
    const int64_t group = heads / kv_heads;
    const float* qp = q.data_as<float>();
    const float* kp = k.data_as<float>();
    const float* vp = v.data_as<float>();
    const float* cp = cos.data_as<float>();
    const float* sp = sin.data_as<float>();
    const int64_t half = head / 2;
    std::vector<double> out(static_cast<size_t>(batch * seq * heads * head), 0.0);
    for (int64_t b = 0; b < batch; ++b) {
      const int64_t tb = int64_t{seqlens[b]} + 1;
      const int64_t before = first || !with_past ? 0 : tb - seq;
      auto position = [&](int64_t s) { return first ? s : tb - seq + s; };
      // This entry's keys and values, past rows first.
      std::vector<std::vector<double>> keys(static_cast<size_t>(kv_heads * cache)),
          values(keys.size());
      for (int64_t h = 0; h < kv_heads; ++h) {
        for (int64_t t = 0; t < cache; ++t) {
          std::vector<double> kr(head, 0.0), vr(head, 0.0);
          if (t < before) {
            const int64_t o = ((b * kv_heads + h) * past + t) * head;
            for (int64_t i = 0; i < head; ++i) {
              kr[i] = past_k.data_as<float>()[o + i];
              vr[i] = past_v.data_as<float>()[o + i];
            }
          } else if (t < before + seq) {
            const int64_t s = t - before;
            const int64_t o = ((b * seq + s) * kv_heads + h) * head;
            for (int64_t i = 0; i < head; ++i) {
              kr[i] = kp[o + i];
              vr[i] = vp[o + i];
            }
            if (rotary) {
              const int64_t p = position(s);
              RotateReference(kr, cp + p * half, sp + p * half, head, interleaved);
            }
          }
          keys[h * cache + t] = kr;
          values[h * cache + t] = vr;
        }
      }
      for (int64_t s = 0; s < seq; ++s) {
        const int64_t limit = (first || !with_past ? 0 : tb - seq) + s + 1;
        const int64_t hi = std::min(limit, tb);
        const bool from_position = total > 1 && softcap == 0 && !smooth && !sink;
        const int64_t lo =
            window > 0 ? std::max<int64_t>(0, (from_position ? limit : hi) - window) : 0;
        for (int64_t n = 0; n < heads; ++n) {
          const int64_t o = ((b * seq + s) * heads + n) * head;
          std::vector<double> qr(qp + o, qp + o + head);
          if (rotary)
            RotateReference(qr, cp + position(s) * half, sp + position(s) * half, head,
                            interleaved);
          if (lo >= hi) continue;
          const int64_t kvh = n / group;
          std::vector<double> w;
          for (int64_t t = lo; t < hi; ++t) {
            double dot = 0;
            for (int64_t i = 0; i < head; ++i) dot += qr[i] * keys[kvh * cache + t][i];
            dot /= std::sqrt(static_cast<double>(head));
            if (softcap > 0) dot = softcap * std::tanh(dot / softcap);
            w.push_back(dot);
          }
          double top = *std::max_element(w.begin(), w.end());
          const double sink_score = sink ? head_sink.data_as<float>()[n] : 0.0;
          if (sink || smooth) top = std::max(top, sink_score);
          double sum = sink || smooth ? std::exp(sink_score - top) : 0.0;
          for (double& x : w) sum += (x = std::exp(x - top));
          for (int64_t t = lo; t < hi; ++t) {
            for (int64_t i = 0; i < head; ++i) {
              out[o + i] += w[t - lo] / sum * values[kvh * cache + t][i];
            }
          }
        }
      }
    }
    return out;
  }
};

void ExpectMatches(const Gqa& g, const std::string& what) {
  auto r = g.Run();
  ASSERT_TRUE(r.ok()) << what << ": " << r.status().ToString();
  ExpectClose((*r)[0], {g.batch, g.seq, g.heads * g.head}, g.Reference(), 2e-5, 1e-4, what);
}

TEST(GroupQueryAttentionTest, DecodeBlocksOverThreadsAndMerges) {
  std::mt19937 rng(5);
  for (int threads : {1, 2, 3}) {
    for (bool sink : {false, true}) {
      Gqa g;
      g.past = 1000;  // 3 KV heads x 1001 rows x 64: enough to go parallel
      g.seqlens = {1000};
      g.total = 1001;
      g.rotary = true;
      g.sink = sink;
      g.threads = threads;
      g.Make(rng);
      ExpectMatches(g, fmt::format("threads {} sink {}", threads, sink));
    }
  }
}

TEST(GroupQueryAttentionTest, DecodeOfTwoEntriesWithWindowAndSmoothSoftmax) {
  std::mt19937 rng(6);
  Gqa g;
  g.batch = 2;
  g.past = 400;
  g.seqlens = {400, 90};
  g.total = 401;
  g.window = 64;
  g.smooth = true;
  g.softcap = 1.5f;
  g.threads = 2;
  g.Make(rng);
  ExpectMatches(g, "batch 2");
}

TEST(GroupQueryAttentionTest, PromptRowsInBlocksForEveryGroupSize) {
  std::mt19937 rng(7);
  // Groups of 1 (rows taken three at a time), 2, 4 (two sets of 2), 5 (3 + 2) and 9 heads.
  const int64_t shapes[][2] = {{4, 4}, {4, 2}, {8, 2}, {5, 1}, {9, 1}};
  for (const auto& hk : shapes) {
    for (int threads : {1, 2}) {
      Gqa g;
      g.heads = hk[0];
      g.kv_heads = hk[1];
      g.head = 32;
      g.seq = 64;  // enough multiply-adds to go parallel
      g.with_past = false;
      g.seqlens = {63};
      g.total = 64;
      g.rotary = true;
      g.interleaved = true;
      g.window = 11;
      g.threads = threads;
      g.Make(rng);
      ExpectMatches(g, fmt::format("{} heads over {}, threads {}", hk[0], hk[1], threads));
    }
  }
}

TEST(GroupQueryAttentionTest, ContinuedPromptAfterPast) {
  std::mt19937 rng(8);
  Gqa g;
  g.seq = 5;
  g.past = 40;
  g.seqlens = {44};
  g.total = 45;
  g.rotary = true;
  g.threads = 2;
  g.Make(rng);
  ExpectMatches(g, "continued prompt");
}

// A KernelContext whose present_key and present_value are the past's own buffers, as a caller
// binding past and present to one buffer of max_sequence_length rows makes them.
class SharedCacheContext final : public KernelContext {
 public:
  SharedCacheContext(std::vector<const Tensor*> inputs, Tensor* past_k, Tensor* past_v)
      : inputs_(std::move(inputs)), past_k_(past_k), past_v_(past_v) {}
  size_t input_count() const override { return inputs_.size(); }
  const Tensor* input(size_t i) const override { return i < inputs_.size() ? inputs_[i] : nullptr; }
  size_t output_count() const override { return 3; }
  Result<Tensor*> AllocateOutput(size_t index, DataType type, std::vector<int64_t> shape) override {
    if (index == 0) {
      EPCTX_ASSIGN_OR_RETURN(output_, Tensor::Allocate(type, std::move(shape)));
      return &output_;
    }
    Tensor* past = index == 1 ? past_k_ : past_v_;
    EXPECT_EQ(shape, past->shape());
    views_[index - 1] = Tensor::View(type, shape, past->mutable_data_as<float>(), nullptr);
    return &views_[index - 1];
  }
  Status SetOutput(size_t, Tensor) override { return EPCTX_ERROR(kInternal, "not used"); }
  int num_threads() const override { return 2; }
  Tensor output_;

 private:
  std::vector<const Tensor*> inputs_;
  Tensor* past_k_;
  Tensor* past_v_;
  Tensor views_[2];
};

TEST(GroupQueryAttentionTest, PresentThatIsThePastIsAppendedInPlace) {
  // ONNX Runtime 1.30 (onnxruntime-node, the presents bound to the pasts' tensors) leaves every
  // row but the new one as it was, and gives the output of the unshared run.
  std::mt19937 rng(9);
  Gqa g;
  g.past = 64;  // max_sequence_length
  g.seqlens = {20};
  g.total = 21;
  g.rotary = true;
  g.Make(rng);
  auto separate = g.Run();
  ASSERT_TRUE(separate.ok()) << separate.status().ToString();

  Result<Tensor> ck = g.past_k.Clone(), cv = g.past_v.Clone();
  ASSERT_TRUE(ck.ok() && cv.ok());
  Tensor shared_k = std::move(ck).value(), shared_v = std::move(cv).value();
  const std::vector<float> before_k = FloatsOf(shared_k), before_v = FloatsOf(shared_v);
  NodeInfo node;
  node.name = "n";
  node.op_type = "GroupQueryAttention";
  node.domain = kMs;
  node.opset = 1;
  AttrBuilder attrs = g.Attrs();
  node.attrs = &attrs.attrs();
  std::vector<const Tensor*> inputs = g.Inputs();
  inputs[3] = &shared_k;
  inputs[4] = &shared_v;
  node.inputs.resize(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) node.inputs[i].present = inputs[i] != nullptr;
  node.outputs.resize(3);
  auto kernel = KernelRegistry::Global().Create(node);
  ASSERT_TRUE(kernel.ok()) << kernel.status().ToString();
  SharedCacheContext ctx(inputs, &shared_k, &shared_v);
  Status s = (*kernel)->Run(ctx);
  ASSERT_TRUE(s.ok()) << s.ToString();

  EXPECT_EQ(FloatsOf(ctx.output_), FloatsOf((*separate)[0]));
  const int64_t h = g.head;
  const std::vector<float> after_k = FloatsOf(shared_k), after_v = FloatsOf(shared_v);
  const std::vector<float> sep_k = FloatsOf((*separate)[1]), sep_v = FloatsOf((*separate)[2]);
  int64_t new_rows = 0, unchanged = 0;
  for (int64_t kvh = 0; kvh < g.kv_heads; ++kvh) {
    for (int64_t t = 0; t < g.past; ++t) {
      const size_t o = static_cast<size_t>((kvh * g.past + t) * h);
      const bool is_new = t == 20;
      const auto& want_k = is_new ? sep_k : before_k;
      const auto& want_v = is_new ? sep_v : before_v;
      EXPECT_TRUE(std::equal(after_k.begin() + o, after_k.begin() + o + h, want_k.begin() + o))
          << "key row " << t << " of KV head " << kvh;
      EXPECT_TRUE(std::equal(after_v.begin() + o, after_v.begin() + o + h, want_v.begin() + o))
          << "value row " << t << " of KV head " << kvh;
      ++(is_new ? new_rows : unchanged);
    }
  }
  EXPECT_EQ(new_rows, 3);
  EXPECT_EQ(unchanged, 3 * 63);
  // The separate present keeps the past buffer's 64 rows: zeros after the 21 in use.
  for (int64_t t = 21; t < 64; ++t) EXPECT_EQ(sep_k[static_cast<size_t>(t * h)], 0.0f);
}

Status RunGqa(const AttrBuilder& attrs, const std::vector<const Tensor*>& inputs,
              size_t outputs = 3) {
  NodeSpec spec("GroupQueryAttention", 1, kMs);
  spec.outputs = outputs;
  return RunNode(spec, attrs, inputs).status();
}

TEST(GroupQueryAttentionTest, RefusesWhatItDoesNotImplementAtCreation) {
  std::mt19937 rng(10);
  Gqa g;
  g.heads = 4;
  g.kv_heads = 2;
  g.head = 16;
  g.seqlens = {0};
  g.Make(rng);
  auto with = [&](auto&& add) {
    AttrBuilder a = g.Attrs();
    add(a);
    return RunGqa(a, g.Inputs());
  };
  ExpectError(with([](AttrBuilder& a) { a.Int("sliding_window_cache", 1); }),
              StatusCode::kUnsupported,
              "sliding_window_cache=1 (a window-sized KV cache) is not supported");
  ExpectError(with([](AttrBuilder& a) { a.String("k_quant_type", "PER_TENSOR"); }),
              StatusCode::kUnsupported,
              "k_quant_type=PER_TENSOR (a quantized KV cache) is not supported");
  ExpectError(with([](AttrBuilder& a) { a.Int("kv_cache_bit_width", 8); }),
              StatusCode::kUnsupported,
              "kv_cache_bit_width=8 (a quantized KV cache) is not supported");
  ExpectError(with([](AttrBuilder& a) { a.Int("qk_output", 1); }), StatusCode::kUnsupported,
              "qk_output=1 (output 3, output_qk) is not supported");
  ExpectError(with([](AttrBuilder& a) { a.Int("local_window_size", 0); }),
              StatusCode::kInvalidArgument, "local_window_size 0 is neither -1 nor positive");
  ExpectError(with([](AttrBuilder& a) { a.Int("causal", 0).Int("local_window_size", 4); }),
              StatusCode::kInvalidArgument, "local_window_size must be -1 when causal is 0");
  ExpectError(with([](AttrBuilder& a) { a.Int("causal", 2); }), StatusCode::kInvalidArgument,
              "causal is 2, expected 0 or 1");

  AttrBuilder bad_heads;
  bad_heads.Int("num_heads", 5).Int("kv_num_heads", 2);
  ExpectError(RunGqa(bad_heads, g.Inputs()), StatusCode::kInvalidArgument,
              "num_heads (5) must be a positive multiple of kv_num_heads (2)");

  std::vector<const Tensor*> norm = g.Inputs();
  norm.resize(15, nullptr);
  norm[14] = &g.head_sink;
  ExpectError(RunGqa(g.Attrs(), norm), StatusCode::kUnsupported,
              "input 14 (q_norm_weight) is not supported");

  const std::vector<uint16_t> halves(static_cast<size_t>(g.q.element_count()), 0);
  Tensor q16 = MakeTensor(DataType::kFloat16, g.q.shape(), halves.data());
  std::vector<const Tensor*> half_inputs = g.Inputs();
  half_inputs[0] = &q16;
  ExpectError(
      RunGqa(g.Attrs(), half_inputs), StatusCode::kUnsupported,
      "input 0 has type float16, which GroupQueryAttention does not run on (it takes float32)");
  ExpectError(RunGqa(g.Attrs(), g.Inputs(), 1), StatusCode::kInvalidArgument,
              "outputs present_key and present_value are required");
}

TEST(GroupQueryAttentionTest, RefusesInputsThatDoNotFit) {
  std::mt19937 rng(11);
  Gqa g;
  g.heads = 4;
  g.kv_heads = 2;
  g.head = 16;
  g.past = 8;
  g.seqlens = {8};
  g.total = 9;
  g.rotary = true;
  g.Make(rng);
  ASSERT_TRUE(RunGqa(g.Attrs(), g.Inputs()).ok());
  auto with = [&](int index, const Tensor& t) {
    std::vector<const Tensor*> in = g.Inputs();
    in[static_cast<size_t>(index)] = &t;
    return RunGqa(g.Attrs(), in);
  };
  ExpectError(with(5, Int32Tensor({1}, {9})), StatusCode::kInvalidArgument,
              "seqlens_k[0] = 9 is outside [0, 9)");
  {
    Tensor seqlens = Int32Tensor({1}, {15}), total = Int32Tensor({}, {16});
    std::vector<const Tensor*> in = g.Inputs();
    in[5] = &seqlens;
    in[6] = &total;
    ExpectError(RunGqa(g.Attrs(), in), StatusCode::kInvalidArgument,
                "seqlens_k[0] = 15 needs 15 past rows, more than past_key's 8");
  }
  Tensor wide = RandomFloats({1, 1, 2 * 24}, rng);
  ExpectError(with(1, wide), StatusCode::kInvalidArgument,
              "key [1,1,48] and value [1,1,32] must have shape [1,1,32]");
  Tensor small_cos = RandomFloats({4, 8}, rng);
  std::vector<const Tensor*> in = g.Inputs();
  in[7] = &small_cos;
  in[8] = &small_cos;
  ExpectError(RunGqa(g.Attrs(), in), StatusCode::kInvalidArgument,
              "cos_cache and sin_cache have 4 and 4 positions, fewer than total_sequence_length 9");
  in = g.Inputs();
  in[7] = in[8] = nullptr;
  ExpectError(RunGqa(g.Attrs(), in), StatusCode::kInvalidArgument,
              "do_rotary is 1 but cos_cache and sin_cache are omitted");
  Tensor far = Int64Tensor({1, 1}, {1000});
  in = g.Inputs();
  in.resize(10, nullptr);
  in[9] = &far;
  ExpectError(RunGqa(g.Attrs(), in), StatusCode::kInvalidArgument,
              "position 1000 of entry 0, row 0 is outside the rotary caches' positions [0, 17)");
  Tensor sink = RandomFloats({4}, rng);
  AttrBuilder smooth = g.Attrs();
  smooth.Int("smooth_softmax", 1);
  in = g.Inputs();
  in.resize(12, nullptr);
  in[11] = &sink;
  ExpectError(RunGqa(smooth, in), StatusCode::kInvalidArgument,
              "head_sink is given with smooth_softmax 1");

  // A continued prompt of 3 after a past, in a batch of 2.
  Gqa two;
  two.batch = 2;
  two.seq = 3;
  two.heads = two.kv_heads = 2;
  two.head = 8;
  two.past = 5;
  two.seqlens = {7, 7};
  two.total = 8;
  two.Make(rng);
  ExpectError(RunGqa(two.Attrs(), two.Inputs()), StatusCode::kInvalidArgument,
              "a sequence of 3 after a past (5 of 8 in all) needs a batch of 1, not 2");
  two.batch = 1;
  two.seqlens = {1};
  two.Make(rng);
  ExpectError(RunGqa(two.Attrs(), two.Inputs()), StatusCode::kInvalidArgument,
              "seqlens_k[0] = 1 is too small for a sequence of 3 after a past");
}

TEST(RotaryRowTest, MatchesTheFormulaForEveryTailInPlaceOrNot) {
  std::mt19937 rng(12);
  for (bool interleaved : {false, true}) {
    for (int64_t rotary : {2, 10, 16, 24, 40}) {
      const int64_t head = rotary + 6;
      Tensor x = RandomFloats({head}, rng);
      Tensor c = RandomFloats({rotary / 2}, rng);
      Tensor s = RandomFloats({rotary / 2}, rng);
      const float* xp = x.data_as<float>();
      std::vector<double> ref(xp, xp + head);
      RotateReference(ref, c.data_as<float>(), s.data_as<float>(), rotary, interleaved);
      std::vector<float> y(static_cast<size_t>(head));
      kernels::RotaryRowF32(xp, c.data_as<float>(), s.data_as<float>(), rotary, head, interleaved,
                            y.data());
      std::vector<float> in_place(xp, xp + head);
      kernels::RotaryRowF32(in_place.data(), c.data_as<float>(), s.data_as<float>(), rotary, head,
                            interleaved, in_place.data());
      for (int64_t i = 0; i < head; ++i) {
        EXPECT_NEAR(y[i], ref[i], 1e-6) << rotary << " " << interleaved << " " << i;
        EXPECT_EQ(in_place[i], y[i]) << rotary << " " << interleaved << " " << i;
      }
    }
  }
}

Status RunRotary(const AttrBuilder& attrs, const std::vector<const Tensor*>& inputs) {
  return RunNode(NodeSpec("RotaryEmbedding", 1, kMs), attrs, inputs).status();
}

TEST(RotaryEmbeddingTest, RefusesInputsThatDoNotFit) {
  std::mt19937 rng(13);
  Tensor x = RandomFloats({1, 4, 64}, rng);
  Tensor cos, sin;
  RopeCaches(8, 16, &cos, &sin);
  Tensor pos = Int64Tensor({1, 4}, {0, 1, 2, 3});
  AttrBuilder partial;
  partial.Int("num_heads", 2).Int("rotary_embedding_dim", 32);
  ASSERT_TRUE(RunRotary(partial, {&x, &pos, &cos, &sin}).ok());
  AttrBuilder no_heads;
  no_heads.Int("rotary_embedding_dim", 32);
  ExpectError(RunRotary(no_heads, {&x, &pos, &cos, &sin}), StatusCode::kInvalidArgument,
              "rotary_embedding_dim (32) is given without num_heads");
  Tensor far = Int64Tensor({1, 4}, {0, 1, 8, 3});
  ExpectError(RunRotary(partial, {&x, &far, &cos, &sin}), StatusCode::kInvalidArgument,
              "position_ids[2] = 8 is outside the caches' positions [0, 8)");
  Tensor start = Int64Tensor({1}, {5});
  ExpectError(RunRotary(partial, {&x, &start, &cos, &sin}), StatusCode::kInvalidArgument,
              "position_ids starts at 5: a sequence of 4 from there leaves the caches' positions "
              "[0, 8)");
  Tensor wrong = Int64Tensor({4}, {0, 1, 2, 3});
  ExpectError(RunRotary(partial, {&x, &wrong, &cos, &sin}), StatusCode::kInvalidArgument,
              "position_ids has shape [4], expected [1, 4] or one element");
  Tensor long_x = RandomFloats({1, 9, 64}, rng);
  Tensor zero = Int64Tensor({}, {0});
  ExpectError(RunRotary(partial, {&long_x, &zero, &cos, &sin}), StatusCode::kUnsupported,
              "sequence length 9 is above the caches' 8 positions");
  AttrBuilder three;
  three.Int("num_heads", 3).Int("rotary_embedding_dim", 16);
  ExpectError(RunRotary(three, {&x, &pos, &cos, &sin}), StatusCode::kInvalidArgument,
              "hidden size 64 is not a multiple of head size 21");
}

}  // namespace
}  // namespace epctx::exec::testing
