// What both tensor file formats share: the choice of reader by extension, the owned copy both
// readers end with (where bool bytes are checked), and the file names tensors are written under.

#include <cctype>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "epctx/tensor_io.h"
#include "io/tensor_parse.h"
#include "util/bool_values.h"
#include "util/status_macros.h"

namespace epctx {
namespace {

std::string LowerCase(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

Result<Tensor> io::TensorFromBytes(const std::string& where, DataType dtype,
                                   std::vector<int64_t> shape, std::span<const std::byte> bytes) {
  // A file's bool that is neither 0 nor 1 is refused, not guessed at (NumPy reads any nonzero
  // byte as True, but the engine's kernels read the byte).
  if (dtype == DataType::kBool) {
    if (std::optional<size_t> bad = FirstNonBoolByte(bytes)) {
      return EPCTX_ERROR(kCorrupt, "{}: bool element {} is {}, not 0 or 1", where, *bad,
                         static_cast<int>(bytes[*bad]));
    }
  }
  auto tensor = Tensor::Allocate(dtype, std::move(shape));
  if (!tensor.ok()) {
    return Status(tensor.status().code(), fmt::format("{}: {}", where, tensor.status().message()));
  }
  if (!bytes.empty()) std::memcpy(tensor->mutable_data(), bytes.data(), bytes.size());
  return tensor;
}

Result<Tensor> ReadTensorFile(const std::string& path) {
  std::string extension = LowerCase(std::filesystem::path(path).extension().string());
  if (extension == ".npy") return ReadNpy(path);
  if (extension == ".pb") return ReadTensorProto(path);
  return EPCTX_ERROR(kInvalidArgument,
                     "'{}': cannot tell the tensor file type from the extension '{}'; expected "
                     ".npy (NumPy) or .pb (ONNX TensorProto)",
                     path, extension);
}

std::string EscapeFileName(std::string_view name) {
  if (name.empty()) return "%";
  if (name == ".") return "%2E";
  if (name == "..") return "%2E%2E";
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(name.size());
  for (char c : name) {
    auto byte = static_cast<unsigned char>(c);
    bool keep = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                c == '.' || c == '_' || c == '-';
    if (keep) {
      out += c;
    } else {
      out += '%';
      out += kHex[byte >> 4];
      out += kHex[byte & 0xf];
    }
  }
  return out;
}

}  // namespace epctx
