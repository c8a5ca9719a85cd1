// The FFT plans of the signal/ kernels (fft_plan.h, dft_plan.h, dft_plan_cache.h) against a
// direct DFT summed in long double: complex lines both ways and real lines (onesided and full)
// in float and double, at lengths that take every radix, the generic odd radix and Bluestein,
// with several lane counts (one vector register of them among them) and input strides.
//
// Error bound, per output element: kBoundSlack * eps(T) * log2(2n) * sqrt(n) * max|x|. An FFT
// adds rounding error in each of its ~log2(n) passes, and the errors of the n terms of an output
// add up like a random walk (sqrt(n)). The largest error seen over these lengths is 0.45 of the
// bound (double, Bluestein at n = 97); a wrong twiddle or index gives errors near max|x|.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "exec/kernels/signal/dft_plan.h"
#include "exec/kernels/signal/dft_plan_cache.h"
#include "exec/kernels/signal/fft_plan.h"
#include "exec/kernels/signal/unit_roots.h"
#include "exec/kernels/signal/vector_width.h"

namespace epctx::exec::kernels {
namespace {

using LComplex = std::complex<long double>;

constexpr double kBoundSlack = 1.0;

const std::vector<int64_t> kLengths = {1,  2,  3,  4,   5,   7,   8,   12,  16,  30,   46,
                                       49, 94, 97, 128, 143, 200, 400, 401, 512, 1000, 1024};

// X[k] = sum_j x[j] * exp(-+2*pi*i*j*k/n) (+ when `backward`), unscaled.
std::vector<LComplex> DirectDft(const std::vector<LComplex>& x, bool backward) {
  const int64_t n = static_cast<int64_t>(x.size());
  const long double pi = 3.141592653589793238462643383279502884L;
  std::vector<LComplex> roots(x.size());
  for (int64_t t = 0; t < n; ++t) {
    const long double angle =
        (backward ? 2 : -2) * pi * static_cast<long double>(t) / static_cast<long double>(n);
    roots[static_cast<size_t>(t)] = LComplex(std::cos(angle), std::sin(angle));
  }
  std::vector<LComplex> y(x.size());
  for (int64_t k = 0; k < n; ++k) {
    LComplex acc(0, 0);
    for (int64_t j = 0; j < n; ++j) {
      acc += x[static_cast<size_t>(j)] * roots[static_cast<size_t>((j * k) % n)];
    }
    y[static_cast<size_t>(k)] = acc;
  }
  return y;
}

template <typename T>
double Bound(int64_t n, double max_abs) {
  const double eps = std::numeric_limits<T>::epsilon();
  const double dn = static_cast<double>(n);
  return kBoundSlack * eps * std::log2(2 * dn) * std::sqrt(dn) * max_abs;
}

// `lanes` random lines of length n stored [position][lane] with a stride, as the plans read them.
template <typename T>
struct Batch {
  int64_t n, lanes, stride;
  std::vector<T> re, im;
  std::vector<std::vector<LComplex>> lines;  // the same values, per lane
  double max_abs = 0;
};

template <typename T>
Batch<T> RandomBatch(int64_t n, int64_t lanes, int64_t stride, bool real, std::mt19937& rng) {
  std::uniform_real_distribution<double> dist(-1, 1);
  Batch<T> b{n, lanes, stride, {}, {}, {}, 0};
  // Padding between strides holds NaN: a plan that reads it poisons its output.
  b.re.assign(static_cast<size_t>(n * stride), std::numeric_limits<T>::quiet_NaN());
  b.im.assign(b.re.size(), std::numeric_limits<T>::quiet_NaN());
  b.lines.assign(static_cast<size_t>(lanes), std::vector<LComplex>(static_cast<size_t>(n)));
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t l = 0; l < lanes; ++l) {
      const T re = static_cast<T>(dist(rng)), im = real ? T(0) : static_cast<T>(dist(rng));
      b.re[static_cast<size_t>(j * stride + l)] = re;
      b.im[static_cast<size_t>(j * stride + l)] = im;
      b.lines[static_cast<size_t>(l)][static_cast<size_t>(j)] = LComplex(re, im);
      b.max_abs = std::max(b.max_abs, static_cast<double>(std::abs(LComplex(re, im))));
    }
  }
  return b;
}

