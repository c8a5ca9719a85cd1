// A packed weight's layout as the blob records it: oneDNN's memory descriptor written as plain
// integers (an `Ints` attribute of the node), so that the program stays a verifiable FlatBuffer
// and no byte of the blob is ever handed to oneDNN as a descriptor unchecked.
//
// At run time the kernel asks oneDNN which layout it wants and compares the encodings; only for
// shapes other than the packed one does it decode the stored layout (blocked layouts only, after
// checking that they describe a dense, non-overlapping tensor) and ask for a primitive that reads
// exactly that.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "epctx/status.h"
#include "exec/kernels/onednn/dnnl.h"

namespace epctx::exec::kernels::onednn {

// Encoding version: the first element of every encoding.
inline constexpr int64_t kWeightFormatVersion = 1;

// kUnsupported for descriptor kinds the blob cannot record (anything but f32, bf16, f16 or s8
// blocked and f32 Winograd layouts, or with extra flags).
Result<std::vector<int64_t>> EncodeWeightFormat(const dnnl::memory::desc& desc);

// The descriptor of a blocked encoding; kCorrupt when it is malformed or not dense, kUnsupported
// for Winograd layouts (which oneDNN only produces for the shape they were packed for).
Result<dnnl::memory::desc> DecodeBlockedWeightFormat(std::span<const int64_t> encoding);

// The stored layout `format` decoded, for a primitive that wants `wanted` instead (an input
// shape other than the one packed for, or another CPU tier), so the kernel can ask for one that
// reads the stored bytes: kUnsupported naming both layouts when the stored one cannot be used,
// kInvalidArgument when its element type is not `type` (a forged or mixed-up blob).
Result<dnnl::memory::desc> StoredWeightLayout(std::span<const int64_t> format,
                                              std::span<const int64_t> wanted,
                                              dnnl::memory::data_type type);

// The tile side (alpha) of a Winograd encoding: 6 for oneDNN's F(4x4, 3x3), 4 for F(2x2, 3x3);
// 0 for any other encoding.
int64_t WinogradTile(std::span<const int64_t> encoding);

// Human-readable name of an encoding, e.g. "blocked OIhw16i16o-like [64,3,7,7] 37632 B" or
// "winograd 4x3".
std::string DescribeWeightFormat(std::span<const int64_t> encoding);

}  // namespace epctx::exec::kernels::onednn
