// The signal/ family: DFT against hand-computed transforms and a direct double-precision sum
// (at lengths that take the radix stages and Bluestein, real and complex lines, padded and
// truncated, batched over lanes and threads), its inverse round trip, STFT against per-frame
// sums (the log-mel front end's 400-point Hann frames among them), and MelWeightMatrix against
// the ONNX test's matrix. The FFT itself is tested against long double sums in fft_test.cc.
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
  std::vector<Complex> roots(static_cast<size_t>(n));
  for (int64_t t = 0; t < n; ++t) {
    const double angle =
        (inverse ? 2 : -2) * std::numbers::pi * static_cast<double>(t) / static_cast<double>(n);
    roots[static_cast<size_t>(t)] = Complex(std::cos(angle), std::sin(angle));
  }
  std::vector<Complex> y(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) {
    Complex acc(0, 0);
    for (int64_t j = 0; j < n && j < static_cast<int64_t>(x.size()); ++j) {
      acc += x[static_cast<size_t>(j)] * roots[static_cast<size_t>((j * k) % n)];
    }
    y[static_cast<size_t>(k)] = inverse ? acc / static_cast<double>(n) : acc;
  }
  return y;
}

// Error bound of a float32 FFT of length n on values up to max_abs (as in fft_test.cc).
double FftBound(int64_t n, double max_abs) {
  const double dn = static_cast<double>(n);
  return 1.1920929e-7 * std::log2(2 * dn) * std::sqrt(dn) * max_abs;
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
  // Lengths of small primes take the radix stages, 29 and 97 (primes) Bluestein.
  for (int64_t n : {1, 2, 5, 8, 12, 29, 64, 65, 97, 100, 128, 243}) {
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

// Lines of the DFT input [outer, len, inner, c] along axis 1, padded or truncated to n.
std::vector<double> ReferenceDftAxis1(const std::vector<Complex>& x, int64_t outer, int64_t len,
                                      int64_t inner, int64_t n, int64_t out_len, bool inverse) {
  std::vector<Complex> y(static_cast<size_t>(outer * out_len * inner));
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      std::vector<Complex> line;
      for (int64_t j = 0; j < len; ++j)
        line.push_back(x[static_cast<size_t>((o * len + j) * inner + i)]);
      const std::vector<Complex> t = ReferenceDft(line, n, inverse);
      for (int64_t k = 0; k < out_len; ++k) {
        y[static_cast<size_t>((o * out_len + k) * inner + i)] = t[static_cast<size_t>(k)];
      }
    }
  }
  return Interleave(y);
}

TEST(DftTest, PaddedAndTruncatedLinesMatchDirectSums) {
  std::mt19937 rng(13);
  // 5 x 7 = 35 lines: more than one batch of lanes; axis 1 puts 7 lines side by side.
  const int64_t outer = 5, len = 60, inner = 7;
  for (int64_t components : {1, 2}) {
    std::vector<Complex> v = RandomComplex(outer * len * inner, rng);
    if (components == 1) {
      for (Complex& c : v) c = Complex(c.real(), 0);
    }
    std::vector<float> flat;
    for (const Complex& c : v) {
      flat.push_back(static_cast<float>(c.real()));
      if (components == 2) flat.push_back(static_cast<float>(c.imag()));
    }
    Tensor x = FloatTensor({outer, len, inner, components}, flat);
    // Truncated (even, odd), padded (even, odd, prime), and the input's own length.
    for (int64_t n : {40, 45, 60, 64, 81, 97}) {
      for (int64_t onesided : {0, 1}) {
        for (int64_t inverse : {0, 1}) {
          AttrBuilder attrs;
          attrs.Int("axis", 1).Int("onesided", onesided).Int("inverse", inverse);
          Tensor length = Int64Tensor({}, {n});
          auto r = Dft(attrs, x, &length, 2);
          ASSERT_TRUE(r.ok()) << r.status().ToString();
          const int64_t out_len = onesided == 1 ? n / 2 + 1 : n;
          const double bound = FftBound(n, std::sqrt(2.0)) / (inverse == 1 ? n : 1);
          ExpectClose((*r)[0], {outer, out_len, inner, 2},
                      ReferenceDftAxis1(v, outer, len, inner, n, out_len, inverse == 1), bound, 0,
                      "components=" + std::to_string(components) + " n=" + std::to_string(n) +
                          " onesided=" + std::to_string(onesided) +
                          " inverse=" + std::to_string(inverse));
        }
      }
    }
  }
}

// Frames [b, f] of a [batch, length, c] signal times the window, transformed and cut to bins.
std::vector<double> ReferenceStft(const std::vector<float>& signal, int64_t batch, int64_t length,
                                  int64_t components, const std::vector<float>* window, int64_t n,
                                  int64_t step, int64_t bins) {
  std::vector<Complex> out;
  const int64_t frames = 1 + (length - n) / step;
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t f = 0; f < frames; ++f) {
      std::vector<Complex> frame;
      for (int64_t j = 0; j < n; ++j) {
        const size_t at = static_cast<size_t>((b * length + f * step + j) * components);
        const double w = window ? (*window)[static_cast<size_t>(j)] : 1.0;
        frame.emplace_back(signal[at] * w, components == 2 ? signal[at + 1] * w : 0.0);
      }
      const std::vector<Complex> t = ReferenceDft(frame, n, false);
      out.insert(out.end(), t.begin(), t.begin() + bins);
    }
  }
  return Interleave(out);
}

