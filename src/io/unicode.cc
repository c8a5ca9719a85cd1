// Strict UTF-8 (RFC 3629): the shortest form only, no surrogates, nothing past U+10FFFF.

#include "io/unicode.h"

namespace epctx::io {

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

std::optional<std::vector<uint32_t>> DecodeUtf8(std::string_view text, size_t* error_offset) {
  std::vector<uint32_t> out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    auto lead = static_cast<uint8_t>(text[i]);
    size_t length = 0;
    uint32_t c = 0;
    uint32_t min = 0;
    if (lead < 0x80) {
      out.push_back(lead);
      ++i;
      continue;
    }
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
    bool ok = length != 0 && length <= text.size() - i;
    for (size_t k = 1; ok && k < length; ++k) {
      auto next = static_cast<uint8_t>(text[i + k]);
      ok = (next & 0xC0) == 0x80;
      c = (c << 6) | (next & 0x3F);
    }
    if (!ok || c < min || InvalidCodePointReason(c)) {
      *error_offset = i;
      return std::nullopt;
    }
    out.push_back(c);
    i += length;
  }
  return out;
}

}  // namespace epctx::io
