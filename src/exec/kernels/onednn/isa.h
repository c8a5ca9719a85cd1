// The instruction-set tier oneDNN packs weights for in this process, and choosing a lower one
// (`epctx compile --target avx2`): a build machine can pack blobs for older clients.
#pragma once

#include <cstdint>
#include <span>

#include "epctx/status.h"
#include "exec/kernels/onednn/activation_layout.h"
#include "format/blob_layout.h"

namespace epctx::exec::kernels::onednn {

// The tier of the kernels oneDNN dispatches to here (at most the limit set by LimitKernelIsa):
// the layouts it packs are that tier's.
format::KernelIsa PackingIsa();

// The channel-blocked activation layout the tier's convolutions read: 16 channels per block
// for AVX-512, 8 below.
ActivationLayout BlockedLayoutFor(format::KernelIsa isa);

// The blocked layout the compiler plans convolution chains in, in this process (the tier's, from
// PackingIsa()): the one rule the planner and the tests that expect its plan share.
ActivationLayout PlannedBlockedLayout();

// Whether oneDNN has Winograd convolutions at this tier: 2.6 has them for AVX-512 only (float32,
// on 16-channel blocked activations). The compiler tries Winograd only where it does.
bool HasWinogradConvolutions();

// oneDNN's u8 x s8 products (DnnlMatMulInteger, DnnlIntegerConv) are exact where its int8
// kernels have VNNI: vpdpbusd adds four products into int32 (avx512_core_vnni and the tiers
// above it, AMX's tdpbusd likewise). Below, vpmaddubsw adds pairs of products into int16 and
// saturates: 2 x 255 x 64 fits, 2 x 255 x 127 does not, so only weights within [-64, 64] give the
// exact product there (oneDNN's documented way out, weights scaled by 0.5, loses their last bit).
inline constexpr int kInt8WeightBoundWithoutVnni = 64;
bool Int8KernelsHaveVnni();

// Whether oneDNN's int8 kernels here compute exactly with these weights: VNNI, or every weight
// within +-kInt8WeightBoundWithoutVnni. The compiler lowers an int8 product to them only then.
bool Int8ProductsExact(std::span<const int8_t> weights);

// The CPU features (util/cpu_features.h) that these weights, packed for oneDNN's int8 kernels,
// need on the CPU that runs them: avx512vnni when some weight is beyond the bound (a CPU
// without it would saturate), none otherwise. The blob's fingerprint requires them.
uint64_t Int8WeightCpuFeatures(std::span<const int8_t> weights);

// Makes oneDNN dispatch to `isa` at most, for the rest of the process. oneDNN allows this only
// before its first primitive is made: kFailedPrecondition says so otherwise (unless the limit is
// already `isa`).
Status LimitKernelIsa(format::KernelIsa isa);

}  // namespace epctx::exec::kernels::onednn
