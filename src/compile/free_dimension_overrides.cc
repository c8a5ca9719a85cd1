#include "compile/free_dimension_overrides.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <charconv>
#include <set>

#include "util/logging.h"
#include "util/status_macros.h"

namespace epctx::compile {
namespace {

// Fixes the named dims of one value's tensor type, adding their names to `fixed`.
void FixValue(onnx::ValueInfoProto& value, const FreeDimensionOverrides& overrides,
              std::set<std::string>* fixed) {
  if (!value.has_type() || !value.type().has_tensor_type() ||
      !value.type().tensor_type().has_shape()) {
    return;
  }
  for (onnx::TensorShapeProto_Dimension& dim :
       *value.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim()) {
    if (!dim.has_dim_param()) continue;
    auto it = overrides.find(dim.dim_param());
    if (it == overrides.end()) continue;
    fixed->insert(it->first);
    dim.set_dim_value(it->second);  // clears dim_param (one of the two)
  }
}

}  // namespace

Result<FreeDimensionOverrides> ParseFreeDimensionOverrides(std::string_view text) {
  FreeDimensionOverrides out;
  size_t at = 0;
  while (at <= text.size() && !text.empty()) {
    const size_t end = std::min(text.find(',', at), text.size());
    const std::string_view item = text.substr(at, end - at);
    const size_t colon = item.rfind(':');
    const std::string_view name = colon == std::string_view::npos ? item : item.substr(0, colon);
    const std::string_view size = colon == std::string_view::npos ? "" : item.substr(colon + 1);
    int64_t value = 0;
    auto [ptr, ec] = std::from_chars(size.data(), size.data() + size.size(), value);
    if (name.empty() || size.empty() || ec != std::errc() || ptr != size.data() + size.size() ||
        value < 1) {
      return EPCTX_ERROR(kInvalidArgument,
                         "free dimension override '{}' is not NAME:SIZE with a size of 1 or more",
                         item);
    }
    auto [it, inserted] = out.emplace(std::string(name), value);
    if (!inserted && it->second != value) {
      return EPCTX_ERROR(kInvalidArgument, "free dimension '{}' is given two sizes, {} and {}",
                         name, it->second, value);
    }
    at = end + 1;
  }
  return out;
}

void ApplyFreeDimensionOverrides(onnx::ModelProto& model, const FreeDimensionOverrides& overrides,
                                 const std::string& model_name) {
  if (overrides.empty()) return;
  // The inputs only, as ONNX Runtime does: shape inference carries the sizes on (a declared
  // symbolic dim of an output or value_info gives way to an inferred size).
  std::set<std::string> fixed;
  for (onnx::ValueInfoProto& v : *model.mutable_graph()->mutable_input()) {
    FixValue(v, overrides, &fixed);
  }
  for (const auto& [name, size] : overrides) {
    if (fixed.count(name) == 0) {
      Logger().warn("'{}': free dimension override {}:{} names no dimension of its inputs",
                    model_name, name, size);
    }
  }
}

}  // namespace epctx::compile
