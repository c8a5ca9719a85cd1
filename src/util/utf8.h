// UTF-8 <-> Unicode code points, for string tensors (which hold UTF-8, as ONNX Runtime's do): the
// .npy reader and writer (UTF-32 in the file) and StringNormalizer's case mapping. Both directions
// refuse what is not Unicode text (surrogates, code points past U+10FFFF, malformed UTF-8) rather
// than guess.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace epctx {

// Why `code_point` is not a Unicode scalar value ("a UTF-16 surrogate", "beyond U+10FFFF"), or
// nullopt when it is one.
std::optional<std::string_view> InvalidCodePointReason(uint32_t code_point);

// Appends the UTF-8 encoding of `code_point`, which must be a Unicode scalar value.
void AppendUtf8(uint32_t code_point, std::string* out);

// The code point starting at byte `*i` of `text` (which must be inside it) into `*code_point`,
// advancing `*i` past it; false, with neither changed, when the bytes there are not well-formed
// UTF-8.
bool NextCodePoint(std::string_view text, size_t* i, uint32_t* code_point);

// The code points of `text`, or nullopt when it is not well-formed UTF-8 (overlong forms,
// surrogates, past U+10FFFF, truncated sequences); then `*error_offset` is the byte offset of the
// first bad sequence.
std::optional<std::vector<uint32_t>> DecodeUtf8(std::string_view text, size_t* error_offset);

}  // namespace epctx
