// Content hashes (xxHash XXH3): 64-bit for checksums, 128-bit for content addressing.
#pragma once

#include <cstdint>
#include <span>

namespace epctx {

uint64_t Hash64(std::span<const std::byte> bytes, uint64_t seed = 0);

// Streaming 64-bit hash; gives the same value as Hash64 over the concatenated pieces.
class Hasher64 {
 public:
  Hasher64();
  ~Hasher64();
  Hasher64(const Hasher64&) = delete;
  Hasher64& operator=(const Hasher64&) = delete;
  void Update(std::span<const std::byte> bytes);
  uint64_t Finish() const;

 private:
  void* state_;
};

struct Hash128 {
  uint64_t low = 0;
  uint64_t high = 0;
  bool operator==(const Hash128&) const = default;
};

// Streaming 128-bit hash, for hashing several pieces (layout tag, shape, bytes) as one.
class Hasher128 {
 public:
  Hasher128();
  ~Hasher128();
  Hasher128(const Hasher128&) = delete;
  Hasher128& operator=(const Hasher128&) = delete;
  void Update(std::span<const std::byte> bytes);
  template <typename T>
  void UpdateValue(const T& value) {
    Update(std::as_bytes(std::span<const T>(&value, 1)));
  }
  Hash128 Finish() const;

 private:
  void* state_;
};

}  // namespace epctx
