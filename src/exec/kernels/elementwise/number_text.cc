#include "exec/kernels/elementwise/number_text.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>
#include <system_error>

namespace epctx::exec::kernels::elementwise {
namespace {

// A finite value as to_chars writes it in scientific form, "-d.ddde-05", taken apart.
struct Decimal {
  bool negative = false;
  std::string digits;  // significant digits, no trailing zeros (at least one digit)
  int exponent = 0;    // of the first digit
};

Decimal Split(std::string_view s) {
  Decimal d;
  size_t i = 0;
  if (!s.empty() && s[0] == '-') {
    d.negative = true;
    i = 1;
  }
  const size_t e = s.find('e', i);
  for (size_t k = i; k < e && k < s.size(); ++k) {
    if (s[k] != '.') d.digits.push_back(s[k]);
  }
  while (d.digits.size() > 1 && d.digits.back() == '0') d.digits.pop_back();
  if (e != std::string_view::npos) {
    size_t x = e + 1;
    if (x < s.size() && s[x] == '+') ++x;
    std::from_chars(s.data() + x, s.data() + s.size(), d.exponent);
  }
  return d;
}

// numpy's layout of a scalar's digits (see number_text.h); `magnitude` is |v|.
std::string Layout(const Decimal& d, double magnitude) {
  std::string out = d.negative ? "-" : "";
  const int n = static_cast<int>(d.digits.size());
  const int e = d.exponent;
  if (magnitude == 0 || (magnitude >= 1e-4 && magnitude < 1e16)) {
    if (e < 0) {
      out += "0.";
      out.append(static_cast<size_t>(-e - 1), '0');
      out += d.digits;
    } else if (n <= e + 1) {
      out += d.digits;
      out.append(static_cast<size_t>(e + 1 - n), '0');
      out += ".0";
    } else {
      out.append(d.digits, 0, static_cast<size_t>(e + 1));
      out += '.';
      out.append(d.digits, static_cast<size_t>(e + 1));
    }
    return out;
  }
  out += d.digits[0];
  if (n > 1) {
    out += '.';
    out.append(d.digits, 1);
  }
  out += e < 0 ? "e-" : "e+";
  const int a = e < 0 ? -e : e;
  if (a < 10) out += '0';
  out += std::to_string(a);
  return out;
}

// "NaN", "INF", "-INF", or empty for a finite value.
template <typename F>
std::string_view SpecialText(F v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v < 0 ? "-INF" : "INF";
  return {};
}

template <typename F>
std::string ShortestText(F v) {
  if (std::string_view special = SpecialText(v); !special.empty()) return std::string(special);
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::scientific);
  return Layout(Split(std::string_view(buf, static_cast<size_t>(r.ptr - buf))),
                std::fabs(static_cast<double>(v)));
}

std::string_view Trim(std::string_view t) {
  constexpr std::string_view kSpace = " \t\n\r\f\v";
  const size_t first = t.find_first_not_of(kSpace);
  if (first == std::string_view::npos) return {};
  return t.substr(first, t.find_last_not_of(kSpace) - first + 1);
}

bool EqualsNoCase(std::string_view a, std::string_view lower) {
  if (a.size() != lower.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    const char c = a[i] >= 'A' && a[i] <= 'Z' ? static_cast<char>(a[i] - 'A' + 'a') : a[i];
    if (c != lower[i]) return false;
  }
  return true;
}

template <typename F>
bool ParseFloat(std::string_view text, F& out) {
  text = Trim(text);
  if (EqualsNoCase(text, "nan")) {
    out = std::numeric_limits<F>::quiet_NaN();
    return true;
  }
  bool negative = false;
  if (!text.empty() && (text[0] == '+' || text[0] == '-')) {
    negative = text[0] == '-';
    text.remove_prefix(1);
  }
  // from_chars takes no '+' and would take a second '-'.
  if (text.empty() || text[0] == '+' || text[0] == '-') return false;
  if (EqualsNoCase(text, "inf")) {
    out = negative ? -std::numeric_limits<F>::infinity() : std::numeric_limits<F>::infinity();
    return true;
  }
  F v = 0;
  const char* end = text.data() + text.size();
  const auto r = std::from_chars(text.data(), end, v, std::chars_format::general);
  if (r.ptr != end) return false;
  if (r.ec == std::errc::result_out_of_range) {
    // Too large (an infinity) or too small (zero): strtod says which.
    v = static_cast<F>(std::strtod(std::string(text).c_str(), nullptr));
  } else if (r.ec != std::errc()) {
    return false;
  }
  out = negative ? -v : v;
  return true;
}

template <typename I>
bool ParseWholeInt(std::string_view text, I& out) {
  if (!text.empty() && text[0] == '+') text.remove_prefix(1);
  if (text.empty() || text[0] == '+') return false;
  const char* end = text.data() + text.size();
  const auto r = std::from_chars(text.data(), end, out);
  return r.ec == std::errc() && r.ptr == end;
}

// Decimal text truncated toward zero, when it lies in [lo, hi).
bool ParseTruncated(std::string_view text, double lo, double hi, double& out) {
  double d = 0;
  if (!ParseFloat(text, d) || !std::isfinite(d)) return false;
  d = std::trunc(d);
  if (d < lo || d >= hi) return false;
  out = d;
  return true;
}

}  // namespace

std::string FloatToText(double v) {
  return ShortestText(v);
}
std::string FloatToText(float v) {
  return ShortestText(v);
}

std::string NarrowFloatToText(float v, uint16_t (*narrow)(float)) {
  if (std::string_view special = SpecialText(v); !special.empty()) return std::string(special);
  const uint16_t bits = narrow(v);
  char buf[64];
  std::to_chars_result r{};
  // Nine significant digits always read back as the same float, so the loop ends by then.
  for (int precision = 0; precision < 9; ++precision) {
    r = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::scientific, precision);
    float back = 0;
    std::from_chars(buf, r.ptr, back, std::chars_format::scientific);
    if (narrow(back) == bits) break;
  }
  return Layout(Split(std::string_view(buf, static_cast<size_t>(r.ptr - buf))),
                std::fabs(static_cast<double>(v)));
}

bool TextToFloat(std::string_view text, double& out) {
  return ParseFloat(text, out);
}
bool TextToFloat(std::string_view text, float& out) {
  return ParseFloat(text, out);
}

bool TextToInt(std::string_view text, int64_t& out) {
  text = Trim(text);
  if (ParseWholeInt(text, out)) return true;
  double d = 0;
  if (!ParseTruncated(text, -0x1p63, 0x1p63, d)) return false;
  out = static_cast<int64_t>(d);
  return true;
}

bool TextToInt(std::string_view text, uint64_t& out) {
  text = Trim(text);
  if (ParseWholeInt(text, out)) return true;
  int64_t negative = 0;
  if (ParseWholeInt(text, negative)) {
    out = static_cast<uint64_t>(negative);
    return true;
  }
  double d = 0;
  if (ParseTruncated(text, 0, 0x1p64, d)) {
    out = static_cast<uint64_t>(d);
    return true;
  }
  if (ParseTruncated(text, -0x1p63, 0, d)) {
    out = static_cast<uint64_t>(static_cast<int64_t>(d));
    return true;
  }
  return false;
}

bool TextToBool(std::string_view text, bool& out) {
  const std::string_view t = Trim(text);
  if (EqualsNoCase(t, "true") || EqualsNoCase(t, "false")) {
    out = t.size() == 4;
    return true;
  }
  double d = 0;
  if (!ParseFloat(t, d)) return false;
  out = d != 0;
  return true;
}

}  // namespace epctx::exec::kernels::elementwise
