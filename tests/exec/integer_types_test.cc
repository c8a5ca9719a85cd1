// Integer element types outside int32/int64: Add/Sub/Mul/Div wrap around like C unsigned (and
// two's-complement) arithmetic; Clip-12+ on every numeric type and MaxPool-12 on 8-bit types.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "kernel_test_helpers.h"

namespace epctx::exec::testing {
namespace {

template <typename T>
void CheckWrapAround(DataType type) {
  const std::string what = DataTypeName(type);
  constexpr T kMax = std::numeric_limits<T>::max();
  constexpr T kMin = std::numeric_limits<T>::lowest();
  const std::vector<T> av{kMax, kMin, static_cast<T>(kMax - 1), 7};
  const std::vector<T> bv{1, 1, 2, 2};
  Tensor a = MakeTensor(type, {4}, av.data());
  Tensor b = MakeTensor(type, {4}, bv.data());
  AttrBuilder none;
  auto sum = RunNode(NodeSpec("Add", 14), none, {&a, &b});
  ASSERT_TRUE(sum.ok()) << what << ": " << sum.status().ToString();
  EXPECT_EQ(ValuesOf<T>((*sum)[0]),
            (std::vector<T>{kMin, static_cast<T>(kMin + 1), kMin, static_cast<T>(9)}))
      << what;
  auto diff = RunNode(NodeSpec("Sub", 14), none, {&a, &b});
  ASSERT_TRUE(diff.ok()) << what << ": " << diff.status().ToString();
  EXPECT_EQ(ValuesOf<T>((*diff)[0]),
            (std::vector<T>{static_cast<T>(kMax - 1), kMax, static_cast<T>(kMax - 3), 5}))
      << what;
  auto prod = RunNode(NodeSpec("Mul", 14), none, {&a, &b});
  ASSERT_TRUE(prod.ok()) << what << ": " << prod.status().ToString();
  // (kMax - 1) * 2 wraps: -4 in two's complement, kMax - 3 unsigned.
  using U = std::make_unsigned_t<T>;
  const T wrapped = static_cast<T>(static_cast<U>(static_cast<U>(kMax - 1) * 2u));
  EXPECT_EQ(wrapped, std::is_signed_v<T> ? static_cast<T>(-4) : static_cast<T>(kMax - 3)) << what;
  EXPECT_EQ(ValuesOf<T>((*prod)[0])[2], wrapped) << what;
  EXPECT_EQ(ValuesOf<T>((*prod)[0])[3], static_cast<T>(14)) << what;
  auto quot = RunNode(NodeSpec("Div", 14), none, {&a, &b});
  ASSERT_TRUE(quot.ok()) << what << ": " << quot.status().ToString();
  EXPECT_EQ(ValuesOf<T>((*quot)[0]),
            (std::vector<T>{kMax, kMin, static_cast<T>((kMax - 1) / 2), 3}))
      << what;
}

TEST(IntegerArithmeticTest, WrapsAroundForEveryWidth) {
  CheckWrapAround<uint8_t>(DataType::kUint8);
  CheckWrapAround<uint16_t>(DataType::kUint16);
  CheckWrapAround<uint32_t>(DataType::kUint32);
  CheckWrapAround<uint64_t>(DataType::kUint64);
  CheckWrapAround<int8_t>(DataType::kInt8);
  CheckWrapAround<int16_t>(DataType::kInt16);
  CheckWrapAround<int32_t>(DataType::kInt32);
  CheckWrapAround<int64_t>(DataType::kInt64);
}

TEST(IntegerArithmeticTest, Uint8AsInTheBackendTest) {
  const std::vector<uint8_t> av{200, 3, 250, 0};
  const std::vector<uint8_t> bv{100, 5, 10, 1};
  Tensor a = MakeTensor(DataType::kUint8, {4}, av.data());
  Tensor b = MakeTensor(DataType::kUint8, {4}, bv.data());
  AttrBuilder none;
  auto sum = RunNode(NodeSpec("Add", 14), none, {&a, &b});
  ASSERT_TRUE(sum.ok()) << sum.status().ToString();
  EXPECT_EQ(ValuesOf<uint8_t>((*sum)[0]), (std::vector<uint8_t>{44, 8, 4, 1}));
  auto diff = RunNode(NodeSpec("Sub", 14), none, {&a, &b});
  ASSERT_TRUE(diff.ok()) << diff.status().ToString();
  EXPECT_EQ(ValuesOf<uint8_t>((*diff)[0]), (std::vector<uint8_t>{100, 254, 240, 255}));
  auto prod = RunNode(NodeSpec("Mul", 14), none, {&a, &b});
  ASSERT_TRUE(prod.ok()) << prod.status().ToString();
  EXPECT_EQ(ValuesOf<uint8_t>((*prod)[0]), (std::vector<uint8_t>{32, 15, 196, 0}));
}

TEST(ClipTest, IntegerAndFloat64Types) {
  AttrBuilder none;
  const std::vector<int8_t> xv{-128, -5, 0, 5, 127};
  Tensor x = MakeTensor(DataType::kInt8, {5}, xv.data());
  const int8_t lo_v = -3, hi_v = 4;
  Tensor lo = MakeTensor(DataType::kInt8, {}, &lo_v);
  Tensor hi = MakeTensor(DataType::kInt8, {}, &hi_v);
  auto both = RunNode(NodeSpec("Clip", 13), none, {&x, &lo, &hi});
  ASSERT_TRUE(both.ok()) << both.status().ToString();
  EXPECT_EQ(ValuesOf<int8_t>((*both)[0]), (std::vector<int8_t>{-3, -3, 0, 4, 4}));
  auto min_only = RunNode(NodeSpec("Clip", 12), none, {&x, &lo});
  ASSERT_TRUE(min_only.ok()) << min_only.status().ToString();
  EXPECT_EQ(ValuesOf<int8_t>((*min_only)[0]), (std::vector<int8_t>{-3, -3, 0, 5, 127}));
  auto neither = RunNode(NodeSpec("Clip", 13), none, {&x});
  ASSERT_TRUE(neither.ok()) << neither.status().ToString();
  EXPECT_EQ(ValuesOf<int8_t>((*neither)[0]), xv);

  const std::vector<uint16_t> uv{0, 9, 60000};
  Tensor u = MakeTensor(DataType::kUint16, {3}, uv.data());
  const uint16_t umax = 100;
  Tensor uhi = MakeTensor(DataType::kUint16, {}, &umax);
  auto uc = RunNode(NodeSpec("Clip", 13), none, {&u, nullptr, &uhi});
  ASSERT_TRUE(uc.ok()) << uc.status().ToString();
  EXPECT_EQ(ValuesOf<uint16_t>((*uc)[0]), (std::vector<uint16_t>{0, 9, 100}));

  const std::vector<double> dv{-2.5, 0.5, 3.5};
  Tensor d = MakeTensor(DataType::kFloat64, {3}, dv.data());
  const double dlo = -1;
  Tensor dmin = MakeTensor(DataType::kFloat64, {}, &dlo);
  auto dc = RunNode(NodeSpec("Clip", 13), none, {&d, &dmin});
  ASSERT_TRUE(dc.ok()) << dc.status().ToString();
  EXPECT_EQ(ValuesOf<double>((*dc)[0]), (std::vector<double>{-1, 0.5, 3.5}));

  ExpectError(RunNode(NodeSpec("Clip", 13), none, {&x, &dmin}).status(),
              StatusCode::kInvalidArgument, "input min has type float64, expected int8");
}

TEST(MaxPoolTest, EightBitTypes) {
  // 1x1x3x3 with a 2x2 window, stride 1, no padding.
  AttrBuilder attrs;
  attrs.Ints("kernel_shape", {2, 2});
  const std::vector<uint8_t> uv{1, 200, 3, 4, 5, 6, 255, 8, 9};
  Tensor u = MakeTensor(DataType::kUint8, {1, 1, 3, 3}, uv.data());
  auto ur = RunNode(NodeSpec("MaxPool", 12), attrs, {&u});
  ASSERT_TRUE(ur.ok()) << ur.status().ToString();
  EXPECT_EQ((*ur)[0].dtype(), DataType::kUint8);
  EXPECT_EQ((*ur)[0].shape(), (std::vector<int64_t>{1, 1, 2, 2}));
  EXPECT_EQ(ValuesOf<uint8_t>((*ur)[0]), (std::vector<uint8_t>{200, 200, 255, 9}));

  // int8 with padding: windows partly over the padding take the maximum of their real taps,
  // all of them negative here.
  AttrBuilder padded;
  padded.Ints("kernel_shape", {2, 2}).Ints("pads", {1, 1, 0, 0});  // begin h, w; end h, w
  const std::vector<int8_t> sv{-128, -7, -3, -100};
  Tensor s = MakeTensor(DataType::kInt8, {1, 1, 2, 2}, sv.data());
  NodeSpec spec("MaxPool", 12);
  spec.outputs = 2;
  auto sr = RunNode(spec, padded, {&s});
  ASSERT_TRUE(sr.ok()) << sr.status().ToString();
  EXPECT_EQ(ValuesOf<int8_t>((*sr)[0]), (std::vector<int8_t>{-128, -7, -3, -3}));
  EXPECT_EQ(Int64sOf((*sr)[1]), (std::vector<int64_t>{0, 1, 2, 2}));

  AttrBuilder avg;
  avg.Ints("kernel_shape", {2, 2});
  ExpectError(
      RunNode(NodeSpec("AveragePool", 19), avg, {&u}).status(), StatusCode::kUnsupported,
      "input 0 has type uint8, which AveragePool does not run on (it takes float32, float64)");
}

}  // namespace
}  // namespace epctx::exec::testing
