// RNN (simple recurrent layer): H_t = f(X_t W^T + H_{t-1} R^T + Wb + Rb), per direction. float32.
#include <algorithm>
#include <memory>
#include <vector>

#include "exec/kernels/common/shape.h"
#include "exec/kernels/families.h"
#include "exec/kernels/rnn/rnn_common.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

// Runs direction `dir`; `h` holds its initial state and receives the final one.
void RunRnnDirection(const RnnProblem& p, const RnnAttrs& a, int64_t dir, bool reverse, int threads,
                     std::vector<float>& y, float* h) {
  const int64_t batch = p.batch, hidden = p.hidden;
  const RnnActivation& f = a.activations[static_cast<size_t>(dir)];
  const std::vector<float> xw = ProjectInputs(p, dir, 1, threads);
  const float* r = p.r + dir * hidden * hidden;
  std::vector<float> hr(static_cast<size_t>(batch * hidden));
  for (int64_t s = 0; s < p.seq; ++s) {
    RecurrentProduct(h, r, batch, hidden, hidden, hr.data(), threads);
    for (int64_t b = 0; b < batch; ++b) {
      const int64_t len = p.lengths[static_cast<size_t>(b)];
      if (s >= len) continue;
      const int64_t t = RnnTimeIndex(s, len, reverse);
      float* g = hr.data() + b * hidden;
      const float* x = xw.data() + (t * batch + b) * hidden;
      for (int64_t i = 0; i < hidden; ++i) g[i] += x[i];
      ClipGates(a.clip, g, hidden);
      ApplyRnnActivation(f, g, hidden);
      std::copy_n(g, hidden, h + b * hidden);
      std::copy_n(g, hidden, y.begin() + ((t * p.directions + dir) * batch + b) * hidden);
    }
  }
}

class RnnKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node) {
    auto kernel = std::unique_ptr<RnnKernel>(new RnnKernel());
    EPCTX_ASSIGN_OR_RETURN(kernel->attrs_, ParseRnnAttrs(node, {"Tanh"}));
    kernel->outputs_ = RnnOutputsOf(node);
    EPCTX_RETURN_IF_ERROR(ExpectFloatRnnInputs(node, /*lstm=*/false));
    return std::unique_ptr<Kernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(RnnProblem p, ReadRnnInputs(ctx, attrs_, 1, false));
    std::vector<float> y(static_cast<size_t>(p.seq * p.directions * p.batch * p.hidden), 0.0f);
    std::vector<float> h = p.initial_h;
    for (int64_t dir = 0; dir < p.directions; ++dir) {
      RunRnnDirection(p, attrs_, dir, attrs_.reverse || dir == 1, ctx.num_threads(), y,
                      h.data() + dir * p.batch * p.hidden);
    }
    return WriteRnnOutputs(ctx, attrs_, outputs_, p, y, h, {});
  }

 private:
  RnnKernel() = default;
  RnnAttrs attrs_;
  RnnOutputs outputs_;
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateRnn(const NodeInfo& node) {
  return RnnKernel::Create(node);
}

}  // namespace epctx::exec::kernels
