// The signal/ family: DFT against hand-computed transforms and a direct double-precision sum
// (at lengths that exercise the radix-2, direct and Bluestein paths), its inverse round trip,
// STFT against per-frame sums, and MelWeightMatrix against the ONNX test's matrix.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstdint>
#include <numbers>
#include <random>
#include <string>
#include <vector>

#include "kernel_test_helpers.h"

namespace epctx::exec::testing {
namespace {

using Complex = std::complex<double>;

// Direct sum of the DFT of one complex sequence, padded or truncated to n.
std::vector<Complex> ReferenceDft(const std::vector<Complex>& x, int64_t n, bool inverse) {
  std::vector<Complex> y(static_cast<size_t>(n));
  const double sign = inverse ? 1 : -1;
  for (int64_t k = 0; k < n; ++k) {
    Complex acc(0, 0);
    for (int64_t j = 0; j < n && j < static_cast<int64_t>(x.size()); ++j) {
      const double angle =
          sign * 2 * std::numbers::pi * static_cast<double>((j * k) % n) / static_cast<double>(n);
      acc += x[static_cast<size_t>(j)] * Complex(std::cos(angle), std::sin(angle));
    }
    y[static_cast<size_t>(k)] = inverse ? acc / static_cast<double>(n) : acc;
  }
  return y;
}

std::vector<double> Interleave(const std::vector<Complex>& v) {
  std::vector<double> out;
  for (const Complex& c : v) {
    out.push_back(c.real());
    out.push_back(c.imag());
  }
  return out;
}

Tensor ComplexTensor(std::vector<int64_t> shape, const std::vector<Complex>& v) {
  std::vector<float> f;
  for (const Complex& c : v) {
    f.push_back(static_cast<float>(c.real()));
    f.push_back(static_cast<float>(c.imag()));
  }
  return FloatTensor(std::move(shape), f);
}

std::vector<Complex> RandomComplex(int64_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<Complex> v(static_cast<size_t>(n));
  // Values rounded to float, as the tensor holds them.
  for (Complex& c : v) c = Complex(dist(rng), dist(rng));
  return v;
}

Result<std::vector<Tensor>> Dft(const AttrBuilder& attrs, const Tensor& x,
                                const Tensor* dft_length = nullptr, int threads = 1) {
  NodeSpec spec("DFT", 17);
  spec.threads = threads;
  return RunNode(spec, attrs, {&x, dft_length});
}

TEST(DftTest, ImpulseAndCosine) {
  // The DFT of an impulse is all ones.
  Tensor impulse = FloatTensor({1, 8, 1}, {1, 0, 0, 0, 0, 0, 0, 0});
  auto r = Dft(AttrBuilder(), impulse);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ExpectClose((*r)[0], {1, 8, 2}, {1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0}, 1e-6, 0,
              "impulse");
  // cos(2*pi*2j/8) has n/2 = 4 at frequencies 2 and 6.
  std::vector<float> cosine(8);
  for (int j = 0; j < 8; ++j) cosine[j] = static_cast<float>(std::cos(std::numbers::pi * j / 2));
  r = Dft(AttrBuilder(), FloatTensor({1, 8, 1}, cosine));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ExpectClose((*r)[0], {1, 8, 2}, {0, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0}, 1e-6, 0,
              "cosine");
  // onesided keeps frequencies 0..4.
  AttrBuilder onesided;
  onesided.Int("onesided", 1);
  r = Dft(onesided, FloatTensor({1, 8, 1}, cosine));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ExpectClose((*r)[0], {1, 5, 2}, {0, 0, 0, 0, 4, 0, 0, 0, 0, 0}, 1e-6, 0, "onesided");
  // dft_length 4 pads [1, 2, 3] with a zero: X[k] = 1 + 2(-i)^k + 3(-1)^k.
  Tensor x = FloatTensor({1, 3, 1}, {1, 2, 3});
  Tensor four = Int64Tensor({}, {4});
  r = Dft(AttrBuilder(), x, &four);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ExpectClose((*r)[0], {1, 4, 2}, {6, 0, -2, -2, 2, 0, -2, 2}, 1e-6, 0, "padded");
  // dft_length 2 truncates to [1, 2].
  Tensor two = Int64Tensor({1}, {2});
  r = Dft(AttrBuilder(), x, &two);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ExpectClose((*r)[0], {1, 2, 2}, {3, 0, -1, 0}, 1e-6, 0, "truncated");
}

TEST(DftTest, MatchesDirectSumAtEveryLength) {
  std::mt19937 rng(7);
  // Powers of two take radix-2, short other lengths the direct sum, long ones Bluestein.
  for (int64_t n : {1, 2, 5, 8, 12, 64, 65, 97, 100, 128, 243}) {
    for (bool inverse : {false, true}) {
      std::vector<Complex> v = RandomComplex(n, rng);
      AttrBuilder attrs;
      attrs.Int("inverse", inverse ? 1 : 0);
      auto r = Dft(attrs, ComplexTensor({1, n, 2}, v));
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      ExpectClose((*r)[0], {1, n, 2}, Interleave(ReferenceDft(v, n, inverse)), 1e-5, 1e-5,
                  "n=" + std::to_string(n) + (inverse ? " inverse" : ""));
    }
  }
}

TEST(DftTest, InverseRoundTripsAlongInnerAxis) {
  std::mt19937 rng(11);
  // [2, 3, 100, 2] transformed along axis 2 (contiguous lines) and axis 1 (lines strided by
  // 100), on two threads.
  std::vector<Complex> v = RandomComplex(2 * 3 * 100, rng);
  Tensor x = ComplexTensor({2, 3, 100, 2}, v);
  for (int64_t axis : {1, 2, -2}) {
    AttrBuilder forward, inverse;
    forward.Int("axis", axis);
    inverse.Int("axis", axis).Int("inverse", 1);
    auto f = Dft(forward, x, nullptr, 2);
    ASSERT_TRUE(f.ok()) << f.status().ToString();
    auto b = Dft(inverse, (*f)[0], nullptr, 2);
    ASSERT_TRUE(b.ok()) << b.status().ToString();
    ExpectClose((*b)[0], {2, 3, 100, 2}, Interleave(v), 1e-5, 1e-5,
                "round trip axis " + std::to_string(axis));
  }
  // Axis 1 of [2, 3, 100, 2]: check one line against the direct sum.
  AttrBuilder axis1;
  axis1.Int("axis", 1);
  auto f = Dft(axis1, x);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  std::vector<Complex> want(v.size());
  for (int64_t b = 0; b < 2; ++b) {
    for (int64_t i = 0; i < 100; ++i) {
      std::vector<Complex> line;
      for (int64_t c = 0; c < 3; ++c) line.push_back(v[static_cast<size_t>((b * 3 + c) * 100 + i)]);
      std::vector<Complex> t = ReferenceDft(line, 3, false);
      for (int64_t c = 0; c < 3; ++c) {
        want[static_cast<size_t>((b * 3 + c) * 100 + i)] = t[static_cast<size_t>(c)];
      }
    }
  }
  ExpectClose((*f)[0], {2, 3, 100, 2}, Interleave(want), 1e-5, 1e-5, "axis 1");
}

TEST(DftTest, Opset20TakesAxisAsInput) {
  std::mt19937 rng(3);
  std::vector<Complex> v = RandomComplex(4 * 6, rng);
  Tensor x = ComplexTensor({4, 6, 2}, v);
  // The default axis -2 is the last signal axis (6).
  auto r = RunNode(NodeSpec("DFT", 20), AttrBuilder(), {&x});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  std::vector<Complex> want;
  for (int64_t b = 0; b < 4; ++b) {
    std::vector<Complex> line(v.begin() + b * 6, v.begin() + (b + 1) * 6);
    for (const Complex& c : ReferenceDft(line, 6, false)) want.push_back(c);
  }
  ExpectClose((*r)[0], {4, 6, 2}, Interleave(want), 1e-5, 1e-5, "opset 20 default axis");
  Tensor axis0 = Int64Tensor({}, {0});
  r = RunNode(NodeSpec("DFT", 20), AttrBuilder(), {&x, nullptr, &axis0});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)[0].shape(), (std::vector<int64_t>{4, 6, 2}));
}

