// Fuzz target: an original ONNX model through everything a session does to it before its first
// run when it is created from the model or falls back to it: the import, every compile pass
// (fusions, constant folding, the layout plan), the program builder and the weight packing, into
// an in-memory blob. The import alone is onnx_import_fuzzer's; this one reaches the passes with
// whatever the import's checks let through.
#include <cstddef>
#include <cstdint>
#include <span>

#include "compile/compile_model.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  // No folder: external data is refused rather than looked up.
  (void)epctx::compile::CompileBytesToMemory(bytes, "fuzz.onnx", "", "fuzz");
  return 0;
}
