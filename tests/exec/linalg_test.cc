// Einsum against a brute-force sum over every assignment of the subscripts (ellipses written
// out by hand as extra letters), and Det.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <vector>

#include "kernel_test_helpers.h"

namespace epctx::exec::testing {
namespace {

struct EinsumCase {
  std::string equation;
  std::vector<std::vector<int64_t>> shapes;
  // The same equation with each ellipsis replaced by explicit letters, and the output spelled
  // out: the reference sums over every assignment of the letters.
  std::vector<std::string> terms;
  std::string output;
};

std::vector<double> BruteForceEinsum(const EinsumCase& c, const std::vector<std::vector<float>>& in,
                                     std::vector<int64_t>& out_shape) {
  std::map<char, int64_t> sizes;
  for (size_t i = 0; i < c.terms.size(); ++i) {
    for (size_t d = 0; d < c.terms[i].size(); ++d) {
      int64_t& s = sizes[c.terms[i][d]];
      s = std::max(s, c.shapes[i][d]);
    }
  }
  std::vector<char> letters;
  for (const auto& [l, s] : sizes) letters.push_back(l);
  out_shape.clear();
  for (char l : c.output) out_shape.push_back(sizes[l]);
  std::vector<double> out(static_cast<size_t>(Count(out_shape)), 0.0);
  int64_t total = 1;
  for (char l : letters) total *= sizes[l];
  std::map<char, int64_t> at;
  for (int64_t a = 0; a < total; ++a) {
    int64_t rest = a;
    for (char l : letters) {
      at[l] = rest % sizes[l];
      rest /= sizes[l];
    }
    double prod = 1;
    for (size_t i = 0; i < c.terms.size(); ++i) {
      int64_t flat = 0;
      for (size_t d = 0; d < c.terms[i].size(); ++d) {
        // Dims of extent 1 broadcast.
        flat = flat * c.shapes[i][d] + (c.shapes[i][d] == 1 ? 0 : at[c.terms[i][d]]);
      }
      // A repeated letter only counts where its positions agree, which `at` guarantees.
      prod *= in[i][static_cast<size_t>(flat)];
    }
    int64_t o = 0;
    for (char l : c.output) o = o * sizes[l] + at[l];
    out[static_cast<size_t>(o)] += prod;
  }
  return out;
}

TEST(EinsumTest, MatchesBruteForce) {
  const std::vector<EinsumCase> cases = {
      {"ij,jk->ik", {{3, 4}, {4, 5}}, {"ij", "jk"}, "ik"},
      {"ij,jk", {{3, 4}, {4, 2}}, {"ij", "jk"}, "ik"},
      {"bij,bjk->bik", {{2, 3, 4}, {2, 4, 5}}, {"bij", "bjk"}, "bik"},
      {"ij->ji", {{3, 4}}, {"ij"}, "ji"},
      {"ii->i", {{4, 4}}, {"ii"}, "i"},
      {"ii", {{4, 4}}, {"ii"}, ""},
      {"ij->", {{3, 4}}, {"ij"}, ""},
      {"i,i", {{5}, {5}}, {"i", "i"}, ""},
      {"i,j->ij", {{3}, {4}}, {"i", "j"}, "ij"},
      {"...ii->...i", {{2, 3, 3}}, {"Aii"}, "Ai"},
      {"...ij,...jk->...ik", {{2, 1, 3, 4}, {3, 4, 2}}, {"ABij", "Bjk"}, "ABik"},
      {"bhqd,bhkd->bhqk", {{2, 2, 3, 4}, {2, 2, 5, 4}}, {"bhqd", "bhkd"}, "bhqk"},
      {"ij,jk,kl->il", {{2, 3}, {3, 4}, {4, 2}}, {"ij", "jk", "kl"}, "il"},
      {"iij,jk->ik", {{3, 3, 2}, {2, 4}}, {"iij", "jk"}, "ik"},
      {"ab,ab->", {{3, 2}, {1, 2}}, {"ab", "ab"}, ""},
      {"Ab,bc", {{2, 3}, {3, 2}}, {"Ab", "bc"}, "Ac"},
      {"ba", {{2, 3}}, {"ba"}, "ab"},
  };
  std::mt19937 rng(101);
  for (const EinsumCase& c : cases) {
    std::vector<Tensor> tensors;
    std::vector<std::vector<float>> values;
    for (const auto& s : c.shapes) {
      tensors.push_back(RandomFloats(s, rng));
      values.push_back(FloatsOf(tensors.back()));
    }
    std::vector<const Tensor*> inputs;
    for (const Tensor& t : tensors) inputs.push_back(&t);
    AttrBuilder attrs;
    attrs.String("equation", c.equation);
    NodeSpec spec("Einsum", 12);
    spec.threads = 2;
    auto r = RunNode(spec, attrs, inputs);
    ASSERT_TRUE(r.ok()) << c.equation << ": " << r.status().ToString();
    std::vector<int64_t> shape;
    const auto ref = BruteForceEinsum(c, values, shape);
    ExpectClose((*r)[0], shape, ref, 1e-5, 1e-5, c.equation);
  }
}

TEST(EinsumTest, IntegersAndErrors) {
  Tensor a = Int64Tensor({2, 2}, {1, 2, 3, 4});
  AttrBuilder trace;
  trace.String("equation", "ii->");
  auto r = RunNode(NodeSpec("Einsum", 12), trace, {&a});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(Int64sOf((*r)[0]), std::vector<int64_t>{5});
  AttrBuilder mismatch;
  mismatch.String("equation", "ij,jk->ik");
  Tensor b = Int64Tensor({3, 2}, {1, 2, 3, 4, 5, 6});
  ExpectError(RunNode(NodeSpec("Einsum", 12), mismatch, {&a, &b}).status(),
              StatusCode::kInvalidArgument, "gives one subscript the extents 2 and 3");
  AttrBuilder missing;
  missing.String("equation", "ij->k");
  ExpectError(RunNode(NodeSpec("Einsum", 12), missing, {&a}).status(), StatusCode::kInvalidArgument,
              "output subscript 'k' of equation 'ij->k' is in no input");
  AttrBuilder terms;
  terms.String("equation", "ij,jk");
  ExpectError(RunNode(NodeSpec("Einsum", 12), terms, {&a}).status(), StatusCode::kInvalidArgument,
              "has 2 operand terms, the node 1 inputs");
}

TEST(DetTest, BatchedDeterminants) {
  Tensor x = FloatTensor({3, 2, 2}, {1, 2, 3, 4, 2, 0, 0, 3, 1, 2, 2, 4});
  auto r = RunNode(NodeSpec("Det", 11), AttrBuilder(), {&x});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ExpectClose((*r)[0], {3}, {-2, 6, 0}, 1e-6, 1e-6, "2x2");
  // Needs a row swap: the pivot of column 0 is in row 2.
  Tensor y = FloatTensor({3, 3}, {0, 1, 2, 1, 0, 3, 4, -3, 8});
  r = RunNode(NodeSpec("Det", 11), AttrBuilder(), {&y});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ExpectClose((*r)[0], {}, {-2}, 1e-5, 1e-5, "3x3");
  Tensor bad = FloatTensor({2, 3}, {1, 2, 3, 4, 5, 6});
  ExpectError(RunNode(NodeSpec("Det", 11), AttrBuilder(), {&bad}).status(),
              StatusCode::kInvalidArgument, "input X has shape [2,3], expected [..., M, M]");
}

}  // namespace
}  // namespace epctx::exec::testing
