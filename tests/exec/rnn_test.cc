// RNN, GRU and LSTM against a direct double-precision reference: both directions, sequence
// lengths, initial states, peepholes, clip, linear_before_reset, input_forget, layout 1 and
// non-default activations.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "kernel_test_helpers.h"

namespace epctx::exec::testing {
namespace {

enum class Cell { kRnn, kGru, kLstm };

int64_t GatesOf(Cell c) {
  return c == Cell::kRnn ? 1 : c == Cell::kGru ? 3 : 4;
}

double Act(const std::string& name, double x, double alpha = 0) {
  if (name == "Sigmoid") return 1 / (1 + std::exp(-x));
  if (name == "Tanh") return std::tanh(x);
  if (name == "Relu") return std::max(x, 0.0);
  if (name == "LeakyRelu") return x >= 0 ? x : alpha * x;
  ADD_FAILURE() << "no reference for " << name;
  return 0;
}

struct RnnCase {
  Cell cell = Cell::kLstm;
  int64_t seq = 3, batch = 2, input = 3, hidden = 4, dirs = 1;
  bool reverse = false, bias = true, lens = false, initial = false, peep = false;
  bool lbr = false, input_forget = false;
  float clip = 0;
  int64_t layout = 0;
  std::vector<std::string> acts;  // per direction; empty: the defaults
  float alpha = 0;                // for LeakyRelu
};

struct Results {
  std::vector<double> y, h, c;  // layout 0
};

Results Reference(const RnnCase& k, const std::vector<float>& x, const std::vector<float>& w,
                  const std::vector<float>& r, const std::vector<float>& b,
                  const std::vector<int64_t>& lens, const std::vector<float>& h0,
                  const std::vector<float>& c0, const std::vector<float>& p) {
  const int64_t H = k.hidden, B = k.batch, I = k.input, G = GatesOf(k.cell);
  Results out;
  out.y.assign(static_cast<size_t>(k.seq * k.dirs * B * H), 0.0);
  out.h.assign(static_cast<size_t>(k.dirs * B * H), 0.0);
  out.c = out.h;
  auto clip = [&](double v) {
    return k.clip > 0 ? std::clamp(v, -double{k.clip}, double{k.clip}) : v;
  };
  for (int64_t d = 0; d < k.dirs; ++d) {
    std::vector<std::string> acts =
        k.acts.empty()
            ? (k.cell == Cell::kRnn   ? std::vector<std::string>{"Tanh"}
               : k.cell == Cell::kGru ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                      : std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"})
            : k.acts;
    const bool rev = k.reverse || d == 1;
    const float* wd = w.data() + d * G * H * I;
    const float* rd = r.data() + d * G * H * H;
    auto wb = [&](int64_t g, int64_t j) {
      return b.empty() ? 0.0 : double{b[(d * 2 * G + g) * H + j]};
    };
    auto rb = [&](int64_t g, int64_t j) {
      return b.empty() ? 0.0 : double{b[(d * 2 * G + G + g) * H + j]};
    };
    for (int64_t bi = 0; bi < B; ++bi) {
      std::vector<double> h(H), c(H);
      for (int64_t j = 0; j < H; ++j) {
        h[j] = h0.empty() ? 0 : h0[(d * B + bi) * H + j];
        c[j] = c0.empty() ? 0 : c0[(d * B + bi) * H + j];
      }
      const int64_t len = lens.empty() ? k.seq : lens[bi];
      for (int64_t s = 0; s < len; ++s) {
        const int64_t t = rev ? len - 1 - s : s;
        const float* xt = x.data() + (t * B + bi) * I;
        // xw[g][j] = x W_g^T, hr[g][j] = h R_g^T
        auto xw = [&](int64_t g, int64_t j) {
          double a = 0;
          for (int64_t i = 0; i < I; ++i) a += double{xt[i]} * wd[(g * H + j) * I + i];
          return a;
        };
        auto hr = [&](int64_t g, int64_t j, const std::vector<double>& hv) {
          double a = 0;
          for (int64_t i = 0; i < H; ++i) a += hv[i] * rd[(g * H + j) * H + i];
          return a;
        };
        std::vector<double> nh(H), nc(H);
        if (k.cell == Cell::kRnn) {
          for (int64_t j = 0; j < H; ++j) {
            nh[j] = Act(acts[0], clip(xw(0, j) + hr(0, j, h) + wb(0, j) + rb(0, j)), k.alpha);
          }
        } else if (k.cell == Cell::kGru) {
          std::vector<double> z(H), rr(H), rh(H);
          for (int64_t j = 0; j < H; ++j) {
            z[j] = Act(acts[0], clip(xw(0, j) + hr(0, j, h) + wb(0, j) + rb(0, j)));
            rr[j] = Act(acts[0], clip(xw(1, j) + hr(1, j, h) + wb(1, j) + rb(1, j)));
          }
          for (int64_t j = 0; j < H; ++j) rh[j] = rr[j] * h[j];
          for (int64_t j = 0; j < H; ++j) {
            const double pre = k.lbr ? xw(2, j) + rr[j] * (hr(2, j, h) + rb(2, j)) + wb(2, j)
                                     : xw(2, j) + hr(2, j, rh) + rb(2, j) + wb(2, j);
            const double cand = Act(acts[1], clip(pre));
            nh[j] = (1 - z[j]) * cand + z[j] * h[j];
          }
        } else {
          auto peep = [&](int64_t g, int64_t j) {
            return p.empty() ? 0.0 : double{p[(d * 3 + g) * H + j]};
          };
          for (int64_t j = 0; j < H; ++j) {
            const double i = Act(
                acts[0], clip(xw(0, j) + hr(0, j, h) + wb(0, j) + rb(0, j) + peep(0, j) * c[j]));
            const double f = k.input_forget ? 1 - i
                                            : Act(acts[0], clip(xw(2, j) + hr(2, j, h) + wb(2, j) +
                                                                rb(2, j) + peep(2, j) * c[j]));
            const double cc = Act(acts[1], clip(xw(3, j) + hr(3, j, h) + wb(3, j) + rb(3, j)));
            nc[j] = f * c[j] + i * cc;
            const double o = Act(
                acts[0], clip(xw(1, j) + hr(1, j, h) + wb(1, j) + rb(1, j) + peep(1, j) * nc[j]));
            nh[j] = o * Act(acts[2], nc[j]);
          }
          c = nc;
        }
        h = nh;
        for (int64_t j = 0; j < H; ++j) out.y[((t * k.dirs + d) * B + bi) * H + j] = h[j];
      }
      for (int64_t j = 0; j < H; ++j) {
        out.h[(d * B + bi) * H + j] = h[j];
        out.c[(d * B + bi) * H + j] = c[j];
      }
    }
  }
  return out;
}

// Runs the node with string list attribute `activations` when the case has one.
Result<std::vector<Tensor>> RunCell(const RnnCase& k, const AttrBuilder& base,
                                    const std::vector<const Tensor*>& inputs) {
  const char* op = k.cell == Cell::kRnn ? "RNN" : k.cell == Cell::kGru ? "GRU" : "LSTM";
  Attributes attrs = base.attrs();
  std::vector<std::string> names;
  for (int64_t d = 0; d < k.dirs; ++d) names.insert(names.end(), k.acts.begin(), k.acts.end());
  if (!k.acts.empty()) {
    AttributeValue v;
    v.name = "activations";
    v.type = AttrType::kStrings;
    for (const std::string& n : names) v.strings.push_back(n);
    attrs.Add(v);
  }
  NodeInfo node;
  node.name = "n";
  node.op_type = op;
  node.opset = 14;
  node.attrs = &attrs;
  for (const Tensor* t : inputs) {
    ValueDesc d;
    d.present = t != nullptr;
    if (t != nullptr) {
      d.dtype = t->dtype();
      d.shape_known = true;
      d.shape = t->shape();
    }
    node.inputs.push_back(d);
  }
  node.outputs.resize(k.cell == Cell::kLstm ? 3 : 2);
  return RunNodeOnce(node, inputs, 2);
}

void Check(const RnnCase& k, std::mt19937& rng) {
  const int64_t H = k.hidden, B = k.batch, G = GatesOf(k.cell);
  Tensor x0 = RandomFloats({k.seq, B, k.input}, rng);  // layout 0
  Tensor w = RandomFloats({k.dirs, G * H, k.input}, rng, -0.7f, 0.7f);
  Tensor r = RandomFloats({k.dirs, G * H, H}, rng, -0.7f, 0.7f);
  Tensor b = RandomFloats({k.dirs, 2 * G * H}, rng);
  std::vector<int64_t> lens;
  for (int64_t i = 0; i < B; ++i)
    lens.push_back(std::uniform_int_distribution<int64_t>(0, k.seq)(rng));
  lens[0] = k.seq;  // one full sequence, so that no reference is all zeros
  std::vector<int32_t> lens32(lens.begin(), lens.end());
  Tensor seq_lens = MakeTensor(DataType::kInt32, {B}, lens32.data());
  Tensor h0 = RandomFloats({k.dirs, B, H}, rng);
  Tensor c0 = RandomFloats({k.dirs, B, H}, rng);
  Tensor p = RandomFloats({k.dirs, 3 * H}, rng);
  // Layout 1 swaps the first two dims of X, Y and the states.
  auto to_layout1 = [](const std::vector<float>& v, int64_t d0, int64_t d1, int64_t inner) {
    std::vector<float> out(v.size());
    for (int64_t i = 0; i < d0; ++i) {
      for (int64_t j = 0; j < d1; ++j) {
        for (int64_t e = 0; e < inner; ++e)
          out[(j * d0 + i) * inner + e] = v[(i * d1 + j) * inner + e];
      }
    }
    return out;
  };
  Tensor x = k.layout == 0
                 ? x0
                 : FloatTensor({B, k.seq, k.input}, to_layout1(FloatsOf(x0), k.seq, B, k.input));
  Tensor h0l =
      k.layout == 0 ? h0 : FloatTensor({B, k.dirs, H}, to_layout1(FloatsOf(h0), k.dirs, B, H));
  Tensor c0l =
      k.layout == 0 ? c0 : FloatTensor({B, k.dirs, H}, to_layout1(FloatsOf(c0), k.dirs, B, H));
  AttrBuilder attrs;
  attrs.Int("hidden_size", H).Int("layout", k.layout);
  attrs.String("direction", k.dirs == 2 ? "bidirectional" : k.reverse ? "reverse" : "forward");
  if (k.clip > 0) attrs.Float("clip", k.clip);
  if (k.cell == Cell::kGru) attrs.Int("linear_before_reset", k.lbr);
  if (k.cell == Cell::kLstm) attrs.Int("input_forget", k.input_forget);
  if (k.alpha != 0) attrs.Floats("activation_alpha", {k.alpha, k.alpha});
  std::vector<const Tensor*> inputs{
      &x, &w, &r, k.bias ? &b : nullptr, k.lens ? &seq_lens : nullptr, k.initial ? &h0l : nullptr};
  if (k.cell == Cell::kLstm) {
    inputs.push_back(k.initial ? &c0l : nullptr);
    inputs.push_back(k.peep ? &p : nullptr);
  }
  auto result = RunCell(k, attrs, inputs);
  const std::string what =
      fmt::format("cell {} dirs {} rev {} lens {} init {} peep {} lbr {} if {} clip {} layout {}",
                  static_cast<int>(k.cell), k.dirs, k.reverse, k.lens, k.initial, k.peep, k.lbr,
                  k.input_forget, k.clip, k.layout);
  ASSERT_TRUE(result.ok()) << what << ": " << result.status().ToString();
  const Results ref = Reference(
      k, FloatsOf(x0), FloatsOf(w), FloatsOf(r), k.bias ? FloatsOf(b) : std::vector<float>{},
      k.lens ? lens : std::vector<int64_t>{}, k.initial ? FloatsOf(h0) : std::vector<float>{},
      k.initial ? FloatsOf(c0) : std::vector<float>{}, k.peep ? FloatsOf(p) : std::vector<float>{});
  // Layout 1 moves the batch dim first: Y [seq, dirs, batch, H] -> [batch, seq, dirs, H] and
  // the states [dirs, batch, H] -> [batch, dirs, H].
  auto y_in_layout = [&](const std::vector<double>& v) {
    if (k.layout == 0) return v;
    std::vector<double> out(v.size());
    for (int64_t t = 0; t < k.seq; ++t) {
      for (int64_t d = 0; d < k.dirs; ++d) {
        for (int64_t bi = 0; bi < B; ++bi) {
          for (int64_t e = 0; e < H; ++e) {
            out[((bi * k.seq + t) * k.dirs + d) * H + e] = v[((t * k.dirs + d) * B + bi) * H + e];
          }
        }
      }
    }
    return out;
  };
  auto state_in_layout = [&](const std::vector<double>& v) {
    if (k.layout == 0) return v;
    std::vector<double> out(v.size());
    for (int64_t d = 0; d < k.dirs; ++d) {
      for (int64_t bi = 0; bi < B; ++bi) {
        for (int64_t e = 0; e < H; ++e) out[(bi * k.dirs + d) * H + e] = v[(d * B + bi) * H + e];
      }
    }
    return out;
  };
  const std::vector<int64_t> y_shape = k.layout == 0 ? std::vector<int64_t>{k.seq, k.dirs, B, H}
                                                     : std::vector<int64_t>{B, k.seq, k.dirs, H};
  const std::vector<int64_t> s_shape =
      k.layout == 0 ? std::vector<int64_t>{k.dirs, B, H} : std::vector<int64_t>{B, k.dirs, H};
  ExpectClose((*result)[0], y_shape, y_in_layout(ref.y), 1e-5, 1e-4, what + " Y");
  ExpectClose((*result)[1], s_shape, state_in_layout(ref.h), 1e-5, 1e-4, what + " Y_h");
  if (k.cell == Cell::kLstm) {
    ExpectClose((*result)[2], s_shape, state_in_layout(ref.c), 1e-5, 1e-4, what + " Y_c");
  }
}

TEST(RecurrentTest, RandomConfigurations) {
  std::mt19937 rng(81);
  for (int i = 0; i < 60; ++i) {
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    RnnCase k;
    k.cell = static_cast<Cell>(pick(0, 2));
    k.seq = pick(1, 4);
    k.batch = pick(1, 3);
    k.input = pick(1, 4);
    k.hidden = pick(1, 5);
    k.dirs = pick(1, 2);
    k.reverse = k.dirs == 1 && pick(0, 1);
    k.bias = pick(0, 1);
    k.lens = pick(0, 1);
    k.initial = pick(0, 1);
    k.peep = pick(0, 1);
    k.lbr = pick(0, 1);
    k.input_forget = pick(0, 3) == 0;
    k.clip = pick(0, 3) == 0 ? 0.5f : 0.0f;
    k.layout = pick(0, 1);
    Check(k, rng);
  }
}

TEST(RecurrentTest, CustomActivations) {
  std::mt19937 rng(82);
  RnnCase rnn;
  rnn.cell = Cell::kRnn;
  rnn.dirs = 2;
  rnn.acts = {"LeakyRelu"};
  rnn.alpha = 0.1f;
  Check(rnn, rng);
  RnnCase gru;
  gru.cell = Cell::kGru;
  gru.acts = {"Sigmoid", "Relu"};
  Check(gru, rng);
}

TEST(RecurrentTest, Errors) {
  std::mt19937 rng(83);
  Tensor x = RandomFloats({2, 1, 3}, rng);
  Tensor w = RandomFloats({1, 8, 3}, rng);
  Tensor r = RandomFloats({1, 8, 2}, rng);
  AttrBuilder attrs;
  attrs.Int("hidden_size", 2);
  ExpectError(RunNode(NodeSpec("GRU", 14), attrs, {&x, &w, &r}).status(),
              StatusCode::kInvalidArgument, "input W has shape [1,8,3], expected [1,6,3]");
  AttrBuilder sideways;
  sideways.String("direction", "sideways");
  ExpectError(RunNode(NodeSpec("LSTM", 14), sideways, {&x, &w, &r}).status(),
              StatusCode::kInvalidArgument,
              "direction 'sideways' is not forward, reverse or bidirectional");
  const int32_t too_long = 3;
  Tensor lens = MakeTensor(DataType::kInt32, {1}, &too_long);
  ExpectError(RunNode(NodeSpec("LSTM", 14), attrs, {&x, &w, &r, nullptr, &lens}).status(),
              StatusCode::kInvalidArgument,
              "input sequence_lens holds 3, outside [0, 2] (the sequence length)");

  // Every input but sequence_lens must be float32, refused when the kernel is created: X by the
  // registry (the value its row declares), the others by the kernel.
  const std::vector<double> doubles(24, 0.5);
  Tensor x64 = MakeTensor(DataType::kFloat64, {2, 1, 3}, doubles.data());
  Tensor r64 = MakeTensor(DataType::kFloat64, {1, 8, 2}, doubles.data());
  for (const char* op : {"RNN", "GRU"}) {
    ExpectError(
        RunNode(NodeSpec(op, 14), attrs, {&x64, &w, &r}).status(), StatusCode::kUnsupported,
        fmt::format("input 0 has type float64, which {} does not run on (it takes float32)", op));
    ExpectError(RunNode(NodeSpec(op, 14), attrs, {&x, &w, &r64}).status(), StatusCode::kUnsupported,
                "input X, W, R, B and initial_h has type float64, expected float32");
  }
  ExpectError(RunNode(NodeSpec("LSTM", 14), attrs, {&x64, &w, &r}).status(),
              StatusCode::kUnsupported,
              "input 0 has type float64, which LSTM does not run on (it takes float32)");
  ExpectError(RunNode(NodeSpec("LSTM", 14), attrs, {&x, &w, &r64}).status(),
              StatusCode::kUnsupported,
              "input X, W, R, B, initial_h, initial_c and P has type float64, expected float32");
}

}  // namespace
}  // namespace epctx::exec::testing
