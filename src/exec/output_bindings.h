// What one run knows of the program outputs its caller bound to memory of its own (Session::Run
// with outputs, ONNX Runtime's IOBinding): the executor's loop and its kernels' context share it.
#pragma once

#include <cstdint>
#include <vector>

#include "epctx/tensor.h"

namespace epctx::exec {

struct OutputBindings {
  // Per value of the program: the caller's tensor it is bound to; null when it is not bound.
  std::vector<const Tensor*> buffer;
  // Per value: the node making it writes it into its bound memory (AllocateOutput hands that
  // out). Decided before the node runs; otherwise the value is computed in the run's memory and
  // copied into the bound memory after the last node.
  std::vector<uint8_t> in_place;
  // Values viewing memory the caller gave (program inputs, and views of them or of bound
  // memory made by KernelContext::ShareInput): the ones a bound buffer may overlap. Weights live
  // in the blob's read-only mapping, which no caller can bind.
  std::vector<int32_t> external;

  bool empty() const { return buffer.empty(); }
};

// Whether the bytes of tensors `a` and `b` overlap (false when either holds none).
inline bool MemoryOverlaps(const Tensor& a, const Tensor& b) {
  if (!a.is_tensor() || !b.is_tensor() || a.byte_size() == 0 || b.byte_size() == 0) return false;
  const auto* a0 = static_cast<const std::byte*>(a.data());
  const auto* b0 = static_cast<const std::byte*>(b.data());
  return a0 < b0 + b.byte_size() && b0 < a0 + a.byte_size();
}

// Whether tensors `a` and `b` are exactly the same bytes.
inline bool SameMemory(const Tensor& a, const Tensor& b) {
  return a.is_tensor() && b.is_tensor() && a.data() == b.data() && a.byte_size() == b.byte_size();
}

}  // namespace epctx::exec
