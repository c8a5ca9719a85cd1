// Add, Sub, Mul, Div: multidirectional broadcasting from opset 7 on; opsets 1 and 6 broadcast B
// onto A under the legacy broadcast/axis attributes, translated here into the same computation.
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <type_traits>

#include "exec/kernels/common/broadcast.h"
#include "exec/kernels/common/legacy_broadcast.h"
#include "exec/kernels/common/shape.h"
#include "exec/kernels/elementwise/element_types.h"
#include "exec/kernels/elementwise/elementwise_ops.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

enum class BinaryOp { kAdd, kSub, kMul, kDiv };

// Integer add/sub/mul wrap around: computed in an unsigned type at least as wide as unsigned int,
// so that neither signed overflow nor promotion to int (uint16 * uint16) is undefined behaviour.
template <typename T>
using WrapType =
    std::conditional_t<sizeof(T) < sizeof(unsigned), unsigned, std::make_unsigned_t<T>>;

template <typename T, BinaryOp kOp>
inline T Apply(T a, T b) {
  if constexpr (std::is_integral_v<T> && kOp != BinaryOp::kDiv) {
    using W = WrapType<T>;
    const W wa = static_cast<W>(a);
    const W wb = static_cast<W>(b);
    if constexpr (kOp == BinaryOp::kAdd) return static_cast<T>(wa + wb);
    if constexpr (kOp == BinaryOp::kSub) return static_cast<T>(wa - wb);
    if constexpr (kOp == BinaryOp::kMul) return static_cast<T>(wa * wb);
  }
  if constexpr (kOp == BinaryOp::kAdd) return a + b;
  if constexpr (kOp == BinaryOp::kSub) return a - b;
  if constexpr (kOp == BinaryOp::kMul) return a * b;
  if constexpr (kOp == BinaryOp::kDiv) {
    if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
      // The lowest value divided by -1 overflows (and traps on x86); wrap like the other ops.
      using U = std::make_unsigned_t<T>;
      if (b == -1) return static_cast<T>(U{0} - static_cast<U>(a));
    }
    return a / b;
  }
}

// One run of the innermost dim; steps are 0 (broadcast) or 1. Each case is its own loop so
// the compiler vectorizes it.
template <typename T, BinaryOp kOp>
void ApplyRun(const T* a, const T* b, T* y, int64_t n, int64_t a_step, int64_t b_step) {
  if (a_step == 1 && b_step == 1) {
    for (int64_t i = 0; i < n; ++i) y[i] = Apply<T, kOp>(a[i], b[i]);
  } else if (a_step == 1) {
    const T bv = b[0];
    for (int64_t i = 0; i < n; ++i) y[i] = Apply<T, kOp>(a[i], bv);
  } else if (b_step == 1) {
    const T av = a[0];
    for (int64_t i = 0; i < n; ++i) y[i] = Apply<T, kOp>(av, b[i]);
  } else {
    const T v = Apply<T, kOp>(a[0], b[0]);
    for (int64_t i = 0; i < n; ++i) y[i] = v;
  }
}

template <typename T, BinaryOp kOp>
Status Compute(const Tensor& a, const Tensor& b, Tensor& y, int threads) {
  if constexpr (std::is_integral_v<T> && kOp == BinaryOp::kDiv) {
    const T* bp = b.data_as<T>();
    for (int64_t i = 0; i < b.element_count(); ++i) {
      if (bp[i] == 0) return EPCTX_ERROR(kInvalidArgument, "integer division by zero");
    }
  }
  const BroadcastPlan plan = PlanBroadcast(a.shape(), b.shape(), y.shape());
  const T* ap = a.data_as<T>();
  const T* bp = b.data_as<T>();
  T* yp = y.mutable_data_as<T>();
  ForEachBroadcastRun(
      plan, threads,
      [&](int64_t y_off, int64_t a_off, int64_t b_off, int64_t n, int64_t as, int64_t bs) {
        ApplyRun<T, kOp>(ap + a_off, bp + b_off, yp + y_off, n, as, bs);
      });
  return Status::Ok();
}

