// The vector register width of the build target (-march), which sets how many lines the
// signal kernels batch across lanes: one register of them; and GCC vector-extension types for
// the loops whose trip count is one register (the loop vectorizer leaves those to the SLP
// vectorizer, which the build turns off).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace epctx::exec::kernels {

#if defined(__AVX512F__)
inline constexpr size_t kSignalVectorBytes = 64;
#elif defined(__AVX__)
inline constexpr size_t kSignalVectorBytes = 32;
#else
inline constexpr size_t kSignalVectorBytes = 16;
#endif

// Lines per batch: one vector register of T.
template <typename T>
inline constexpr int64_t kMaxLanes = static_cast<int64_t>(kSignalVectorBytes / sizeof(T));

// W elements of T in one vector; arithmetic is element-wise, a scalar operand is broadcast.
template <typename T, int W>
struct VecOf {
  typedef T type __attribute__((vector_size(W * sizeof(T))));
};

// Unaligned loads and stores of a vector.
template <typename V>
V LoadVec(const void* p) {
  V v;
  std::memcpy(&v, p, sizeof(V));
  return v;
}

template <typename V>
void StoreVec(void* p, const V& v) {
  std::memcpy(p, &v, sizeof(V));
}

}  // namespace epctx::exec::kernels
