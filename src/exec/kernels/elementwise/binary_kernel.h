// The one kernel of the element-wise binary ops (arithmetic, Pow, Mod, BitShift, PRelu, the
// comparisons, And/Or/Xor) and its broadcast loop, which Sum/Mean/Max/Min share. An op is a
// struct of traits with a templated call operator (binary_ops.cc), a template argument all the
// way down to the loops: each op's contiguous and scalar-operand loops are compiled for it and
// vectorize, with no call per element.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "epctx/status.h"
#include "epctx/tensor.h"
#include "exec/kernel.h"
#include "exec/kernels/common/broadcast.h"
#include "exec/kernels/common/legacy_broadcast.h"
#include "exec/kernels/common/shape.h"
#include "exec/kernels/elementwise/element_types.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels::elementwise {

// One run of the innermost dim; steps are 0 (broadcast) or 1. Each case is its own loop so the
// compiler vectorizes it. The 16-bit floats are computed in float.
template <typename TA, typename TB, typename TY, typename Op>
void ApplyRun(const TA* a, const TB* b, TY* y, int64_t n, int64_t a_step, int64_t b_step,
              const Op& op) {
  if (a_step == 1 && b_step == 1) {
    for (int64_t i = 0; i < n; ++i) y[i] = Store<TY>(op(Load(a[i]), Load(b[i])));
  } else if (a_step == 1) {
    const Compute<TB> bv = Load(b[0]);
    for (int64_t i = 0; i < n; ++i) y[i] = Store<TY>(op(Load(a[i]), bv));
  } else if (b_step == 1) {
    const Compute<TA> av = Load(a[0]);
    for (int64_t i = 0; i < n; ++i) y[i] = Store<TY>(op(av, Load(b[i])));
  } else {
    const TY v = Store<TY>(op(Load(a[0]), Load(b[0])));
    for (int64_t i = 0; i < n; ++i) y[i] = v;
  }
}

// `rows` rows of `inner` elements in which one operand (b when `b_repeats`, else a) holds the
// same `inner` values for every row and the other moves on by a row. kInner: `inner` known at
// compile time (0: not), so that a row is a few vector operations on values held in registers.
template <int kInner, typename TA, typename TB, typename TY, typename Op>
void ApplyRepeatedRows(const TA* a, const TB* b, TY* y, int64_t rows, int64_t runtime_inner,
                       bool b_repeats, const Op& op) {
  const int64_t inner = kInner > 0 ? kInner : runtime_inner;
  if (b_repeats) {
    for (int64_t r = 0; r < rows; ++r, a += inner, y += inner) {
      for (int64_t i = 0; i < inner; ++i) y[i] = Store<TY>(op(Load(a[i]), Load(b[i])));
    }
  } else {
    for (int64_t r = 0; r < rows; ++r, b += inner, y += inner) {
      for (int64_t i = 0; i < inner; ++i) y[i] = Store<TY>(op(Load(a[i]), Load(b[i])));
    }
  }
}

// Whether the plan's two innermost dims are short rows (2 to 64 elements) in which one operand
// repeats its row down the next dim while the other is contiguous: a per-channel operand of a
// channel-blocked activation ([N, C/16, H, W, 16] with [N, C/16, 1, 1, 16], EfficientNet's
// squeeze-and-excitation scale). Sets `b_repeats` to which one repeats.
inline bool RepeatsShortRows(const BroadcastPlan& plan, bool& b_repeats) {
  const size_t r = plan.dims.size();
  if (r < 2 || plan.dims[r - 1] < 2 || plan.dims[r - 1] > 64 || plan.dims[r - 2] < 2) return false;
  if (plan.a_strides[r - 1] != 1 || plan.b_strides[r - 1] != 1) return false;
  const int64_t inner = plan.dims[r - 1];
  if (plan.a_strides[r - 2] == inner && plan.b_strides[r - 2] == 0) {
    b_repeats = true;
    return true;
  }
  if (plan.a_strides[r - 2] == 0 && plan.b_strides[r - 2] == inner) {
    b_repeats = false;
    return true;
  }
  return false;
}

