#include "exec/kernels/onednn/compute_type.h"

#include "exec/kernels/epctx_ops.h"
#include "exec/kernels/onednn/dnnl.h"
#include "util/cpu_features.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels::onednn {

Result<bool> ParseComputeBf16(const Attributes& attrs) {
  EPCTX_ASSIGN_OR_RETURN(std::string type, attrs.GetString(ops::kComputeType, ""));
  if (type.empty()) return false;
  if (type != kComputeTypeBf16) {
    return EPCTX_ERROR(kInvalidArgument, "{} \"{}\" is not \"{}\"", ops::kComputeType, type,
                       kComputeTypeBf16);
  }
  return true;
}

bool HasBf16Kernels() {
  // The detected features too, so that EPCTX_CPU_FEATURES_MASK can act as a CPU without them.
  if ((DetectedCpuFeatures() & cpu::kAvx512Bf16) == 0) return false;
  const dnnl::cpu_isa isa = dnnl::get_effective_cpu_isa();
  return isa == dnnl::cpu_isa::avx512_core_bf16 || isa == dnnl::cpu_isa::avx512_core_amx;
}

uint64_t Bf16WeightCpuFeatures() {
  uint64_t features = cpu::kAvx512Bf16;
  if (dnnl::get_effective_cpu_isa() == dnnl::cpu_isa::avx512_core_amx) features |= cpu::kAmxTile;
  return features;
}

}  // namespace epctx::exec::kernels::onednn
