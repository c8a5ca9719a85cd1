// Add/Sub/Mul/Div: numpy broadcasting over random shape pairs (same shape, scalars, per-channel
// operands, both sides broadcast), for float32, float64, int32 and int64, with 1 and 2 threads.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "kernel_test_helpers.h"

namespace epctx::exec::testing {
namespace {

const char* const kOps[] = {"Add", "Sub", "Mul", "Div"};

double ApplyOp(int op, double a, double b) {
  switch (op) {
    case 0:
      return a + b;
    case 1:
      return a - b;
    case 2:
      return a * b;
    default:
      return a / b;
  }
}

// Index of output element `flat` into an operand of shape `in` broadcast to `out`.
int64_t SourceIndex(const std::vector<int64_t>& in, const std::vector<int64_t>& out, int64_t flat) {
  int64_t index = 0, stride = 1;
  for (size_t d = out.size(); d-- > 0;) {
    const int64_t i = flat % out[d];
    flat /= out[d];
    const size_t from_end = out.size() - 1 - d;
    if (from_end < in.size()) {
      const int64_t extent = in[in.size() - 1 - from_end];
      index += (extent == 1 ? 0 : i) * stride;
      stride *= extent;
    }
  }
  return index;
}

// A random pair of broadcast-compatible shapes and their broadcast result.
void RandomShapes(std::mt19937& rng, std::vector<int64_t>& a, std::vector<int64_t>& b,
                  std::vector<int64_t>& out) {
  const size_t rank = static_cast<size_t>(Pick(rng, 0, 5));
  out.clear();
  for (size_t i = 0; i < rank; ++i) out.push_back(Pick(rng, 1, 6));
  auto derive = [&]() {
    std::vector<int64_t> s(out.begin() + Pick(rng, 0, static_cast<int64_t>(rank)), out.end());
    const int64_t mode = Pick(rng, 0, 3);
    for (int64_t& d : s) {
      if (mode == 0 || (mode == 1 && Pick(rng, 0, 1) == 0)) d = 1;
    }
    if (mode == 3) s = std::vector<int64_t>(out.begin(), out.end());
    return s;
  };
  a = derive();
  b = derive();
  // The result is what the pair broadcasts to, which may be smaller than `out`.
  const size_t r = std::max(a.size(), b.size());
  out.assign(r, 1);
  for (size_t i = 0; i < r; ++i) {
    const int64_t da = i + a.size() >= r ? a[i + a.size() - r] : 1;
    const int64_t db = i + b.size() >= r ? b[i + b.size() - r] : 1;
    out[i] = std::max(da, db);
  }
}

template <typename T>
Tensor RandomTyped(DataType type, const std::vector<int64_t>& shape, std::mt19937& rng,
                   bool nonzero) {
  std::vector<T> v(static_cast<size_t>(Count(shape)));
  for (T& x : v) {
    if constexpr (std::is_integral_v<T>) {
      x = static_cast<T>(Pick(rng, -50, 50));
      if (nonzero && x == 0) x = 7;
    } else {
      x = static_cast<T>(std::uniform_real_distribution<double>(0.5, 2.0)(rng) *
                         (Pick(rng, 0, 1) ? 1 : -1));
    }
  }
  return MakeTensor(type, shape, v.data());
}

template <typename T>
void CheckTyped(DataType type, std::mt19937& rng, int cases) {
  for (int c = 0; c < cases; ++c) {
    std::vector<int64_t> as, bs, out;
    RandomShapes(rng, as, bs, out);
    // Large enough, sometimes, to be split over threads.
    if (Pick(rng, 0, 9) == 0) {
      as = {64, 1, 40};
      bs = {1, 30, 40};
      out = {64, 30, 40};
    }
    const int op = static_cast<int>(Pick(rng, 0, 3));
    Tensor a = RandomTyped<T>(type, as, rng, false);
    Tensor b = RandomTyped<T>(type, bs, rng, true);
    NodeSpec spec(kOps[op], 14);
    spec.threads = static_cast<int>(Pick(rng, 1, 2));
    AttrBuilder none;
    auto result = RunNode(spec, none, {&a, &b});
    const std::string what = fmt::format("{} {} {} {}", kOps[op], DataTypeName(type),
                                         ShapeToString(as), ShapeToString(bs));
    ASSERT_TRUE(result.ok()) << what << ": " << result.status().ToString();
    const Tensor& y = (*result)[0];
    ASSERT_EQ(y.dtype(), type) << what;
    ASSERT_EQ(y.shape(), out) << what;
    const T* ap = a.data_as<T>();
    const T* bp = b.data_as<T>();
    const T* yp = y.data_as<T>();
    for (int64_t i = 0; i < Count(out); ++i) {
      const T av = ap[SourceIndex(as, out, i)];
      const T bv = bp[SourceIndex(bs, out, i)];
      if constexpr (std::is_integral_v<T>) {
        const T expected = op == 0   ? static_cast<T>(av + bv)
                           : op == 1 ? static_cast<T>(av - bv)
                           : op == 2 ? static_cast<T>(av * bv)
                                     : static_cast<T>(av / bv);
        ASSERT_EQ(yp[i], expected) << what << " at " << i;
      } else {
        const double expected = ApplyOp(op, av, bv);
        ASSERT_NEAR(yp[i], expected, 1e-6 * std::abs(expected) + 1e-6) << what << " at " << i;
      }
    }
  }
}

TEST(BinaryArithmeticTest, Float32) {
  std::mt19937 rng(21);
  CheckTyped<float>(DataType::kFloat32, rng, 300);
}

TEST(BinaryArithmeticTest, Float64Int32Int64) {
  std::mt19937 rng(22);
  CheckTyped<double>(DataType::kFloat64, rng, 60);
  CheckTyped<int32_t>(DataType::kInt32, rng, 100);
  CheckTyped<int64_t>(DataType::kInt64, rng, 150);
}

TEST(BinaryArithmeticTest, PerChannelBiasAndScalarShapes) {
  // Large enough to be split over two threads, including the single-run (scalar) layout.
  std::mt19937 rng(23);
  const std::vector<int64_t> shape{2, 3, 100, 100};
  Tensor x = RandomFloats(shape, rng);
  Tensor bias = RandomFloats({3, 1, 1}, rng);
  Tensor scalar = RandomFloats({}, rng);
  AttrBuilder none;
  NodeSpec add("Add", 14);
  add.threads = 2;
  NodeSpec mul("Mul", 14);
  mul.threads = 2;
  auto sum = RunNode(add, none, {&x, &bias});
  ASSERT_TRUE(sum.ok()) << sum.status().ToString();
  auto scaled = RunNode(mul, none, {&scalar, &x});
  ASSERT_TRUE(scaled.ok()) << scaled.status().ToString();
  auto squared = RunNode(mul, none, {&x, &x});
  ASSERT_TRUE(squared.ok()) << squared.status().ToString();
  const auto xv = FloatsOf(x), bv = FloatsOf(bias);
  const double s = FloatsOf(scalar)[0];
  std::vector<double> ref_sum, ref_scaled, ref_squared;
  for (int64_t i = 0; i < Count(shape); ++i) {
    const double v = xv[static_cast<size_t>(i)];
    ref_sum.push_back(v + bv[static_cast<size_t>(i / 10000 % 3)]);
    ref_scaled.push_back(v * s);
    ref_squared.push_back(v * v);
  }
  ExpectClose((*sum)[0], shape, ref_sum, 1e-6, 1e-6, "per-channel add");
  ExpectClose((*scaled)[0], shape, ref_scaled, 1e-6, 1e-6, "scalar mul");
  ExpectClose((*squared)[0], shape, ref_squared, 1e-6, 1e-6, "same-shape mul");
}

// A per-channel operand of a channel-blocked activation ([N, C/16, H, W, 16] with
// [N, C/16, 1, 1, 16]): rows of 16 (or 8, or another short length) where one operand repeats
// its row down the pixels, on either side of the op, split over two threads.
TEST(BinaryArithmeticTest, ChannelBlockedOperandOnEitherSide) {
  std::mt19937 rng(24);
  struct Case {
    std::vector<int64_t> full, repeated;
  };
  const Case cases[] = {{{2, 6, 40, 40, 16}, {2, 6, 1, 1, 16}},
                        {{1, 4, 30, 30, 8}, {1, 4, 1, 1, 8}},
                        {{3, 50, 50, 5}, {3, 1, 1, 5}},
                        {{7, 16}, {1, 16}}};
  for (const Case& c : cases) {
    for (int op = 0; op < 4; ++op) {
      for (bool repeated_first : {false, true}) {
        Tensor full = RandomTyped<float>(DataType::kFloat32, c.full, rng, true);
        Tensor rep = RandomTyped<float>(DataType::kFloat32, c.repeated, rng, true);
        const Tensor& a = repeated_first ? rep : full;
        const Tensor& b = repeated_first ? full : rep;
        NodeSpec spec(kOps[op], 14);
        spec.threads = 2;
        AttrBuilder none;
        auto result = RunNode(spec, none, {&a, &b});
        const std::string what =
            fmt::format("{} {} {}", kOps[op], ShapeToString(a.shape()), ShapeToString(b.shape()));
        ASSERT_TRUE(result.ok()) << what << ": " << result.status().ToString();
        const std::vector<float> av = FloatsOf(a), bv = FloatsOf(b);
        std::vector<double> want;
        for (int64_t i = 0; i < Count(c.full); ++i) {
          want.push_back(ApplyOp(op, av[static_cast<size_t>(SourceIndex(a.shape(), c.full, i))],
                                 bv[static_cast<size_t>(SourceIndex(b.shape(), c.full, i))]));
        }
        ExpectClose((*result)[0], c.full, want, 1e-6, 1e-6, what);
      }
    }
  }
}

TEST(BinaryArithmeticTest, IntegerDivisionTruncatesAndWraps) {
  const std::vector<int64_t> a{7, -7, INT64_MIN, 9};
  const std::vector<int64_t> b{2, 2, -1, -4};
  Tensor ta = Int64Tensor({4}, a);
  Tensor tb = Int64Tensor({4}, b);
  AttrBuilder none;
  auto q = RunNode(NodeSpec("Div", 14), none, {&ta, &tb});
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  EXPECT_EQ(Int64sOf((*q)[0]), (std::vector<int64_t>{3, -3, INT64_MIN, -2}));
}

TEST(BinaryArithmeticTest, Errors) {
  std::mt19937 rng(24);
  AttrBuilder none;
  Tensor a = RandomFloats({2, 3}, rng);
  Tensor b = RandomFloats({4, 3}, rng);
  for (bool describe : {true, false}) {  // found at creation, or at run time
    NodeSpec spec("Add", 14);
    spec.describe_inputs = describe;
    ExpectError(RunNode(spec, none, {&a, &b}).status(), StatusCode::kInvalidArgument,
                "shapes [2,3] and [4,3] cannot be broadcast");
  }
  Tensor i = Int64Tensor({2}, {1, 2});
  ExpectError(RunNode(NodeSpec("Mul", 14), none, {&a, &i}).status(), StatusCode::kInvalidArgument,
              "inputs A and B have types float32 and int64");
  Tensor zero = Int64Tensor({2}, {1, 0});
  ExpectError(RunNode(NodeSpec("Div", 14), none, {&i, &zero}).status(),
              StatusCode::kInvalidArgument, "integer division by zero");
  const uint8_t bytes[2] = {1, 0};
  Tensor flags = MakeTensor(DataType::kBool, {2}, bytes);
  ExpectError(RunNode(NodeSpec("Sub", 14), none, {&flags, &flags}).status(),
              StatusCode::kUnsupported,
              "input 0 has type bool, which Sub does not run on (it takes numeric types)");
}

}  // namespace
}  // namespace epctx::exec::testing