// BroadcastBinary on a plan RepeatsShortRows accepts. One call per 16-element row ran at 12 GB/s
// (EfficientNet-B0's 16 scales took 1.5 ms of its 14 at 2 threads); here a call covers as many
// rows of one block as a thread's range holds.
template <typename TA, typename TB, typename TY, typename Op>
void BroadcastRepeatedRows(const BroadcastPlan& plan, bool b_repeats, const TA* ap, const TB* bp,
                           TY* yp, int threads, const Op& op) {
  const size_t r = plan.dims.size();
  const int64_t inner = plan.dims[r - 1];
  const int64_t per_block = plan.dims[r - 2];
  const int64_t rows = plan.element_count / inner;
  // The outer dims alone: RowStart on it gives both operands' offsets of a block.
  BroadcastPlan blocks = plan;
  blocks.dims.pop_back();
  blocks.a_strides.pop_back();
  blocks.b_strides.pop_back();
  const int nt = ThreadsFor(threads, plan.element_count);
  const int64_t grain = std::max<int64_t>(1, kMinParallelElements / 8 / inner);
  ParallelForRanges(nt, rows, grain, [&](int64_t first, int64_t last) {
    for (int64_t row = first; row < last;) {
      const int64_t block = row / per_block;
      const int64_t in_block = row % per_block;
      const int64_t n = std::min(last - row, per_block - in_block);
      int64_t a_off = 0;
      int64_t b_off = 0;
      broadcast_detail::RowStart(blocks, block, nullptr, a_off, b_off);
      (b_repeats ? a_off : b_off) += in_block * inner;
      const TA* a = ap + a_off;
      const TB* b = bp + b_off;
      TY* y = yp + row * inner;
      if (inner == 16) {
        ApplyRepeatedRows<16>(a, b, y, n, inner, b_repeats, op);
      } else if (inner == 8) {
        ApplyRepeatedRows<8>(a, b, y, n, inner, b_repeats, op);
      } else {
        ApplyRepeatedRows<0>(a, b, y, n, inner, b_repeats, op);
      }
      row += n;
    }
  });
}

// y = op(a, b), a and b broadcast numpy-style to y's shape; y may be a (in place).
template <typename TA, typename TB, typename TY, typename Op>
void BroadcastBinary(const Tensor& a, const Tensor& b, Tensor& y, int threads, const Op& op) {
  const BroadcastPlan plan = PlanBroadcast(a.shape(), b.shape(), y.shape());
  const TA* ap = a.data_as<TA>();
  const TB* bp = b.data_as<TB>();
  TY* yp = y.mutable_data_as<TY>();
  // float32 only: the activations it is for; for every type and op it would double this file's
  // compile time (the sanitizer builds' longest).
  if constexpr (std::is_same_v<TA, float> && std::is_same_v<TB, float> &&
                std::is_same_v<TY, float>) {
    bool b_repeats = false;
    if (plan.element_count > 0 && RepeatsShortRows(plan, b_repeats)) {
      BroadcastRepeatedRows(plan, b_repeats, ap, bp, yp, threads, op);
      return;
    }
  }
  ForEachBroadcastRun(
      plan, threads,
      [&](int64_t y_off, int64_t a_off, int64_t b_off, int64_t n, int64_t as, int64_t bs) {
        ApplyRun(ap + a_off, bp + b_off, yp + y_off, n, as, bs, op);
      });
}

// How B is broadcast against A.
enum class BinaryBroadcast {
  kNumpy,        // opset 7 on: both ways
  kLegacyAxis,   // Add, Sub, Mul, Div, Pow before opset 7: onto A, attributes broadcast and axis
  kLegacySlope,  // PRelu before opset 7: a single slope, or one per channel
};

// What a binary op is beside its element function: the defaults an op struct derives from and
// overrides.
struct BinaryOpTraits {
  // The types input A takes, and B.
  static constexpr TypeSet kTypes = TypeSet::kNumeric;
  // B may have another type than A, one of kTypesB (Pow's exponent); else A and B have one type.
  static constexpr bool kMixedTypes = false;
  static constexpr TypeSet kTypesB = TypeSet::kNumeric;
  // The output is bool (the comparisons); else it has A's type.
  static constexpr bool kBoolOut = false;
  // The inputs' names in the op's ONNX signature, for messages.
  static constexpr std::string_view kNameA = "A";
  static constexpr std::string_view kNameB = "B";
  // How B is broadcast in opsets before 7, where the op has them.
  static constexpr BinaryBroadcast kBeforeOpset7 = BinaryBroadcast::kNumpy;
  // Refuses B's values before anything is written (integer division by zero).
  template <typename TB>
  static Status CheckB(const Tensor& /*b*/) {
    return Status::Ok();
  }
};

