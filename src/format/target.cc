#include "format/target.h"

#include <cstring>
#include <string_view>

#include "epctx_build_info.h"
#include "util/cpu_features.h"
#include "util/status_macros.h"

namespace epctx::format {
namespace {

std::string_view BuildIdOf(const TargetFingerprint& t) {
  return std::string_view(t.packing_build_id,
                          strnlen(t.packing_build_id, sizeof t.packing_build_id));
}

}  // namespace

uint64_t KernelIsaFeatures(KernelIsa isa) {
  switch (isa) {
    case KernelIsa::kAvx2:
      return cpu::kAvx | cpu::kAvx2 | cpu::kFma;
    case KernelIsa::kAvx512Core:
      return cpu::kAvx | cpu::kAvx2 | cpu::kFma | cpu::kAvx512F | cpu::kAvx512Bw | cpu::kAvx512Dq |
             cpu::kAvx512Vl;
    case KernelIsa::kUnspecified:
      break;
  }
  return 0;
}

std::string_view KernelIsaName(KernelIsa isa) {
  switch (isa) {
    case KernelIsa::kAvx2:
      return "avx2";
    case KernelIsa::kAvx512Core:
      return "avx512_core";
    case KernelIsa::kUnspecified:
      break;
  }
  return "";
}

Result<KernelIsa> ParseKernelIsa(std::string_view name) {
  for (KernelIsa isa : {KernelIsa::kAvx2, KernelIsa::kAvx512Core}) {
    if (name == KernelIsaName(isa)) return isa;
  }
  return EPCTX_ERROR(kInvalidArgument, "unknown kernel ISA '{}' (known: avx2, avx512_core)", name);
}

TargetFingerprint CurrentTarget(KernelIsa isa) {
  TargetFingerprint t{};
  t.required_cpu_features = BuildRequiredCpuFeatures() | KernelIsaFeatures(isa);
  t.kernel_isa = static_cast<uint32_t>(isa);
  t.pack_layout_version = kPackLayoutVersion;
  std::strncpy(t.packing_build_id, EPCTX_PACKING_BUILD_ID, sizeof t.packing_build_id);
  return t;
}

Status CheckTarget(const TargetFingerprint& blob, uint64_t available_features) {
  TargetFingerprint mine = CurrentTarget();
  if (blob.pack_layout_version != mine.pack_layout_version) {
    return EPCTX_ERROR(kTargetMismatch, "packing layout version {} (this build uses {})",
                       blob.pack_layout_version, mine.pack_layout_version);
  }
  if (BuildIdOf(blob) != BuildIdOf(mine)) {
    return EPCTX_ERROR(kTargetMismatch,
                       "packed by kernel build '{}' (this build is '{}'); recompile the model",
                       BuildIdOf(blob), BuildIdOf(mine));
  }
  const auto isa = static_cast<KernelIsa>(blob.kernel_isa);
  if (blob.kernel_isa > static_cast<uint32_t>(KernelIsa::kAvx512Core)) {
    return EPCTX_ERROR(kTargetMismatch, "packed for kernel ISA {}, which this build does not know",
                       blob.kernel_isa);
  }
  // A forged fingerprint could leave the tier's features out of the required set.
  uint64_t missing = (blob.required_cpu_features | KernelIsaFeatures(isa)) & ~available_features;
  if (missing != 0) {
    return EPCTX_ERROR(kTargetMismatch, "packed for CPU features this CPU lacks: {}",
                       CpuFeatureNames(missing));
  }
  return Status::Ok();
}

std::string HardwareArchitecture(const TargetFingerprint& target) {
  std::string out = "x86_64:" + CpuFeatureNames(target.required_cpu_features);
  const auto isa = static_cast<KernelIsa>(target.kernel_isa);
  if (!KernelIsaName(isa).empty()) {
    out += ";kernels=";
    out += KernelIsaName(isa);
  }
  return out;
}

}  // namespace epctx::format