// float16 / bfloat16: computed in float, one element at a time.
template <typename H, BinaryOp kOp>
Status ComputeHalf(const Tensor& a, const Tensor& b, Tensor& y, int threads) {
  const BroadcastPlan plan = PlanBroadcast(a.shape(), b.shape(), y.shape());
  const H* ap = a.data_as<H>();
  const H* bp = b.data_as<H>();
  H* yp = y.mutable_data_as<H>();
  ForEachBroadcastRun(
      plan, threads,
      [&](int64_t y_off, int64_t a_off, int64_t b_off, int64_t n, int64_t as, int64_t bs) {
        for (int64_t i = 0; i < n; ++i) {
          yp[y_off + i] = elementwise::Store<H>(Apply<float, kOp>(
              elementwise::Load(ap[a_off + i * as]), elementwise::Load(bp[b_off + i * bs])));
        }
      });
  return Status::Ok();
}

template <BinaryOp kOp>
Status ComputeTyped(const Tensor& a, const Tensor& b, Tensor& y, int threads) {
  switch (a.dtype()) {
    case DataType::kFloat32:
      return Compute<float, kOp>(a, b, y, threads);
    case DataType::kFloat64:
      return Compute<double, kOp>(a, b, y, threads);
    case DataType::kInt32:
      return Compute<int32_t, kOp>(a, b, y, threads);
    case DataType::kInt64:
      return Compute<int64_t, kOp>(a, b, y, threads);
    case DataType::kInt8:
      return Compute<int8_t, kOp>(a, b, y, threads);
    case DataType::kInt16:
      return Compute<int16_t, kOp>(a, b, y, threads);
    case DataType::kUint8:
      return Compute<uint8_t, kOp>(a, b, y, threads);
    case DataType::kUint16:
      return Compute<uint16_t, kOp>(a, b, y, threads);
    case DataType::kUint32:
      return Compute<uint32_t, kOp>(a, b, y, threads);
    case DataType::kUint64:
      return Compute<uint64_t, kOp>(a, b, y, threads);
    case DataType::kFloat16:
      return ComputeHalf<elementwise::Half, kOp>(a, b, y, threads);
    case DataType::kBFloat16:
      return ComputeHalf<elementwise::BFloat16, kOp>(a, b, y, threads);
    default:
      return EPCTX_ERROR(kUnsupported, "type {} is not supported", DataTypeName(a.dtype()));
  }
}

bool Supported(DataType t) {
  switch (t) {
    case DataType::kFloat32:
    case DataType::kFloat64:
    case DataType::kFloat16:
    case DataType::kBFloat16:
    case DataType::kInt8:
    case DataType::kInt16:
    case DataType::kInt32:
    case DataType::kInt64:
    case DataType::kUint8:
    case DataType::kUint16:
    case DataType::kUint32:
    case DataType::kUint64:
      return true;
    default:
      return false;
  }
}