template <typename Op>
class BinaryKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node) {
    const BinaryBroadcast rule = node.opset < 7 ? Op::kBeforeOpset7 : BinaryBroadcast::kNumpy;
    if (node.inputs.size() != 2) {
      return EPCTX_ERROR(kInvalidArgument, "expected 2 inputs, got {}", node.inputs.size());
    }
    EPCTX_RETURN_IF_ERROR(CheckTypes(node.inputs[0].dtype, node.inputs[1].dtype));
    auto kernel = std::unique_ptr<BinaryKernel>(new BinaryKernel(rule));
    if (rule == BinaryBroadcast::kLegacyAxis) {
      // (Opset 1's consumed_inputs is a legacy optimization hint, ignored.)
      EPCTX_ASSIGN_OR_RETURN(kernel->legacy_, ParseLegacyBroadcast(*node.attrs));
    }
    const std::vector<int64_t>* sa = StaticShape(node, 0);
    const std::vector<int64_t>* sb = StaticShape(node, 1);
    if (sa != nullptr && sb != nullptr) EPCTX_RETURN_IF_ERROR(kernel->CheckStaticShapes(*sa, *sb));
    return std::unique_ptr<Kernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* a, RequiredInput(ctx, 0, Op::kNameA));
    EPCTX_ASSIGN_OR_RETURN(const Tensor* b, RequiredInput(ctx, 1, Op::kNameB));
    EPCTX_RETURN_IF_ERROR(CheckTypes(a->dtype(), b->dtype()));
    if (rule_ == BinaryBroadcast::kNumpy) return Compute(ctx, *a, *b);
    // B re-viewed with A's rank; numpy broadcasting of the two then gives A's shape.
    EPCTX_ASSIGN_OR_RETURN(std::vector<int64_t> b_shape, LegacyShapeOf(a->shape(), b->shape()));
    return Compute(ctx, *a, Tensor::View(b->dtype(), std::move(b_shape), b->data(), nullptr));
  }

 private:
  explicit BinaryKernel(BinaryBroadcast rule) : rule_(rule) {}

  // Undefined types (not known at creation) pass.
  static Status CheckTypes(DataType ta, DataType tb) {
    const bool known = ta != DataType::kUndefined && tb != DataType::kUndefined;
    if (!Op::kMixedTypes && known && ta != tb) {
      return EPCTX_ERROR(kInvalidArgument, "inputs {} and {} have types {} and {}", Op::kNameA,
                         Op::kNameB, DataTypeName(ta), DataTypeName(tb));
    }
    if (ta != DataType::kUndefined) EPCTX_RETURN_IF_ERROR(ExpectTypeIn<Op::kTypes>(ta));
    if (Op::kMixedTypes && tb != DataType::kUndefined) {
      EPCTX_RETURN_IF_ERROR(ExpectTypeIn<Op::kTypesB>(tb));
    }
    return Status::Ok();
  }

  // B's shape with A's rank under the legacy rule.
  Result<std::vector<int64_t>> LegacyShapeOf(std::span<const int64_t> a,
                                             std::span<const int64_t> b) const {
    if (rule_ == BinaryBroadcast::kLegacySlope) return LegacySlopeShape(a, b);
    return LegacyShapeOfB(legacy_, a, b);
  }

  // Static shapes may hold unknown dims (-1).
  Status CheckStaticShapes(const std::vector<int64_t>& a, const std::vector<int64_t>& b) const {
    const auto known = [](const std::vector<int64_t>& s) {
      for (int64_t d : s) {
        if (d < 0) return false;
      }
      return true;
    };
    switch (rule_) {
      case BinaryBroadcast::kLegacyAxis:  // unknown dims match anything
        return LegacyShapeOfB(legacy_, a, b).status();
      case BinaryBroadcast::kLegacySlope:
        return known(a) && known(b) ? LegacySlopeShape(a, b).status() : Status::Ok();
      case BinaryBroadcast::kNumpy:
        break;
    }
    // Unknown dims are taken as 1, which broadcasts with anything.
    std::vector<int64_t> ka(a), kb(b);
    for (int64_t& d : ka) d = d < 0 ? 1 : d;
    for (int64_t& d : kb) d = d < 0 ? 1 : d;
    if (!BroadcastShapes(ka, kb).ok()) {
      return EPCTX_ERROR(kInvalidArgument, "shapes {} and {} cannot be broadcast", ShapeToString(a),
                         ShapeToString(b));
    }
    return Status::Ok();
  }

  // Types checked by CheckTypes.
  Status Compute(KernelContext& ctx, const Tensor& a, const Tensor& b) {
    EPCTX_ASSIGN_OR_RETURN(std::vector<int64_t> shape, BroadcastShapes(a.shape(), b.shape()));
    return Visit(a.dtype(), [&](auto ta) -> Status {
      using TA = typename decltype(ta)::type;
      if constexpr (!kInSet<Op::kTypes, TA>) {
        return UnsupportedType(a.dtype());
      } else if constexpr (Op::kMixedTypes) {
        return Visit(b.dtype(), [&](auto tb) -> Status {
          using TB = typename decltype(tb)::type;
          if constexpr (kInSet<Op::kTypesB, TB>) {
            return ComputeTyped<TA, TB>(ctx, a, b, std::move(shape));
          } else {
            return UnsupportedType(b.dtype());
          }
        });
      } else {
        return ComputeTyped<TA, TA>(ctx, a, b, std::move(shape));
      }
    });
  }

  template <typename TA, typename TB>
  Status ComputeTyped(KernelContext& ctx, const Tensor& a, const Tensor& b,
                      std::vector<int64_t> shape) {
    EPCTX_RETURN_IF_ERROR(Op::template CheckB<TB>(b));
    using TY = std::conditional_t<Op::kBoolOut, bool, TA>;
    const DataType y_type = Op::kBoolOut ? DataType::kBool : a.dtype();
    EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, y_type, std::move(shape)));
    BroadcastBinary<TA, TB, TY>(a, b, *y, ctx.num_threads(), op_);
    return Status::Ok();
  }

  Op op_;
  BinaryBroadcast rule_;
  LegacyBroadcast legacy_;  // kLegacyAxis: the node's attributes
};

}  // namespace epctx::exec::kernels::elementwise