// Largest |got - want| over the first `bins` frequencies of every lane; got is [k][lane].
template <typename T>
double MaxError(const Batch<T>& b, const std::vector<T>& re, const std::vector<T>& im, int64_t bins,
                bool backward) {
  double worst = 0;
  for (int64_t l = 0; l < b.lanes; ++l) {
    const std::vector<LComplex> want = DirectDft(b.lines[static_cast<size_t>(l)], backward);
    for (int64_t k = 0; k < bins; ++k) {
      const size_t at = static_cast<size_t>(k * b.lanes + l);
      const LComplex got(re[at], im[at]);
      const double err = static_cast<double>(std::abs(got - want[static_cast<size_t>(k)]));
      worst = std::isnan(err) ? std::numeric_limits<double>::infinity() : std::max(worst, err);
    }
  }
  return worst;
}

template <typename T>
void CheckComplex(int64_t n, int64_t lanes, int64_t stride, bool backward, std::mt19937& rng) {
  auto plan = DftPlan<T>::Create(n);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  const Batch<T> b = RandomBatch<T>(n, lanes, stride, false, rng);
  std::vector<T> re(static_cast<size_t>(n * lanes)), im(re.size());
  std::vector<T> scratch((*plan)->scratch_size(lanes));
  (*plan)->Complex(b.re.data(), b.im.data(), stride, lanes, backward, re.data(), im.data(),
                   scratch.data());
  EXPECT_LE(MaxError(b, re, im, n, backward), Bound<T>(n, b.max_abs))
      << "n=" << n << " lanes=" << lanes << (backward ? " backward" : " forward");
}

template <typename T>
void CheckReal(int64_t n, int64_t lanes, int64_t stride, int64_t bins, std::mt19937& rng) {
  auto plan = DftPlan<T>::Create(n);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  const Batch<T> b = RandomBatch<T>(n, lanes, stride, true, rng);
  std::vector<T> re(static_cast<size_t>(n * lanes)), im(re.size());
  std::vector<T> scratch((*plan)->scratch_size(lanes));
  (*plan)->Real(b.re.data(), stride, lanes, bins, re.data(), im.data(), scratch.data());
  EXPECT_LE(MaxError(b, re, im, bins, false), Bound<T>(n, b.max_abs))
      << "n=" << n << " lanes=" << lanes << " bins=" << bins;
}

template <typename T>
void CheckAllLengths(uint32_t seed) {
  std::mt19937 rng(seed);
  for (int64_t n : kLengths) {
    // One register of lanes (the plans' fixed-width first stage) and two, where the direct
    // sums stay cheap.
    const int64_t full = kMaxLanes<T>;
    for (int64_t lanes : {int64_t{1}, int64_t{3}, n < 512 ? full : 0, n < 256 ? 2 * full : 0}) {
      if (lanes == 0) continue;
      const int64_t stride = lanes == 3 ? 5 : lanes;  // one layout with gaps between positions
      CheckComplex<T>(n, lanes, stride, false, rng);
      CheckComplex<T>(n, lanes, stride, true, rng);
      CheckReal<T>(n, lanes, stride, n / 2 + 1, rng);
      CheckReal<T>(n, lanes, stride, n, rng);
    }
  }
}

TEST(FftPlanTest, Float32MatchesDirectSum) {
  CheckAllLengths<float>(1);
}

TEST(FftPlanTest, Float64MatchesDirectSum) {
  CheckAllLengths<double>(2);
}

TEST(FftPlanTest, PlansPickTheirMethod) {
  // Every prime factor at most kMaxOddRadix: stages; any larger one: Bluestein.
  for (int64_t n : {1, 2, 7, 46, 49, 143, 400, 1000, 1024}) {
    auto plan = FftPlan<float>::Create(n);
    ASSERT_TRUE(plan.ok());
    EXPECT_FALSE((*plan)->uses_bluestein()) << n;
  }
  for (int64_t n : {29, 94, 97, 401}) {
    auto plan = FftPlan<float>::Create(n);
    ASSERT_TRUE(plan.ok());
    EXPECT_TRUE((*plan)->uses_bluestein()) << n;
  }
  // Fewer lanes than a register take two factors from kMinSplitLength on (so the test lengths
  // above it cover that path), a full register never does.
  for (int64_t n : {128, 400, 1000, 1024}) {
    auto plan = FftPlan<double>::Create(n);
    ASSERT_TRUE(plan.ok());
    EXPECT_TRUE((*plan)->splits(1)) << n;
    EXPECT_TRUE((*plan)->splits(3)) << n;
    EXPECT_FALSE((*plan)->splits(kMaxLanes<double>)) << n;
  }
  for (int64_t n : {30, 97, 401}) {
    auto plan = FftPlan<double>::Create(n);
    ASSERT_TRUE(plan.ok());
    EXPECT_FALSE((*plan)->splits(1)) << n;
  }
}

