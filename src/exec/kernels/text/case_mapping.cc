#include "exec/kernels/text/case_mapping.h"

#include <wctype.h>

#include <cstdint>
#include <string>

#include "util/status_macros.h"
#include "util/utf8.h"

namespace epctx::exec::kernels {

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
    uint32_t cp = 0;
    if (!NextCodePoint(text, &i, &cp)) return false;
    const wint_t mapped = to == Case::kUpper ? towupper_l(static_cast<wint_t>(cp), locale_)
                                             : towlower_l(static_cast<wint_t>(cp), locale_);
    // The C library maps scalar values to scalar values; anything else keeps the original.
    const auto result = static_cast<uint32_t>(mapped);
    AppendUtf8(InvalidCodePointReason(result) ? cp : result, &out);
  }
  return true;
}

}  // namespace epctx::exec::kernels
