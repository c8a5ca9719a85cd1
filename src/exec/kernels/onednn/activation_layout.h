// How an activation tensor's bytes are arranged. Convolutional networks keep their activations
// in oneDNN's channel-blocked layout (nChw16c: 16 channels innermost, channels padded with zeros
// to a multiple of 16; nChw8c on AVX2, whose kernels read 8 channels at a time) from the first
// convolution to the last, so that no convolution reorders its input or output. The compiler
// decides where each layout is used (the plan is part of the program); a blocked value is stored
// with its physical shape [N, ceil(C/16), spatial..., 16],
// so that every generic kernel that only sees bytes and shapes (element-wise ops, Concat on
// whole blocks) works on it unchanged.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "epctx/status.h"
#include "exec/kernels/onednn/dnnl.h"

namespace epctx::exec::kernels::onednn {

enum class ActivationLayout : int64_t {
  kPlain = 0,      // ONNX's NCHW (row-major)
  kBlocked16 = 1,  // nChw16c (nCw16c, nCdhw16c for 1 and 3 spatial dims)
  kBlocked8 = 2,   // nChw8c (nCw8c, nCdhw8c)
};

// Channels per block: 16, 8, or 1 for the plain layout.
int64_t ChannelBlock(ActivationLayout layout);

// kInvalidArgument for values other than the enum's.
Result<ActivationLayout> ParseActivationLayout(int64_t value);

// The physical shape of logical [N, C, spatial...] (rank 3 to 5) in `layout`.
std::vector<int64_t> PhysicalShape(std::span<const int64_t> logical, ActivationLayout layout);

// The logical shape of a tensor stored as `physical` in `layout`, with `channels` channels;
// kInvalidArgument when the physical shape cannot hold them.
Result<std::vector<int64_t>> LogicalShape(std::span<const int64_t> physical,
                                          ActivationLayout layout, int64_t channels);

// oneDNN's tag for `layout` at tensor rank 3 to 5.
dnnl::memory::format_tag TagFor(ActivationLayout layout, size_t rank);

}  // namespace epctx::exec::kernels::onednn
