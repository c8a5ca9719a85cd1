// The dim expressions of the symbolic shape inference: one canonical form per value, sound
// bounds, and min/max/division simplified only when every run agrees.
#include "compile/symbolic/dim_expr.h"

#include <gtest/gtest.h>

#include <climits>

namespace epctx::compile::symbolic {
namespace {

DimExpr A(const std::string& name) {
  return DimExpr::Atom(name);
}
DimExpr C(int64_t v) {
  return DimExpr::Constant(v);
}

TEST(DimExpr, SumsAreCanonical) {
  DimExpr ab = *Add(A("a"), A("b"));
  DimExpr ba = *Add(A("b"), A("a"));
  EXPECT_EQ(ab, ba);
  EXPECT_EQ(ab.key(), "a+b");
  EXPECT_EQ(Add(*Sub(A("s"), C(1)), C(1))->key(), "s");
  EXPECT_EQ(Sub(A("s"), A("s"))->AsConstant(), 0);
  EXPECT_EQ(Scale(A("s"), -2)->key(), "-2*s");
  EXPECT_EQ(Add(*Scale(A("s"), 3), C(-4))->key(), "3*s-4");
}

TEST(DimExpr, ProductsCollectFactors) {
  DimExpr bs = *Mul(A("batch"), A("seq"));
  EXPECT_EQ(bs, *Mul(A("seq"), A("batch")));
  DimExpr scaled = *Mul(*Mul(A("batch"), C(128)), A("seq"));
  EXPECT_EQ(scaled.key(), "128*batch*seq");
  auto [c, factors] = scaled.Factors();
  EXPECT_EQ(c, 128);
  ASSERT_EQ(factors.size(), 2u);
  EXPECT_EQ(factors[0].key(), "batch");
  EXPECT_EQ(factors[1].key(), "seq");
  // A sum is a factor of its own.
  EXPECT_EQ(Mul(*Add(A("a"), C(1)), A("b"))->key(), "(a+1)*b");
}

TEST(DimExpr, AtomNamesCannotPoseAsExpressions) {
  EXPECT_NE(A("a+b"), *Add(A("a"), A("b")));
  EXPECT_EQ(A("a+b").key(), "{a+b}");
  EXPECT_EQ(*A("a+b").AsAtom(), "a+b");
  EXPECT_NE(A("x}"), A("x\\"));
}

TEST(DimExpr, DivisionSimplifiesTheDivisiblePart) {
  EXPECT_EQ(FloorDiv(*Scale(A("s"), 4), 2)->key(), "2*s");
  EXPECT_EQ(FloorDiv(*Add(*Scale(A("s"), 2), C(3)), 2)->key(), "s+1");
  EXPECT_EQ(FloorDiv(C(-7), 2)->AsConstant(), -4);
  EXPECT_EQ(FloorDiv(A("h"), 2)->key(), "floor((h)/2)");
  EXPECT_EQ(CeilDiv(A("h"), 2)->key(), "floor((h+1)/2)");
  EXPECT_FALSE(FloorDiv(A("h"), 0).has_value());
  // The same computation reached twice has the same form: conv output sizes of two branches.
  DimExpr k3 = *Add(*FloorDiv(*Add(A("h"), C(2 - 3)), 2), C(1));
  DimExpr k1 = *Add(*FloorDiv(*Add(A("h"), C(0 - 1)), 2), C(1));
  EXPECT_EQ(k3, k1);
}

TEST(DimExpr, BoundsFollowTheTerms) {
  EXPECT_EQ(A("s").LowerBound(), 0);
  EXPECT_EQ(A("s").UpperBound(), INT64_MAX);
  DimExpr m = *MinOf(A("s"), C(64));
  EXPECT_EQ(m.key(), "min(64,s)");
  EXPECT_EQ(m.LowerBound(), 0);
  EXPECT_EQ(m.UpperBound(), 64);
  EXPECT_EQ(Sub(C(10), A("s"))->UpperBound(), 10);
  EXPECT_EQ(Sub(C(10), A("s"))->LowerBound(), 10 - INT64_MAX);
  EXPECT_FALSE(Add(A("s"), C(1))->UpperBound().has_value());  // would overflow
  EXPECT_EQ(Mul(A("a"), A("b"))->LowerBound(), 0);
}

TEST(DimExpr, MinAndMaxDecideWhenProvable) {
  EXPECT_EQ(MinOf(A("s"), *Add(A("s"), C(1)))->key(), "s");
  EXPECT_EQ(MaxOf(A("s"), C(0))->key(), "s");
  EXPECT_EQ(MaxOf(C(-1), A("s"))->key(), "s");
  EXPECT_EQ(MaxOf(*MinOf(A("s"), C(64)), C(0))->key(), "min(64,s)");
  EXPECT_EQ(MinOf(*MinOf(A("s"), C(64)), C(64))->key(), "min(64,s)");
  EXPECT_EQ(MinOf(A("a"), A("b")), MinOf(A("b"), A("a")));
  EXPECT_EQ(MaxOf(A("a"), A("b"))->key(), "max(a,b)");
}

TEST(DimExpr, CompareOnlyWhatEveryRunAgreesOn) {
  EXPECT_EQ(Compare(A("s"), A("s")), 0);
  EXPECT_EQ(Compare(*Add(A("s"), C(1)), A("s")), 1);
  EXPECT_EQ(Compare(A("s"), C(-1)), 1);  // dims are never negative
  EXPECT_FALSE(Compare(A("s"), C(1)).has_value());
  EXPECT_FALSE(Compare(A("a"), A("b")).has_value());
  EXPECT_EQ(ProvablyEqual(A("s"), C(-1)), false);
  EXPECT_FALSE(ProvablyEqual(A("s"), C(3)).has_value());
  EXPECT_TRUE(ProvablyGE(A("s"), C(0)));
  EXPECT_FALSE(ProvablyGE(A("s"), C(1)));
  EXPECT_TRUE(ProvablyLE(*MinOf(A("s"), C(64)), A("s")));
}

TEST(DimExpr, OverflowIsUnknown) {
  const int64_t big = INT64_MAX - 1;
  EXPECT_FALSE(Add(C(big), C(big)).has_value());
  EXPECT_EQ(Scale(A("s"), big)->LowerBound(), 0);
  EXPECT_FALSE(Mul(*Scale(A("s"), big), C(4)).has_value());
}

}  // namespace
}  // namespace epctx::compile::symbolic
