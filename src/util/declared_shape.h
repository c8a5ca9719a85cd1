// A shape against a declared one whose unknown dims are -1: the one rule by which the executor
// (exec/value_decl.h) and a session's input check (loader/input_check.cc) compare them.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace epctx {

// The dims of `dims` that differ from a static dim of `declared` (same rank assumed).
inline std::vector<size_t> DimsDifferingFromDeclared(std::span<const int64_t> declared,
                                                     std::span<const int64_t> dims) {
  std::vector<size_t> differ;
  for (size_t d = 0; d < declared.size() && d < dims.size(); ++d) {
    if (declared[d] >= 0 && dims[d] != declared[d]) differ.push_back(d);
  }
  return differ;
}

// Whether `dims` have `declared`'s rank and every one of its static dims.
inline bool FitsDeclaredShape(std::span<const int64_t> declared, std::span<const int64_t> dims) {
  if (dims.size() != declared.size()) return false;
  for (size_t d = 0; d < declared.size(); ++d) {
    if (declared[d] >= 0 && dims[d] != declared[d]) return false;
  }
  return true;
}

}  // namespace epctx
