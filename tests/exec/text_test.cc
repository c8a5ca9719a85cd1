// TfIdfVectorizer: n-gram counts worked out by hand (the operator text's own skip example, unigrams
// under skips, n-gram lengths outside [min, max] that still take their pool number), the three
// weightings, int32, int64 and string tokens, and the messages for malformed attributes and inputs;
// StringNormalizer: stopwords with and without case, case changes beyond ASCII, the one empty
// string left when every word is dropped, and its messages.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "kernel_test_helpers.h"

namespace epctx::exec::testing {
namespace {

struct TfIdf {
  std::string mode = "TF";
  int64_t min_length = 1;
  int64_t max_length = 1;
  int64_t max_skip = 0;
  std::vector<int64_t> counts;
  std::vector<int64_t> indexes;
  std::vector<int64_t> pool;
  std::vector<float> weights;

  AttrBuilder Attrs() const {
    AttrBuilder a;
    a.String("mode", mode)
        .Int("min_gram_length", min_length)
        .Int("max_gram_length", max_length)
        .Int("max_skip_count", max_skip)
        .Ints("ngram_counts", counts)
        .Ints("ngram_indexes", indexes)
        .Ints("pool_int64s", pool);
    if (!weights.empty()) a.Floats("weights", weights);
    return a;
  }

