// Moving a batch of lines between the tensors' layout (each line's samples in a row) and the
// FFT's [position][lane] layout. Element by element this is a strided copy that costs as much
// as the FFT itself; with 4 lanes, or as many as fill one vector register of the build target
// (8 or 16 floats, 4 or 8 doubles), and rows of contiguous samples, it runs as lanes x lanes
// transposes in registers instead.
#pragma once

#include <cstdint>

#include "exec/kernels/signal/vector_width.h"

namespace epctx::exec::kernels {

// dst[j * lanes + l] = src[l][j * src_stride] * scale[j] (scale may be null: 1) for j < n and
// l < lanes.
template <typename T>
void LoadLanes(const T* const* src, int64_t src_stride, const T* scale, int64_t n, int64_t lanes,
               T* dst);

// dst[l][k * dst_stride] = re[k * lanes + l] * re_scale and dst[l][k * dst_stride + 1] =
// im[k * lanes + l] * im_scale for k < bins and l < lanes: complex values written interleaved.
template <typename T>
void StoreLanes(const T* re, const T* im, T re_scale, T im_scale, int64_t bins, int64_t lanes,
                T* const* dst, int64_t dst_stride);

}  // namespace epctx::exec::kernels
