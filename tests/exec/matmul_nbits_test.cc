// com.epctx MatMulNBitsPacked against references written from ONNX Runtime's MatMulNBits
// specification: weights dequantized from the operator's own layout (two 4-bit codes a byte, the
// lower index in the low nibble; (code - zero point) * scale), the product in double. The int8
// arithmetic (accuracy_level 4) is checked against the same product with the activations
// quantized per block as ORT's MLAS quantizes them.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <optional>
#include <random>

#include "exec/kernels/quant/nbits_gemm.h"
#include "exec/kernels/quant/nbits_layout.h"
#include "kernel_test_helpers.h"

namespace epctx::exec::testing {
namespace {

using kernels::NBitsGeometry;

struct NBitsCase {
  int64_t m, k, n;
  int bits;
  int64_t block_size;
  enum { kNone, kPacked, kFloat } zero_points;
  bool bias;
  int level;  // accuracy_level
  int threads;
};

std::string Name(const NBitsCase& c) {
  const char* zp[] = {"nozp", "zp", "floatzp"};
  return fmt::format("m{}_k{}_n{}_b{}_bs{}_{}{}_level{}_t{}", c.m, c.k, c.n, c.bits, c.block_size,
                     zp[c.zero_points], c.bias ? "_bias" : "", c.level, c.threads);
}

// The operator's inputs, in ORT's layout.
struct OrtWeights {
  NBitsGeometry g;
  std::vector<uint8_t> codes;  // one code per weight [n, blocks, block_size] (unpacked)
  std::vector<uint8_t> b;      // B as the operator takes it
  std::vector<float> scales;   // [n * blocks]
  std::vector<float> zero;     // [n * blocks] as numbers
  std::vector<uint8_t> zp_packed;
};

OrtWeights MakeWeights(const NBitsCase& c, std::mt19937& rng) {
  OrtWeights w;
  w.g = *kernels::MakeNBitsGeometry(c.k, c.n, c.bits, c.block_size);
  const int top = (1 << c.bits) - 1;
  std::uniform_int_distribution<int> code(0, top);
  // Weights of like size at both widths (a quantizer's scale is max|w| / 2^(bits-1)): 8-bit
  // codes span 16 times the range, so their scales are 16 times smaller.
  const float unit = c.bits == 8 ? 1.f / 16 : 1.f;
  std::uniform_real_distribution<float> scale(0.01f * unit, 0.1f * unit);
  w.codes.resize(static_cast<size_t>(w.g.n * w.g.blocks * w.g.block_size));
  for (auto& v : w.codes) v = static_cast<uint8_t>(code(rng));
  w.b.assign(static_cast<size_t>(w.g.code_bytes()), 0);
  for (size_t i = 0; i < w.codes.size(); ++i) {
    if (c.bits == 8) {
      w.b[i] = w.codes[i];
    } else {
      w.b[i / 2] |= static_cast<uint8_t>(w.codes[i] << (4 * (i % 2)));
    }
  }
  w.scales.resize(static_cast<size_t>(w.g.block_count()));
  for (auto& s : w.scales) s = scale(rng);
  w.zero.assign(w.scales.size(), static_cast<float>(1 << (c.bits - 1)));
  if (c.zero_points == NBitsCase::kPacked) {
    const int64_t row = c.bits == 8 ? w.g.blocks : (w.g.blocks + 1) / 2;
    w.zp_packed.assign(static_cast<size_t>(w.g.n * row), 0);
    for (int64_t n = 0; n < w.g.n; ++n) {
      for (int64_t b = 0; b < w.g.blocks; ++b) {
        const uint8_t z = static_cast<uint8_t>(code(rng));
        w.zero[static_cast<size_t>(n * w.g.blocks + b)] = z;
        if (c.bits == 8) {
          w.zp_packed[static_cast<size_t>(n * row + b)] = z;
        } else {
          w.zp_packed[static_cast<size_t>(n * row + b / 2)] |=
              static_cast<uint8_t>(z << (4 * (b % 2)));
        }
      }
    }
  } else if (c.zero_points == NBitsCase::kFloat) {
    std::uniform_real_distribution<float> z(0.f, static_cast<float>(top));
    for (auto& v : w.zero) v = z(rng);
  }
  return w;
}

// (code - zero) * scale of weight (k, n), from the operator's layout.
double Weight(const OrtWeights& w, int64_t k, int64_t n) {
  const int64_t b = k / w.g.block_size;
  const int64_t i = n * w.g.blocks * w.g.block_size + k;
  const uint8_t byte =
      w.g.bits == 8 ? w.b[static_cast<size_t>(i)] : w.b[static_cast<size_t>(i / 2)];
  const int code = w.g.bits == 8 ? byte : (i % 2 ? byte >> 4 : byte & 0x0f);
  const size_t s = static_cast<size_t>(n * w.g.blocks + b);
  return (code - static_cast<double>(w.zero[s])) * w.scales[s];
}

std::vector<double> Reference(const NBitsCase& c, const OrtWeights& w, const std::vector<float>& a,
                              const std::vector<float>& bias) {
  std::vector<double> y(static_cast<size_t>(c.m * c.n), 0.0);
  for (int64_t r = 0; r < c.m; ++r) {
    std::vector<double> row(a.begin() + r * c.k, a.begin() + (r + 1) * c.k);
    if (c.level == kernels::kAccuracyInt8) {
      // MLAS: per block, scale = max|a| / 127 and codes round(a * 127 / max) to nearest even.
      for (int64_t b = 0; b < w.g.blocks; ++b) {
        const int64_t k0 = b * c.block_size, k1 = std::min(c.k, k0 + c.block_size);
        float amax = 0;
        for (int64_t i = k0; i < k1; ++i) amax = std::max(amax, std::fabs(a[r * c.k + i]));
        const float inverse = amax != 0 ? 127.f / amax : 0.f;
        for (int64_t i = k0; i < k1; ++i) {
          row[i] = std::nearbyint(a[r * c.k + i] * inverse) * static_cast<double>(amax / 127.f);
        }
      }
    }
    for (int64_t n = 0; n < c.n; ++n) {
      double acc = c.bias ? bias[static_cast<size_t>(n)] : 0.0;
      for (int64_t i = 0; i < c.k; ++i) acc += row[static_cast<size_t>(i)] * Weight(w, i, n);
      y[static_cast<size_t>(r * c.n + n)] = acc;
    }
  }
  return y;
}

class MatMulNBitsTest : public ::testing::TestWithParam<NBitsCase> {};

TEST_P(MatMulNBitsTest, MatchesTheSpecificationsProduct) {
  const NBitsCase& c = GetParam();
  std::mt19937 rng(static_cast<uint32_t>(c.m * 7919 + c.k * 31 + c.n + c.bits + c.block_size));
  OrtWeights w = MakeWeights(c, rng);
  Tensor a = RandomFloats({c.m, c.k}, rng);
  std::vector<float> bias_values(static_cast<size_t>(c.n));
  for (auto& v : bias_values) v = std::uniform_real_distribution<float>(-1, 1)(rng);

  const std::vector<uint8_t> packed = kernels::PackNBitsCodes(w.g, w.b);
  Tensor codes = MakeTensor(DataType::kUint8, {w.g.n, w.g.blocks, w.g.block_bytes}, packed.data());
  Tensor scales = FloatTensor({w.g.n, w.g.blocks}, w.scales);
  std::optional<Tensor> zp;
  std::vector<int8_t> zp_i8;
  std::vector<float> zp_f32;
  if (c.zero_points == NBitsCase::kPacked) {
    zp_i8 = *kernels::UnpackNBitsZeroPoints(w.g, w.zp_packed);
    zp = MakeTensor(DataType::kInt8, {w.g.n, w.g.blocks}, zp_i8.data());
  } else if (c.zero_points == NBitsCase::kFloat) {
    for (float z : w.zero) zp_f32.push_back(z - (c.bits == 8 ? 128.f : 0.f));
    zp = FloatTensor({w.g.n, w.g.blocks}, zp_f32);
  }
  Tensor bias = FloatTensor({c.n}, bias_values);

  NodeSpec spec("MatMulNBitsPacked", 1, "com.epctx");
  spec.threads = c.threads;
  AttrBuilder attrs;
  attrs.Int("K", c.k).Int("N", c.n).Int("bits", c.bits).Int("block_size", c.block_size);
  attrs.Int("accuracy_level", c.level);
  auto out =
      RunNode(spec, attrs, {&a, &codes, &scales, zp ? &*zp : nullptr, c.bias ? &bias : nullptr});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  // Float arithmetic: only the order of additions differs. Int8: the activations are quantized
  // alike, so only the float products of the scales differ.
  ExpectClose((*out)[0], {c.m, c.n}, Reference(c, w, FloatsOf(a), bias_values), 2e-5, 2e-5,
              Name(c));
}

std::vector<NBitsCase> Cases() {
  std::vector<NBitsCase> cases;
  for (int level : {0, 4}) {
    for (int bits : {4, 8}) {
      for (int64_t bs : {16, 32, 64, 128}) {
        // K a whole number of blocks, and K with a partial last block.
        cases.push_back({1, 4 * bs, 19, bits, bs, NBitsCase::kNone, false, level, 1});
        cases.push_back({5, 3 * bs + 7, 33, bits, bs, NBitsCase::kPacked, true, level, 2});
        // One row (a decode step): four columns at a time, then the rest.
        cases.push_back({1, 2 * bs + 5, 23, bits, bs, NBitsCase::kPacked, false, level, 2});
        cases.push_back({1, 2 * bs, 10, bits, bs, NBitsCase::kFloat, true, level, 1});
      }
      cases.push_back({3, 96, 40, bits, 32, NBitsCase::kFloat, false, level, 1});
      cases.push_back({9, 200, 64, bits, 32, NBitsCase::kPacked, false, level, 2});
      cases.push_back({4, 576, 17, bits, 32, NBitsCase::kNone, true, level, 2});
      cases.push_back({2, 45, 3, bits, 16, NBitsCase::kFloat, true, level, 1});
      // Prompts: enough rows for the panel path (dequantized panels and a float GEMM).
      cases.push_back({16, 150, 70, bits, 32, NBitsCase::kPacked, true, level, 2});
      cases.push_back({33, 64, 9, bits, 16, NBitsCase::kNone, false, level, 1});
    }
  }
  // Prompts of the 4-bit int8 arithmetic, which AVX-512 VNNI builds run as integer products in
  // tiles of 16 rows and panels of 64 columns (nbits_gemm_vnni.cc), and other AVX2 builds in
  // pairs of tiles of 8 rows, 4 columns at a time (nbits_panels_avx2.cc): partial tiles, pairs,
  // panels and blocks, every block size.
  cases.push_back({40, 3 * 64 + 5, 131, 4, 64, NBitsCase::kPacked, true, 4, 2});
  cases.push_back({24, 256, 66, 4, 128, NBitsCase::kNone, false, 4, 1});
  cases.push_back({17, 512, 8, 4, 256, NBitsCase::kPacked, false, 4, 2});
  cases.push_back({48, 80, 200, 4, 16, NBitsCase::kPacked, true, 4, 2});
  cases.push_back({8, 96, 64, 4, 32, NBitsCase::kNone, false, 4, 1});
  // Decode steps of the same, which VNNI builds run four blocks of 32 at a time: fewer blocks
  // than four, whole quads only, whole quads and a partial one (the codes and scales past the
  // column masked off), implied and given zero points, columns in fours and the rest; and single
  // rows after tiles of 4.
  cases.push_back({1, 3 * 32, 37, 4, 32, NBitsCase::kNone, true, 4, 2});
  cases.push_back({1, 8 * 32, 9, 4, 32, NBitsCase::kPacked, false, 4, 1});
  cases.push_back({1, 576, 61, 4, 32, NBitsCase::kNone, false, 4, 2});
  cases.push_back({1, 17 * 32 + 3, 21, 4, 32, NBitsCase::kPacked, true, 4, 1});
  cases.push_back({1, 5 * 32 + 9, 42, 4, 32, NBitsCase::kPacked, false, 4, 1});
  cases.push_back({3, 5 * 32 + 9, 12, 4, 32, NBitsCase::kNone, false, 4, 1});
  cases.push_back({5, 7 * 32, 13, 4, 32, NBitsCase::kNone, true, 4, 2});
  // Weights of 128 KiB or more, which a decode step splits over the threads (uneven shares).
  cases.push_back({1, 576, 601, 4, 32, NBitsCase::kNone, true, 4, 2});
  cases.push_back({1, 1536, 257, 4, 32, NBitsCase::kPacked, false, 4, 2});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Cases, MatMulNBitsTest, ::testing::ValuesIn(Cases()),
                         [](const auto& info) { return Name(info.param); });

// The activation quantization of the int8 arithmetic gives MLAS's codes bit for bit on every
// path (AVX-512, AVX2 and scalar: whole blocks take the vector code where the build has it, the
// partial last block the scalar code): codes round(a * 127 / max|a|) to nearest even, ties
// included, a NaN or an infinity's product -128 and skipped by the maximum.
TEST(MatMulNBitsQuantization, ActivationCodesAreMlasCodesOnEveryPath) {
  const int64_t k = 4 * 64 + 40;  // four whole blocks, then a partial one
  NBitsGeometry g = *kernels::MakeNBitsGeometry(k, 1, 4, 64);
  std::mt19937 rng(17);
  std::vector<float> a(static_cast<size_t>(k));
  for (auto& v : a) v = std::uniform_real_distribution<float>(-3, 3)(rng);
  // Block 0: values whose products are exact ties (max 127: the products are the values).
  a[0] = 127.f;
  for (int i = 1; i < 64; ++i) a[static_cast<size_t>(i)] = static_cast<float>(i % 9) - 4.5f;
  a[70] = std::nanf("");                                            // block 1: a NaN
  a[130] = std::numeric_limits<float>::infinity();                  // block 2: an infinity
  for (int i = 192; i < 256; ++i) a[static_cast<size_t>(i)] = 0.f;  // block 3: all zero
  a[260] = std::nanf("");                                           // the partial block: a NaN
  std::vector<int8_t> codes(static_cast<size_t>(g.blocks * g.block_size), 99);
  std::vector<float> scales(static_cast<size_t>(g.blocks)), sums(static_cast<size_t>(g.blocks));
  kernels::nbits_detail::QuantizedRows q;
  q.rows = 1;
  q.row_codes = g.blocks * g.block_size;
  q.codes = codes.data();
  q.scales = scales.data();
  q.scaled_sums = sums.data();
  kernels::nbits_detail::QuantizeRows(g, a.data(), 0, 1, q);
  for (int64_t b = 0; b < g.blocks; ++b) {
    const int64_t k0 = b * g.block_size, len = std::min(g.block_size, k - k0);
    float amax = 0;
    for (int64_t i = 0; i < len; ++i)
      amax = std::max(amax, std::fabs(a[static_cast<size_t>(k0 + i)]));
    const float inverse = amax != 0.f ? 127.f / amax : 0.f;
    EXPECT_EQ(scales[static_cast<size_t>(b)], amax / 127.f) << "block " << b;
    int32_t sum = 0;
    for (int64_t i = 0; i < g.block_size; ++i) {
      int32_t expected = 0;
      if (i < len) {
        const float v = a[static_cast<size_t>(k0 + i)] * inverse;
        expected = std::isnan(v) ? -128 : static_cast<int32_t>(std::nearbyint(v));
      }
      EXPECT_EQ(codes[static_cast<size_t>(k0 + i)], expected) << "block " << b << ", code " << i;
      sum += expected;
    }
    EXPECT_EQ(sums[static_cast<size_t>(b)],
              scales[static_cast<size_t>(b)] * static_cast<float>(sum))
        << "block " << b;
  }
  // The ties round to even: 0.5 -> 0, 1.5 -> 2, -0.5 -> 0, -1.5 -> -2 (a[i] = i % 9 - 4.5).
  EXPECT_EQ(codes[9], -4);  // -4.5
  EXPECT_EQ(codes[4], 0);   // -0.5
  EXPECT_EQ(codes[5], 0);   // 0.5
  EXPECT_EQ(codes[6], 2);   // 1.5
}

// The packed 4-bit layout: byte j of a group of 32 holds codes j (low) and j + 16 (high).
TEST(MatMulNBitsPacking, FourBitGroupsHoldCodesJAndJPlus16) {
  NBitsGeometry g = *kernels::MakeNBitsGeometry(32, 1, 4, 32);
  std::vector<uint8_t> ort(16);
  for (int i = 0; i < 16; ++i)
    ort[i] = static_cast<uint8_t>((2 * i) % 16 | ((2 * i + 1) % 16) << 4);
  const std::vector<uint8_t> packed = kernels::PackNBitsCodes(g, ort);
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(packed[j] & 0x0f, j % 16) << j;
    EXPECT_EQ(packed[j] >> 4, (j + 16) % 16) << j;
  }
}

TEST(MatMulNBitsPacking, ZeroPointsUnpackPerColumnWithPadding) {
  // 3 blocks a column: 2 bytes a column, the last high nibble unused.
  NBitsGeometry g = *kernels::MakeNBitsGeometry(96, 2, 4, 32);
  const std::vector<uint8_t> packed = {0x21, 0xf3, 0x54, 0x06};
  auto zp = kernels::UnpackNBitsZeroPoints(g, packed);
  ASSERT_TRUE(zp.ok()) << zp.status().ToString();
  EXPECT_EQ(*zp, (std::vector<int8_t>{1, 2, 3, 4, 5, 6}));
  auto short_zp = kernels::UnpackNBitsZeroPoints(g, std::vector<uint8_t>(3));
  ExpectError(short_zp.status(), StatusCode::kInvalidArgument,
              "zero_points has 3 bytes; 4 expected for N 2, 3 blocks");
}

TEST(MatMulNBitsGeometry, RefusesWhatTheKernelDoesNotTake) {
  ExpectError(kernels::MakeNBitsGeometry(64, 8, 2, 32).status(), StatusCode::kUnsupported,
              "attribute 'bits' is 2; 4 and 8 are supported");
  ExpectError(kernels::MakeNBitsGeometry(64, 8, 4, 24).status(), StatusCode::kInvalidArgument,
              "attribute 'block_size' is 24; it must be a power of two from 16 to 256");
  ExpectError(kernels::MakeNBitsGeometry(64, 8, 4, 512).status(), StatusCode::kInvalidArgument,
              "attribute 'block_size' is 512");
  ExpectError(kernels::MakeNBitsGeometry(0, 8, 4, 32).status(), StatusCode::kInvalidArgument,
              "attribute 'K' is 0");
}

TEST(MatMulNBitsKernel, RefusesInputsOfAnotherGeometry) {
  std::mt19937 rng(5);
  Tensor a = RandomFloats({1, 64}, rng);
  std::vector<uint8_t> codes(8 * 2 * 16 - 1);
  Tensor short_codes =
      MakeTensor(DataType::kUint8, {static_cast<int64_t>(codes.size())}, codes.data());
  Tensor scales = FloatTensor({16}, std::vector<float>(16, 1.f));
  NodeSpec spec("MatMulNBitsPacked", 1, "com.epctx");
  AttrBuilder attrs;
  attrs.Int("K", 64).Int("N", 8).Int("bits", 4).Int("block_size", 32);
  auto out = RunNode(spec, attrs, {&a, &short_codes, &scales});
  ExpectError(out.status(), StatusCode::kInvalidArgument,
              "input codes is uint8 [255]; the weight's geometry needs uint8 256");
  Tensor wide = RandomFloats({1, 65}, rng);
  std::vector<uint8_t> full(256);
  Tensor good_codes = MakeTensor(DataType::kUint8, {256}, full.data());
  out = RunNode(spec, attrs, {&wide, &good_codes, &scales});
  ExpectError(out.status(), StatusCode::kInvalidArgument,
              "input A has shape [1,65], expected [..., 64]");
}

// A forged output_columns (FuseSiblingNBitsMatMuls writes one positive count per output, summing
// to N) is refused when the kernel is made.
TEST(MatMulNBitsKernel, RefusesOutputColumnsThatAreNotAPartitionOfN) {
  std::mt19937 rng(6);
  Tensor a = RandomFloats({1, 64}, rng);
  std::vector<uint8_t> full(256);
  Tensor codes = MakeTensor(DataType::kUint8, {256}, full.data());
  Tensor scales = FloatTensor({16}, std::vector<float>(16, 1.f));
  NodeSpec spec("MatMulNBitsPacked", 1, "com.epctx");
  spec.outputs = 2;
  for (const std::vector<int64_t>& columns :
       {std::vector<int64_t>{3, 4}, {8, 0}, {-1, 9}, {8}, {2, 2, 4}}) {
    AttrBuilder attrs;
    attrs.Int("K", 64)
        .Int("N", 8)
        .Int("bits", 4)
        .Int("block_size", 32)
        .Ints("output_columns", columns);
    ExpectError(RunNode(spec, attrs, {&a, &codes, &scales}).status(), StatusCode::kInvalidArgument,
                fmt::format("output_columns [{}] for 2 outputs of 8 columns: one positive count "
                            "per output, summing to N",
                            fmt::join(columns, ",")));
  }
  AttrBuilder good;
  good.Int("K", 64).Int("N", 8).Int("bits", 4).Int("block_size", 32).Ints("output_columns", {5, 3});
  auto out = RunNode(spec, good, {&a, &codes, &scales});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_EQ(out->size(), 2u);
  EXPECT_EQ((*out)[0].shape(), (std::vector<int64_t>{1, 5}));
  EXPECT_EQ((*out)[1].shape(), (std::vector<int64_t>{1, 3}));
}

}  // namespace
}  // namespace epctx::exec::testing