  Result<Tensor> Run(const Tensor& x) const {
    auto r = RunNode(NodeSpec("TfIdfVectorizer", 9), Attrs(), {&x});
    if (!r.ok()) return r.status();
    return std::move((*r)[0]);
  }
};

// Bigrams of [94, 17, 36, 12, 28] from the operator text: [94, 17] is adjacent, [36, 28] one
// token apart, [94, 12] and [17, 28] two apart; [12, 94] is not in the row.
TfIdf SkipExample(int64_t max_skip) {
  TfIdf op;
  op.min_length = 2;
  op.max_length = 2;
  op.max_skip = max_skip;
  op.counts = {0, 0};
  op.pool = {94, 17, 36, 28, 94, 12, 17, 28, 12, 94};
  op.indexes = {0, 1, 2, 3, 4};
  return op;
}

TEST(TfIdfVectorizerTest, EachSkipUpToTheMaximumFindsItsBigrams) {
  const std::vector<int64_t> row = {94, 17, 36, 12, 28};
  Tensor x = Int64Tensor({5}, row);
  const std::vector<std::vector<float>> expected = {
      {1, 0, 0, 0, 0},  // max_skip_count 0: adjacent pairs only
      {1, 1, 0, 0, 0},  // 1: and pairs one token apart
      {1, 1, 1, 1, 0},  // 2: and pairs two apart
      {1, 1, 1, 1, 0},  // 9: nothing further fits in five tokens
  };
  const std::vector<int64_t> skips = {0, 1, 2, 9};
  for (size_t i = 0; i < skips.size(); ++i) {
    auto y = SkipExample(skips[i]).Run(x);
    ASSERT_TRUE(y.ok()) << y.status().ToString();
    EXPECT_EQ(y->shape(), (std::vector<int64_t>{5}));
    EXPECT_EQ(FloatsOf(*y), expected[i]) << "max_skip_count " << skips[i];
  }
  // The same tokens as int32.
  Tensor x32 = Int32Tensor({5}, {94, 17, 36, 12, 28});
  auto y = SkipExample(2).Run(x32);
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_EQ(FloatsOf(*y), expected[2]);
}

TEST(TfIdfVectorizerTest, UnigramsCountOncePerPositionWhateverTheSkip) {
  TfIdf op;
  op.min_length = 1;
  op.max_length = 2;
  op.max_skip = 3;
  op.counts = {0, 2};
  op.pool = {2, 3, /* bigram */ 2, 2};
  op.indexes = {0, 1, 2};
  Tensor x = Int64Tensor({3}, {2, 3, 2});
  auto y = op.Run(x);
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  // [2, 2] occurs once, one token apart; the unigram 2 twice, not twice per skip.
  EXPECT_EQ(FloatsOf(*y), (std::vector<float>{2, 1, 1}));
}

TEST(TfIdfVectorizerTest, LengthsOutsideTheRangeAreNumberedButNotCounted) {
  TfIdf op;
  op.min_length = 3;
  op.max_length = 3;
  op.counts = {0, 2, 2};  // two unigrams, no bigrams, one trigram (pool number 2)
  op.pool = {7, 8, 7, 8, 7};
  op.indexes = {0, 1, 2};
  Tensor x = Int64Tensor({5}, {7, 8, 7, 8, 7});
  auto y = op.Run(x);
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_EQ(FloatsOf(*y), (std::vector<float>{0, 0, 2}));
}

TEST(TfIdfVectorizerTest, RowsAndWeightingsByOutputCoordinate) {
  TfIdf op;
  op.counts = {0};
  op.pool = {1, 5, 6};
  op.indexes = {2, 0, 1};  // 1 -> Y[2], 5 -> Y[0], 6 -> Y[1]
  op.weights = {0.5f, 2.0f, 4.0f};
  Tensor x = Int64Tensor({2, 3}, {1, 1, 5, 5, 6, 6});
  const std::vector<std::pair<std::string, std::vector<float>>> cases = {
      {"TF", {1, 0, 2, 1, 2, 0}},
      {"IDF", {0.5f, 0, 4, 0.5f, 2, 0}},
      {"TFIDF", {0.5f, 0, 8, 0.5f, 4, 0}},
  };
  for (const auto& [mode, expected] : cases) {
    op.mode = mode;
    auto y = op.Run(x);
    ASSERT_TRUE(y.ok()) << mode << ": " << y.status().ToString();
    EXPECT_EQ(y->shape(), (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(FloatsOf(*y), expected) << mode;
  }
  // Without weights, IDF marks presence and TFIDF is TF.
  op.weights.clear();
  op.mode = "IDF";
  auto idf = op.Run(x);
  ASSERT_TRUE(idf.ok()) << idf.status().ToString();
  EXPECT_EQ(FloatsOf(*idf), (std::vector<float>{1, 0, 1, 1, 1, 0}));
}

TEST(TfIdfVectorizerTest, EmptyRowsGiveZeros) {
  TfIdf op;
  op.counts = {0};
  op.pool = {4, 9};
  op.indexes = {0, 1};
  Tensor x = Int64Tensor({2, 0}, {});
  auto y = op.Run(x);
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_EQ(y->shape(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(FloatsOf(*y), (std::vector<float>{0, 0, 0, 0}));
}

TEST(TfIdfVectorizerTest, MalformedAttributesAndInputs) {
  Tensor x = Int64Tensor({2}, {1, 2});
  TfIdf good;
  good.counts = {0};
  good.pool = {1, 2};
  good.indexes = {0, 1};
  ASSERT_TRUE(good.Run(x).ok());

  {
    AttrBuilder a = good.Attrs();
    a.Strings("pool_strings", {"a", "b"});
    auto r = RunNode(NodeSpec("TfIdfVectorizer", 9), a, {&x});
    ExpectError(r.status(), StatusCode::kInvalidArgument,
                "TfIdfVectorizer has both pool_int64s and pool_strings; it takes one");
  }
  TfIdf op = good;
  op.mode = "BM25";
  ExpectError(op.Run(x).status(), StatusCode::kInvalidArgument,
              "TfIdfVectorizer mode 'BM25' is not TF, IDF or TFIDF");
  op = good;
  op.max_length = 2;
  ExpectError(op.Run(x).status(), StatusCode::kInvalidArgument,
              "TfIdfVectorizer needs 1 <= min_gram_length (1) <= max_gram_length (2) <= the "
              "length of ngram_counts (1)");
  op = good;
  op.pool = {3, 3};
  ExpectError(op.Run(x).status(), StatusCode::kInvalidArgument,
              "pool_int64s lists 1-gram number 1 twice");
  op = good;
  op.counts = {0, 1};
  op.pool = {1, 2, 3, 4};
  ExpectError(op.Run(x).status(), StatusCode::kInvalidArgument,
              "ngram_counts gives the 2-grams 3 values, not a whole number of 2-grams");
  op = good;
  op.counts = {0, 9};
  op.max_length = 1;
  ExpectError(op.Run(x).status(), StatusCode::kInvalidArgument,
              "ngram_counts puts the 1-grams at [0, 9), outside pool_int64s of 2 values or out of "
              "order");
  op = good;
  op.indexes = {0};
  ExpectError(op.Run(x).status(), StatusCode::kInvalidArgument,
              "TfIdfVectorizer ngram_indexes has 1 entries for the 2 n-grams of the pool");
  op = good;
  op.indexes = {0, -1};
  ExpectError(op.Run(x).status(), StatusCode::kInvalidArgument,
              "TfIdfVectorizer ngram_indexes value -1 is not in [0, 67108864)");
  op = good;
  op.mode = "TFIDF";
  op.indexes = {0, 5};
  op.weights = {1, 1};
  ExpectError(op.Run(x).status(), StatusCode::kInvalidArgument,
              "TfIdfVectorizer has 2 weights for 6 output coordinates");

  Tensor rank3 = Int64Tensor({1, 1, 2}, {1, 2});
  ExpectError(good.Run(rank3).status(), StatusCode::kInvalidArgument,
              "input X has rank 3, expected 1 ([C]) or 2 ([N, C])");
  Tensor floats = FloatTensor({2}, {1, 2});
  ExpectError(good.Run(floats).status(), StatusCode::kUnsupported,
              "input 0 has type float32, which TfIdfVectorizer does not run on (it takes int32, "
              "int64, string)");
}

// pool_strings: the same counting on string tokens; strings the pool does not list count nowhere.
TEST(TfIdfVectorizerTest, StringTokensCountLikeIntegerTokens) {
  AttrBuilder a;
  a.String("mode", "TF")
      .Int("min_gram_length", 1)
      .Int("max_gram_length", 2)
      .Int("max_skip_count", 0)
      .Ints("ngram_counts", {0, 3})
      .Ints("ngram_indexes", {0, 1, 2, 3, 4})
      .Strings("pool_strings", {"the", "cat", "sat", "the", "cat", "cat", "sat"});
  Tensor x = StringTensor({2, 4}, {"the", "cat", "sat", "on", "the", "the", "cat", "dog"});
  auto r = RunNode(NodeSpec("TfIdfVectorizer", 9), a, {&x});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)[0].shape(), (std::vector<int64_t>{2, 5}));
  // Row 0: the, cat, sat, [the cat], [cat sat]; row 1: the twice, cat, [the cat].
  EXPECT_EQ(FloatsOf((*r)[0]), (std::vector<float>{1, 1, 1, 1, 1, 2, 1, 0, 1, 0}));

  // The same pool as numbers gives the same counts.
  TfIdf ints;
  ints.max_length = 2;
  ints.counts = {0, 3};
  ints.indexes = {0, 1, 2, 3, 4};
  ints.pool = {0, 1, 2, 0, 1, 1, 2};
  auto numbered = ints.Run(Int64Tensor({2, 4}, {0, 1, 2, 7, 0, 0, 1, 8}));
  ASSERT_TRUE(numbered.ok()) << numbered.status().ToString();
  EXPECT_EQ(FloatsOf(*numbered), FloatsOf((*r)[0]));

  Tensor numbers = Int64Tensor({2}, {0, 1});
  ExpectError(RunNode(NodeSpec("TfIdfVectorizer", 9), a, {&numbers}).status(),
              StatusCode::kInvalidArgument,
              "input X has type int64, expected string (the pool is pool_strings)");
}

Result<Tensor> Normalize(const AttrBuilder& attrs, const Tensor& x) {
  auto r = RunNode(NodeSpec("StringNormalizer", 10), attrs, {&x});
  if (!r.ok()) return r.status();
  return std::move((*r)[0]);
}

TEST(StringNormalizerTest, CaseInsensitiveStopwordsKeepTheTextWithoutACaseAction) {
  AttrBuilder a;
  a.Strings("stopwords", {"Monday"});  // is_case_sensitive defaults to 0
  auto y = Normalize(a, StringTensor({3}, {"MONDAY", "Tuesday", "monday"}));
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_EQ(y->shape(), (std::vector<int64_t>{1}));
  EXPECT_EQ(StringsOf(*y), (std::vector<std::string>{"Tuesday"}));

  AttrBuilder sensitive;
  sensitive.Strings("stopwords", {"Monday"}).Int("is_case_sensitive", 1);
  y = Normalize(sensitive, StringTensor({3}, {"MONDAY", "Monday", "monday"}));
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_EQ(StringsOf(*y), (std::vector<std::string>{"MONDAY", "monday"}));
}

TEST(StringNormalizerTest, CaseChangesBeyondAsciiAndLocalesTheMachineLacks) {
  AttrBuilder upper;
  upper.String("case_change_action", "UPPER").String("locale", "tr_TR");
  auto y = Normalize(upper, StringTensor({1, 2}, {"\xc3\xa9"
                                                  "cole",
                                                  "stra\xc3\x9f"
                                                  "e"}));
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_EQ(y->shape(), (std::vector<int64_t>{1, 2}));
  // é -> É; ß has no single-code-point capital and stays.
  EXPECT_EQ(StringsOf(*y), (std::vector<std::string>{"\xc3\x89"
                                                     "COLE",
                                                     "STRA\xc3\x9f"
                                                     "E"}));
  AttrBuilder lower;
  lower.String("case_change_action", "LOWER");
  y = Normalize(lower, StringTensor({2}, {"\xc3\x89"
                                          "COLE",
                                          "MiXeD"}));
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_EQ(StringsOf(*y), (std::vector<std::string>{"\xc3\xa9"
                                                     "cole",
                                                     "mixed"}));
}

TEST(StringNormalizerTest, AllWordsDroppedGiveOneEmptyString) {
  AttrBuilder a;
  a.Strings("stopwords", {"a", "b"}).String("case_change_action", "UPPER");
  auto y = Normalize(a, StringTensor({3}, {"a", "B", "A"}));
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_EQ(y->shape(), (std::vector<int64_t>{1}));
  EXPECT_EQ(StringsOf(*y), (std::vector<std::string>{""}));
  y = Normalize(a, StringTensor({1, 2}, {"b", "a"}));
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_EQ(y->shape(), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(StringsOf(*y), (std::vector<std::string>{""}));
}

TEST(StringNormalizerTest, MalformedAttributesAndInputs) {
  AttrBuilder bad;
  bad.String("case_change_action", "TITLE");
  ExpectError(Normalize(bad, StringTensor({1}, {"x"})).status(), StatusCode::kInvalidArgument,
              "StringNormalizer case_change_action 'TITLE' is not LOWER, UPPER or NONE");
  AttrBuilder bad_stopword;
  bad_stopword.Strings("stopwords", {"ok", "\xff"});
  ExpectError(Normalize(bad_stopword, StringTensor({1}, {"x"})).status(),
              StatusCode::kInvalidArgument, "StringNormalizer stopwords[1] is not valid UTF-8");
  AttrBuilder upper;
  upper.String("case_change_action", "UPPER");
  ExpectError(Normalize(upper, StringTensor({2}, {"fine", "\xc3("})).status(),
              StatusCode::kInvalidArgument, "element 1 of X is not valid UTF-8");
  ExpectError(Normalize(upper, StringTensor({2, 1}, {"a", "b"})).status(),
              StatusCode::kInvalidArgument, "input X has shape [2,1], expected [C] or [1, C]");
}

}  // namespace
}  // namespace epctx::exec::testing
