// Bool tensors hold the bytes 0 and 1 only. Kernels rely on it (Not flips the byte, Cast reads
// it as a number, Xor and Equal compare bytes), so a byte of 2 would come out as a wrong answer
// rather than an error; every way a bool tensor enters the engine (tensor files, initializers,
// run inputs) checks its bytes with this one function.
#pragma once

#include <cstddef>
#include <optional>
#include <span>

namespace epctx {

// The index of the first byte of `bytes` that is neither 0 nor 1, or nullopt when there is none.
std::optional<size_t> FirstNonBoolByte(std::span<const std::byte> bytes);

}  // namespace epctx
