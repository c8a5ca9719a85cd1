// The packed-weight layout encoding (exec/kernels/onednn/weight_format.*): real descriptors from
// PackConvWeights survive encode -> decode -> encode and describe the packed bytes exactly; the
// decoder, which reads untrusted blob bytes, refuses every malformed encoding with its message
// (a catalogue of corruptions of a real encoding, as tests/format does for blobs).
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "exec/kernels/onednn/conv_primitive.h"
#include "exec/kernels/onednn/isa.h"
#include "exec/kernels/onednn/runtime.h"
#include "exec/kernels/onednn/weight_format.h"
#include "exec/kernels/onednn/weight_packing.h"
#include "kernel_test_helpers.h"

namespace epctx::exec::testing {
namespace {

namespace onednn = kernels::onednn;

struct Geometry {
  std::string name;
  std::vector<int64_t> src;  // NCHW
  std::vector<int64_t> weights;
  int64_t group = 1;
  std::vector<int64_t> strides, pads;
  onednn::ActivationLayout layout = onednn::ActivationLayout::kPlain;
};

void PrintTo(const Geometry& g, std::ostream* os) {
  *os << g.name;
}

std::vector<Geometry> Geometries() {
  using L = onednn::ActivationLayout;
  return {
      {"first_layer_3to64_k7s2", {1, 3, 32, 32}, {64, 3, 7, 7}, 1, {2, 2}, {3, 3, 3, 3}},
      {"c64_m64_k3", {1, 64, 14, 14}, {64, 64, 3, 3}, 1, {}, {1, 1, 1, 1}},
      {"depthwise_c32", {1, 32, 16, 16}, {32, 1, 3, 3}, 32, {}, {1, 1, 1, 1}, L::kBlocked16},
      {"depthwise_c24_padded", {2, 24, 9, 9}, {24, 1, 3, 3}, 24, {}, {1, 1, 1, 1}, L::kBlocked16},
      {"grouped_c24_m40_g8", {1, 24, 10, 10}, {40, 3, 3, 3}, 8, {}, {1, 1, 1, 1}},
      {"conv1d_c16_m24", {1, 16, 30}, {24, 16, 3}, 1, {}, {1, 1}},
      {"conv3d_c8_m16", {1, 8, 6, 6, 6}, {16, 8, 3, 3, 3}, 1, {}, {1, 1, 1, 1, 1, 1}},
      {"pointwise_c40_m24_blocked", {3, 40, 7, 7}, {24, 40, 1, 1}, 1, {}, {}, L::kBlocked16},
      {"c24_m24_k3_blocked", {1, 24, 12, 12}, {24, 24, 3, 3}, 1, {}, {1, 1, 1, 1}, L::kBlocked16},
  };
}

Result<onednn::ConvGeometry> Resolve(const Geometry& k) {
  kernels::WindowAttrs w;
  w.strides = k.strides;
  w.pads = k.pads;
  return onednn::ResolveConvGeometry(w, k.group, k.weights, k.src);
}

onednn::ConvConfig Config(const Geometry& k) {
  onednn::ConvConfig c;
  c.src_layout = k.layout;
  c.dst_layout = k.layout;
  c.has_bias = true;
  return c;
}

class DnnlWeightFormatRoundTrip : public ::testing::TestWithParam<Geometry> {};

TEST_P(DnnlWeightFormatRoundTrip, EncodeDecodeEncodeAndTheBytesItDescribes) {
  const Geometry& k = GetParam();
  auto g = Resolve(k);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  std::mt19937 rng(3);
  Tensor w = RandomFloats(k.weights, rng);
  auto packed = onednn::PackConvWeights(*g, Config(k), w.data_as<float>());
  ASSERT_TRUE(packed.ok()) << packed.status().ToString();
  ASSERT_GE(packed->format.size(), 4u);
  EXPECT_EQ(packed->format[0], onednn::kWeightFormatVersion);

  auto decoded = onednn::DecodeBlockedWeightFormat(packed->format);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString() << " for "
                            << onednn::DescribeWeightFormat(packed->format);
  auto again = onednn::EncodeWeightFormat(*decoded);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(*again, packed->format);
  EXPECT_EQ(decoded->get_size(), packed->bytes.byte_size());

  // oneDNN's dims: a leading group dim for grouped convolutions.
  std::string prefix = "onednn-blocked [";
  for (size_t i = 0; i < g->dnnl_weight_dims().size(); ++i) {
    if (i > 0) prefix += ',';
    prefix += std::to_string(g->dnnl_weight_dims()[i]);
  }
  prefix += ']';
  const std::string described = onednn::DescribeWeightFormat(packed->format);
  EXPECT_EQ(described.rfind(prefix, 0), 0u) << described;

  // The decoded layout read back into OIHW gives the filter that was packed.
  Tensor back = RandomFloats(k.weights, rng);
  const auto tag = [&] {
    using tag = dnnl::memory::format_tag;
    const size_t spatial = k.weights.size() - 2;
    if (k.group > 1) return spatial == 1 ? tag::goiw : spatial == 3 ? tag::goidhw : tag::goihw;
    return spatial == 1 ? tag::oiw : spatial == 3 ? tag::oidhw : tag::oihw;
  }();
  dnnl::memory src = onednn::Wrap(*decoded, packed->bytes.data());
  dnnl::memory dst = onednn::Wrap(onednn::PlainDesc(g->dnnl_weight_dims(), tag), back.data());
  dnnl::reorder(src, dst).execute(onednn::ThreadStream(), src, dst);
  onednn::ThreadStream().wait();
  EXPECT_EQ(FloatsOf(back), FloatsOf(w));
}

INSTANTIATE_TEST_SUITE_P(Geometries, DnnlWeightFormatRoundTrip, ::testing::ValuesIn(Geometries()),
                         [](const auto& info) { return info.param.name; });

// ---------------------------------------------------------------------------------------------
// The corruption catalogue. The base is the real encoding of a 16 -> 32 channel 3x3 filter
// between activations in the blocked layout the compiler plans on this CPU (16 channels per
// block, 8 on AVX2), whose filter layout oneDNN blocks on both channel dims.

int64_t ChannelBlock() {
  return onednn::ChannelBlock(onednn::PlannedBlockedLayout());
}

std::vector<int64_t> BaseEncoding() {
  Geometry k{
      "base", {1, 16, 8, 8}, {32, 16, 3, 3}, 1, {}, {1, 1, 1, 1}, onednn::PlannedBlockedLayout()};
  auto g = Resolve(k);
  EXPECT_TRUE(g.ok()) << g.status().ToString();
  std::vector<float> w(32 * 16 * 9, 0.5f);
  auto packed = onednn::PackConvWeights(*g, Config(k), w.data());
  EXPECT_TRUE(packed.ok()) << packed.status().ToString();
  return packed.ok() ? packed->format : std::vector<int64_t>{};
}

// Offsets inside a blocked encoding of `nd` dims.
constexpr size_t kDims = 4;
size_t Padded(size_t nd) {
  return kDims + nd;
}
size_t Strides(size_t nd) {
  return kDims + 2 * nd;
}
size_t Nblks(size_t nd) {
  return kDims + 3 * nd;
}

struct Corruption {
  std::string name;
  std::vector<int64_t> (*make)(std::vector<int64_t> base);
  std::string message;  // after "packed weight layout is malformed: "
};

void PrintTo(const Corruption& c, std::ostream* os) {
  *os << c.name;
}

constexpr int64_t kMaxWeightBytes = int64_t{1} << 40;  // weight_format.cc's kMaxWeightBytes

std::vector<Corruption> Corruptions() {
  using V = std::vector<int64_t>;
  return {
      {"empty", [](V) { return V{}; }, "too short"},
      {"header_cut", [](V e) { return V(e.begin(), e.begin() + 3); }, "too short"},
      {"version_2", [](V e) { return e[0] = 2, e; }, "encoding version 2 (expected 1)"},
      {"version_0", [](V e) { return e[0] = 0, e; }, "encoding version 0 (expected 1)"},
      {"kind_0", [](V e) { return e[1] = 0, e; }, "unknown kind 0"},
      {"kind_3", [](V e) { return e[1] = 3, e; }, "unknown kind 3"},
      {"data_type_4_s32", [](V e) { return e[2] = 4, e; }, "data type 4"},
      {"ndims_0", [](V e) { return e[3] = 0, e; }, "0 dims"},
      {"ndims_negative", [](V e) { return e[3] = -4, e; }, "-4 dims"},
      {"ndims_13", [](V e) { return e[3] = DNNL_MAX_NDIMS + 1, e; }, "13 dims"},
      {"dim_0", [](V e) { return e[kDims] = 0, e; }, "bad dims"},
      {"dim_negative", [](V e) { return e[kDims + 1] = -16, e; }, "bad dims"},
      {"dim_too_large", [](V e) { return e[kDims] = kMaxWeightBytes + 1, e; }, "bad dims"},
      {"cut_in_dims", [](V e) { return V(e.begin(), e.begin() + kDims + 2); }, "bad dims"},
      {"padded_below_dims", [](V e) { return e[Padded(4)] = e[kDims] - 1, e; }, "bad padded dims"},
      {"padded_too_large", [](V e) { return e[Padded(4) + 1] = kMaxWeightBytes + 1, e; },
       "bad padded dims"},
      {"cut_in_padded", [](V e) { return V(e.begin(), e.begin() + Padded(4) + 1); },
       "bad padded dims"},
      {"stride_0", [](V e) { return e[Strides(4) + 2] = 0, e; }, "bad strides"},
      {"stride_negative", [](V e) { return e[Strides(4)] = -1, e; }, "bad strides"},
      {"stride_too_large", [](V e) { return e[Strides(4) + 3] = kMaxWeightBytes + 1, e; },
       "bad strides"},
      {"cut_in_strides", [](V e) { return V(e.begin(), e.begin() + Strides(4) + 3); },
       "bad strides"},
      {"block_count_negative", [](V e) { return e[Nblks(4)] = -1, e; }, "bad block count"},
      {"block_count_13", [](V e) { return e[Nblks(4)] = 13, e; }, "bad block count"},
      {"block_count_missing", [](V e) { return V(e.begin(), e.begin() + Nblks(4)); },
       "bad block count"},
      // More blocks announced than given: the block indices are read as blocks.
      {"block_of_1", [](V e) { return e[Nblks(4) + 1] = 1, e; }, "bad inner block"},
      {"block_of_257", [](V e) { return e[Nblks(4) + 1] = 257, e; }, "bad inner block"},
      {"blocks_cut", [](V e) { return V(e.begin(), e.begin() + Nblks(4) + 1); }, "bad inner block"},
      {"blocks_product_above_65536",
       [](V e) {
         e.resize(Nblks(4));
         for (int64_t v : {3, 256, 256, 2, 0, 1, 0}) e.push_back(v);
         return e;
       },
       "inner blocks too large"},
      {"block_index_4_of_4_dims", [](V e) { return e.back() = 4, e; }, "bad inner block index"},
      {"block_index_negative", [](V e) { return e.back() = -1, e; }, "bad inner block index"},
      {"block_index_missing", [](V e) { return e.pop_back(), e; }, "bad inner block index"},
      {"trailing_value", [](V e) { return e.push_back(0), e; }, "trailing values"},
      {"padded_not_multiple_of_block",
       // O (32) padded by half a block: 40 with 16-blocks on O, 36 with 8-blocks.
       [](V e) { return e[Padded(4)] = 32 + ChannelBlock() / 2, e; },
       "padded dims not a multiple of blocks"},
      {"overlapping_strides",
       [](V e) {
         // W's stride is the inner block (256 floats with 16-blocks): H's stride must be at
         // least 3 times it.
         e[Strides(4) + 2] = 2 * e[Strides(4) + 3];
         return e;
       },
       "overlapping strides"},
      {"equal_strides_of_two_dims", [](V e) { return e[Strides(4) + 2] = e[Strides(4) + 3], e; },
       "overlapping strides"},
      // Dims, pads and strides each within their limit, the layout's extent above it.
      {"extent_above_limit",
       [](V) { return V{1, 1, 3, 2, 1 << 20, 1 << 21, 1 << 20, 1 << 21, 1 << 21, 1, 0}; },
       "too large"},
      // stride x outer dim overflows int64.
      {"extent_overflows",
       [](V) {
         return V{1, 1, 3, 2, kMaxWeightBytes, 1024, kMaxWeightBytes, 1024, kMaxWeightBytes, 1, 0};
       },
       "too large"},
  };
}

class DnnlWeightFormatCorrupt : public ::testing::TestWithParam<Corruption> {};

TEST_P(DnnlWeightFormatCorrupt, IsRefusedWithItsMessage) {
  const Corruption& c = GetParam();
  const std::vector<int64_t> base = BaseEncoding();
  // The catalogue's offsets assume the base: a 4-d blocked layout with two inner blocks
  // (16i16o-like; 8i8o on AVX2), which every x86 oneDNN picks for this filter.
  ASSERT_EQ(base.size(), Nblks(4) + 5) << onednn::DescribeWeightFormat(base);
  ASSERT_EQ(base[1], 1);
  ASSERT_EQ(base[Nblks(4)], 2);
  ASSERT_TRUE(onednn::DecodeBlockedWeightFormat(base).ok());

  const std::vector<int64_t> bad = c.make(base);
  auto decoded = onednn::DecodeBlockedWeightFormat(bad);
  ASSERT_FALSE(decoded.ok()) << c.name << " was accepted";
  EXPECT_EQ(decoded.status().code(), StatusCode::kCorrupt);
  EXPECT_EQ(decoded.status().message(),
            std::string("packed weight layout is malformed: ") + c.message);
  EXPECT_EQ(onednn::DescribeWeightFormat(bad), "malformed");
}

INSTANTIATE_TEST_SUITE_P(Catalogue, DnnlWeightFormatCorrupt, ::testing::ValuesIn(Corruptions()),
                         [](const auto& info) { return info.param.name; });

// A Winograd layout only serves the input shape it was packed for: the blocked decoder refuses
// it as unsupported (not corrupt), naming why.
TEST(DnnlWeightFormat, WinogradEncodingIsRefusedByTheBlockedDecoder) {
  // Hand-made: version, kind 2, f32, 4 dims, dims, padded dims, then the Winograd fields.
  std::vector<int64_t> wino{1, 2, dnnl_f32, 4, 64, 64, 3, 3, 64, 64, 3, 3};
  for (int64_t v : {1, 3, 6, 64, 64, 16, 16, 4, 4, 0x3f800000, 1 << 20}) wino.push_back(v);
  auto decoded = onednn::DecodeBlockedWeightFormat(wino);
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.status().code(), StatusCode::kUnsupported);
  EXPECT_EQ(decoded.status().message(),
            "a Winograd weight layout only serves the input shape it was packed for");
  EXPECT_EQ(onednn::DescribeWeightFormat(wino), "onednn-winograd [64,64,3,3]");

