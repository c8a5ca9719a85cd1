#include "exec/kernels/text/case_mapping.h"

#include <wctype.h>

#include <cstdint>
#include <string>

#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

// The code point starting at text[i], advancing i; false on invalid UTF-8 (overlong forms,
// surrogates and values above U+10FFFF included).
bool Decode(std::string_view text, size_t& i, char32_t& cp) {
  const auto byte = [&](size_t k) { return static_cast<uint8_t>(text[k]); };
  const uint8_t b0 = byte(i);
  size_t extra = 0;
  char32_t min = 0;
  if (b0 < 0x80) {
    cp = b0;
    ++i;
    return true;
  } else if ((b0 & 0xe0) == 0xc0) {
    extra = 1;
    cp = b0 & 0x1f;
    min = 0x80;
  } else if ((b0 & 0xf0) == 0xe0) {
    extra = 2;
    cp = b0 & 0x0f;
    min = 0x800;
  } else if ((b0 & 0xf8) == 0xf0) {
    extra = 3;
    cp = b0 & 0x07;
    min = 0x10000;
  } else {
    return false;
  }
  if (extra > text.size() - i - 1) return false;
  for (size_t k = 1; k <= extra; ++k) {
    const uint8_t b = byte(i + k);
    if ((b & 0xc0) != 0x80) return false;
    cp = (cp << 6) | (b & 0x3f);
  }
  if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return false;
  i += extra + 1;
  return true;
}

void Encode(char32_t cp, std::string& out) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xc0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xe0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else {
    out += static_cast<char>(0xf0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  }
}

}  // namespace

Result<CaseMapping> CaseMapping::ForLocale(std::string_view name) {
  const std::string given(name);
  // An empty name would mean the process environment's locale: not a property of the model.
  for (const std::string& candidate : {given + ".UTF-8", given, std::string("C.UTF-8")}) {
    if (given.empty() && candidate != "C.UTF-8") continue;
    locale_t l = newlocale(LC_CTYPE_MASK, candidate.c_str(), static_cast<locale_t>(nullptr));
    if (l != nullptr) return CaseMapping(l);
  }
  return EPCTX_ERROR(kUnsupported, "neither locale '{}' nor C.UTF-8 is available for case mapping",
                     given);
}

CaseMapping& CaseMapping::operator=(CaseMapping&& other) noexcept {
  if (this != &other) {
    if (locale_ != nullptr) freelocale(locale_);
    locale_ = other.locale_;
    other.locale_ = nullptr;
  }
  return *this;
}

CaseMapping::~CaseMapping() {
  if (locale_ != nullptr) freelocale(locale_);
}

bool CaseMapping::Change(std::string_view text, Case to, std::string& out) const {
  out.clear();
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    char32_t cp = 0;
    if (!Decode(text, i, cp)) return false;
    const wint_t mapped = to == Case::kUpper ? towupper_l(static_cast<wint_t>(cp), locale_)
                                             : towlower_l(static_cast<wint_t>(cp), locale_);
    Encode(static_cast<char32_t>(mapped), out);
  }
  return true;
}

}  // namespace epctx::exec::kernels
