// MaxPool / AveragePool / global pools against direct references over random windows:
// padding, strides, dilations, ceil_mode, count_include_pad, auto_pad, 1 to 3 spatial dims.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernel_test_helpers.h"

namespace epctx::exec::testing {
namespace {

struct PoolCase {
  bool max = true;
  std::vector<int64_t> in, kernel, strides, dilations, pads;
  std::string auto_pad = "NOTSET";
  bool ceil_mode = false;
  bool include_pad = false;
};

// The output extent per the spec, with PyTorch's rule that a ceil-mode window must start
// inside the input or its begin padding.
void PoolGeometry(const PoolCase& p, std::vector<int64_t>& pb, std::vector<int64_t>& pe,
                  std::vector<int64_t>& out) {
  const size_t r = p.in.size();
  pb.assign(r, 0);
  pe.assign(r, 0);
  out.assign(r, 0);
  for (size_t i = 0; i < r; ++i) {
    const int64_t s = p.strides.empty() ? 1 : p.strides[i];
    const int64_t d = p.dilations.empty() ? 1 : p.dilations[i];
    const int64_t span = (p.kernel[i] - 1) * d + 1;
    if (p.auto_pad == "SAME_UPPER" || p.auto_pad == "SAME_LOWER") {
      out[i] = (p.in[i] + s - 1) / s;
      const int64_t total = std::max<int64_t>(0, (out[i] - 1) * s + span - p.in[i]);
      pb[i] = p.auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      pe[i] = total - pb[i];
      continue;
    }
    if (p.auto_pad == "NOTSET" && !p.pads.empty()) {
      pb[i] = p.pads[i];
      pe[i] = p.pads[r + i];
    }
    const double room = static_cast<double>(p.in[i] + pb[i] + pe[i] - span) / s;
    out[i] = static_cast<int64_t>(p.ceil_mode ? std::ceil(room) : std::floor(room)) + 1;
    if (p.ceil_mode && (out[i] - 1) * s >= p.in[i] + pb[i]) --out[i];
  }
}

std::vector<double> ReferencePool(const PoolCase& p, int64_t planes, const std::vector<float>& x,
                                  std::vector<int64_t>& out) {
  std::vector<int64_t> pb, pe;
  PoolGeometry(p, pb, pe, out);
  const size_t r = p.in.size();
  const int64_t in_size = Count(p.in), out_size = Count(out);
  std::vector<double> y;
  for (int64_t plane = 0; plane < planes; ++plane) {
    for (int64_t o = 0; o < out_size; ++o) {
      std::vector<int64_t> oi(r);
      for (size_t d = r, rest = static_cast<size_t>(o); d-- > 0;) {
        oi[d] = static_cast<int64_t>(rest) % out[d];
        rest /= static_cast<size_t>(out[d]);
      }
      double acc = p.max ? -std::numeric_limits<double>::infinity() : 0;
      int64_t valid = 0, padded = 0;
      for (int64_t t = 0; t < Count(p.kernel); ++t) {
        int64_t rest = t, flat = 0;
        bool inside = true, inside_pad = true;
        for (size_t d = r; d-- > 0;) {
          const int64_t kd = rest % p.kernel[d];
          rest /= p.kernel[d];
          const int64_t s = p.strides.empty() ? 1 : p.strides[d];
          const int64_t dl = p.dilations.empty() ? 1 : p.dilations[d];
          const int64_t pos = oi[d] * s - pb[d] + kd * dl;
          inside = inside && pos >= 0 && pos < p.in[d];
          inside_pad = inside_pad && pos >= -pb[d] && pos < p.in[d] + pe[d];
          int64_t stride = 1;
          for (size_t e = d + 1; e < r; ++e) stride *= p.in[e];
          flat += pos * stride;
        }
        padded += inside_pad;
        if (!inside) continue;
        ++valid;
        const double v = x[static_cast<size_t>(plane * in_size + flat)];
        acc = p.max ? std::max(acc, v) : acc + v;
      }
      if (!p.max) acc /= static_cast<double>(p.include_pad ? padded : valid);
      y.push_back(acc);
    }
  }
  return y;
}

void CheckPool(const PoolCase& p, std::mt19937& rng, int threads) {
  const int64_t n = Pick(rng, 1, 2), c = Pick(rng, 1, 3);
  std::vector<int64_t> shape{n, c};
  shape.insert(shape.end(), p.in.begin(), p.in.end());
  Tensor x = RandomFloats(shape, rng);
  AttrBuilder attrs;
  attrs.Ints("kernel_shape", p.kernel).String("auto_pad", p.auto_pad).Int("ceil_mode", p.ceil_mode);
  if (!p.strides.empty()) attrs.Ints("strides", p.strides);
  if (!p.dilations.empty()) attrs.Ints("dilations", p.dilations);
  if (!p.pads.empty()) attrs.Ints("pads", p.pads);
  if (!p.max) attrs.Int("count_include_pad", p.include_pad);
  NodeSpec spec(p.max ? "MaxPool" : "AveragePool", 19);
  spec.threads = threads;
  auto result = RunNode(spec, attrs, {&x});
  const std::string what =
      fmt::format("{} in{} k{} s{} d{} p{} {} ceil{} incl{}", spec.op_type, p.in, p.kernel,
                  p.strides, p.dilations, p.pads, p.auto_pad, p.ceil_mode, p.include_pad);
  ASSERT_TRUE(result.ok()) << what << ": " << result.status().ToString();
  std::vector<int64_t> out;
  const auto ref = ReferencePool(p, n * c, FloatsOf(x), out);
  std::vector<int64_t> y_shape{n, c};
  y_shape.insert(y_shape.end(), out.begin(), out.end());
  ExpectClose((*result)[0], y_shape, ref, 1e-6, 1e-5, what);
}

TEST(PoolTest, RandomWindows) {
  std::mt19937 rng(41);
  int checked = 0;
  for (int i = 0; i < 300; ++i) {
    PoolCase p;
    p.max = Pick(rng, 0, 1);
    const size_t rank = static_cast<size_t>(Pick(rng, 0, 4) == 0 ? Pick(rng, 1, 3) : 2);
    for (size_t d = 0; d < rank; ++d) {
      p.kernel.push_back(Pick(rng, 1, 4));
      p.in.push_back(Pick(rng, 1, rank == 3 ? 7 : 12));
    }
    if (Pick(rng, 0, 1)) {
      for (size_t d = 0; d < rank; ++d) p.strides.push_back(Pick(rng, 1, 3));
    }
    if (Pick(rng, 0, 3) == 0) {
      for (size_t d = 0; d < rank; ++d) p.dilations.push_back(Pick(rng, 1, 2));
    }
    const int64_t mode = Pick(rng, 0, 5);
    if (mode <= 2) {
      // Pads below the kernel, as the spec requires, so that no window is all padding.
      for (size_t d = 0; d < 2 * rank; ++d) p.pads.push_back(Pick(rng, 0, p.kernel[d % rank] - 1));
    } else {
      p.auto_pad = std::vector<std::string>{"SAME_UPPER", "SAME_LOWER", "VALID"}[mode - 3];
    }
    p.ceil_mode = p.auto_pad.rfind("SAME", 0) != 0 && Pick(rng, 0, 1);
    p.include_pad = Pick(rng, 0, 1);
    bool fits = true;
    for (size_t d = 0; d < rank; ++d) {
      const int64_t span = (p.kernel[d] - 1) * (p.dilations.empty() ? 1 : p.dilations[d]) + 1;
      const int64_t padded = p.in[d] + (p.pads.empty() ? 0 : p.pads[d] + p.pads[rank + d]);
      // Every window then sees at least one input element (none is all padding).
      fits = fits && p.in[d] >= span && padded >= span;
    }
    if (!fits) continue;
    CheckPool(p, rng, static_cast<int>(Pick(rng, 1, 2)));
    ++checked;
  }
  EXPECT_GE(checked, 150);  // the filter above must leave most cases in
}

TEST(PoolTest, ResNetStemMaxPoolWithTwoThreads) {
  std::mt19937 rng(42);
  PoolCase p;
  p.in = {56, 56};
  p.kernel = {3, 3};
  p.strides = {2, 2};
  p.pads = {1, 1, 1, 1};
  CheckPool(p, rng, 2);
}

TEST(PoolTest, CeilModeDropsWindowStartingInPadding) {
  // in 6, k 2, s 2, pad end 1: ceil((6+1-2)/2)+1 = 4 windows, but the 4th would start at 6.
  std::mt19937 rng(43);
  PoolCase p;
  p.max = false;
  p.in = {6};
  p.kernel = {2};
  p.strides = {2};
  p.pads = {0, 1};
  p.ceil_mode = true;
  std::vector<int64_t> pb, pe, out;
  PoolGeometry(p, pb, pe, out);
  ASSERT_EQ(out, std::vector<int64_t>{3});
  CheckPool(p, rng, 1);
}

TEST(PoolTest, Errors) {
  std::mt19937 rng(44);
  Tensor x = RandomFloats({1, 2, 5, 5}, rng);
  AttrBuilder column_major_3;
  column_major_3.Ints("kernel_shape", {2, 2}).Int("storage_order", 3);
  NodeSpec with_indices("MaxPool", 12);
  with_indices.outputs = 2;
  ExpectError(RunNode(with_indices, column_major_3, {&x}).status(), StatusCode::kInvalidArgument,
              "storage_order is 3, expected 0 or 1");
  AttrBuilder none;
  ExpectError(RunNode(NodeSpec("MaxPool", 12), none, {&x}).status(), StatusCode::kInvalidArgument,
              "required attribute 'kernel_shape' is missing");
  AttrBuilder k3;
  k3.Ints("kernel_shape", {2, 2, 2});
  NodeSpec undescribed("AveragePool", 11);
  undescribed.describe_inputs = false;
  ExpectError(RunNode(undescribed, k3, {&x}).status(), StatusCode::kInvalidArgument,
              "input X has rank 4, expected 5");
}

TEST(GlobalPoolTest, AverageAndMax) {
  std::mt19937 rng(45);
  for (const std::vector<int64_t>& shape :
       {std::vector<int64_t>{2, 3, 7}, std::vector<int64_t>{1, 64, 9, 9},
        std::vector<int64_t>{2, 2, 3, 4, 5}}) {
    Tensor x = RandomFloats(shape, rng);
    const int64_t planes = shape[0] * shape[1];
    const int64_t inner = Count(shape) / planes;
    std::vector<double> avg, mx;
    const auto xv = FloatsOf(x);
    for (int64_t p = 0; p < planes; ++p) {
      double sum = 0, m = -1e30;
      for (int64_t i = 0; i < inner; ++i) {
        sum += xv[static_cast<size_t>(p * inner + i)];
        m = std::max(m, double{xv[static_cast<size_t>(p * inner + i)]});
      }
      avg.push_back(sum / static_cast<double>(inner));
      mx.push_back(m);
    }
    std::vector<int64_t> out(shape.size(), 1);
    out[0] = shape[0];
    out[1] = shape[1];
    AttrBuilder none;
    NodeSpec gap("GlobalAveragePool", 1);
    gap.threads = 2;
    auto a = RunNode(gap, none, {&x});
    ASSERT_TRUE(a.ok()) << a.status().ToString();
    ExpectClose((*a)[0], out, avg, 1e-6, 1e-5, "GlobalAveragePool");
    auto m = RunNode(NodeSpec("GlobalMaxPool", 1), none, {&x});
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    ExpectClose((*m)[0], out, mx, 0, 0, "GlobalMaxPool");
  }
  Tensor flat = RandomFloats({2, 3}, rng);
  AttrBuilder none;
  ExpectError(RunNode(NodeSpec("GlobalAveragePool", 1), none, {&flat}).status(),
              StatusCode::kInvalidArgument, "input X has rank 2, expected at least 3");
}

}  // namespace
}  // namespace epctx::exec::testing
