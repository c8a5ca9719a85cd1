// A model file under 2 GiB usually holds its weights inline (TensorProto.raw_data). Parsed as it
// is, protobuf copies every weight into the ModelProto, so a compile holds the whole model in
// memory until it ends. Instead the import parses a copy of the model in which each large inline
// weight has become an external-data reference into the model file itself: the weights are then
// read in place from the file's mapping, one at a time, and their pages given back after use.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>

namespace epctx::compile {

// Initializers whose raw_data holds fewer bytes stay inline: the copy costs nothing and keeps
// the small tensors the passes read (shapes, scales, axes) where they were.
inline constexpr size_t kExternalizedWeightMinBytes = 64 * 1024;

// The serialized ModelProto `model` with each top-level graph initializer's raw_data of at least
// `min_bytes` replaced by external_data (location `self_location`, the payload's offset in
// `model`, its length) and data_location EXTERNAL. Only tensors whose raw_data is their one
// source of values and matches their dims and fixed-size data type are rewritten; anything else
// is copied as it is, so that the import judges it exactly as before. nullopt when no tensor
// qualifies or when `model` is not well-formed protobuf (the ordinary parse then reports it).
std::optional<std::string> ExternalizeInlineWeights(std::span<const std::byte> model,
                                                    const std::string& self_location,
                                                    size_t min_bytes = kExternalizedWeightMinBytes);

}  // namespace epctx::compile
