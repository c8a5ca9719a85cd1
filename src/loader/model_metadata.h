// The model-level fields of an ONNX ModelProto, read without parsing the graph.
#pragma once

#include <cstddef>
#include <span>
#include <string>

#include "epctx/session.h"

namespace epctx::loader {

// Walks the top-level protobuf fields of `bytes` (and the graph's name and doc string), skipping
// nodes and initializers without copying them: O(fields), not O(weight bytes). `name` is used in
// messages.
Result<ModelMetadata> ReadModelMetadata(std::span<const std::byte> bytes, const std::string& name);

}  // namespace epctx::loader
