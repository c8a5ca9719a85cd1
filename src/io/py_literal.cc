#include "io/py_literal.h"

#include <algorithm>
#include <cctype>

#include "util/status_macros.h"

namespace epctx::io {
namespace {

class PyLiteralParser {
 public:
  explicit PyLiteralParser(std::string_view text) : text_(text) {}

  // The whole text must be one literal (surrounding whitespace allowed).
  Result<PyValue> ParseAll() {
    EPCTX_ASSIGN_OR_RETURN(PyValue value, ParseValue(0));
    SkipSpace();
    if (pos_ != text_.size()) return Error("unexpected text after the header dict");
    return value;
  }

 private:
  static constexpr int kMaxDepth = 8;  // headers nest two levels deep; more is not a header

  Status Error(std::string_view what) const {
    return EPCTX_ERROR(kCorrupt, "{} at offset {} of the header", what, pos_);
  }

  void SkipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }

  bool Consume(char c) {
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  Result<PyValue> ParseValue(int depth) {
    if (depth > kMaxDepth) return Error("literal nested too deeply");
    SkipSpace();
    if (pos_ >= text_.size()) return Error("unexpected end of the header");
    char c = text_[pos_];
    if (c == '{') return ParseDict(depth);
    if (c == '(') return ParseSequence(depth, ')', PyValue::Kind::kTuple);
    if (c == '[') return ParseSequence(depth, ']', PyValue::Kind::kList);
    if (c == '\'' || c == '"') return ParseString();
    if (c == '-' || c == '+' || std::isdigit(static_cast<unsigned char>(c))) return ParseInt();
    if (std::isalpha(static_cast<unsigned char>(c))) return ParseName();
    return Error(fmt::format("unexpected character '{}'", c));
  }

  Result<PyValue> ParseDict(int depth) {
    ++pos_;  // '{'
    PyValue dict;
    dict.kind = PyValue::Kind::kDict;
    while (!Consume('}')) {
      EPCTX_ASSIGN_OR_RETURN(PyValue key, ParseValue(depth + 1));
      if (key.kind != PyValue::Kind::kString) return Error("dict key is not a string");
      if (std::find(dict.keys.begin(), dict.keys.end(), key.text) != dict.keys.end()) {
        return Error(fmt::format("key '{}' appears twice", key.text));
      }
      if (!Consume(':')) return Error("expected ':' after a dict key");
      EPCTX_ASSIGN_OR_RETURN(PyValue value, ParseValue(depth + 1));
      dict.keys.push_back(std::move(key.text));
      dict.items.push_back(std::move(value));
      if (!Consume(',')) {
        if (!Consume('}')) return Error("expected ',' or '}' in the dict");
        break;
      }
    }
    return dict;
  }

  Result<PyValue> ParseSequence(int depth, char close, PyValue::Kind kind) {
    ++pos_;  // '(' or '['
    PyValue seq;
    seq.kind = kind;
    bool saw_comma = false;
    while (!Consume(close)) {
      EPCTX_ASSIGN_OR_RETURN(PyValue item, ParseValue(depth + 1));
      seq.items.push_back(std::move(item));
      saw_comma = Consume(',');
      if (!saw_comma) {
        if (!Consume(close)) return Error(fmt::format("expected ',' or '{}'", close));
        break;
      }
    }
    // "(3)" is the integer 3 in Python, not a tuple: a one-element tuple needs its comma.
    if (kind == PyValue::Kind::kTuple && seq.items.size() == 1 && !saw_comma) {
      return std::move(seq.items[0]);
    }
    return seq;
  }

  Result<PyValue> ParseString() {
    char quote = text_[pos_++];
    PyValue str;
    str.kind = PyValue::Kind::kString;
    while (pos_ < text_.size() && text_[pos_] != quote) {
      char c = text_[pos_++];
      if (c == '\\') {
        if (pos_ >= text_.size()) break;
        c = text_[pos_++];
      }
      str.text += c;
    }
    if (pos_ >= text_.size()) return Error("unterminated string");
    ++pos_;  // closing quote
    return str;
  }

  Result<PyValue> ParseInt() {
    size_t start = pos_;
    bool negative = text_[pos_] == '-';
    if (text_[pos_] == '-' || text_[pos_] == '+') ++pos_;
    size_t digits_start = pos_;
    int64_t value = 0;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
      int digit = text_[pos_] - '0';
      if (__builtin_mul_overflow(value, 10, &value) ||
          __builtin_add_overflow(value, negative ? -digit : digit, &value)) {
        return Error("integer out of range");
      }
      ++pos_;
    }
    if (pos_ == digits_start) return Error("expected digits");
    if (pos_ < text_.size() && (text_[pos_] == 'L' || text_[pos_] == 'l')) ++pos_;  // Python 2
    PyValue v;
    v.kind = PyValue::Kind::kInt;
    v.integer = value;
    v.text = std::string(text_.substr(start, pos_ - start));
    return v;
  }

  Result<PyValue> ParseName() {
    size_t start = pos_;
    while (pos_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) {
      ++pos_;
    }
    PyValue v;
    v.text = std::string(text_.substr(start, pos_ - start));
    if (v.text == "True" || v.text == "False") {
      v.kind = PyValue::Kind::kBool;
      v.boolean = v.text == "True";
    } else if (v.text == "None") {
      v.kind = PyValue::Kind::kNone;
    } else {
      pos_ = start;
      return Error(fmt::format("unexpected name '{}'", v.text));
    }
    return v;
  }

  std::string_view text_;
  size_t pos_ = 0;
};

}  // namespace

Result<PyValue> ParsePyLiteral(std::string_view text) {
  return PyLiteralParser(text).ParseAll();
}

}  // namespace epctx::io
