// The average over all pixels of each channel block (a global average pooling, or an average
// pooling whose one window covers the input) of activations in 8- or 16-channel blocks, by our
// own pass: oneDNN 2.6 makes code for each pooling problem first (0.04-0.3 ms of a thread on a
// Zen 4 core), which a first run waited for; EfficientNet-B0 has 11 such problems, in its
// squeeze-and- excitation blocks and head.
#pragma once

#include <cstdint>

namespace epctx::exec::kernels::onednn {

// y[b][l] = the mean of x[b][p][l] over p in [0, pixels), for b in [0, blocks) (batch x
// channel blocks) and l in [0, lanes), on up to `threads` threads; each lane's sum in float, in
// pixel order.
void BlockedGlobalAverage(const float* x, int64_t blocks, int64_t pixels, int64_t lanes, float* y,
                          int threads);

}  // namespace epctx::exec::kernels::onednn
