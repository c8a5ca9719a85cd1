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

TargetFingerprint CurrentTarget() {
  TargetFingerprint t{};
  t.required_cpu_features = BuildRequiredCpuFeatures();
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
  uint64_t missing = blob.required_cpu_features & ~available_features;
  if (missing != 0) {
    return EPCTX_ERROR(kTargetMismatch, "packed for CPU features this CPU lacks: {}",
                       CpuFeatureNames(missing));
  }
  return Status::Ok();
}

std::string HardwareArchitecture(const TargetFingerprint& target) {
  return "x86_64:" + CpuFeatureNames(target.required_cpu_features);
}

}  // namespace epctx::format
