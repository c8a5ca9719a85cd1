// The Python-literal parser of .npy headers on its own: the values it builds, and the errors (with
// their offsets) for text that is not one literal. npy_test.cc covers it through whole files.

#include <gtest/gtest.h>

#include <string>

#include "io/py_literal.h"

namespace epctx::io {
namespace {

PyValue Parse(const std::string& text) {
  auto v = ParsePyLiteral(text);
  EXPECT_TRUE(v.ok()) << v.status().ToString();
  return v.ok() ? *v : PyValue{};
}

std::string ErrorFor(const std::string& text) {
  auto v = ParsePyLiteral(text);
  if (v.ok()) return "";
  EXPECT_EQ(v.status().code(), StatusCode::kCorrupt);
  return v.status().message();
}

TEST(PyLiteralTest, Values) {
  PyValue dict = Parse(R"( {'a': (1, -2), "b": [True, None, 'x\'y'], 'c': (), 'd': (7,)} )");
  ASSERT_EQ(dict.kind, PyValue::Kind::kDict);
  ASSERT_EQ(dict.keys, (std::vector<std::string>{"a", "b", "c", "d"}));
  ASSERT_EQ(dict.items.size(), 4u);

  const PyValue& a = dict.items[0];
  ASSERT_EQ(a.kind, PyValue::Kind::kTuple);
  ASSERT_EQ(a.items.size(), 2u);
  EXPECT_EQ(a.items[0].integer, 1);
  EXPECT_EQ(a.items[1].integer, -2);
  EXPECT_EQ(a.items[1].text, "-2");

  const PyValue& b = dict.items[1];
  ASSERT_EQ(b.kind, PyValue::Kind::kList);
  ASSERT_EQ(b.items.size(), 3u);
  EXPECT_EQ(b.items[0].kind, PyValue::Kind::kBool);
  EXPECT_TRUE(b.items[0].boolean);
  EXPECT_EQ(b.items[1].kind, PyValue::Kind::kNone);
  EXPECT_EQ(b.items[2].kind, PyValue::Kind::kString);
  EXPECT_EQ(b.items[2].text, "x'y");

  EXPECT_EQ(dict.items[2].kind, PyValue::Kind::kTuple);
  EXPECT_TRUE(dict.items[2].items.empty());
  ASSERT_EQ(dict.items[3].kind, PyValue::Kind::kTuple);
  EXPECT_EQ(dict.items[3].items.size(), 1u);
}

TEST(PyLiteralTest, ParenthesesWithoutACommaAreNoTuple) {
  PyValue v = Parse("(3)");
  EXPECT_EQ(v.kind, PyValue::Kind::kInt);
  EXPECT_EQ(v.integer, 3);
  v = Parse("[3]");
  EXPECT_EQ(v.kind, PyValue::Kind::kList);
  EXPECT_EQ(v.items.size(), 1u);
}

TEST(PyLiteralTest, IntegersAtTheLimitsOfInt64) {
  EXPECT_EQ(Parse("9223372036854775807").integer, INT64_MAX);
  EXPECT_EQ(Parse("-9223372036854775808").integer, INT64_MIN);
  EXPECT_EQ(ErrorFor("9223372036854775808"), "integer out of range at offset 18 of the header");
}

TEST(PyLiteralTest, Errors) {
  EXPECT_EQ(ErrorFor(""), "unexpected end of the header at offset 0 of the header");
  EXPECT_EQ(ErrorFor("'abc"), "unterminated string at offset 4 of the header");
  EXPECT_EQ(ErrorFor("{1: 2}"), "dict key is not a string at offset 2 of the header");
  EXPECT_EQ(ErrorFor("(1 2)"), "expected ',' or ')' at offset 3 of the header");
  EXPECT_EQ(ErrorFor("nan"), "unexpected name 'nan' at offset 0 of the header");
  EXPECT_EQ(ErrorFor("1.5"), "unexpected text after the header dict at offset 1 of the header");
  EXPECT_EQ(ErrorFor("-"), "expected digits at offset 1 of the header");
  EXPECT_EQ(ErrorFor("@"), "unexpected character '@' at offset 0 of the header");
  EXPECT_EQ(ErrorFor(std::string(10, '(')), "literal nested too deeply at offset 9 of the header");
}

}  // namespace
}  // namespace epctx::io
