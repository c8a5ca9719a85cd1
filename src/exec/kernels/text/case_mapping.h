// Upper- and lower-casing of UTF-8 text by code point, with the case tables of a C library
// locale (StringNormalizer's `locale`). Locales are named as ONNX models name them ("en_US"); the
// UTF-8 variant of the name is preferred, and when the machine has neither, C.UTF-8, whose tables
// are Unicode's simple case mappings (the same as every locale's but Turkish and Azeri dotted i).
#pragma once

#include <locale.h>

#include <string>
#include <string_view>

#include "epctx/status.h"

namespace epctx::exec::kernels {

class CaseMapping {
 public:
  enum class Case { kLower, kUpper };

  // kUnsupported when not even C.UTF-8 can be opened.
  static Result<CaseMapping> ForLocale(std::string_view name);

  CaseMapping(CaseMapping&& other) noexcept : locale_(other.locale_) { other.locale_ = nullptr; }
  CaseMapping& operator=(CaseMapping&& other) noexcept;
  CaseMapping(const CaseMapping&) = delete;
  CaseMapping& operator=(const CaseMapping&) = delete;
  ~CaseMapping();

  // `text` with every code point mapped to `to`; false (and `out` unspecified) when `text` is
  // not valid UTF-8. Safe to call from several threads at once.
  bool Change(std::string_view text, Case to, std::string& out) const;

 private:
  explicit CaseMapping(locale_t locale) : locale_(locale) {}
  locale_t locale_ = nullptr;
};

}  // namespace epctx::exec::kernels
