// EscapeFileName: safe bytes kept, everything else %XX, and no two names share a file name.

#include <gtest/gtest.h>

#include <optional>
#include <random>
#include <set>
#include <string>

#include "epctx/tensor_io.h"

namespace epctx {
namespace {

// The inverse of EscapeFileName, written from its documented rule; nullopt if `file` is not an
// escaped name.
std::optional<std::string> Unescape(const std::string& file) {
  if (file == "%") return "";
  if (file == "%2E") return ".";
  if (file == "%2E%2E") return "..";
  std::string out;
  for (size_t i = 0; i < file.size(); ++i) {
    if (file[i] != '%') {
      out += file[i];
      continue;
    }
    if (i + 2 >= file.size()) return std::nullopt;
    auto hex = [](char c) -> int {
      if (c >= '0' && c <= '9') return c - '0';
      if (c >= 'A' && c <= 'F') return c - 'A' + 10;
      return -1;
    };
    int hi = hex(file[i + 1]), lo = hex(file[i + 2]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  return out;
}

bool IsSafe(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '-' || c == '%';
}

TEST(EscapeFileNameTest, Examples) {
  EXPECT_EQ(EscapeFileName("logits"), "logits");
  EXPECT_EQ(EscapeFileName("Conv_1.out-2"), "Conv_1.out-2");
  EXPECT_EQ(EscapeFileName("a/b"), "a%2Fb");
  EXPECT_EQ(EscapeFileName("a%2Fb"), "a%252Fb");
  EXPECT_EQ(EscapeFileName("out:0"), "out%3A0");
  EXPECT_EQ(EscapeFileName("a b"), "a%20b");
  EXPECT_EQ(EscapeFileName(std::string("a\0b", 3)), "a%00b");
  EXPECT_EQ(EscapeFileName("\xc3\xa9"), "%C3%A9");  // UTF-8 e-acute: each byte
  EXPECT_EQ(EscapeFileName("\\"), "%5C");
  EXPECT_EQ(EscapeFileName(""), "%");
  EXPECT_EQ(EscapeFileName("."), "%2E");
  EXPECT_EQ(EscapeFileName(".."), "%2E%2E");
  EXPECT_EQ(EscapeFileName("..."), "...");
  EXPECT_EQ(EscapeFileName(".hidden"), ".hidden");
  EXPECT_EQ(EscapeFileName("%"), "%25");
  EXPECT_EQ(EscapeFileName("%2E"), "%252E");
}

TEST(EscapeFileNameTest, TrickyNamesStayDistinct) {
  const std::string names[] = {"a/b",    "a%2Fb", "a%252Fb", "",  ".", "..", "%",   "%25", "%2E",
                               "%2E%2E", "./",    "/",       "a", "A", "a.", "a..", "a\\b"};
  std::set<std::string> files;
  for (const std::string& name : names) {
    std::string file = EscapeFileName(name);
    EXPECT_TRUE(files.insert(file).second) << "'" << name << "' -> '" << file << "' collides";
    EXPECT_NE(file, ".");
    EXPECT_NE(file, "..");
    EXPECT_FALSE(file.empty());
    EXPECT_EQ(file.find('/'), std::string::npos);
    EXPECT_EQ(Unescape(file), name);
  }
}

TEST(EscapeFileNameTest, RandomNamesRoundTripThroughTheDocumentedRule) {
  std::mt19937 rng(12345);
  const std::string alphabet = std::string("a.%/_-Z9 \x80\xff") + std::string(1, '\0');
  for (int i = 0; i < 20000; ++i) {
    std::string name;
    size_t len = rng() % 6;
    for (size_t j = 0; j < len; ++j) name += alphabet[rng() % alphabet.size()];
    std::string file = EscapeFileName(name);
    for (char c : file) ASSERT_TRUE(IsSafe(c)) << "'" << file << "'";
    ASSERT_EQ(Unescape(file), name) << "'" << file << "'";
  }
}

}  // namespace
}  // namespace epctx
