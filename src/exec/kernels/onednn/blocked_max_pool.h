// Max pooling of a 2-D activation in 8-channel blocks (nChw8c, the AVX2 tier's layout between
// convolutions) by our own pass: one vector maximum per window element. oneDNN 2.6's AVX2 max
// pooling of that layout took 5-7x ONNX Runtime's time on a Zen 3 core (SqueezeNet's 3x3
// stride-2 pools: 879, 393 and 203 us against 174, 65 and 38), a tenth of the model's run; this
// pass 187, 81 and 40.
#pragma once

#include <cstdint>

namespace epctx::exec::kernels::onednn {

// A window over [blocks][in_h][in_w][8] floats making [blocks][out_h][out_w][8].
struct BlockedPoolWindow {
  int64_t blocks = 0;  // batch x channel blocks
  int64_t in_h = 0, in_w = 0, out_h = 0, out_w = 0;
  int64_t kernel_h = 0, kernel_w = 0, stride_h = 0, stride_w = 0, pad_top = 0, pad_left = 0;
};

// Whether every output's window holds at least one input element (and the sizes are positive):
// the pass computes only such windows.
bool EveryWindowHoldsInput(const BlockedPoolWindow& w);

// y = the maximum over each window of x (padding ignored), on up to `threads` threads. Requires
// EveryWindowHoldsInput(w).
void BlockedMaxPool8(const BlockedPoolWindow& w, const float* x, float* y, int threads);

}  // namespace epctx::exec::kernels::onednn