std::vector<float> HannWindow(int64_t n) {
  std::vector<float> w(static_cast<size_t>(n));
  for (int64_t j = 0; j < n; ++j) {
    w[static_cast<size_t>(j)] =
        static_cast<float>(0.5 - 0.5 * std::cos(2 * std::numbers::pi * static_cast<double>(j) /
                                                static_cast<double>(n)));
  }
  return w;
}

TEST(StftTest, LogMelFrontEndFramesMatchDirectSums) {
  // 1 s of 16 kHz audio, 400-point Hann frames every 160 samples, onesided: 98 frames of 201
  // bins, on 1 and 2 threads.
  std::mt19937 rng(16000);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> audio(16000);
  for (float& a : audio) a = dist(rng);
  Tensor x = FloatTensor({1, 16000, 1}, audio);
  const std::vector<float> hann = HannWindow(400);
  Tensor window = FloatTensor({400}, hann);
  Tensor step = Int64Tensor({}, {160});
  const std::vector<double> want = ReferenceStft(audio, 1, 16000, 1, &hann, 400, 160, 201);
  for (int threads : {1, 2}) {
    NodeSpec spec("STFT", 17);
    spec.threads = threads;
    auto r = RunNode(spec, AttrBuilder(), {&x, &step, &window});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ExpectClose((*r)[0], {1, 98, 201, 2}, want, FftBound(400, 1.0), 0,
                "threads=" + std::to_string(threads));
  }
}

TEST(StftTest, StepsWindowsAndSidesMatchDirectSums) {
  std::mt19937 rng(21);
  std::uniform_real_distribution<float> dist(-1, 1);
  for (int64_t components : {1, 2}) {
    const int64_t batch = 2, length = 1500;
    std::vector<float> signal(static_cast<size_t>(batch * length * components));
    for (float& a : signal) a = dist(rng);
    Tensor x = FloatTensor({batch, length, components}, signal);
    // Even and odd lengths, a prime one (Bluestein), hops shorter than, equal to and longer
    // than the frame.
    for (int64_t n : {256, 400, 401}) {
      const std::vector<float> hann = HannWindow(n);
      Tensor window = FloatTensor({n}, hann);
      Tensor frame_length = Int64Tensor({}, {n});
      for (int64_t hop : {int64_t{97}, n, int64_t{500}}) {
        Tensor step = Int64Tensor({}, {hop});
        for (bool windowed : {false, true}) {
          for (int64_t onesided : {0, 1}) {
            AttrBuilder attrs;
            attrs.Int("onesided", onesided);
            const int64_t bins = onesided == 1 ? n / 2 + 1 : n;
            const int64_t frames = 1 + (length - n) / hop;
            NodeSpec spec("STFT", 17);
            spec.threads = 2;
            auto r = windowed ? RunNode(spec, attrs, {&x, &step, &window})
                              : RunNode(spec, attrs, {&x, &step, nullptr, &frame_length});
            ASSERT_TRUE(r.ok()) << r.status().ToString();
            ExpectClose((*r)[0], {batch, frames, bins, 2},
                        ReferenceStft(signal, batch, length, components, windowed ? &hann : nullptr,
                                      n, hop, bins),
                        FftBound(n, std::sqrt(2.0)), 0,
                        "components=" + std::to_string(components) + " n=" + std::to_string(n) +
                            " hop=" + std::to_string(hop) + (windowed ? " window" : "") +
                            " onesided=" + std::to_string(onesided));
          }
        }
      }
    }
  }
}

TEST(StftTest, Float64FramesKeepDoublePrecision) {
  std::mt19937 rng(64);
  std::uniform_real_distribution<double> dist(-1, 1);
  std::vector<double> signal(1000);
  for (double& a : signal) a = dist(rng);
  Tensor x = MakeTensor(DataType::kFloat64, {1, 1000, 1}, signal.data());
  std::vector<double> hann(400);
  for (int j = 0; j < 400; ++j)
    hann[static_cast<size_t>(j)] = 0.5 - 0.5 * std::cos(2 * std::numbers::pi * j / 400);
  Tensor window = MakeTensor(DataType::kFloat64, {400}, hann.data());
  Tensor step = Int64Tensor({}, {160});
  auto r = RunNode(NodeSpec("STFT", 17), AttrBuilder(), {&x, &step, &window});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const Tensor& y = (*r)[0];
  ASSERT_EQ(y.dtype(), DataType::kFloat64);
  ASSERT_EQ(y.shape(), (std::vector<int64_t>{1, 4, 201, 2}));
  const double* got = y.data_as<double>();
  for (int64_t f = 0; f < 4; ++f) {
    std::vector<Complex> frame;
    for (int64_t j = 0; j < 400; ++j) {
      frame.emplace_back(signal[static_cast<size_t>(f * 160 + j)] * hann[static_cast<size_t>(j)],
                         0);
    }
    const std::vector<double> want = Interleave(ReferenceDft(frame, 400, false));
    for (size_t i = 0; i < 201 * 2; ++i) {
      EXPECT_NEAR(got[static_cast<size_t>(f) * 402 + i], want[i], 1e-12)
          << "frame " << f << " element " << i;
    }
  }
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
