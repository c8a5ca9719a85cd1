// LSTM, gates stacked i, o, f, c in W, R and B, peepholes P stacked i, o, f:
//   i = f(X W_i^T + H R_i^T + P_i . C + Wb_i + Rb_i), f likewise (or 1 - i with input_forget),
//   c~ = g(X W_c^T + H R_c^T + Wb_c + Rb_c), C' = f . C + i . c~,
//   o = f(X W_o^T + H R_o^T + P_o . C' + Wb_o + Rb_o), H' = o . h(C').
// float32.
#include <algorithm>
#include <memory>
#include <vector>

#include "exec/kernels/common/shape.h"
#include "exec/kernels/families.h"
#include "exec/kernels/rnn/rnn_common.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

void RunLstmDirection(const RnnProblem& p, const RnnAttrs& a, bool input_forget, int64_t dir,
                      bool reverse, int threads, std::vector<float>& y, float* h, float* c) {
  const int64_t batch = p.batch, hidden = p.hidden;
  const RnnActivation& f = a.activations[static_cast<size_t>(dir * 3)];
  const RnnActivation& g = a.activations[static_cast<size_t>(dir * 3 + 1)];
  const RnnActivation& act_h = a.activations[static_cast<size_t>(dir * 3 + 2)];
  const std::vector<float> xw = ProjectInputs(p, dir, 4, threads);
  const float* r = p.r + dir * 4 * hidden * hidden;
  const float* peep = p.p != nullptr ? p.p + dir * 3 * hidden : nullptr;
  std::vector<float> gates(static_cast<size_t>(batch * 4 * hidden));
  for (int64_t s = 0; s < p.seq; ++s) {
    RecurrentProduct(h, r, batch, 4 * hidden, hidden, gates.data(), threads);
    for (int64_t b = 0; b < batch; ++b) {
      const int64_t len = p.lengths[static_cast<size_t>(b)];
      if (s >= len) continue;
      const int64_t t = RnnTimeIndex(s, len, reverse);
      float* gi = gates.data() + b * 4 * hidden;
      float* go = gi + hidden;
      float* gf = go + hidden;
      float* gc = gf + hidden;
      const float* x = xw.data() + (t * batch + b) * 4 * hidden;
      for (int64_t i = 0; i < 4 * hidden; ++i) gi[i] += x[i];
      float* cb = c + b * hidden;
      if (peep != nullptr) {
        for (int64_t i = 0; i < hidden; ++i) {
          gi[i] += peep[i] * cb[i];
          gf[i] += peep[2 * hidden + i] * cb[i];
        }
      }
      ClipGates(a.clip, gi, hidden);
      ApplyRnnActivation(f, gi, hidden);
      if (input_forget) {
        for (int64_t i = 0; i < hidden; ++i) gf[i] = 1.0f - gi[i];
      } else {
        ClipGates(a.clip, gf, hidden);
        ApplyRnnActivation(f, gf, hidden);
      }
      ClipGates(a.clip, gc, hidden);
      ApplyRnnActivation(g, gc, hidden);
      for (int64_t i = 0; i < hidden; ++i) cb[i] = gf[i] * cb[i] + gi[i] * gc[i];
      if (peep != nullptr) {
        for (int64_t i = 0; i < hidden; ++i) go[i] += peep[hidden + i] * cb[i];
      }
      ClipGates(a.clip, go, hidden);
      ApplyRnnActivation(f, go, hidden);
      // gc is free now: it receives h(C').
      std::copy_n(cb, hidden, gc);
      ApplyRnnActivation(act_h, gc, hidden);
      float* hb = h + b * hidden;
      for (int64_t i = 0; i < hidden; ++i) hb[i] = go[i] * gc[i];
      std::copy_n(hb, hidden, y.begin() + ((t * p.directions + dir) * batch + b) * hidden);
    }
  }
}

class LstmKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node) {
    auto kernel = std::unique_ptr<LstmKernel>(new LstmKernel());
    EPCTX_ASSIGN_OR_RETURN(kernel->attrs_, ParseRnnAttrs(node, {"Sigmoid", "Tanh", "Tanh"}));
    EPCTX_ASSIGN_OR_RETURN(int64_t input_forget, node.attrs->GetInt("input_forget", 0));
    kernel->input_forget_ = input_forget != 0;
    kernel->outputs_ = RnnOutputsOf(node);
    EPCTX_RETURN_IF_ERROR(ExpectFloatRnnInputs(node, /*lstm=*/true));
    return std::unique_ptr<Kernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(RnnProblem p, ReadRnnInputs(ctx, attrs_, 4, true));
    std::vector<float> y(static_cast<size_t>(p.seq * p.directions * p.batch * p.hidden), 0.0f);
    std::vector<float> h = p.initial_h;
    std::vector<float> c = p.initial_c;
    for (int64_t dir = 0; dir < p.directions; ++dir) {
      const int64_t offset = dir * p.batch * p.hidden;
      RunLstmDirection(p, attrs_, input_forget_, dir, attrs_.reverse || dir == 1, ctx.num_threads(),
                       y, h.data() + offset, c.data() + offset);
    }
    return WriteRnnOutputs(ctx, attrs_, outputs_, p, y, h, c);
  }

 private:
  LstmKernel() = default;
  RnnAttrs attrs_;
  RnnOutputs outputs_;
  bool input_forget_ = false;
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateLstm(const NodeInfo& node) {
  return LstmKernel::Create(node);
}

}  // namespace epctx::exec::kernels
