#include "exec/kernels/signal/unit_roots.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace epctx::exec::kernels {

UnitRoots::UnitRoots(int64_t n) : n_(n), re_(static_cast<size_t>(n)), im_(static_cast<size_t>(n)) {
  constexpr long double kPi = std::numbers::pi_v<long double>;
  const long double ln = static_cast<long double>(n);
  for (int64_t t = 0; t < n; ++t) {
    // exp(-i*theta) for theta = 2*pi*a/n in [0, pi]; t past n/2 gives the conjugate.
    const int64_t a = std::min(t, n - t);
    long double phi;
    bool swap = false, negate_cos = false;
    if (8 * a <= n) {  // theta itself
      phi = 2 * kPi * static_cast<long double>(a) / ln;
    } else if (8 * a <= 2 * n) {  // pi/2 - theta
      phi = kPi * static_cast<long double>(n - 4 * a) / (2 * ln);
      swap = true;
    } else if (8 * a <= 3 * n) {  // theta - pi/2
      phi = kPi * static_cast<long double>(4 * a - n) / (2 * ln);
      swap = negate_cos = true;
    } else {  // pi - theta
      phi = kPi * static_cast<long double>(n - 2 * a) / ln;
      negate_cos = true;
    }
    const long double sin_phi = std::sin(phi), cos_phi = std::cos(phi);
    const long double c = swap ? sin_phi : cos_phi;  // cos(theta), up to sign
    const long double s = swap ? cos_phi : sin_phi;  // sin(theta)
    re_[static_cast<size_t>(t)] = static_cast<double>(negate_cos ? -c : c);
    im_[static_cast<size_t>(t)] = static_cast<double>(t == a ? -s : s);
  }
}

UnitRoots::UnitRoots(const UnitRoots& finer, int64_t n)
    : n_(n), re_(static_cast<size_t>(n)), im_(static_cast<size_t>(n)) {
  const int64_t step = finer.size() / n;
  for (int64_t t = 0; t < n; ++t) {
    re_[static_cast<size_t>(t)] = finer.re(t * step);
    im_[static_cast<size_t>(t)] = finer.im(t * step);
  }
}

}  // namespace epctx::exec::kernels
