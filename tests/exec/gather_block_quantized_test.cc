// com.microsoft GatherBlockQuantized against its definition written out element by element (4
// and 8 bits, zero points given and implied, a partial last block, negative indices), and the
// inputs and attributes it refuses, with their messages. tests/quantized/nbits_models.json runs
// the op against ONNX Runtime itself.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernel_test_helpers.h"

namespace epctx::exec::testing {
namespace {

Tensor Bytes(std::vector<int64_t> shape, const std::vector<uint8_t>& values) {
  return MakeTensor(DataType::kUint8, std::move(shape), values.data());
}

TEST(GatherBlockQuantizedTest, DequantizesTheGatheredRows) {
  // Two rows of 20 4-bit values in blocks of 16: the second block holds 4 values.
  std::vector<uint8_t> data(20);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i * 37 + 11);
  Tensor table = Bytes({2, 10}, data);
  Tensor scales = FloatTensor({2, 2}, {0.5f, 0.25f, 2.0f, -1.0f});
  Tensor zero_points = Bytes({2, 1}, {0x3a, 0x5f});  // row 0: 10 then 3; row 1: 15 then 5
  Tensor indices = Int64Tensor({3}, {1, -2, 1});
  auto reference = [&](bool with_zero_points) {
    std::vector<double> ref;
    for (int64_t row : {1, 0, 1}) {
      for (int64_t j = 0; j < 20; ++j) {
        const uint8_t byte = data[static_cast<size_t>(row * 10 + j / 2)];
        const int q = j % 2 == 0 ? byte & 15 : byte >> 4;
        const int64_t block = j / 16;
        int zero = 8;
        if (with_zero_points) {
          const uint8_t z = row == 0 ? 0x3a : 0x5f;
          zero = block == 0 ? z & 15 : z >> 4;
        }
        ref.push_back((q - zero) * FloatsOf(scales)[static_cast<size_t>(row * 2 + block)]);
      }
    }
    return ref;
  };
  AttrBuilder attrs;
  attrs.Int("block_size", 16);
  NodeSpec spec("GatherBlockQuantized", 1, kMs);
  auto with = RunOne(spec, attrs, {&table, &indices, &scales, &zero_points});
  ASSERT_TRUE(with.ok()) << with.status().ToString();
  ExpectClose(*with, {3, 20}, reference(true), 0, 0, "4 bits, zero points");
  auto without = RunOne(spec, attrs, {&table, &indices, &scales, nullptr});
  ASSERT_TRUE(without.ok()) << without.status().ToString();
  ExpectClose(*without, {3, 20}, reference(false), 0, 0, "4 bits, zero point 8 implied");

  AttrBuilder eight;
  eight.Int("block_size", 16).Int("bits", 8);
  Tensor bytes = Bytes({1, 18}, std::vector<uint8_t>(data.begin(), data.begin() + 18));
  Tensor row_scales = FloatTensor({1, 2}, {0.5f, 0.125f});
  Tensor first = Int32Tensor({1, 1}, {0});
  std::vector<double> ref8;
  for (int64_t j = 0; j < 18; ++j) ref8.push_back((data[j] - 128) * (j < 16 ? 0.5 : 0.125));
  auto r8 = RunOne(NodeSpec("GatherBlockQuantized", 1, kMs), eight, {&bytes, &first, &row_scales});
  ASSERT_TRUE(r8.ok()) << r8.status().ToString();
  ExpectClose(*r8, {1, 1, 18}, ref8, 0, 0, "8 bits, zero point 128 implied");
}

TEST(GatherBlockQuantizedTest, Refusals) {
  Tensor table = Bytes({2, 8}, std::vector<uint8_t>(16, 0x88));
  Tensor scales = FloatTensor({2, 1}, {1, 1});
  Tensor indices = Int64Tensor({1}, {2});
  Tensor good = Int64Tensor({1}, {0});
  NodeSpec spec("GatherBlockQuantized", 1, kMs);
  AttrBuilder b16;
  b16.Int("block_size", 16);
  ExpectError(RunOne(spec, b16, {&table, &indices, &scales}).status(), StatusCode::kInvalidArgument,
              "indices element 0 is 2, outside [-2, 1]");
  Tensor wrong_scales = FloatTensor({2, 2}, {1, 1, 1, 1});
  ExpectError(RunOne(spec, b16, {&table, &good, &wrong_scales}).status(),
              StatusCode::kInvalidArgument,
              "input scales has shape [2,2], expected [2, 1] (a scale per block of 16)");
  Tensor wrong_zero_points = Bytes({2, 2}, {8, 8, 8, 8});
  ExpectError(RunOne(spec, b16, {&table, &good, &scales, &wrong_zero_points}).status(),
              StatusCode::kInvalidArgument,
              "input zero_points has shape [2,2], expected [2, 1] (one per block, packed like "
              "data)");
  AttrBuilder bits2, block24, axis;
  bits2.Int("block_size", 16).Int("bits", 2);
  block24.Int("block_size", 24);
  axis.Int("block_size", 16).Int("gather_axis", 1);
  ExpectError(RunOne(spec, bits2, {&table, &good, &scales}).status(), StatusCode::kInvalidArgument,
              "attribute bits is 2; 4 and 8 are supported");
  ExpectError(RunOne(spec, block24, {&table, &good, &scales}).status(),
              StatusCode::kInvalidArgument,
              "attribute block_size is 24; it must be a power of 2, 16 or more");
  ExpectError(RunOne(spec, axis, {&table, &good, &scales}).status(), StatusCode::kUnsupported,
              "gather_axis 1 and quantize_axis 1: only rows of a 2-D table (gather_axis 0, "
              "quantize_axis 1) are supported");
}

}  // namespace
}  // namespace epctx::exec::testing
