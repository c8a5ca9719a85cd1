// Strict UTF-8 (RFC 3629): the shortest form only, no surrogates, nothing past U+10FFFF.

#include "util/utf8.h"

namespace epctx {

std::optional<std::string_view> InvalidCodePointReason(uint32_t code_point) {
  if (code_point >= 0xD800 && code_point <= 0xDFFF) return "a UTF-16 surrogate";
  if (code_point > 0x10FFFF) return "beyond U+10FFFF";
  return std::nullopt;
}

void AppendUtf8(uint32_t c, std::string* out) {
  if (c < 0x80) {
    out->push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (c >> 6)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (c >> 12)));
    out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (c >> 18)));
    out->push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

bool NextCodePoint(std::string_view text, size_t* i, uint32_t* code_point) {
  const auto lead = static_cast<uint8_t>(text[*i]);
  if (lead < 0x80) {
    *code_point = lead;
    ++*i;
    return true;
  }
  size_t length = 0;
  uint32_t c = 0;
  uint32_t min = 0;
  if ((lead & 0xE0) == 0xC0) {
    length = 2;
    c = lead & 0x1F;
    min = 0x80;
  } else if ((lead & 0xF0) == 0xE0) {
    length = 3;
    c = lead & 0x0F;
    min = 0x800;
  } else if ((lead & 0xF8) == 0xF0) {
    length = 4;
    c = lead & 0x07;
    min = 0x10000;
  }
  bool ok = length != 0 && length <= text.size() - *i;
  for (size_t k = 1; ok && k < length; ++k) {
    const auto next = static_cast<uint8_t>(text[*i + k]);
    ok = (next & 0xC0) == 0x80;
    c = (c << 6) | (next & 0x3F);
  }
  if (!ok || c < min || InvalidCodePointReason(c)) return false;
  *code_point = c;
  *i += length;
  return true;
}

std::optional<std::vector<uint32_t>> DecodeUtf8(std::string_view text, size_t* error_offset) {
  std::vector<uint32_t> out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    uint32_t c = 0;
    if (!NextCodePoint(text, &i, &c)) {
      *error_offset = i;
      return std::nullopt;
    }
    out.push_back(c);
  }
  return out;
}

}  // namespace epctx
