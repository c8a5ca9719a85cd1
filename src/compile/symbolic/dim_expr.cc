#include "compile/symbolic/dim_expr.h"

#include <algorithm>
#include <cctype>
#include <climits>

namespace epctx::compile::symbolic {

// Longer expressions are given up on: they would only ever be compared with themselves.
constexpr size_t kMaxKeyLength = 256;

struct Term {
  enum class Kind { kAtom, kMin, kMax, kMul, kFloorDiv };
  Kind kind = Kind::kAtom;
  std::string name;           // kAtom
  std::vector<DimExpr> args;  // kMin/kMax/kMul: 2 or more, sorted by key; kFloorDiv: the numerator
  int64_t divisor = 1;        // kFloorDiv, > 1
  std::string key;
  std::optional<int64_t> lo, hi;  // bounds of the term's value in every run
};

namespace {

using Bound = std::optional<int64_t>;

Bound CheckedMul(Bound a, Bound b) {
  int64_t out = 0;
  if (!a || !b || __builtin_mul_overflow(*a, *b, &out)) return std::nullopt;
  return out;
}

Bound CheckedAdd(Bound a, Bound b) {
  int64_t out = 0;
  if (!a || !b || __builtin_add_overflow(*a, *b, &out)) return std::nullopt;
  return out;
}

int64_t FloorDivide(int64_t a, int64_t d) {
  int64_t q = a / d;
  if ((a % d != 0) && ((a < 0) != (d < 0))) --q;
  return q;
}

bool IsIdentifier(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

// Atoms print as their name when it is an identifier, else braced with '\' escapes, so no atom's
// text can be mistaken for an operator or for another expression.
std::string AtomKey(const std::string& name) {
  if (IsIdentifier(name)) return name;
  std::string out = "{";
  for (char c : name) {
    if (c == '\\' || c == '}') out += '\\';
    out += c;
  }
  return out + "}";
}

void SetMinMaxKeyAndBounds(Term& t) {
  const bool is_min = t.kind == Term::Kind::kMin;
  t.key = is_min ? "min(" : "max(";
  Bound lo, hi;
  bool all_lo = true, all_hi = true;
  for (size_t i = 0; i < t.args.size(); ++i) {
    const DimExpr& a = t.args[i];
    if (i > 0) t.key += ',';
    t.key += a.key();
    Bound alo = a.LowerBound(), ahi = a.UpperBound();
    all_lo &= alo.has_value();
    all_hi &= ahi.has_value();
    // min: the lowest lower bound (all needed) and the lowest known upper bound;
    // max: the highest known lower bound and the highest upper bound (all needed).
    if (alo) lo = !lo ? alo : (is_min ? std::min(*lo, *alo) : std::max(*lo, *alo));
    if (ahi) hi = !hi ? ahi : (is_min ? std::min(*hi, *ahi) : std::max(*hi, *ahi));
  }
  t.key += ')';
  t.lo = (is_min && !all_lo) ? std::nullopt : lo;
  t.hi = (!is_min && !all_hi) ? std::nullopt : hi;
}

void SetMulKeyAndBounds(Term& t) {
  Bound lo = 1, hi = 1;
  for (size_t i = 0; i < t.args.size(); ++i) {
    const DimExpr& a = t.args[i];
    if (i > 0) t.key += '*';
    // Atoms and function-like terms stand bare; sums are parenthesized.
    t.key += a.IsSingleTerm() ? a.key() : "(" + a.key() + ")";
    Bound alo = a.LowerBound();
    if (!alo || *alo < 0) {
      lo = hi = std::nullopt;  // a factor of unknown sign: no bound on the product
      continue;
    }
    lo = CheckedMul(lo, alo);
    hi = CheckedMul(hi, a.UpperBound());
  }
  t.lo = lo;
  t.hi = hi;
}

std::shared_ptr<const Term> MakeTerm(Term t) {
  switch (t.kind) {
    case Term::Kind::kAtom:
      // A dim is an int64 that is never negative.
      t.key = AtomKey(t.name);
      t.lo = 0;
      t.hi = INT64_MAX;
      break;
    case Term::Kind::kMin:
    case Term::Kind::kMax:
      SetMinMaxKeyAndBounds(t);
      break;
    case Term::Kind::kMul:
      SetMulKeyAndBounds(t);
      break;
    case Term::Kind::kFloorDiv: {
      const DimExpr& n = t.args[0];
      t.key = "floor((" + n.key() + ")/" + std::to_string(t.divisor) + ")";
      if (Bound lo = n.LowerBound()) t.lo = FloorDivide(*lo, t.divisor);
      if (Bound hi = n.UpperBound()) t.hi = FloorDivide(*hi, t.divisor);
      break;
    }
  }
  return std::make_shared<const Term>(std::move(t));
}

void SortByKey(std::vector<DimExpr>& v) {
  std::sort(v.begin(), v.end(),
            [](const DimExpr& a, const DimExpr& b) { return a.key() < b.key(); });
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

}  // namespace

bool DimExpr::Normalize() {
  std::erase_if(terms_, [](const auto& t) { return t.first == 0; });
  key_.clear();
  // Terms are kept in key order; added terms print before subtracted ones (s-1, not -1+s).
  for (bool negative : {false, true}) {
    for (const auto& [coef, term] : terms_) {
      if ((coef < 0) != negative) continue;
      std::string part = coef == 1    ? term->key
                         : coef == -1 ? "-" + term->key
                                      : std::to_string(coef) + "*" + term->key;
      if (!key_.empty() && part[0] != '-') key_ += '+';
      key_ += part;
    }
  }
  if (terms_.empty()) {
    key_ = std::to_string(constant_);
  } else if (constant_ != 0) {
    key_ += (constant_ > 0 ? "+" : "") + std::to_string(constant_);
  }
  return key_.size() <= kMaxKeyLength;
}

DimExpr DimExpr::Constant(int64_t value) {
  DimExpr e;
  e.constant_ = value;
  e.Normalize();
  return e;
}

DimExpr DimExpr::OfTerm(int64_t coef, std::shared_ptr<const Term> term) {
  DimExpr e;
  e.terms_.emplace_back(coef, std::move(term));
  e.Normalize();
  return e;
}

DimExpr DimExpr::Atom(const std::string& name) {
  Term t;
  t.kind = Term::Kind::kAtom;
  t.name = name;
  return OfTerm(1, MakeTerm(std::move(t)));
}

const Term* DimExpr::SingleTerm() const {
  if (constant_ != 0 || terms_.size() != 1 || terms_[0].first != 1) return nullptr;
  return terms_[0].second.get();
}

std::optional<int64_t> DimExpr::AsConstant() const {
  if (!terms_.empty()) return std::nullopt;
  return constant_;
}

const std::string* DimExpr::AsAtom() const {
  const Term* t = SingleTerm();
  return t != nullptr && t->kind == Term::Kind::kAtom ? &t->name : nullptr;
}

const std::vector<DimExpr>* DimExpr::AsMinArgs() const {
  const Term* t = SingleTerm();
  return t != nullptr && t->kind == Term::Kind::kMin ? &t->args : nullptr;
}

std::optional<int64_t> DimExpr::LowerBound() const {
  Bound out = constant_;
  for (const auto& [coef, term] : terms_) {
    out = CheckedAdd(out, CheckedMul(coef, coef > 0 ? term->lo : term->hi));
  }
  return out;
}

std::optional<int64_t> DimExpr::UpperBound() const {
  Bound out = constant_;
  for (const auto& [coef, term] : terms_) {
    out = CheckedAdd(out, CheckedMul(coef, coef > 0 ? term->hi : term->lo));
  }
  return out;
}

std::pair<int64_t, std::vector<DimExpr>> DimExpr::Factors() const {
  if (terms_.empty()) return {constant_, {}};
  if (constant_ != 0 || terms_.size() != 1) return {1, {*this}};
  const auto& [coef, term] = terms_[0];
  if (term->kind == Term::Kind::kMul) return {coef, term->args};
  return {coef, {OfTerm(1, term)}};
}

std::optional<DimExpr> Add(const DimExpr& a, const DimExpr& b) {
  DimExpr out;
  if (__builtin_add_overflow(a.constant_, b.constant_, &out.constant_)) return std::nullopt;
  size_t i = 0, j = 0;
  while (i < a.terms_.size() || j < b.terms_.size()) {
    if (j == b.terms_.size() ||
        (i < a.terms_.size() && a.terms_[i].second->key < b.terms_[j].second->key)) {
      out.terms_.push_back(a.terms_[i++]);
    } else if (i == a.terms_.size() || b.terms_[j].second->key < a.terms_[i].second->key) {
      out.terms_.push_back(b.terms_[j++]);
    } else {
      int64_t coef = 0;
      if (__builtin_add_overflow(a.terms_[i].first, b.terms_[j].first, &coef)) return std::nullopt;
      out.terms_.emplace_back(coef, a.terms_[i].second);
      ++i;
      ++j;
    }
  }
  if (!out.Normalize()) return std::nullopt;
  return out;
}

std::optional<DimExpr> Scale(const DimExpr& a, int64_t factor) {
  DimExpr out;
  if (__builtin_mul_overflow(a.constant_, factor, &out.constant_)) return std::nullopt;
  for (const auto& [coef, term] : a.terms_) {
    int64_t c = 0;
    if (__builtin_mul_overflow(coef, factor, &c)) return std::nullopt;
    out.terms_.emplace_back(c, term);
  }
  if (!out.Normalize()) return std::nullopt;
  return out;
}

std::optional<DimExpr> Sub(const DimExpr& a, const DimExpr& b) {
  std::optional<DimExpr> nb = Scale(b, -1);
  if (!nb) return std::nullopt;
  return Add(a, *nb);
}

std::optional<DimExpr> Mul(const DimExpr& a, const DimExpr& b) {
  if (std::optional<int64_t> c = a.AsConstant()) return Scale(b, *c);
  if (std::optional<int64_t> c = b.AsConstant()) return Scale(a, *c);
  auto [ca, fa] = a.Factors();
  auto [cb, fb] = b.Factors();
  int64_t coef = 0;
  if (__builtin_mul_overflow(ca, cb, &coef)) return std::nullopt;
  Term t;
  t.kind = Term::Kind::kMul;
  t.args = std::move(fa);
  t.args.insert(t.args.end(), fb.begin(), fb.end());
  // Repeated factors stay (a*a is not a); sort without dropping duplicates.
  std::sort(t.args.begin(), t.args.end(),
            [](const DimExpr& x, const DimExpr& y) { return x.key() < y.key(); });
  DimExpr out = DimExpr::OfTerm(coef, MakeTerm(std::move(t)));
  if (out.key().size() > kMaxKeyLength) return std::nullopt;
  return out;
}

std::optional<DimExpr> FloorDiv(const DimExpr& a, int64_t divisor) {
  if (divisor <= 0) return std::nullopt;
  if (divisor == 1) return a;
  // a = divisor * q + r with q the exactly divisible part: floor(a / d) = q + floor(r / d).
  DimExpr q, r;
  q.constant_ = FloorDivide(a.constant_, divisor);
  r.constant_ = a.constant_ - q.constant_ * divisor;
  for (const auto& [coef, term] : a.terms_) {
    if (coef % divisor == 0) {
      q.terms_.emplace_back(coef / divisor, term);
    } else {
      r.terms_.emplace_back(coef, term);
    }
  }
  if (!q.Normalize() || !r.Normalize()) return std::nullopt;
  if (std::optional<int64_t> rc = r.AsConstant()) {
    return Add(q, DimExpr::Constant(FloorDivide(*rc, divisor)));
  }
  Term t;
  t.kind = Term::Kind::kFloorDiv;
  t.args = {r};
  t.divisor = divisor;
  return Add(q, DimExpr::OfTerm(1, MakeTerm(std::move(t))));
}

std::optional<DimExpr> CeilDiv(const DimExpr& a, int64_t divisor) {
  if (divisor <= 0) return std::nullopt;
  std::optional<DimExpr> shifted = Add(a, DimExpr::Constant(divisor - 1));
  if (!shifted) return std::nullopt;
  return FloorDiv(*shifted, divisor);
}

// min or max of a and b: an argument provably no greater (no less) than another is the result;
// otherwise a term over the flattened, deduplicated arguments.
std::optional<DimExpr> DimExpr::Extremum(const DimExpr& a, const DimExpr& b, bool is_min) {
  const Term::Kind kind = is_min ? Term::Kind::kMin : Term::Kind::kMax;
  std::vector<DimExpr> args;
  for (const DimExpr* e : {&a, &b}) {
    const Term* t = e->SingleTerm();
    if (t != nullptr && t->kind == kind) {
      args.insert(args.end(), t->args.begin(), t->args.end());
    } else {
      args.push_back(*e);
    }
  }
  SortByKey(args);
  std::vector<DimExpr> kept;
  for (size_t i = 0; i < args.size(); ++i) {
    bool dominated = false;
    for (size_t j = 0; j < args.size() && !dominated; ++j) {
      if (i == j) continue;
      // args[i] is not needed when another argument is always at least as small (as large); of
      // two provably equal arguments the first is kept.
      const bool beaten = is_min ? ProvablyLE(args[j], args[i]) : ProvablyGE(args[j], args[i]);
      const bool tie = is_min ? ProvablyLE(args[i], args[j]) : ProvablyGE(args[i], args[j]);
      if (beaten && (!tie || j < i)) dominated = true;
    }
    if (!dominated) kept.push_back(args[i]);
  }
  if (kept.size() == 1) return kept[0];
  Term t;
  t.kind = kind;
  t.args = std::move(kept);
  DimExpr out = OfTerm(1, MakeTerm(std::move(t)));
  if (out.key().size() > kMaxKeyLength) return std::nullopt;
  return out;
}

std::optional<DimExpr> MinOf(const DimExpr& a, const DimExpr& b) {
  return DimExpr::Extremum(a, b, true);
}

std::optional<DimExpr> MaxOf(const DimExpr& a, const DimExpr& b) {
  return DimExpr::Extremum(a, b, false);
}
bool DimExpr::NonNegative(int depth) const {
  Bound lo = LowerBound();
  if (lo && *lo >= 0) return true;
  if (depth == 0) return false;
  for (size_t i = 0; i < terms_.size(); ++i) {
    const auto& [coef, term] = terms_[i];
    const bool lowers = (coef < 0 && term->kind == Term::Kind::kMin) ||
                        (coef > 0 && term->kind == Term::Kind::kMax);
    if (!lowers) continue;
    DimExpr without = *this;
    without.terms_.erase(without.terms_.begin() + static_cast<std::ptrdiff_t>(i));
    if (!without.Normalize()) continue;
    for (const DimExpr& arg : term->args) {
      std::optional<DimExpr> scaled = Scale(arg, coef);
      std::optional<DimExpr> replaced = scaled ? Add(without, *scaled) : std::nullopt;
      if (replaced && replaced->NonNegative(depth - 1)) return true;
    }
  }
  return false;
}

std::optional<int> Compare(const DimExpr& a, const DimExpr& b) {
  if (a == b) return 0;
  std::optional<DimExpr> d = Sub(a, b);
  std::optional<DimExpr> nd = Sub(b, a);
  if (!d || !nd) return std::nullopt;
  std::optional<DimExpr> d1 = Sub(*d, DimExpr::Constant(1));
  std::optional<DimExpr> nd1 = Sub(*nd, DimExpr::Constant(1));
  if (d1 && d1->ProvablyNonNegative()) return 1;
  if (nd1 && nd1->ProvablyNonNegative()) return -1;
  if (d->ProvablyNonNegative() && nd->ProvablyNonNegative()) return 0;
  return std::nullopt;
}

bool ProvablyGE(const DimExpr& a, const DimExpr& b) {
  if (a == b) return true;
  std::optional<DimExpr> d = Sub(a, b);
  return d && d->ProvablyNonNegative();
}

bool ProvablyLE(const DimExpr& a, const DimExpr& b) {
  return ProvablyGE(b, a);
}

std::optional<bool> ProvablyEqual(const DimExpr& a, const DimExpr& b) {
  std::optional<int> c = Compare(a, b);
  if (!c) return std::nullopt;
  return *c == 0;
}

}  // namespace epctx::compile::symbolic
