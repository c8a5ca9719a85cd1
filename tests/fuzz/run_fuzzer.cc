// Fuzz target: an original ONNX model made into a session (import, compile passes, packing,
// binding) and run once on zero inputs of its declared shapes (unknown dims 1), so that the
// kernels see whatever constants and attributes the import and the compiler let through:
// indices, shapes, counts and axes read from the model's data at run time.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <unordered_map>

#include "epctx/session.h"

namespace {

// Inputs larger than this are not made: the target is after wrong answers to bad data, not
// after the time a large zero tensor takes.
constexpr int64_t kMaxInputElements = int64_t{1} << 16;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace epctx;
  SessionOptions options;
  options.AddConfigEntry("session.intra_op_num_threads", "1")
      .AddConfigEntry("epctx.prepare_kernels", "first_run")
      .AddConfigEntry("epctx.max_loop_iterations", "1000");
  auto session = Session::CreateFromMemory(
      std::span<const std::byte>(reinterpret_cast<const std::byte*>(data), size), options);
  if (!session.ok()) return 0;
  std::unordered_map<std::string, Tensor> inputs;
  for (const ValueInfo& v : (*session)->inputs()) {
    if (v.kind == ValueKind::kSequence) {
      inputs.emplace(v.name, Tensor::Sequence(v.dtype, {}));
      continue;
    }
    if (v.kind != ValueKind::kTensor || v.dtype == DataType::kString) return 0;
    std::vector<int64_t> shape = v.shape;
    int64_t elements = 1;
    for (int64_t& d : shape) {
      if (d < 0) d = 1;
      if (d > kMaxInputElements) return 0;
      elements *= d;
      if (elements > kMaxInputElements) return 0;
    }
    auto tensor = Tensor::Allocate(v.dtype, shape);
    if (!tensor.ok()) return 0;
    if (tensor->byte_size() > 0) std::memset(tensor->mutable_data(), 0, tensor->byte_size());
    inputs.emplace(v.name, std::move(*tensor));
  }
  (void)(*session)->Run(inputs);
  return 0;
}
