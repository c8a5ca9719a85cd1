// A parser for the subset of Python literals that .npy headers are written in: dicts, tuples,
// lists, strings, integers, True, False and None. The text is untrusted: nesting is limited and
// every error says at which offset of the header it is.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "epctx/status.h"

namespace epctx::io {

struct PyValue {
  enum class Kind { kString, kInt, kBool, kNone, kTuple, kList, kDict };
  Kind kind = Kind::kNone;
  std::string text;               // kString: the string; otherwise the literal as written
  int64_t integer = 0;            // kInt
  bool boolean = false;           // kBool
  std::vector<PyValue> items;     // kTuple, kList: elements; kDict: values
  std::vector<std::string> keys;  // kDict: keys (all strings), parallel to `items`
};

// The whole text must be one literal (surrounding whitespace allowed).
Result<PyValue> ParsePyLiteral(std::string_view text);

}  // namespace epctx::io
