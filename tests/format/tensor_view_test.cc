// Tensor::View and Tensor::Reshaped count the elements of their dims exactly: a zero dim makes the
// count 0 however large the others are (a run may make such a tensor; multiplying the dims in
// order overflowed first), and dims whose product overflows int64 give an empty Tensor.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "epctx/tensor.h"

namespace epctx {
namespace {

constexpr int64_t k2To32 = int64_t{1} << 32;

TEST(TensorView, AZeroDimAfterHugeDimsHoldsNoElement) {
  float data = 0;
  Tensor t = Tensor::View(DataType::kFloat32, {k2To32, k2To32, 0}, &data, nullptr);
  ASSERT_FALSE(t.empty());
  EXPECT_EQ(t.element_count(), 0);
  EXPECT_EQ(t.shape(), (std::vector<int64_t>{k2To32, k2To32, 0}));
}

TEST(TensorView, DimsWhoseProductOverflowsGiveAnEmptyTensor) {
  float data = 0;
  EXPECT_TRUE(Tensor::View(DataType::kFloat32, {k2To32, k2To32}, &data, nullptr).empty());
  EXPECT_TRUE(Tensor::View(DataType::kFloat32, {int64_t{1} << 40, int64_t{1} << 40}, &data, nullptr)
                  .empty());
}

TEST(TensorView, ReshapedCountsExactly) {
  float data = 0;
  Tensor none = Tensor::View(DataType::kFloat32, {0}, &data, nullptr);
  Tensor reshaped = none.Reshaped({k2To32, 0, k2To32});
  ASSERT_FALSE(reshaped.empty());
  EXPECT_EQ(reshaped.element_count(), 0);
  EXPECT_TRUE(none.Reshaped({k2To32, k2To32}).empty());
  Tensor six = Tensor::View(DataType::kFloat32, {2, 3}, &data, nullptr);
  EXPECT_EQ(six.Reshaped({3, 2}).element_count(), 6);
  EXPECT_TRUE(six.Reshaped({3, -2}).empty());
}

}  // namespace
}  // namespace epctx
