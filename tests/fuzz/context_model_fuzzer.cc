// Fuzz target: a context model (NAME_ctx.onnx) through the resolver every user of context models
// goes through: the EPContext node found and checked, its references resolved against a folder
// (a reference holding a NUL byte refused) and the original model's recorded state compared.
#include <cstddef>
#include <cstdint>
#include <span>

#include "loader/context_resolver.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace epctx;
  std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  for (bool allow : {false, true}) {
    auto ctx = loader::ResolveContextModel(bytes, "fuzz_ctx.onnx", "/nonexistent/fuzz",
                                           loader::ReferencePolicy{allow});
    if (!ctx.ok() || !ctx->has_value()) return 0;
    // Compared against an empty interface: exercises the declarations' formatting.
    (void)loader::CheckDeclaredInterface(**ctx, {}, {});
    (void)loader::CheckBlobIdentity(**ctx, 0);
    // The original's path (inside /nonexistent/fuzz unless `allow`) is only stat'ed: a name
    // holding a NUL byte must be refused, not cut short.
    (void)loader::CheckOriginalUnchanged(**ctx, false);
  }
  return 0;
}
