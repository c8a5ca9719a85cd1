// The instruction-set tier oneDNN packs weights for in this process, and choosing a lower one
// (`epctx compile --target avx2`): a build machine can pack blobs for older clients.
#pragma once

#include "epctx/status.h"
#include "exec/kernels/dnnl/activation_layout.h"
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

// Makes oneDNN dispatch to `isa` at most, for the rest of the process. oneDNN allows this only
// before its first primitive is made: kFailedPrecondition says so otherwise (unless the limit is
// already `isa`).
Status LimitKernelIsa(format::KernelIsa isa);

}  // namespace epctx::exec::kernels::onednn
