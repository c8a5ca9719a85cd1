#include "exec/kernels/signal/dft_plan_cache.h"

#include "util/status_macros.h"

namespace epctx::exec::kernels {

template <typename T>
std::shared_ptr<const DftPlan<T>> DftPlanCache<T>::Find(int64_t n) const {
  for (const auto& plan : plans_) {
    if (plan->size() == n) return plan;
  }
  return nullptr;
}

template <typename T>
Result<std::shared_ptr<const DftPlan<T>>> DftPlanCache<T>::Get(int64_t n) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto plan = Find(n)) return plan;
  }
  EPCTX_ASSIGN_OR_RETURN(std::shared_ptr<const DftPlan<T>> built, DftPlan<T>::Create(n));
  std::lock_guard<std::mutex> lock(mu_);
  // Another thread may have built the same length meanwhile; keep one copy.
  if (auto plan = Find(n)) return plan;
  if (plans_.size() >= kMaxPlans) plans_.erase(plans_.begin());
  plans_.push_back(built);
  return built;
}

template class DftPlanCache<float>;
template class DftPlanCache<double>;

}  // namespace epctx::exec::kernels
