// Rotary position embedding (RoPE) of one head's row, shared by com.microsoft RotaryEmbedding and
// GroupQueryAttention's do_rotary, so that the two rotate alike.
#pragma once

#include <cstdint>

namespace epctx::exec::kernels {

// Rotates the first `rotary_dim` elements of x by the angles whose cosines and sines are
// cos[0, rotary_dim / 2) and sin[0, rotary_dim / 2), and copies x[rotary_dim, head_size) as it
// is. The rotated pairs are (x[i], x[i + rotary_dim / 2]) ("halves", interleaved = false) or
// (x[2i], x[2i + 1]) (interleaved): y_a = a cos - b sin, y_b = b cos + a sin. rotary_dim is even
// and at most head_size; y may be x.
void RotaryRowF32(const float* x, const float* cos, const float* sin, int64_t rotary_dim,
                  int64_t head_size, bool interleaved, float* y);

}  // namespace epctx::exec::kernels
