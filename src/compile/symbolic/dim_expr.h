// Integer expressions over symbolic tensor dims, for the symbolic shape inference: a constant plus
// a sum of integer multiples of terms, where a term is a named dim (an "atom": never negative) or
// a min, max, product or floor division of expressions. Expressions are kept in one canonical
// form, so two expressions with the same key have the same value in every run; different keys
// prove nothing. Every operation that could overflow or that the form cannot express returns
// nullopt, which callers treat as "unknown".
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace epctx::compile::symbolic {

struct Term;

class DimExpr {
 public:
  DimExpr() : key_("0") {}  // the constant 0
  static DimExpr Constant(int64_t value);
  // A named dim: an int64 in [0, INT64_MAX].
  static DimExpr Atom(const std::string& name);

  // The constant value, when the expression is one.
  std::optional<int64_t> AsConstant() const;
  // The atom's name, when the expression is exactly one atom.
  const std::string* AsAtom() const;
  // The canonical form: equal keys, equal values.
  const std::string& key() const { return key_; }
  bool operator==(const DimExpr& other) const { return key_ == other.key_; }
  bool operator!=(const DimExpr& other) const { return key_ != other.key_; }

  // Bounds valid in every run; nullopt when unbounded on that side.
  std::optional<int64_t> LowerBound() const;
  std::optional<int64_t> UpperBound() const;
  // Whether the value is >= 0 in every run: by the bounds, or with a subtracted min term (added
  // max term) replaced by one of its arguments, which it never exceeds (falls below).
  bool ProvablyNonNegative() const { return NonNegative(2); }

  // The expression's constant factor and the product of the rest, as far as the form shows it:
  // 6*(a*b) gives {6, {a, b}}; a sum that is not one scaled term is a factor of its own.
  std::pair<int64_t, std::vector<DimExpr>> Factors() const;

  // The sub-expressions a min term has, when the expression is exactly one min term.
  const std::vector<DimExpr>* AsMinArgs() const;
  // Whether the expression is exactly one term (an atom, min, max, product or division).
  bool IsSingleTerm() const { return SingleTerm() != nullptr; }

  friend std::optional<DimExpr> Add(const DimExpr& a, const DimExpr& b);
  friend std::optional<DimExpr> Scale(const DimExpr& a, int64_t factor);
  friend std::optional<DimExpr> Mul(const DimExpr& a, const DimExpr& b);
  friend std::optional<DimExpr> FloorDiv(const DimExpr& a, int64_t divisor);
  friend std::optional<DimExpr> MinOf(const DimExpr& a, const DimExpr& b);
  friend std::optional<DimExpr> MaxOf(const DimExpr& a, const DimExpr& b);

 private:
  // coef * term.
  static DimExpr OfTerm(int64_t coef, std::shared_ptr<const Term> term);
  // The term, when the expression is exactly 1 * term.
  const Term* SingleTerm() const;
  static std::optional<DimExpr> Extremum(const DimExpr& a, const DimExpr& b, bool is_min);
  bool NonNegative(int depth) const;
  // Drops zero terms and computes the key; false when the key grew too long.
  bool Normalize();

  int64_t constant_ = 0;
  // Sorted by the term's key, coefficients never 0.
  std::vector<std::pair<int64_t, std::shared_ptr<const Term>>> terms_;
  std::string key_;
};

std::optional<DimExpr> Add(const DimExpr& a, const DimExpr& b);
std::optional<DimExpr> Scale(const DimExpr& a, int64_t factor);
std::optional<DimExpr> Sub(const DimExpr& a, const DimExpr& b);
std::optional<DimExpr> Mul(const DimExpr& a, const DimExpr& b);
// floor(a / divisor) for divisor > 0.
std::optional<DimExpr> FloorDiv(const DimExpr& a, int64_t divisor);
// ceil(a / divisor) for divisor > 0.
std::optional<DimExpr> CeilDiv(const DimExpr& a, int64_t divisor);
std::optional<DimExpr> MinOf(const DimExpr& a, const DimExpr& b);
std::optional<DimExpr> MaxOf(const DimExpr& a, const DimExpr& b);

// The sign of a - b when every run agrees on it: -1, 0 or 1; nullopt otherwise.
std::optional<int> Compare(const DimExpr& a, const DimExpr& b);
// Whether a >= b (a <= b) in every run.
bool ProvablyGE(const DimExpr& a, const DimExpr& b);
bool ProvablyLE(const DimExpr& a, const DimExpr& b);
// Whether a == b in every run (true), in no run (false), or unknown.
std::optional<bool> ProvablyEqual(const DimExpr& a, const DimExpr& b);

}  // namespace epctx::compile::symbolic
