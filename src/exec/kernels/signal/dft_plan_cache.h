// The DftPlans one kernel has used, by length. A kernel whose length is known when it is
// created builds its plan then; others build one on the first run of each length. Several
// threads may run one session (so one kernel) at once, hence the lock; it is held only to look
// up or insert, never while a plan is built.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "epctx/status.h"
#include "exec/kernels/signal/dft_plan.h"

namespace epctx::exec::kernels {

template <typename T>
class DftPlanCache {
 public:
  // Lengths kept; the least recently built goes first when a new one arrives.
  static constexpr size_t kMaxPlans = 8;

  // The plan for length n, built on first use. Errors as DftPlan<T>::Create.
  Result<std::shared_ptr<const DftPlan<T>>> Get(int64_t n);

 private:
  std::shared_ptr<const DftPlan<T>> Find(int64_t n) const;

  std::mutex mu_;
  std::vector<std::shared_ptr<const DftPlan<T>>> plans_;  // guarded by mu_, oldest first
};

extern template class DftPlanCache<float>;
extern template class DftPlanCache<double>;

}  // namespace epctx::exec::kernels
