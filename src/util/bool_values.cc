#include "util/bool_values.h"

#include <cstdint>
#include <cstring>

namespace epctx {

std::optional<size_t> FirstNonBoolByte(std::span<const std::byte> bytes) {
  // Eight bytes at a time: a word of 0s and 1s has no bit set outside each byte's lowest.
  constexpr uint64_t kHighBits = 0xFEFEFEFEFEFEFEFEull;
  size_t i = 0;
  for (; i + 8 <= bytes.size(); i += 8) {
    uint64_t word;
    std::memcpy(&word, bytes.data() + i, sizeof word);
    if ((word & kHighBits) != 0) break;
  }
  for (; i < bytes.size(); ++i) {
    if ((static_cast<uint8_t>(bytes[i]) & 0xFE) != 0) return i;
  }
  return std::nullopt;
}

}  // namespace epctx
