// Fuzz target: an original ONNX model through the import: parse, the checks made before ONNX's
// checker and shape inference, the checker, shape inference (with epctx's corrections), function
// expansion and the conversion into epctx's graph. Also the rewrite of inline weights into
// references to the model file (compile/inline_weights.h), which walks the same bytes by hand:
// every reference it makes must parse and point inside the input.
#include <onnx/onnx_pb.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>

#include "compile/inline_weights.h"
#include "compile/onnx_import.h"

namespace {

void CheckRewrite(std::span<const std::byte> bytes) {
  // A low threshold, so that the small weights of the corpus are rewritten too.
  std::optional<std::string> rewritten =
      epctx::compile::ExternalizeInlineWeights(bytes, "fuzz.onnx", 1);
  if (!rewritten.has_value()) return;
  onnx::ModelProto original;
  onnx::ModelProto model;
  if (!original.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) return;
  if (!model.ParseFromString(*rewritten)) __builtin_trap();
  if (model.graph().initializer_size() != original.graph().initializer_size()) __builtin_trap();
  for (int i = 0; i < model.graph().initializer_size(); ++i) {
    const onnx::TensorProto& t = model.graph().initializer(i);
    const onnx::TensorProto& before = original.graph().initializer(i);
    if (before.data_location() == onnx::TensorProto_DataLocation_EXTERNAL ||
        t.data_location() != onnx::TensorProto_DataLocation_EXTERNAL) {
      continue;
    }
    // Rewritten here: the reference must name exactly the bytes raw_data held.
    uint64_t offset = 0, length = 0;
    for (const auto& e : t.external_data()) {
      if (e.key() == "offset") offset = std::stoull(e.value());
      if (e.key() == "length") length = std::stoull(e.value());
    }
    if (offset > bytes.size() || length > bytes.size() - offset ||
        length != before.raw_data().size() ||
        std::memcmp(bytes.data() + offset, before.raw_data().data(), length) != 0) {
      __builtin_trap();
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  // No folder: external data is refused rather than looked up.
  (void)epctx::compile::ImportModelBytes(bytes, "fuzz.onnx", "");
  CheckRewrite(bytes);
  return 0;
}
