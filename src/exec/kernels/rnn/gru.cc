// GRU, gates stacked z, r, h in W, R and B:
//   z = f(X W_z^T + H R_z^T + Wb_z + Rb_z), r likewise,
//   h~ = g(X W_h^T + (r . H) R_h^T + Rb_h + Wb_h)       (linear_before_reset = 0)
//   h~ = g(X W_h^T + r . (H R_h^T + Rb_h) + Wb_h)       (linear_before_reset = 1)
//   H' = (1 - z) . h~ + z . H
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

void RunGruDirection(const RnnProblem& p, const RnnAttrs& a, bool linear_before_reset, int64_t dir,
                     bool reverse, int threads, std::vector<float>& y, float* h) {
  const int64_t batch = p.batch, hidden = p.hidden;
  const RnnActivation& f = a.activations[static_cast<size_t>(dir * 2)];
  const RnnActivation& g = a.activations[static_cast<size_t>(dir * 2 + 1)];
  const std::vector<float> xw = ProjectInputs(p, dir, linear_before_reset ? 2 : 3, threads);
  const float* r_zr = p.r + dir * 3 * hidden * hidden;
  const float* r_h = r_zr + 2 * hidden * hidden;
  const float* rb_h = p.b != nullptr ? p.b + dir * 6 * hidden + 5 * hidden : nullptr;
  std::vector<float> zr(static_cast<size_t>(batch * 2 * hidden));
  std::vector<float> hr_h(static_cast<size_t>(batch * hidden));
  std::vector<float> reset_h(static_cast<size_t>(batch * hidden), 0.0f);
  auto valid = [&](int64_t s, int64_t b) { return s < p.lengths[static_cast<size_t>(b)]; };
  auto xrow = [&](int64_t s, int64_t b) {
    const int64_t t = RnnTimeIndex(s, p.lengths[static_cast<size_t>(b)], reverse);
    return xw.data() + (t * batch + b) * 3 * hidden;
  };
  for (int64_t s = 0; s < p.seq; ++s) {
    RecurrentProduct(h, r_zr, batch, 2 * hidden, hidden, zr.data(), threads);
    for (int64_t b = 0; b < batch; ++b) {
      if (!valid(s, b)) continue;
      float* gates = zr.data() + b * 2 * hidden;
      const float* x = xrow(s, b);
      for (int64_t i = 0; i < 2 * hidden; ++i) gates[i] += x[i];
      ClipGates(a.clip, gates, 2 * hidden);
      ApplyRnnActivation(f, gates, 2 * hidden);
    }
    if (linear_before_reset) {
      RecurrentProduct(h, r_h, batch, hidden, hidden, hr_h.data(), threads);
    } else {
      for (int64_t b = 0; b < batch; ++b) {
        if (!valid(s, b)) continue;
        const float* reset = zr.data() + b * 2 * hidden + hidden;
        for (int64_t i = 0; i < hidden; ++i) {
          reset_h[static_cast<size_t>(b * hidden + i)] = reset[i] * h[b * hidden + i];
        }
      }
      RecurrentProduct(reset_h.data(), r_h, batch, hidden, hidden, hr_h.data(), threads);
    }
    for (int64_t b = 0; b < batch; ++b) {
      if (!valid(s, b)) continue;
      const float* z = zr.data() + b * 2 * hidden;
      const float* reset = z + hidden;
      const float* x = xrow(s, b) + 2 * hidden;
      float* cand = hr_h.data() + b * hidden;
      if (linear_before_reset) {
        for (int64_t i = 0; i < hidden; ++i) {
          cand[i] = x[i] + reset[i] * (cand[i] + (rb_h != nullptr ? rb_h[i] : 0.0f));
        }
      } else {
        for (int64_t i = 0; i < hidden; ++i) cand[i] += x[i];
      }
      ClipGates(a.clip, cand, hidden);
      ApplyRnnActivation(g, cand, hidden);
      float* hb = h + b * hidden;
      for (int64_t i = 0; i < hidden; ++i) hb[i] = (1.0f - z[i]) * cand[i] + z[i] * hb[i];
      const int64_t t = RnnTimeIndex(s, p.lengths[static_cast<size_t>(b)], reverse);
      std::copy_n(hb, hidden, y.begin() + ((t * p.directions + dir) * batch + b) * hidden);
    }
  }
}

class GruKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node) {
    auto kernel = std::unique_ptr<GruKernel>(new GruKernel());
    EPCTX_ASSIGN_OR_RETURN(kernel->attrs_, ParseRnnAttrs(node, {"Sigmoid", "Tanh"}));
    EPCTX_ASSIGN_OR_RETURN(int64_t lbr, node.attrs->GetInt("linear_before_reset", 0));
    kernel->linear_before_reset_ = lbr != 0;
    kernel->outputs_ = RnnOutputsOf(node);
    EPCTX_RETURN_IF_ERROR(ExpectFloatRnnInputs(node, /*lstm=*/false));
    return std::unique_ptr<Kernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(RnnProblem p, ReadRnnInputs(ctx, attrs_, 3, false));
    std::vector<float> y(static_cast<size_t>(p.seq * p.directions * p.batch * p.hidden), 0.0f);
    std::vector<float> h = p.initial_h;
    for (int64_t dir = 0; dir < p.directions; ++dir) {
      RunGruDirection(p, attrs_, linear_before_reset_, dir, attrs_.reverse || dir == 1,
                      ctx.num_threads(), y, h.data() + dir * p.batch * p.hidden);
    }
    return WriteRnnOutputs(ctx, attrs_, outputs_, p, y, h, {});
  }

 private:
  GruKernel() = default;
  RnnAttrs attrs_;
  RnnOutputs outputs_;
  bool linear_before_reset_ = false;
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateGru(const NodeInfo& node) {
  return GruKernel::Create(node);
}

}  // namespace epctx::exec::kernels
