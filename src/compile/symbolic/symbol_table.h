// The symbolic dims of one model (its main graph and every body): fresh atoms for dims nothing
// names, the equalities learnt while inferring (a dim ONNX named and the expression computed for
// it), and the names the IR gets for computed expressions.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>

#include "compile/symbolic/dim_expr.h"

namespace epctx::compile::symbolic {

class SymbolTable {
 public:
  // `reserved`: every dim name the model uses (never handed out again); `declared`: the names of
  // the main graph's input dims, preferred as representatives.
  SymbolTable(std::set<std::string> reserved, std::set<std::string> declared);

  // A new atom: some non-negative integer, equal to nothing known.
  DimExpr Fresh();
  // The representative of everything known equal to `e`.
  DimExpr Canonical(const DimExpr& e) const;
  // Records that a == b in every run; false (and nothing recorded) when they are known to differ.
  bool Unite(const DimExpr& a, const DimExpr& b);
  // The IR's name for a non-constant expression: an atom's own name, otherwise a name made from
  // the expression that no dim of the model uses for something else.
  std::string NameOf(const DimExpr& e);

 private:
  // Which of two equal expressions represents them: lower is preferred.
  int Preference(const DimExpr& e) const;

  std::set<std::string> reserved_;
  std::set<std::string> declared_;
  std::set<std::string> fresh_;
  std::map<std::string, DimExpr> parent_;     // key -> an equal expression nearer the root
  std::map<std::string, std::string> names_;  // key of a compound expression -> IR name
  int64_t next_fresh_ = 0;
};

}  // namespace epctx::compile::symbolic
