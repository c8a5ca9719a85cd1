// Fuzz target: the tensor file readers behind `epctx run --input`. The first byte picks the
// format (even: .npy, odd: ONNX TensorProto .pb); the rest is the file. A tensor read must be
// readable in full, and a bool tensor hold only 0 and 1.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "io/tensor_parse.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string_view file(reinterpret_cast<const char*>(data) + 1, size - 1);
  auto tensor = (data[0] & 1) == 0 ? epctx::io::ParseNpy(file, "fuzz.npy")
                                   : epctx::io::ParseTensorProto(file, "fuzz.pb");
  if (tensor.ok() && tensor->byte_size() > 0) {
    // Every byte the tensor claims is readable.
    volatile uint8_t sink = static_cast<const uint8_t*>(tensor->data())[tensor->byte_size() - 1];
    (void)sink;
  }
  if (tensor.ok() && tensor->dtype() == epctx::DataType::kBool) {
    // A bool the readers let through is 0 or 1: any other byte is refused, not passed on.
    const auto* bytes = static_cast<const uint8_t*>(tensor->data());
    for (size_t i = 0; i < tensor->byte_size(); ++i) {
      if (bytes[i] > 1) __builtin_trap();
    }
  }
  if (tensor.ok() && tensor->dtype() == epctx::DataType::kString) {
    // Every string element is a live std::string.
    size_t total = 0;
    for (int64_t i = 0; i < tensor->element_count(); ++i) {
      total += tensor->data_as<std::string>()[i].size();
    }
    volatile size_t sink = total;
    (void)sink;
  }
  return 0;
}
