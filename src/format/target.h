// The target fingerprint of this build, and the check of a blob's fingerprint against it.
#pragma once

#include <string>

#include "epctx/status.h"
#include "format/blob_layout.h"

namespace epctx::format {

// What this build packs for: the CPU features its kernels were compiled to use, the packing
// layout version and the build id of the packing and kernel sources.
TargetFingerprint CurrentTarget();

// OK when a blob packed for `blob` can be used by this build on this CPU (`available_features`,
// normally DetectedCpuFeatures()); kTargetMismatch naming the difference otherwise.
Status CheckTarget(const TargetFingerprint& blob, uint64_t available_features);

// Short description for EPContext's hardware_architecture: "x86_64:avx2,fma,avx512f,...".
std::string HardwareArchitecture(const TargetFingerprint& target);

}  // namespace epctx::format
