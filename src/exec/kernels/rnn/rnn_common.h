// What RNN, GRU and LSTM share: their attributes (direction, hidden_size, layout, clip,
// activations with their alpha/beta), the gathering and checking of inputs X, W, R, B,
// sequence_lens and initial states in the layout-0 order, and the writing of Y, Y_h, Y_c in the
// node's layout.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "epctx/status.h"
#include "exec/kernel.h"

namespace epctx::exec::kernels {

struct RnnActivation {
  enum class Kind {
    kRelu,
    kTanh,
    kSigmoid,
    kAffine,
    kLeakyRelu,
    kThresholdedRelu,
    kScaledTanh,
    kHardSigmoid,
    kElu,
    kSoftsign,
    kSoftplus,
  };
  Kind kind = Kind::kTanh;
  float alpha = 0;
  float beta = 0;
};

// x[i] = act(x[i]) for i < n.
void ApplyRnnActivation(const RnnActivation& act, float* x, int64_t n);

struct RnnAttrs {
  int64_t hidden_size = -1;  // -1: taken from R
  int64_t directions = 1;
  bool reverse = false;  // the single direction runs backwards (direction = reverse)
  int64_t layout = 0;    // 1: batch-major X, Y, states
  float clip = 0;        // > 0: gate inputs clamp to [-clip, clip]
  // activations_per_direction entries for each direction, forward first.
  std::vector<RnnActivation> activations;
};

// `defaults`: one direction's activations when the attribute is absent (RNN: Tanh; GRU:
// Sigmoid, Tanh; LSTM: Sigmoid, Tanh, Tanh).
Result<RnnAttrs> ParseRnnAttrs(const NodeInfo& node, const std::vector<std::string>& defaults);

// At creation: every input but sequence_lens (index 4) that the compiler typed is float32.
Status ExpectFloatRnnInputs(const NodeInfo& node, bool lstm);

// The inputs in layout 0, checked. `gates` is the number of stacked gate matrices in W and R
// (RNN 1, GRU 3, LSTM 4).
struct RnnProblem {
  int64_t seq = 0, batch = 0, input = 0, hidden = 0, directions = 1, gates = 1;
  const float* x = nullptr;  // [seq, batch, input]
  const float* w = nullptr;  // [directions, gates * hidden, input]
  const float* r = nullptr;  // [directions, gates * hidden, hidden]
  const float* b = nullptr;  // [directions, 2 * gates * hidden] (W biases, then R biases) or null
  const float* p = nullptr;  // LSTM peepholes [directions, 3 * hidden] or null
  std::vector<int64_t> lengths;  // per batch entry, seq when sequence_lens is omitted
  std::vector<float> initial_h;  // [directions, batch, hidden], zeros when omitted
  std::vector<float> initial_c;  // LSTM only, same shape
  std::vector<float> x_storage;  // X transposed to layout 0 when layout is 1
};

Result<RnnProblem> ReadRnnInputs(const KernelContext& ctx, const RnnAttrs& attrs, int64_t gates,
                                 bool lstm);

// Which outputs the node has, recorded at creation.
struct RnnOutputs {
  bool y = false, y_h = false, y_c = false;
};
RnnOutputs RnnOutputsOf(const NodeInfo& node);

// Results in layout 0: y [seq, directions, batch, hidden], h and c [directions, batch, hidden].
// Writes the present outputs in the node's layout.
Status WriteRnnOutputs(KernelContext& ctx, const RnnAttrs& attrs, const RnnOutputs& outputs,
                       const RnnProblem& p, const std::vector<float>& y,
                       const std::vector<float>& h, const std::vector<float>& c);

// The time index that step `s` of a direction processes for a sequence of `length`.
inline int64_t RnnTimeIndex(int64_t s, int64_t length, bool reverse) {
  return reverse ? length - 1 - s : s;
}

// x[i] = clamp(x[i], -clip, clip) when clip > 0.
void ClipGates(float clip, float* x, int64_t n);

// The input contribution to every gate for all time steps of direction `dir`, with the biases
// that can be added up front: xw[t * batch + b] = X[t, b] W^T + Wb + Rb, the R biases of only
// the first `r_bias_gates` gates (GRU keeps Rb of its h gate inside the reset product).
std::vector<float> ProjectInputs(const RnnProblem& p, int64_t dir, int64_t r_bias_gates,
                                 int threads);

// out [batch, rows] = h [batch, hidden] x r^T, r being `rows` rows of `hidden` values.
void RecurrentProduct(const float* h, const float* r, int64_t batch, int64_t rows, int64_t hidden,
                      float* out, int threads);

}  // namespace epctx::exec::kernels
