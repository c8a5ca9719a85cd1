// CPU features that kernels and packed layouts depend on, as a bit set.
#pragma once

#include <cstdint>
#include <string>

namespace epctx {

namespace cpu {
inline constexpr uint64_t kSse42 = 1u << 0;
inline constexpr uint64_t kAvx = 1u << 1;
inline constexpr uint64_t kAvx2 = 1u << 2;
inline constexpr uint64_t kFma = 1u << 3;
inline constexpr uint64_t kF16c = 1u << 4;
inline constexpr uint64_t kAvx512F = 1u << 5;
inline constexpr uint64_t kAvx512Bw = 1u << 6;
inline constexpr uint64_t kAvx512Dq = 1u << 7;
inline constexpr uint64_t kAvx512Vl = 1u << 8;
inline constexpr uint64_t kAvx512Vnni = 1u << 9;
inline constexpr uint64_t kAvx512Bf16 = 1u << 10;
inline constexpr uint64_t kAmxTile = 1u << 11;
}  // namespace cpu

// Features of the CPU this process runs on. The environment variable EPCTX_CPU_FEATURES_MASK
// (a hex bit mask) removes features from the detected set, so tests can act as an older CPU.
uint64_t DetectedCpuFeatures();

// Features the kernels in this build were compiled to use (from the compiler's target macros).
uint64_t BuildRequiredCpuFeatures();

// The CPU's family as cpuid reports it (base family plus extended family), and whether its
// vendor is AMD: kernels whose best form differs between CPU generations ask (an AMD Zen 4 is
// family 25, a Zen 5 family 26). 0 when cpuid does not tell.
struct CpuIdentity {
  bool amd = false;
  int family = 0;
};
CpuIdentity DetectedCpuIdentity();

// "avx2,fma,avx512f" style list.
std::string CpuFeatureNames(uint64_t features);

}  // namespace epctx
