// The target fingerprint of this build, and the check of a blob's fingerprint against it.
#pragma once

#include <string>
#include <string_view>

#include "epctx/status.h"
#include "format/blob_layout.h"

namespace epctx::format {

// What this build packs for: the CPU features its kernels were compiled to use and those of the
// kernel library's tier `isa`, the tier, the packing layout version and the build id of the
// packing and kernel sources.
TargetFingerprint CurrentTarget(KernelIsa isa = KernelIsa::kUnspecified);

// The CPU features a tier's code needs; "avx2", "avx512_core" ("" for kUnspecified).
uint64_t KernelIsaFeatures(KernelIsa isa);
std::string_view KernelIsaName(KernelIsa isa);
// "avx2" or "avx512_core"; kInvalidArgument naming the accepted names otherwise.
Result<KernelIsa> ParseKernelIsa(std::string_view name);

// OK when a blob packed for `blob` can be used by this build on this CPU (`available_features`,
// normally DetectedCpuFeatures()); kTargetMismatch naming the difference otherwise.
Status CheckTarget(const TargetFingerprint& blob, uint64_t available_features);

// Short description for EPContext's hardware_architecture:
// "x86_64:avx2,fma,avx512f,...;kernels=avx512_core".
std::string HardwareArchitecture(const TargetFingerprint& target);

}  // namespace epctx::format
