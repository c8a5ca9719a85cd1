#include "util/cpu_features.h"

#include <cpuid.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace epctx {
namespace {

uint64_t QueryCpu() {
  uint64_t f = 0;
  unsigned a, b, c, d;
  if (__get_cpuid(1, &a, &b, &c, &d)) {
    if (c & bit_SSE4_2) f |= cpu::kSse42;
    if (c & bit_AVX) f |= cpu::kAvx;
    if (c & bit_FMA) f |= cpu::kFma;
    if (c & bit_F16C) f |= cpu::kF16c;
  }
  if (__get_cpuid_count(7, 0, &a, &b, &c, &d)) {
    if (b & bit_AVX2) f |= cpu::kAvx2;
    if (b & bit_AVX512F) f |= cpu::kAvx512F;
    if (b & bit_AVX512BW) f |= cpu::kAvx512Bw;
    if (b & bit_AVX512DQ) f |= cpu::kAvx512Dq;
    if (b & bit_AVX512VL) f |= cpu::kAvx512Vl;
    if (c & bit_AVX512VNNI) f |= cpu::kAvx512Vnni;
    if (d & (1u << 24)) f |= cpu::kAmxTile;
  }
  if (__get_cpuid_count(7, 1, &a, &b, &c, &d)) {
    if (a & (1u << 5)) f |= cpu::kAvx512Bf16;
  }
  return f;
}

}  // namespace

uint64_t DetectedCpuFeatures() {
  uint64_t features = QueryCpu();
  if (const char* mask = std::getenv("EPCTX_CPU_FEATURES_MASK")) {
    features &= ~std::strtoull(mask, nullptr, 16);
  }
  return features;
}

CpuIdentity DetectedCpuIdentity() {
  CpuIdentity id;
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid(0, &a, &b, &c, &d)) {
    // "AuthenticAMD" in ebx, edx, ecx.
    id.amd = b == 0x68747541 && d == 0x69746e65 && c == 0x444d4163;
  }
  if (__get_cpuid(1, &a, &b, &c, &d)) {
    const int base = static_cast<int>((a >> 8) & 0xf);
    id.family = base == 0xf ? base + static_cast<int>((a >> 20) & 0xff) : base;
  }
  return id;
}

uint64_t BuildRequiredCpuFeatures() {
  uint64_t f = 0;
#ifdef __SSE4_2__
  f |= cpu::kSse42;
#endif
#ifdef __AVX__
  f |= cpu::kAvx;
#endif
#ifdef __AVX2__
  f |= cpu::kAvx2;
#endif
#ifdef __FMA__
  f |= cpu::kFma;
#endif
#ifdef __F16C__
  f |= cpu::kF16c;
#endif
#ifdef __AVX512F__
  f |= cpu::kAvx512F;
#endif
#ifdef __AVX512BW__
  f |= cpu::kAvx512Bw;
#endif
#ifdef __AVX512DQ__
  f |= cpu::kAvx512Dq;
#endif
#ifdef __AVX512VL__
  f |= cpu::kAvx512Vl;
#endif
  return f;
}

std::string CpuFeatureNames(uint64_t features) {
  static const std::vector<std::pair<uint64_t, const char*>> kNames = {
      {cpu::kSse42, "sse4.2"},
      {cpu::kAvx, "avx"},
      {cpu::kAvx2, "avx2"},
      {cpu::kFma, "fma"},
      {cpu::kF16c, "f16c"},
      {cpu::kAvx512F, "avx512f"},
      {cpu::kAvx512Bw, "avx512bw"},
      {cpu::kAvx512Dq, "avx512dq"},
      {cpu::kAvx512Vl, "avx512vl"},
      {cpu::kAvx512Vnni, "avx512vnni"},
      {cpu::kAvx512Bf16, "avx512bf16"},
      {cpu::kAmxTile, "amx-tile"},
  };
  std::string out;
  uint64_t known = 0;
  for (auto [bit, name] : kNames) {
    known |= bit;
    if (features & bit) {
      if (!out.empty()) out += ',';
      out += name;
    }
  }
  // Bits this build has no name for (a blob from a newer build, or a forged one) are named too.
  for (int bit = 0; bit < 64; ++bit) {
    if ((features & ~known) & (uint64_t{1} << bit)) {
      if (!out.empty()) out += ',';
      out += "unknown feature bit " + std::to_string(bit);
    }
  }
  return out.empty() ? "none" : out;
}

}  // namespace epctx