TEST(UnitRootsTest, WithinAnUlpOfTheLongDoubleValue) {
  // Lengths with and without the factors 2, 4 and 8 the octant reduction works with.
  const long double pi = 3.141592653589793238462643383279502884L;
  for (int64_t n : {1, 2, 3, 7, 12, 97, 401, 1000, 1024}) {
    const UnitRoots roots(n);
    for (int64_t t = 0; t < 2 * n; ++t) {
      const long double angle =
          -2 * pi * static_cast<long double>(t % n) / static_cast<long double>(n);
      EXPECT_NEAR(roots.re(t), static_cast<double>(std::cos(angle)), 0x1p-53) << n << " " << t;
      EXPECT_NEAR(roots.im(t), static_cast<double>(std::sin(angle)), 0x1p-53) << n << " " << t;
    }
  }
  // Exact where the value is exact.
  const UnitRoots eight(8);
  EXPECT_EQ(eight.re(2), 0.0);
  EXPECT_EQ(eight.im(2), -1.0);
  EXPECT_EQ(eight.re(4), -1.0);
  EXPECT_EQ(eight.im(6), 1.0);
}

TEST(FftPlanTest, RefusesLengthsOutOfRange) {
  for (int64_t n : {int64_t{0}, int64_t{-3}, kMaxFftLength + 1}) {
    auto plan = DftPlan<float>::Create(n);
    ASSERT_FALSE(plan.ok());
    EXPECT_EQ(plan.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(plan.status().message(),
              "DFT length " + std::to_string(n) + " is outside [1, 1048576]");
  }
}

// The figures the report quotes: the largest error of a float32 transform of uniform [-1, 1)
// samples against the long double sum, at a composite and a prime length.
TEST(FftPlanTest, Float32ErrorAt400And401) {
  std::mt19937 rng(400);
  for (int64_t n : {400, 401}) {
    auto plan = DftPlan<float>::Create(n);
    ASSERT_TRUE(plan.ok());
    const Batch<float> b = RandomBatch<float>(n, 16, 16, true, rng);
    std::vector<float> re(static_cast<size_t>(n * 16)), im(re.size());
    std::vector<float> scratch((*plan)->scratch_size(16));
    (*plan)->Real(b.re.data(), 16, 16, n / 2 + 1, re.data(), im.data(), scratch.data());
    const double real_err = MaxError(b, re, im, n / 2 + 1, false);
    const Batch<float> c = RandomBatch<float>(n, 16, 16, false, rng);
    (*plan)->Complex(c.re.data(), c.im.data(), 16, 16, false, re.data(), im.data(), scratch.data());
    const double complex_err = MaxError(c, re, im, n, false);
    std::printf("float32 n=%lld: max error %.3g (real, onesided), %.3g (complex); bound %.3g\n",
                static_cast<long long>(n), real_err, complex_err, Bound<float>(n, c.max_abs));
    EXPECT_LE(real_err, Bound<float>(n, b.max_abs));
    EXPECT_LE(complex_err, Bound<float>(n, c.max_abs));
    // Not vacuous: float32 arithmetic leaves some error.
    EXPECT_GT(complex_err, 0);
  }
}

TEST(DftPlanCacheTest, BuildsEachLengthOnceAndSharesIt) {
  DftPlanCache<float> cache;
  auto a = cache.Get(400);
  auto b = cache.Get(400);
  auto c = cache.Get(401);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ(a->get(), b->get());
  EXPECT_NE(a->get(), c->get());
  EXPECT_EQ((*c)->size(), 401);
  auto bad = cache.Get(0);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "DFT length 0 is outside [1, 1048576]");
  // Beyond kMaxPlans lengths the oldest is rebuilt when asked for again; live ones stay valid.
  for (int64_t n = 1; n <= static_cast<int64_t>(DftPlanCache<float>::kMaxPlans); ++n) {
    ASSERT_TRUE(cache.Get(n).ok());
  }
  auto again = cache.Get(400);
  ASSERT_TRUE(again.ok());
  EXPECT_NE(again->get(), a->get());
  EXPECT_EQ((*a)->size(), 400);
}

TEST(DftPlanCacheTest, ThreadsAskingAtOnceGetOnePlan) {
  DftPlanCache<double> cache;
  constexpr int kThreads = 4;
  std::vector<const DftPlan<double>*> got(kThreads, nullptr);
  std::vector<std::shared_ptr<const DftPlan<double>>> keep(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      auto plan = cache.Get(1000);
      if (plan.ok()) {
        keep[static_cast<size_t>(t)] = *plan;
        got[static_cast<size_t>(t)] = plan->get();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (int t = 0; t < kThreads; ++t) {
    ASSERT_NE(got[static_cast<size_t>(t)], nullptr);
    EXPECT_EQ(got[static_cast<size_t>(t)], got[0]);
  }
}

}  // namespace
}  // namespace epctx::exec::kernels
