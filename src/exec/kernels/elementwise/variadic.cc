// Sum, Mean, Max, Min of any number of inputs, broadcast together numpy-style: the output starts
// as input 0 broadcast, then y = f(y, input k) in place, on the binary ops' broadcast loop.
#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "exec/kernels/common/broadcast.h"
#include "exec/kernels/common/shape.h"
#include "exec/kernels/elementwise/binary_kernel.h"
#include "exec/kernels/elementwise/element_types.h"
#include "exec/kernels/families.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels::elementwise {
namespace {

struct SumOp {
  template <typename T>
  T operator()(T a, T b) const {
    return a + b;
  }
};

// Max and Min: a NaN wins, as in numpy.maximum and numpy.minimum (ONNX's reference).
template <typename Keep>
struct ExtremumOp {
  template <typename T>
  T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(a)) return a;
    }
    return Keep{}(a, b) ? a : b;
  }
};
using MaxOp = ExtremumOp<std::greater<>>;
using MinOp = ExtremumOp<std::less<>>;

template <typename F>
class VariadicKernel final : public Kernel {
 public:
  VariadicKernel(F f, bool mean) : f_(std::move(f)), mean_(mean) {}

  Status Run(KernelContext& ctx) override {
    const size_t count = ctx.input_count();
    if (count == 0) return EPCTX_ERROR(kInvalidArgument, "expected at least 1 input");
    std::vector<const Tensor*> in;
    std::vector<int64_t> shape;
    for (size_t k = 0; k < count; ++k) {
      EPCTX_ASSIGN_OR_RETURN(const Tensor* t, RequiredInput(ctx, k, "data_0"));
      if (!in.empty() && t->dtype() != in[0]->dtype()) {
        return EPCTX_ERROR(kInvalidArgument, "inputs have types {} and {}",
                           DataTypeName(in[0]->dtype()), DataTypeName(t->dtype()));
      }
      if (k == 0) {
        shape = t->shape();
      } else {
        EPCTX_ASSIGN_OR_RETURN(shape, BroadcastShapes(shape, t->shape()));
      }
      in.push_back(t);
    }
    const DataType type = in[0]->dtype();
    return Visit(type, [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      if constexpr (kInSet<TypeSet::kNumeric, T>) {
        EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, type, shape));
        const int threads = ctx.num_threads();
        BroadcastBinary<T, T, T>(*y, *in[0], *y, threads, [](auto, auto b) { return b; });
        for (size_t k = 1; k < in.size(); ++k)
          BroadcastBinary<T, T, T>(*y, *in[k], *y, threads, f_);
        if (mean_) {
          T* yp = y->mutable_data_as<T>();
          for (int64_t i = 0; i < y->element_count(); ++i) {
            yp[i] = Store<T>(Load(yp[i]) / static_cast<Compute<T>>(in.size()));
          }
        }
        return Status::Ok();
      } else {
        return UnsupportedType(type);
      }
    });
  }

 private:
  F f_;
  bool mean_;
};

template <typename F>
Result<std::unique_ptr<Kernel>> MakeVariadic(F f, bool mean = false) {
  return std::unique_ptr<Kernel>(new VariadicKernel<F>(std::move(f), mean));
}
}  // namespace

Result<std::unique_ptr<Kernel>> CreateSum(const NodeInfo&) {
  return MakeVariadic(SumOp{});
}

Result<std::unique_ptr<Kernel>> CreateMean(const NodeInfo&) {
  return MakeVariadic(SumOp{}, true);
}

Result<std::unique_ptr<Kernel>> CreateMax(const NodeInfo&) {
  return MakeVariadic(MaxOp{});
}

Result<std::unique_ptr<Kernel>> CreateMin(const NodeInfo&) {
  return MakeVariadic(MinOp{});
}

}  // namespace epctx::exec::kernels::elementwise