  // And a real one, where this CPU has a Winograd convolution (oneDNN 2.6 on AVX-512: blocked
  // activations).
  kernels::WindowAttrs w;
  w.pads = {1, 1, 1, 1};
  auto g = onednn::ResolveConvGeometry(w, 1, std::vector<int64_t>{64, 64, 3, 3},
                                       std::vector<int64_t>{1, 64, 28, 28});
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  onednn::ConvConfig config;
  config.winograd = true;
  config.src_layout = onednn::ActivationLayout::kBlocked16;
  config.dst_layout = onednn::ActivationLayout::kBlocked16;
  std::vector<float> filter(64 * 64 * 9, 0.25f);
  auto packed = onednn::PackConvWeights(*g, config, filter.data());
  if (!onednn::HasWinogradConvolutions()) {
    ASSERT_FALSE(packed.ok());
    EXPECT_EQ(packed.status().code(), StatusCode::kUnsupported) << packed.status().ToString();
    return;  // no Winograd implementation on this CPU: the hand-made encoding stood in
  }
  ASSERT_TRUE(packed.ok()) << packed.status().ToString();
  ASSERT_EQ(packed->format[1], 2) << onednn::DescribeWeightFormat(packed->format);
  auto real = onednn::DecodeBlockedWeightFormat(packed->format);
  ASSERT_FALSE(real.ok());
  EXPECT_EQ(real.status().code(), StatusCode::kUnsupported);
  EXPECT_EQ(onednn::DescribeWeightFormat(packed->format), "onednn-winograd [64,64,3,3]");
}

}  // namespace
}  // namespace epctx::exec::testing
