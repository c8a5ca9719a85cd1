#include "util/hash.h"

#include <xxhash.h>

namespace epctx {

uint64_t Hash64(std::span<const std::byte> bytes, uint64_t seed) {
  return XXH3_64bits_withSeed(bytes.data(), bytes.size(), seed);
}

Hasher64::Hasher64() : state_(XXH3_createState()) {
  XXH3_64bits_reset(static_cast<XXH3_state_t*>(state_));
}

Hasher64::~Hasher64() {
  XXH3_freeState(static_cast<XXH3_state_t*>(state_));
}

void Hasher64::Update(std::span<const std::byte> bytes) {
  XXH3_64bits_update(static_cast<XXH3_state_t*>(state_), bytes.data(), bytes.size());
}

uint64_t Hasher64::Finish() const {
  return XXH3_64bits_digest(static_cast<XXH3_state_t*>(state_));
}

Hasher128::Hasher128() : state_(XXH3_createState()) {
  XXH3_128bits_reset(static_cast<XXH3_state_t*>(state_));
}

Hasher128::~Hasher128() {
  XXH3_freeState(static_cast<XXH3_state_t*>(state_));
}

void Hasher128::Update(std::span<const std::byte> bytes) {
  XXH3_128bits_update(static_cast<XXH3_state_t*>(state_), bytes.data(), bytes.size());
}

Hash128 Hasher128::Finish() const {
  XXH128_hash_t h = XXH3_128bits_digest(static_cast<XXH3_state_t*>(state_));
  return Hash128{h.low64, h.high64};
}

}  // namespace epctx