TEST(DftTest, Float64KeepsDoublePrecision) {
  std::mt19937 rng(5);
  for (int64_t n : {16, 30, 100}) {
    std::vector<Complex> v = RandomComplex(n, rng);
    std::vector<double> flat = Interleave(v);
    Tensor x = MakeTensor(DataType::kFloat64, {1, n, 2}, flat.data());
    auto r = Dft(AttrBuilder(), x);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    const Tensor& y = (*r)[0];
    ASSERT_EQ(y.dtype(), DataType::kFloat64);
    ASSERT_EQ(y.shape(), (std::vector<int64_t>{1, n, 2}));
    std::vector<double> want = Interleave(ReferenceDft(v, n, false));
    const double* got = y.data_as<double>();
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_NEAR(got[i], want[i], 1e-12) << "n=" << n << " element " << i;
    }
  }
}

TEST(DftTest, RejectsBadInputs) {
  Tensor x = FloatTensor({1, 2, 3}, {1, 2, 3, 4, 5, 6});
  ExpectError(Dft(AttrBuilder(), x).status(), StatusCode::kInvalidArgument,
              "input input has shape [1,2,3], expected [..., 1] (real) or [..., 2] (complex)");
  Tensor real = FloatTensor({1, 2, 1}, {1, 2});
  AttrBuilder axis;
  axis.Int("axis", 2);
  ExpectError(Dft(axis, real).status(), StatusCode::kInvalidArgument,
              "axis 2 is outside [-3, -2] and [0, 1]");
  Tensor zero = Int64Tensor({}, {0});
  ExpectError(Dft(AttrBuilder(), real, &zero).status(), StatusCode::kInvalidArgument,
              "DFT length 0 is outside [1, 1048576]");
}