template <BinaryOp kOp>
class BinaryKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node) {
    EPCTX_RETURN_IF_ERROR(CheckTypes(node));
    const std::vector<int64_t>* sa = StaticShape(node, 0);
    const std::vector<int64_t>* sb = StaticShape(node, 1);
    if (sa != nullptr && sb != nullptr) {
      // Unknown dims (-1) are taken as 1, which broadcasts with anything.
      std::vector<int64_t> a(*sa), b(*sb);
      for (int64_t& d : a) d = d < 0 ? 1 : d;
      for (int64_t& d : b) d = d < 0 ? 1 : d;
      if (!BroadcastShapes(a, b).ok()) {
        return EPCTX_ERROR(kInvalidArgument, "shapes {} and {} cannot be broadcast",
                           ShapeToString(*sa), ShapeToString(*sb));
      }
    }
    return std::unique_ptr<Kernel>(new BinaryKernel());
  }

  // Opsets 1 and 6 (opset 1's consumed_inputs is a legacy optimization hint, ignored).
  static Result<std::unique_ptr<Kernel>> CreateLegacy(const NodeInfo& node) {
    EPCTX_RETURN_IF_ERROR(CheckTypes(node));
    auto kernel = std::unique_ptr<BinaryKernel>(new BinaryKernel());
    EPCTX_ASSIGN_OR_RETURN(kernel->legacy_, ParseLegacyBroadcast(*node.attrs));
    const std::vector<int64_t>* sa = StaticShape(node, 0);
    const std::vector<int64_t>* sb = StaticShape(node, 1);
    if (sa != nullptr && sb != nullptr) {
      EPCTX_RETURN_IF_ERROR(LegacyShapeOfB(*kernel->legacy_, *sa, *sb).status());
    }
    return std::unique_ptr<Kernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* a, RequiredInput(ctx, 0, "A"));
    EPCTX_ASSIGN_OR_RETURN(const Tensor* b, RequiredInput(ctx, 1, "B"));
    if (a->dtype() != b->dtype()) {
      return EPCTX_ERROR(kInvalidArgument, "inputs A and B have types {} and {}",
                         DataTypeName(a->dtype()), DataTypeName(b->dtype()));
    }
    if (!Supported(a->dtype())) {
      return EPCTX_ERROR(kUnsupported, "type {} is not supported", DataTypeName(a->dtype()));
    }
    if (legacy_.has_value()) {
      // B re-viewed with A's rank; numpy broadcasting of the two then gives A's shape.
      EPCTX_ASSIGN_OR_RETURN(std::vector<int64_t> b_shape,
                             LegacyShapeOfB(*legacy_, a->shape(), b->shape()));
      const Tensor b_view = Tensor::View(b->dtype(), std::move(b_shape), b->data(), nullptr);
      EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, a->dtype(), a->shape()));
      return ComputeTyped<kOp>(*a, b_view, *y, ctx.num_threads());
    }
    EPCTX_ASSIGN_OR_RETURN(std::vector<int64_t> shape, BroadcastShapes(a->shape(), b->shape()));
    EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, a->dtype(), std::move(shape)));
    return ComputeTyped<kOp>(*a, *b, *y, ctx.num_threads());
  }

 private:
  BinaryKernel() = default;

  static Status CheckTypes(const NodeInfo& node) {
    if (node.inputs.size() != 2) {
      return EPCTX_ERROR(kInvalidArgument, "expected 2 inputs, got {}", node.inputs.size());
    }
    const DataType ta = node.inputs[0].dtype;
    const DataType tb = node.inputs[1].dtype;
    if (ta != DataType::kUndefined && !Supported(ta)) {
      return EPCTX_ERROR(kUnsupported, "type {} is not supported", DataTypeName(ta));
    }
    if (ta != DataType::kUndefined && tb != DataType::kUndefined && ta != tb) {
      return EPCTX_ERROR(kInvalidArgument, "inputs A and B have types {} and {}", DataTypeName(ta),
                         DataTypeName(tb));
    }
    return Status::Ok();
  }

  std::optional<LegacyBroadcast> legacy_;  // set for opsets 1 and 6
};

template <BinaryOp kOp>
void RegisterOne(KernelRegistry& registry, const char* name) {
  registry.Register("", name, 1, &BinaryKernel<kOp>::CreateLegacy);
  registry.Register("", name, 7, &BinaryKernel<kOp>::Create);
}

}  // namespace

void RegisterBinaryArithmetic(KernelRegistry& registry) {
  RegisterOne<BinaryOp::kAdd>(registry, "Add");
  RegisterOne<BinaryOp::kSub>(registry, "Sub");
  RegisterOne<BinaryOp::kMul>(registry, "Mul");
  RegisterOne<BinaryOp::kDiv>(registry, "Div");
}

}  // namespace epctx::exec::kernels
