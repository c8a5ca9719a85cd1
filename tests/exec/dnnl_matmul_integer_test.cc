// com.epctx DnnlMatMulInteger: oneDNN's u8 x s8 matmul on int8 weights packed once, the
// activation's zero point applied through the column sums, against MatMulInteger computed
// directly in integers; and its refusals of inputs that do not fit the packed weight.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "exec/kernels/dnnl/weight_format.h"
#include "exec/kernels/dnnl/weight_packing.h"
#include "kernel_test_helpers.h"

namespace epctx::exec::testing {
namespace {

namespace onednn = kernels::onednn;

template <typename T>
std::vector<T> RandomValues(size_t n, std::mt19937& rng, int lo, int hi) {
  std::uniform_int_distribution<int> d(lo, hi);
  std::vector<T> v(n);
  for (T& x : v) x = static_cast<T>(d(rng));
  return v;
}

struct PackedMatMul {
  int64_t k = 0, n = 0;
  std::vector<int8_t> w;  // [K, N]
  onednn::PackedWeight packed;
  Tensor colsum;
  AttrBuilder attrs;
};

PackedMatMul Pack(int64_t k, int64_t n, std::mt19937& rng) {
  PackedMatMul p;
  p.k = k;
  p.n = n;
  p.w = RandomValues<int8_t>(static_cast<size_t>(k * n), rng, -128, 127);
  onednn::MatMulConfig config;
  config.integer = true;
  auto packed = onednn::PackIntegerMatMulWeights({128, k, n}, config, p.w.data());
  EXPECT_TRUE(packed.ok()) << packed.status().ToString();
  p.packed = std::move(*packed);
  std::vector<int32_t> sums(static_cast<size_t>(n), 0);
  for (int64_t i = 0; i < k; ++i) {
    for (int64_t j = 0; j < n; ++j) sums[static_cast<size_t>(j)] += p.w[i * n + j];
  }
  p.colsum = MakeTensor(DataType::kInt32, {n}, sums.data());
  p.attrs.Ints("weights_shape", {k, n}).Ints("weights_format", p.packed.format);
  return p;
}

Result<std::vector<Tensor>> RunPacked(const PackedMatMul& p, const Tensor& a, const Tensor* zp,
                                      const Tensor* colsum = nullptr, int threads = 1) {
  NodeSpec spec("DnnlMatMulInteger", 1, "com.epctx");
  spec.threads = threads;
  return RunNode(spec, p.attrs, {&a, &p.packed.bytes, zp, colsum ? colsum : &p.colsum});
}

TEST(DnnlMatMulInteger, MatchesTheIntegerProduct) {
  std::mt19937 rng(7);
  const PackedMatMul p = Pack(70, 33, rng);
  EXPECT_NE(onednn::DescribeWeightFormat(p.packed.format).find("int8"), std::string::npos)
      << onednn::DescribeWeightFormat(p.packed.format);
  for (const std::vector<int64_t>& shape :
       std::vector<std::vector<int64_t>>{{1, 70}, {7, 70}, {2, 5, 70}, {300, 70}, {70}}) {
    for (int zero_point : {-1, 0, 131, 255}) {
      for (int threads : {1, 2}) {
        SCOPED_TRACE(::testing::Message()
                     << ShapeToString(shape) << " zp " << zero_point << " threads " << threads);
        const int64_t m = Count(shape) / p.k;
        const auto a = RandomValues<uint8_t>(static_cast<size_t>(m * p.k), rng, 0, 255);
        const Tensor ta = MakeTensor(DataType::kUint8, shape, a.data());
        const uint8_t z = static_cast<uint8_t>(std::max(zero_point, 0));
        const Tensor tz = MakeTensor(DataType::kUint8, {}, &z);
        auto r = RunPacked(p, ta, zero_point < 0 ? nullptr : &tz, nullptr, threads);
        ASSERT_TRUE(r.ok()) << r.status().ToString();
        std::vector<int64_t> want_shape(shape.begin(), shape.end() - 1);
        want_shape.push_back(p.n);
        ASSERT_EQ((*r)[0].shape(), want_shape);
        const int32_t* y = (*r)[0].data_as<int32_t>();
        for (int64_t i = 0; i < m; ++i) {
          for (int64_t j = 0; j < p.n; ++j) {
            int32_t acc = 0;
            for (int64_t t = 0; t < p.k; ++t) acc += (a[i * p.k + t] - z) * p.w[t * p.n + j];
            ASSERT_EQ(y[i * p.n + j], acc) << i << "," << j;
          }
        }
      }
    }
  }
}

TEST(DnnlMatMulInteger, Refusals) {
  std::mt19937 rng(8);
  const PackedMatMul p = Pack(16, 8, rng);
  const std::vector<uint8_t> a(4 * 16, 3);
  const Tensor ta = MakeTensor(DataType::kUint8, {4, 16}, a.data());
  const Tensor wrong_k = MakeTensor(DataType::kUint8, {4, 8}, a.data());
  ExpectError(RunPacked(p, wrong_k, nullptr).status(), StatusCode::kInvalidArgument,
              "input A has shape [4,8], expected [..., 16]");
  const std::vector<uint8_t> two{1, 2};
  const Tensor per_row = MakeTensor(DataType::kUint8, {2}, two.data());
  ExpectError(RunPacked(p, ta, &per_row).status(), StatusCode::kInvalidArgument,
              "input a_zero_point has type uint8 and shape [2], expected one uint8");
  const std::vector<int32_t> short_sums(4, 0);
  const Tensor sums = MakeTensor(DataType::kInt32, {4}, short_sums.data());
  ExpectError(RunPacked(p, ta, nullptr, &sums).status(), StatusCode::kInvalidArgument,
              "input W_colsum has shape [4], expected int32 [8]");
  PackedMatMul truncated = Pack(16, 8, rng);
  truncated.packed.bytes =
      MakeTensor(DataType::kInt8, {truncated.packed.bytes.element_count() - 64},
                 truncated.packed.bytes.data());
  ExpectError(RunPacked(truncated, ta, nullptr).status(), StatusCode::kInvalidArgument,
              "packed W holds");
}

}  // namespace
}  // namespace epctx::exec::testing

namespace epctx::exec::testing {
namespace {

// An int8 layout where a float matmul's weights belong (a forged or mixed-up blob) is refused
// before oneDNN sees it.
TEST(DnnlMatMulInteger, AnInt8LayoutIsNoFloatLayout) {
  std::mt19937 rng(9);
  const PackedMatMul p = Pack(16, 8, rng);
  AttrBuilder attrs;
  attrs.Ints("weights_shape", {16, 8}).Ints("weights_format", p.packed.format);
  const Tensor a = RandomFloats({4, 16}, rng);
  const Tensor w = RandomFloats({p.packed.bytes.element_count() / 4}, rng);
  ExpectError(RunNode(NodeSpec("DnnlMatMul", 1, "com.epctx"), attrs, {&a, &w}).status(),
              StatusCode::kInvalidArgument, "is not a float32 layout");
}

}  // namespace
}  // namespace epctx::exec::testing