TEST(StftTest, FramesMatchDirectSums) {
  std::vector<float> signal(10);
  for (int j = 0; j < 10; ++j) signal[j] = static_cast<float>(std::sin(0.7 * j) + 0.1 * j);
  Tensor x = FloatTensor({1, 10, 1}, signal);
  Tensor step = Int64Tensor({}, {3});
  Tensor length = Int64Tensor({}, {4});
  std::vector<float> hann = {0, 0.75f, 0.75f, 0};
  Tensor window = FloatTensor({4}, hann);
  // frames = 1 + (10 - 4) / 3 = 3, starting at 0, 3 and 6; onesided keeps 3 bins.
  auto expected = [&](bool windowed, int64_t bins) {
    std::vector<Complex> out;
    for (int64_t f = 0; f < 3; ++f) {
      std::vector<Complex> frame;
      for (int64_t j = 0; j < 4; ++j) {
        frame.emplace_back(signal[static_cast<size_t>(f * 3 + j)] *
                               (windowed ? hann[static_cast<size_t>(j)] : 1.0),
                           0);
      }
      std::vector<Complex> t = ReferenceDft(frame, 4, false);
      out.insert(out.end(), t.begin(), t.begin() + bins);
    }
    return Interleave(out);
  };
  auto r = RunNode(NodeSpec("STFT", 17), AttrBuilder(), {&x, &step, nullptr, &length});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ExpectClose((*r)[0], {1, 3, 3, 2}, expected(false, 3), 1e-5, 1e-5, "frame_length");
  AttrBuilder twosided;
  twosided.Int("onesided", 0);
  r = RunNode(NodeSpec("STFT", 17), twosided, {&x, &step, &window});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ExpectClose((*r)[0], {1, 3, 4, 2}, expected(true, 4), 1e-5, 1e-5, "window");
  Tensor five = Int64Tensor({}, {5});
  ExpectError(RunNode(NodeSpec("STFT", 17), AttrBuilder(), {&x, &step, &window, &five}).status(),
              StatusCode::kInvalidArgument, "frame_length 5 differs from the window's length 4");
  Tensor zero = Int64Tensor({}, {0});
  ExpectError(RunNode(NodeSpec("STFT", 17), AttrBuilder(), {&x, &zero, &window}).status(),
              StatusCode::kInvalidArgument, "frame_step is 0, expected at least 1");
}

TEST(MelWeightMatrixTest, MatchesOnnxTestMatrix) {
  const int32_t ints[3] = {8, 16, 8192};
  Tensor mel = MakeTensor(DataType::kInt32, {}, &ints[0]);
  Tensor dft = MakeTensor(DataType::kInt32, {}, &ints[1]);
  Tensor rate = MakeTensor(DataType::kInt32, {}, &ints[2]);
  Tensor lower = FloatTensor({}, {0});
  Tensor upper = FloatTensor({}, {4096});
  auto r =
      RunNode(NodeSpec("MelWeightMatrix", 17), AttrBuilder(), {&mel, &dft, &rate, &lower, &upper});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  // Band edges fall on bins 0 0 0 1 1 2 3 4 5 6: the first bands are single ones.
  std::vector<double> want(9 * 8, 0.0);
  const int64_t ones[][2] = {{0, 0}, {0, 1}, {1, 2}, {1, 3}, {2, 4}, {3, 5}, {4, 6}, {5, 7}};
  for (const auto& [bin, band] : ones) want[static_cast<size_t>(bin * 8 + band)] = 1;
  ExpectClose((*r)[0], {9, 8}, want, 0, 0, "mel");
  Tensor high = FloatTensor({}, {9000});
  ExpectError(
      RunNode(NodeSpec("MelWeightMatrix", 17), AttrBuilder(), {&mel, &dft, &rate, &lower, &high})
          .status(),
      StatusCode::kInvalidArgument, "outside [0, 8]");
}

}  // namespace
}  // namespace epctx::exec::testing
