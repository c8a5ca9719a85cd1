#include "compile/symbolic/symbol_table.h"

#include <utility>

namespace epctx::compile::symbolic {

SymbolTable::SymbolTable(std::set<std::string> reserved, std::set<std::string> declared)
    : reserved_(std::move(reserved)), declared_(std::move(declared)) {}

DimExpr SymbolTable::Fresh() {
  std::string name;
  do {
    name = "sym" + std::to_string(next_fresh_++);
  } while (reserved_.count(name) > 0);
  reserved_.insert(name);
  fresh_.insert(name);
  return DimExpr::Atom(name);
}

DimExpr SymbolTable::Canonical(const DimExpr& e) const {
  DimExpr out = e;
  for (auto it = parent_.find(out.key()); it != parent_.end(); it = parent_.find(out.key())) {
    out = it->second;
  }
  return out;
}

int SymbolTable::Preference(const DimExpr& e) const {
  if (e.AsConstant()) return 0;
  const std::string* atom = e.AsAtom();
  if (atom == nullptr) return 2;  // computed expressions keep their structure for later rules
  if (declared_.count(*atom) > 0) return 1;
  return fresh_.count(*atom) > 0 ? 4 : 3;
}

bool SymbolTable::Unite(const DimExpr& a, const DimExpr& b) {
  DimExpr ra = Canonical(a), rb = Canonical(b);
  if (ra == rb) return true;
  if (ra.AsConstant() && rb.AsConstant()) return false;
  if (Preference(rb) < Preference(ra)) std::swap(ra, rb);
  // A dim the model declares open is not made static by an inference: a rule that got it wrong
  // would otherwise fix it everywhere.
  const std::string* atom = rb.AsAtom();
  if (ra.AsConstant() && atom != nullptr && declared_.count(*atom) > 0) return false;
  parent_.insert_or_assign(rb.key(), ra);
  return true;
}

std::string SymbolTable::NameOf(const DimExpr& e) {
  if (const std::string* atom = e.AsAtom()) return *atom;
  auto it = names_.find(e.key());
  if (it != names_.end()) return it->second;
  // Expression keys are the names; one that a model dim already uses gets primes until unique.
  std::string name = e.key();
  while (reserved_.count(name) > 0) name += '\'';
  reserved_.insert(name);
  names_.emplace(e.key(), name);
  return name;
}

}  // namespace epctx::compile::symbolic
