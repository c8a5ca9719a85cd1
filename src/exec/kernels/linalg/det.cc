// Det: the determinant of every [M, M] matrix in the trailing dims, by LU decomposition with
// partial pivoting in double. float32 and float64.
#include <cmath>
#include <memory>
#include <utility>
#include <vector>

#include "exec/kernels/common/shape.h"
#include "exec/kernels/families.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

double Determinant(std::vector<double>& a, int64_t n) {
  double det = 1.0;
  for (int64_t c = 0; c < n; ++c) {
    int64_t pivot = c;
    for (int64_t r = c + 1; r < n; ++r) {
      if (std::fabs(a[r * n + c]) > std::fabs(a[pivot * n + c])) pivot = r;
    }
    if (a[pivot * n + c] == 0.0) return 0.0;
    if (pivot != c) {
      for (int64_t j = 0; j < n; ++j) std::swap(a[c * n + j], a[pivot * n + j]);
      det = -det;
    }
    const double d = a[c * n + c];
    det *= d;
    for (int64_t r = c + 1; r < n; ++r) {
      const double f = a[r * n + c] / d;
      if (f == 0.0) continue;
      for (int64_t j = c + 1; j < n; ++j) a[r * n + j] -= f * a[c * n + j];
    }
  }
  return det;
}

template <typename T>
void DetAll(const T* x, int64_t count, int64_t n, T* y) {
  std::vector<double> a(static_cast<size_t>(n * n));
  for (int64_t i = 0; i < count; ++i) {
    const T* m = x + i * n * n;
    for (int64_t j = 0; j < n * n; ++j) a[static_cast<size_t>(j)] = static_cast<double>(m[j]);
    y[i] = static_cast<T>(Determinant(a, n));
  }
}

class DetKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo&) {
    return std::unique_ptr<Kernel>(new DetKernel());
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, "X"));
    const std::vector<int64_t>& xs = x->shape();
    if (xs.size() < 2 || xs[xs.size() - 1] != xs[xs.size() - 2]) {
      return EPCTX_ERROR(kInvalidArgument, "input X has shape {}, expected [..., M, M]",
                         ShapeToString(xs));
    }
    if (x->dtype() != DataType::kFloat32 && x->dtype() != DataType::kFloat64) {
      return EPCTX_ERROR(kUnsupported, "input X has type {}, expected float32 or float64",
                         DataTypeName(x->dtype()));
    }
    const std::vector<int64_t> y_shape(xs.begin(), xs.end() - 2);
    EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, x->dtype(), y_shape));
    const int64_t n = xs.back();
    const int64_t count = y->element_count();
    if (x->dtype() == DataType::kFloat32) {
      DetAll(x->data_as<float>(), count, n, y->mutable_data_as<float>());
    } else {
      DetAll(x->data_as<double>(), count, n, y->mutable_data_as<double>());
    }
    return Status::Ok();
  }

 private:
  DetKernel() = default;
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateDet(const NodeInfo& node) {
  return DetKernel::Create(node);
}

}  // namespace epctx::exec::kernels
