#include "exec/kernels/onednn/isa.h"

#include <algorithm>
#include <mutex>

#include "exec/kernels/onednn/dnnl.h"
#include "format/target.h"
#include "util/cpu_features.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels::onednn {
namespace {

std::mutex& LimitMutex() {
  static std::mutex* mutex = new std::mutex();
  return *mutex;
}

format::KernelIsa& CurrentLimit() {
  static format::KernelIsa limit = format::KernelIsa::kUnspecified;
  return limit;
}

}  // namespace

format::KernelIsa PackingIsa() {
  switch (dnnl::get_effective_cpu_isa()) {
    case dnnl::cpu_isa::avx512_core:
    case dnnl::cpu_isa::avx512_core_vnni:
    case dnnl::cpu_isa::avx512_core_bf16:
    case dnnl::cpu_isa::avx512_core_amx:
      return format::KernelIsa::kAvx512Core;
    case dnnl::cpu_isa::avx2:
    case dnnl::cpu_isa::avx2_vnni:
      return format::KernelIsa::kAvx2;
    default:
      return format::KernelIsa::kUnspecified;
  }
}

ActivationLayout BlockedLayoutFor(format::KernelIsa isa) {
  return isa == format::KernelIsa::kAvx512Core ? ActivationLayout::kBlocked16
                                               : ActivationLayout::kBlocked8;
}

ActivationLayout PlannedBlockedLayout() {
  return BlockedLayoutFor(PackingIsa());
}

bool HasWinogradConvolutions() {
  return PackingIsa() == format::KernelIsa::kAvx512Core;
}

namespace {

bool WithinBoundWithoutVnni(std::span<const int8_t> weights) {
  return std::all_of(weights.begin(), weights.end(), [](int8_t w) {
    return w >= -kInt8WeightBoundWithoutVnni && w <= kInt8WeightBoundWithoutVnni;
  });
}

}  // namespace

bool Int8KernelsHaveVnni() {
  switch (dnnl::get_effective_cpu_isa()) {
    case dnnl::cpu_isa::avx512_core_vnni:
    case dnnl::cpu_isa::avx512_core_bf16:
    case dnnl::cpu_isa::avx512_core_amx:
      return true;
    default:
      // avx2_vnni too: its blobs are of the avx2 tier, whose fingerprint has no AVX-VNNI
      // feature to require, so a CPU without it would take them.
      return false;
  }
}

bool Int8ProductsExact(std::span<const int8_t> weights) {
  return Int8KernelsHaveVnni() || WithinBoundWithoutVnni(weights);
}

uint64_t Int8WeightCpuFeatures(std::span<const int8_t> weights) {
  return WithinBoundWithoutVnni(weights) ? 0 : cpu::kAvx512Vnni;
}

Status LimitKernelIsa(format::KernelIsa isa) {
  std::lock_guard<std::mutex> lock(LimitMutex());
  if (CurrentLimit() == isa) return Status::Ok();
  const dnnl::cpu_isa target =
      isa == format::KernelIsa::kAvx2 ? dnnl::cpu_isa::avx2 : dnnl::cpu_isa::avx512_core_amx;
  try {
    dnnl::set_max_cpu_isa(target);
  } catch (const dnnl::error&) {
    return EPCTX_ERROR(kFailedPrecondition,
                       "the kernel ISA can be chosen only once per process, before its first "
                       "model is compiled or run; compile for {} in a process of its own (epctx "
                       "compile --target {})",
                       format::KernelIsaName(isa), format::KernelIsaName(isa));
  }
  if (PackingIsa() != isa) {
    return EPCTX_ERROR(kFailedPrecondition, "this CPU cannot run {} kernels (its tier is '{}')",
                       format::KernelIsaName(isa), format::KernelIsaName(PackingIsa()));
  }
  CurrentLimit() = isa;
  return Status::Ok();
}

}  // namespace epctx::exec::kernels::onednn
