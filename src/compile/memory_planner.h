// Places activations in one arena: values whose lifetimes overlap never share bytes.
#pragma once

#include <cstdint>
#include <vector>

namespace epctx::compile {

struct Lifetime {
  uint64_t bytes = 0;
  int first = 0;  // index of the node that defines the value
  int last = 0;   // index of the last node that reads it (>= first)
};

struct ArenaPlan {
  std::vector<uint64_t> offsets;  // one per Lifetime, aligned to `alignment`
  uint64_t arena_bytes = 0;
};

// Greedy best fit, largest values first: each value goes to the lowest offset where it does
// not overlap (in bytes and in time) any value already placed.
ArenaPlan PlanArena(const std::vector<Lifetime>& values, uint64_t alignment);

}  // namespace epctx::compile
