// Fuzz target: an original ONNX model through the import: parse, the checks made before ONNX's
// checker and shape inference, the checker, shape inference (with epctx's corrections), function
// expansion and the conversion into epctx's graph.
#include <cstddef>
#include <cstdint>
#include <span>

#include "compile/onnx_import.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  // No folder: external data is refused rather than looked up.
  (void)epctx::compile::ImportModelBytes(bytes, "fuzz.onnx", "");
  return 0;
}
