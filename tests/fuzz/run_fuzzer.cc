// Fuzz target: an original ONNX model made into a session (import, compile passes, packing,
// binding) and run once on zero inputs of its declared shapes (unknown dims 1), so that the
// kernels see whatever constants and attributes the import and the compiler let through:
// indices, shapes, counts and axes read from the model's data at run time. A bool output must
// hold only 0 and 1.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <unordered_map>

#include "epctx/session.h"
#include "zero_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace epctx;
  SessionOptions options;
  options.AddConfigEntry("session.intra_op_num_threads", "1")
      .AddConfigEntry("epctx.prepare_kernels", "first_run")
      .AddConfigEntry("epctx.max_loop_iterations", "1000")
      // Legitimate values can be huge (a ReduceSum over the empty axis of [0, 2^32] keeps 2^32
      // zeros): the harness is after wrong answers, not after the memory a model may ask for.
      .AddConfigEntry("epctx.max_value_bytes", "1073741824");
  auto session = Session::CreateFromMemory(
      std::span<const std::byte>(reinterpret_cast<const std::byte*>(data), size), options);
  if (!session.ok()) return 0;
  std::unordered_map<std::string, Tensor> inputs;
  for (const ValueInfo& v : (*session)->inputs()) {
    std::optional<Tensor> zero = fuzz::ZeroInput(v.kind, v.dtype, v.shape);
    if (!zero) return 0;
    inputs.emplace(v.name, std::move(*zero));
  }
  auto outputs = (*session)->Run(inputs);
  if (!outputs.ok()) return 0;
  // Bools are 0 or 1 inside the engine: no kernel may make another byte of the zero inputs and the
  // model's (checked) constants.
  for (const Tensor& t : *outputs) {
    if (!t.is_tensor() || t.dtype() != DataType::kBool) continue;
    const auto* bytes = static_cast<const uint8_t*>(t.data());
    for (size_t i = 0; i < t.byte_size(); ++i) {
      if (bytes[i] > 1) __builtin_trap();
    }
  }
  return 0;
}
