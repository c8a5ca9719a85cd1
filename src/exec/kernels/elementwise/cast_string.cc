#include "exec/kernels/elementwise/cast_string.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

#include "exec/kernels/elementwise/element_types.h"
#include "exec/kernels/elementwise/number_text.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels::elementwise {
namespace {

template <typename S>
std::string ElementText(S v) {
  if constexpr (std::is_same_v<S, bool>) {
    return v ? "1" : "0";
  } else if constexpr (std::is_same_v<S, Half>) {
    return NarrowFloatToText(HalfToFloat(v), [](float f) { return FloatToHalf(f).bits; });
  } else if constexpr (std::is_same_v<S, BFloat16>) {
    return NarrowFloatToText(BFloat16ToFloat(v), [](float f) { return FloatToBFloat16(f).bits; });
  } else if constexpr (std::is_floating_point_v<S>) {
    return FloatToText(v);
  } else {
    char buf[24];
    const auto r = std::to_chars(buf, buf + sizeof(buf), v);
    return std::string(buf, r.ptr);
  }
}

template <typename D>
bool ReadElement(std::string_view text, D& out) {
  if constexpr (std::is_same_v<D, bool>) {
    return TextToBool(text, out);
  } else if constexpr (std::is_same_v<D, Half> || std::is_same_v<D, BFloat16>) {
    float f = 0;
    if (!TextToFloat(text, f)) return false;
    out = Store<D>(f);
    return true;
  } else if constexpr (std::is_floating_point_v<D>) {
    return TextToFloat(text, out);
  } else {
    // Integers wrap into narrower types as the integer casts do.
    std::conditional_t<std::is_same_v<D, uint64_t>, uint64_t, int64_t> wide = 0;
    if (!TextToInt(text, wide)) return false;
    out = static_cast<D>(wide);
    return true;
  }
}

// The text of an element for a message, cut short when long.
std::string Quoted(const std::string& s) {
  constexpr size_t kMaxShown = 40;
  if (s.size() <= kMaxShown) return "'" + s + "'";
  return "'" + s.substr(0, kMaxShown) + "...'";
}

}  // namespace

Status CastToStrings(const Tensor& x, Tensor& y) {
  auto* out = y.mutable_data_as<std::string>();
  const int64_t n = x.element_count();
  if (x.dtype() == DataType::kString) {
    std::copy_n(x.data_as<std::string>(), n, out);
    return Status::Ok();
  }
  return Visit(x.dtype(), [&](auto ts) -> Status {
    using S = typename decltype(ts)::type;
    const S* in = x.data_as<S>();
    for (int64_t i = 0; i < n; ++i) out[i] = ElementText(in[i]);
    return Status::Ok();
  });
}

Status CastFromStrings(const Tensor& x, Tensor& y) {
  const auto* in = x.data_as<std::string>();
  const int64_t n = x.element_count();
  return Visit(y.dtype(), [&](auto td) -> Status {
    using D = typename decltype(td)::type;
    D* out = y.mutable_data_as<D>();
    for (int64_t i = 0; i < n; ++i) {
      if (!ReadElement(in[i], out[i])) {
        return EPCTX_ERROR(kInvalidArgument, "element {} ({}) of the input cannot be read as {}", i,
                           Quoted(in[i]), DataTypeName(y.dtype()));
      }
    }
    return Status::Ok();
  });
}

}  // namespace epctx::exec::kernels::elementwise
