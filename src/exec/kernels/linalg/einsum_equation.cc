#include "exec/kernels/linalg/einsum_equation.h"

#include <algorithm>
#include <cctype>
#include <string>

#include "epctx/tensor.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

// One term's letters, with the position of its ellipsis (-1 when it has none).
struct ParsedTerm {
  std::vector<int> letters;
  int ellipsis_at = -1;
};

Result<ParsedTerm> ParseTerm(std::string_view s, std::string_view equation) {
  ParsedTerm t;
  for (size_t i = 0; i < s.size();) {
    if (s.substr(i, 3) == "...") {
      if (t.ellipsis_at >= 0) {
        return EPCTX_ERROR(kInvalidArgument, "equation '{}' has two ellipses in one term",
                           equation);
      }
      t.ellipsis_at = static_cast<int>(t.letters.size());
      i += 3;
      continue;
    }
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (!std::isalpha(c)) {
      return EPCTX_ERROR(kInvalidArgument, "equation '{}' has an unexpected character '{}'",
                         equation, s[i]);
    }
    t.letters.push_back(c);
    ++i;
  }
  return t;
}

}  // namespace

Result<EinsumEquation> ParseEinsum(std::string_view equation,
                                   const std::vector<std::vector<int64_t>>& shapes) {
  std::string eq;
  for (char c : equation) {
    if (!std::isspace(static_cast<unsigned char>(c))) eq.push_back(c);
  }
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> terms;
  for (size_t begin = 0;;) {
    const size_t comma = lhs.find(',', begin);
    terms.push_back(lhs.substr(begin, comma == std::string::npos ? comma : comma - begin));
    if (comma == std::string::npos) break;
    begin = comma + 1;
  }
  if (terms.size() != shapes.size()) {
    return EPCTX_ERROR(kInvalidArgument, "equation '{}' has {} operand terms, the node {} inputs",
                       equation, terms.size(), shapes.size());
  }
  EinsumEquation e;
  int ellipsis_rank = 0;
  std::vector<ParsedTerm> parsed;
  for (size_t i = 0; i < terms.size(); ++i) {
    EPCTX_ASSIGN_OR_RETURN(ParsedTerm t, ParseTerm(terms[i], equation));
    const int rank = static_cast<int>(shapes[i].size());
    const int letters = static_cast<int>(t.letters.size());
    if (t.ellipsis_at < 0 ? rank != letters : rank < letters) {
      return EPCTX_ERROR(kInvalidArgument,
                         "term '{}' of equation '{}' does not fit input {} of shape {}", terms[i],
                         equation, i, ShapeToString(shapes[i]));
    }
    if (t.ellipsis_at >= 0) ellipsis_rank = std::max(ellipsis_rank, rank - letters);
    parsed.push_back(std::move(t));
  }
  std::map<int, int> counts;
  for (size_t i = 0; i < parsed.size(); ++i) {
    const ParsedTerm& t = parsed[i];
    const int rank = static_cast<int>(shapes[i].size());
    const int covered = t.ellipsis_at < 0 ? 0 : rank - static_cast<int>(t.letters.size());
    std::vector<int> labels;
    for (int j = 0; j < static_cast<int>(t.letters.size()); ++j) {
      if (j == t.ellipsis_at) {
        for (int k = 0; k < covered; ++k)
          labels.push_back(kEllipsisLabel + ellipsis_rank - covered + k);
      }
      labels.push_back(t.letters[static_cast<size_t>(j)]);
    }
    if (t.ellipsis_at == static_cast<int>(t.letters.size())) {
      for (int k = 0; k < covered; ++k)
        labels.push_back(kEllipsisLabel + ellipsis_rank - covered + k);
    }
    for (size_t d = 0; d < labels.size(); ++d) {
      const int64_t size = shapes[i][d];
      auto [it, inserted] = e.sizes.emplace(labels[d], size);
      if (!inserted && it->second != size) {
        // numpy broadcasting: a dim of 1 stretches to the other operands' extent.
        if (it->second == 1) {
          it->second = size;
        } else if (size != 1) {
          return EPCTX_ERROR(kInvalidArgument,
                             "equation '{}' gives one subscript the extents {} and {}", equation,
                             it->second, size);
        }
      }
      ++counts[labels[d]];
    }
    e.inputs.push_back(std::move(labels));
  }
  if (arrow == std::string::npos) {
    // Implicit output: the ellipsis dims, then the letters used once, in ASCII order.
    for (int k = 0; k < ellipsis_rank; ++k) e.output.push_back(kEllipsisLabel + k);
    for (const auto& [label, count] : counts) {
      if (label < kEllipsisLabel && count == 1) e.output.push_back(label);
    }
    return e;
  }
  EPCTX_ASSIGN_OR_RETURN(ParsedTerm out, ParseTerm(eq.substr(arrow + 2), equation));
  for (int j = 0; j <= static_cast<int>(out.letters.size()); ++j) {
    if (j == out.ellipsis_at) {
      for (int k = 0; k < ellipsis_rank; ++k) e.output.push_back(kEllipsisLabel + k);
    }
    if (j == static_cast<int>(out.letters.size())) break;
    const int label = out.letters[static_cast<size_t>(j)];
    if (counts.count(label) == 0) {
      return EPCTX_ERROR(kInvalidArgument, "output subscript '{}' of equation '{}' is in no input",
                         static_cast<char>(label), equation);
    }
    if (std::find(e.output.begin(), e.output.end(), label) != e.output.end()) {
      return EPCTX_ERROR(kInvalidArgument, "output subscript '{}' of equation '{}' repeats",
                         static_cast<char>(label), equation);
    }
    e.output.push_back(label);
  }
  return e;
}

}  // namespace epctx::exec::kernels
