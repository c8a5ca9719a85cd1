// What `epctx run` prints for an output when it writes no files: numbers as min/max/mean and the
// first values, strings as the first strings, sequences as their elements, empty optionals as such.
#include "tensor_summary.h"

#include <fmt/format.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

namespace epctx::cli {
namespace {

constexpr int64_t kShownValues = 8;
constexpr size_t kShownElements = 4;      // of a sequence
constexpr size_t kShownStringBytes = 40;  // of each string

// Bytes of the well-formed UTF-8 sequence of a printable character (U+00A0 and up) at s[i], or 0.
size_t PrintableUtf8Length(const std::string& s, size_t i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
  size_t length = byte(0) >= 0xF0 ? 4 : byte(0) >= 0xE0 ? 3 : byte(0) >= 0xC0 ? 2 : 0;
  if (length == 0 || byte(0) > 0xF4 || length > s.size() - i) return 0;
  uint32_t c = byte(0) & (0x7F >> length);
  for (size_t k = 1; k < length; ++k) {
    if ((byte(k) & 0xC0) != 0x80) return 0;
    c = (c << 6) | (byte(k) & 0x3F);
  }
  constexpr uint32_t kMin[] = {0, 0, 0xA0, 0x800, 0x10000};  // shortest form, C1 controls out
  bool valid = c >= kMin[length] && c <= 0x10FFFF && (c < 0xD800 || c > 0xDFFF);
  return valid ? length : 0;
}

// A string as a C-style literal: quotes, backslashes, control characters and bytes that are not
// UTF-8 escaped (so that no output byte can move the terminal), cut after about
// kShownStringBytes bytes.
std::string QuoteString(const std::string& s) {
  std::string out = "\"";
  size_t i = 0;
  for (; i < s.size() && i < kShownStringBytes; ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    if (size_t length = c >= 0x80 ? PrintableUtf8Length(s, i) : 0; length > 0) {
      out += s.substr(i, length);
      i += length - 1;
    } else if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      out += fmt::format("\\x{:02x}", c);
    }
  }
  out += '"';
  if (i < s.size()) out += fmt::format("... ({} bytes)", s.size());
  return out;
}

std::string SummarizeStrings(const Tensor& tensor) {
  const std::string* strings = tensor.data_as<std::string>();
  int64_t count = tensor.element_count();
  std::string out = "  values [";
  for (int64_t i = 0; i < count && i < kShownValues; ++i) {
    if (i > 0) out += ", ";
    out += QuoteString(strings[i]);
  }
  if (count > kShownValues) out += fmt::format(", ... ({} in all)", count);
  return out + "]\n";
}

// Every line of `text` indented by two more spaces.
std::string Indent(const std::string& text) {
  std::string out;
  bool line_start = true;
  for (char c : text) {
    if (line_start) out += "  ";
    out += c;
    line_start = c == '\n';
  }
  return out;
}

float HalfToFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  uint32_t exponent = (h >> 10) & 0x1f;
  uint32_t mantissa = h & 0x3ff;
  if (exponent == 0) {  // zero or subnormal: mantissa * 2^-24
    float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 31) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

float BFloat16ToFloat(uint16_t b) {
  return std::bit_cast<float>(static_cast<uint32_t>(b) << 16);
}

// Element type tags for the 16-bit float formats, which are stored as uint16_t.
struct Half {
  uint16_t bits;
};
struct BFloat16 {
  uint16_t bits;
};
// Bools are read as bytes: a byte other than 0 or 1 must not become a bool object.
struct BoolByte {
  uint8_t byte;
};

template <typename T>
auto Value(const T& v) {
  if constexpr (std::is_same_v<T, Half>) {
    return HalfToFloat(v.bits);
  } else if constexpr (std::is_same_v<T, BFloat16>) {
    return BFloat16ToFloat(v.bits);
  } else if constexpr (std::is_same_v<T, BoolByte>) {
    return static_cast<int>(v.byte != 0);
  } else {
    return v;
  }
}

template <typename V>
std::string FormatValue(V v) {
  if constexpr (std::is_floating_point_v<V>) {
    return fmt::format("{:.6g}", v);
  } else {
    return fmt::format("{}", v);
  }
}

template <typename T>
std::string Summarize(const Tensor& tensor) {
  using V = decltype(Value(std::declval<T>()));
  const auto* bytes = static_cast<const unsigned char*>(tensor.data());
  int64_t count = tensor.element_count();
  auto at = [&](int64_t i) {
    T element;
    std::memcpy(&element, bytes + i * sizeof(T), sizeof(T));
    return Value(element);
  };

  std::string out;
  int64_t nan_count = 0;
  bool any = false;
  V min{}, max{};
  double sum = 0;
  for (int64_t i = 0; i < count; ++i) {
    V v = at(i);
    if constexpr (std::is_floating_point_v<V>) {
      if (std::isnan(v)) {
        ++nan_count;
        continue;
      }
    }
    if (!any || v < min) min = v;
    if (!any || v > max) max = v;
    any = true;
    sum += static_cast<double>(v);
  }
  if (any) {
    out += fmt::format("  min {}  max {}  mean {:.6g}", FormatValue(min), FormatValue(max),
                       sum / static_cast<double>(count - nan_count));
  }
  if (nan_count > 0) out += fmt::format("  nan {}", nan_count);
  if (!out.empty()) out += '\n';

  out += "  values [";
  for (int64_t i = 0; i < count && i < kShownValues; ++i) {
    if (i > 0) out += ", ";
    out += FormatValue(at(i));
  }
  if (count > kShownValues) out += fmt::format(", ... ({} in all)", count);
  out += "]\n";
  return out;
}

std::string SummarizeValues(const Tensor& tensor) {
  switch (tensor.dtype()) {
    case DataType::kFloat32:
      return Summarize<float>(tensor);
    case DataType::kFloat64:
      return Summarize<double>(tensor);
    case DataType::kFloat16:
      return Summarize<Half>(tensor);
    case DataType::kBFloat16:
      return Summarize<BFloat16>(tensor);
    case DataType::kInt8:
      return Summarize<int8_t>(tensor);
    case DataType::kUint8:
      return Summarize<uint8_t>(tensor);
    case DataType::kInt16:
      return Summarize<int16_t>(tensor);
    case DataType::kUint16:
      return Summarize<uint16_t>(tensor);
    case DataType::kInt32:
      return Summarize<int32_t>(tensor);
    case DataType::kUint32:
      return Summarize<uint32_t>(tensor);
    case DataType::kInt64:
      return Summarize<int64_t>(tensor);
    case DataType::kUint64:
      return Summarize<uint64_t>(tensor);
    case DataType::kBool:
      return Summarize<BoolByte>(tensor);
    case DataType::kString:
      return SummarizeStrings(tensor);
    case DataType::kUndefined:
      break;
  }
  return "  (values of this type are not shown)\n";
}

}  // namespace

std::string SummarizeTensor(const std::string& name, const Tensor& tensor) {
  if (tensor.kind() == ValueKind::kNone) {
    return fmt::format("{}: empty optional (no {})\n", name,
                       tensor.none_of() == ValueKind::kSequence ? "sequence" : "tensor");
  }
  if (tensor.kind() == ValueKind::kSequence) {
    const std::vector<Tensor>& elements = tensor.elements();
    std::string out = fmt::format("{}: sequence of {} {} tensor{}\n", name, elements.size(),
                                  DataTypeName(tensor.dtype()), elements.size() == 1 ? "" : "s");
    for (size_t i = 0; i < elements.size() && i < kShownElements; ++i) {
      out += Indent(SummarizeTensor(fmt::format("[{}]", i), elements[i]));
    }
    if (elements.size() > kShownElements) {
      out += fmt::format("  ... ({} in all)\n", elements.size());
    }
    return out;
  }
  std::string out =
      fmt::format("{}: {} {}\n", name, DataTypeName(tensor.dtype()), ShapeToString(tensor.shape()));
  if (tensor.element_count() == 0) return out + "  (no elements)\n";
  return out + SummarizeValues(tensor);
}

}  // namespace epctx::cli
