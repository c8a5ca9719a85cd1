// The inputs `epctx perf` runs: read from files (--input NAME=FILE), or generated from the
// model's declared inputs as onnxruntime_perf_test's -I generates them.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "epctx/session.h"
#include "epctx/status.h"
#include "epctx/tensor.h"

namespace epctx::cli {

using Inputs = std::unordered_map<std::string, Tensor>;

// The shape -I gives input `info`: a free (unknown) dimension takes its -f override, found by the
// dimension's name, else 1.
std::vector<int64_t> GeneratedShape(const ValueInfo& info,
                                    const std::map<std::string, int64_t>& free_dims);

// Inputs shaped as GeneratedShape says, filled as onnxruntime_perf_test fills them: with
// `seed` < 0 every element is zero; otherwise float32 elements are uniform in [0, 5) and int8 and
// uint8 elements uniform over [0, the type's maximum], drawn from a generator seeded with `seed`,
// and elements of other types are zero. (The engine and distributions are the C++ library's, so
// the values match ORT's in distribution, not bit for bit.)
Result<Inputs> GenerateInputs(const std::vector<ValueInfo>& infos,
                              const std::map<std::string, int64_t>& free_dims, int seed);

// Names of the -f overrides that match no free dimension of `infos`.
std::vector<std::string> UnusedFreeDims(const std::vector<ValueInfo>& infos,
                                        const std::map<std::string, int64_t>& free_dims);

}  // namespace epctx::cli
