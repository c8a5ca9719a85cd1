// Views of the program schema's FlatBuffers vectors and strings (absent ones as empty), for the
// executor's files.
#pragma once

#include <span>
#include <string_view>

#include "program_generated.h"

namespace epctx::exec {

template <typename T>
inline std::span<const T> SpanOf(const flatbuffers::Vector<T>* v) {
  if (v == nullptr) return {};
  return {v->data(), v->size()};
}

inline std::string_view ViewOf(const flatbuffers::String* s) {
  return s == nullptr ? std::string_view() : s->string_view();
}

}  // namespace epctx::exec
