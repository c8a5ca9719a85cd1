// The table of n-th roots of unity every FFT table is read from (twiddles, Bluestein's chirp,
// the real-input split), computed once per plan.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace epctx::exec::kernels {

// exp(-2*pi*i*t/n) for t in [0, n), correctly rounded to double in all but rare cases: each
// angle is reduced to [0, pi/4] with an integer numerator (so the reduction is exact) and its
// sine and cosine taken in long double.
class UnitRoots {
 public:
  explicit UnitRoots(int64_t n);
  // The roots of n taken from those of a multiple of n (every (finer.size() / n)-th one).
  UnitRoots(const UnitRoots& finer, int64_t n);

  int64_t size() const { return n_; }

  // exp(-2*pi*i*num/n) for any num >= 0.
  double re(int64_t num) const { return re_[static_cast<size_t>(num % n_)]; }
  double im(int64_t num) const { return im_[static_cast<size_t>(num % n_)]; }

 private:
  int64_t n_;
  std::vector<double> re_, im_;
};

}  // namespace epctx::exec::kernels
