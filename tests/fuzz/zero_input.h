// The zero input the run-fuzzing harnesses give a program for one declared input: an empty
// sequence for a sequence, a zero tensor of the declared shape (unknown dims 1) for a tensor.
// None for kinds and types a zero cannot stand for (strings, optionals) or tensors of more than
// kMaxZeroInputElements: the harnesses are after wrong answers to bad models, not after the time
// large zero tensors take. Empty shapes are kept whatever their other dims.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <vector>

#include "epctx/tensor.h"

namespace epctx::fuzz {

constexpr int64_t kMaxZeroInputElements = int64_t{1} << 16;

inline std::optional<Tensor> ZeroInput(ValueKind kind, DataType dtype,
                                       std::span<const int64_t> declared) {
  if (kind == ValueKind::kSequence) return Tensor::Sequence(dtype, {});
  if (kind != ValueKind::kTensor || dtype == DataType::kString) return std::nullopt;
  std::vector<int64_t> shape;
  bool empty = false;
  for (int64_t d : declared) {
    shape.push_back(d < 0 ? 1 : d);
    empty = empty || d == 0;
  }
  // An empty tensor takes no memory however large its other dims are ([0, 2^32, 2^32]): such
  // shapes are kept, for the kernels' products of dims to meet.
  int64_t elements = 1;
  for (int64_t d : shape) {
    if (empty) break;
    if (d > kMaxZeroInputElements || (elements *= d) > kMaxZeroInputElements) return std::nullopt;
  }
  auto tensor = Tensor::Allocate(dtype, std::move(shape));
  if (!tensor.ok()) return std::nullopt;
  if (tensor->byte_size() > 0) std::memset(tensor->mutable_data(), 0, tensor->byte_size());
  return std::move(*tensor);
}

}  // namespace epctx::fuzz
