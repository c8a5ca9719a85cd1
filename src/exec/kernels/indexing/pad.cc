// Pad in constant, reflect, edge and wrap modes. Opset 2 takes pads and the value as attributes;
// from 11 they are inputs (and 18 adds axes). Negative pads crop.
//
// Every output coordinate maps, per dim, to an input coordinate or to "the constant"; a row of
// the innermost dim is the contiguous middle (one memcpy) plus its padded ends.

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "exec/kernels/common/parallel_for.h"
#include "exec/kernels/common/shape.h"
#include "exec/kernels/common/threads.h"
#include "exec/kernels/families.h"
#include "exec/kernels/indexing/index_input.h"
#include "exec/kernels/indexing/strided_copy.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

enum class PadMode { kConstant, kReflect, kEdge, kWrap };

constexpr int64_t kPadded = -1;  // maps to the constant

// Input coordinate of output coordinate `o` along a dim of `n` input elements padded by `before`.
int64_t SourceIndex(PadMode mode, int64_t o, int64_t before, int64_t n) {
  int64_t i = o - before;
  if (i >= 0 && i < n) return i;
  switch (mode) {
    case PadMode::kConstant:
      return kPadded;
    case PadMode::kEdge:
      return i < 0 ? 0 : n - 1;
    case PadMode::kWrap:
      return ((i % n) + n) % n;
    case PadMode::kReflect: {
      if (n == 1) return 0;
      const int64_t period = 2 * (n - 1);
      i = ((i % period) + period) % period;
      return i < n ? i : period - i;
    }
  }
  return kPadded;
}

class PadKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node, bool pads_are_inputs) {
    auto kernel = std::unique_ptr<PadKernel>(new PadKernel());
    EPCTX_RETURN_IF_ERROR(ExpectStaticCopyable(node, 0, "data"));
    kernel->pads_are_inputs_ = pads_are_inputs;
    EPCTX_ASSIGN_OR_RETURN(std::string mode, node.attrs->GetString("mode", "constant"));
    if (mode == "constant") {
      kernel->mode_ = PadMode::kConstant;
    } else if (mode == "reflect") {
      kernel->mode_ = PadMode::kReflect;
    } else if (mode == "edge") {
      kernel->mode_ = PadMode::kEdge;
    } else if (mode == "wrap") {
      kernel->mode_ = PadMode::kWrap;
    } else {
      return EPCTX_ERROR(kUnsupported, "Pad mode '{}' is not supported", mode);
    }
    if (!pads_are_inputs) {
      EPCTX_ASSIGN_OR_RETURN(const AttributeValue* pads,
                             node.attrs->Require("pads", AttrType::kInts));
      kernel->pads_.assign(pads->ints.begin(), pads->ints.end());
      EPCTX_ASSIGN_OR_RETURN(kernel->value_attr_, node.attrs->GetFloat("value", 0.0f));
    }
    return std::unique_ptr<Kernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, "data"));
    EPCTX_ASSIGN_OR_RETURN(size_t element, CopyableElementSize(x->dtype(), "data"));
    const std::vector<int64_t>& shape = x->shape();
    const size_t rank = shape.size();
    std::array<std::byte, 16> value{};
    std::vector<int64_t> before(rank, 0), after(rank, 0);
    EPCTX_RETURN_IF_ERROR(ReadPads(ctx, rank, before, after));
    EPCTX_RETURN_IF_ERROR(ReadValue(ctx, *x, element, value.data()));

    std::vector<int64_t> out_shape(rank);
    for (size_t d = 0; d < rank; ++d) {
      // Bounded pads keep every coordinate difference below from overflowing.
      constexpr int64_t kMaxPad = int64_t{1} << 60;
      if (before[d] < -kMaxPad || before[d] > kMaxPad || after[d] < -kMaxPad ||
          after[d] > kMaxPad) {
        return EPCTX_ERROR(kInvalidArgument, "pads {} and {} for axis {} are out of range",
                           before[d], after[d], d);
      }
      if (__builtin_add_overflow(shape[d], before[d], &out_shape[d]) ||
          __builtin_add_overflow(out_shape[d], after[d], &out_shape[d]) || out_shape[d] < 0) {
        return EPCTX_ERROR(kInvalidArgument, "pads {} and {} leave axis {} of extent {} negative",
                           before[d], after[d], d, shape[d]);
      }
      if (mode_ != PadMode::kConstant && shape[d] == 0 && out_shape[d] > 0) {
        return EPCTX_ERROR(kInvalidArgument, "cannot pad axis {} of extent 0 in this mode", d);
      }
    }
    EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, x->dtype(), out_shape));
    if (y->element_count() == 0) return Status::Ok();
    if (rank == 0) {
      std::memcpy(y->mutable_data(), x->data(), element);
      return Status::Ok();
    }
    // Per dim: output coordinate -> input element offset, or kPadded.
    EPCTX_ASSIGN_OR_RETURN(const std::vector<int64_t> in_strides, ContiguousStrides(shape));
    std::vector<std::vector<int64_t>> maps(rank);
    for (size_t d = 0; d < rank; ++d) {
      maps[d].resize(static_cast<size_t>(out_shape[d]));
      for (int64_t o = 0; o < out_shape[d]; ++o) {
        const int64_t i = SourceIndex(mode_, o, before[d], shape[d]);
        maps[d][static_cast<size_t>(o)] = i == kPadded ? kPadded : i * in_strides[d];
      }
    }
    const int64_t n = out_shape[rank - 1];
    const int64_t rows = y->element_count() / n;
    // The innermost output range [lo, hi) that copies input elements in order.
    const int64_t lo = std::clamp<int64_t>(before[rank - 1], 0, n);
    const int64_t hi = std::clamp<int64_t>(before[rank - 1] + shape[rank - 1], lo, n);
    const std::vector<int64_t>& inner_map = maps[rank - 1];
    const auto* src = static_cast<const std::byte*>(x->data());
    auto* dst = static_cast<std::byte*>(y->mutable_data());
    const int64_t e = static_cast<int64_t>(element);
    const std::byte* fill = value.data();
    const int nt = ThreadsFor(ctx.num_threads(), y->element_count());
    ParallelFor(nt, rows, [&](int64_t row, int) {
      int64_t base = 0;
      bool padded = false;
      int64_t rest = row;
      for (size_t d = rank - 1; d-- > 0;) {
        const int64_t m = maps[d][static_cast<size_t>(rest % out_shape[d])];
        rest /= out_shape[d];
        padded = padded || m == kPadded;
        base += m;
      }
      std::byte* out = dst + row * n * e;
      if (padded) {
        FillElements(out, n, fill, element);
        return;
      }
      const std::byte* in = src + base * e;
      for (int64_t j = 0; j < lo; ++j)
        CopyOne(in, inner_map[static_cast<size_t>(j)], out + j * e, fill, element);
      if (hi > lo) {
        std::memcpy(out + lo * e, in + inner_map[static_cast<size_t>(lo)] * e,
                    static_cast<size_t>((hi - lo) * e));
      }
      for (int64_t j = hi; j < n; ++j)
        CopyOne(in, inner_map[static_cast<size_t>(j)], out + j * e, fill, element);
    });
    return Status::Ok();
  }

 private:
  PadKernel() = default;

  static void CopyOne(const std::byte* row, int64_t offset, std::byte* out, const std::byte* fill,
                      size_t element) {
    std::memcpy(out, offset == kPadded ? fill : row + offset * static_cast<int64_t>(element),
                element);
  }

  Status ReadPads(const KernelContext& ctx, size_t rank, std::vector<int64_t>& before,
                  std::vector<int64_t>& after) const {
    std::vector<int64_t> pads = pads_;
    std::vector<int64_t> axes;
    if (pads_are_inputs_) {
      EPCTX_ASSIGN_OR_RETURN(const Tensor* p, RequiredInput(ctx, 1, "pads"));
      EPCTX_ASSIGN_OR_RETURN(pads, ReadIndexVector(*p, "pads"));
      if (ctx.input_count() > 3 && ctx.input(3) != nullptr) {
        EPCTX_ASSIGN_OR_RETURN(axes, ReadIndexVector(*ctx.input(3), "axes"));
      }
    }
    if (axes.empty()) {
      for (size_t d = 0; d < rank; ++d) axes.push_back(static_cast<int64_t>(d));
    }
    if (pads.size() != 2 * axes.size()) {
      return EPCTX_ERROR(kInvalidArgument, "pads has {} elements, expected {}", pads.size(),
                         2 * axes.size());
    }
    for (size_t i = 0; i < axes.size(); ++i) {
      EPCTX_ASSIGN_OR_RETURN(int64_t axis,
                             NormalizeAxis(axes[i], static_cast<int64_t>(rank), "axis"));
      before[static_cast<size_t>(axis)] = pads[i];
      after[static_cast<size_t>(axis)] = pads[i + axes.size()];
    }
    return Status::Ok();
  }

  // The constant's bytes in the data's type.
  Status ReadValue(const KernelContext& ctx, const Tensor& x, size_t element,
                   std::byte* value) const {
    if (mode_ != PadMode::kConstant) return Status::Ok();
    if (!pads_are_inputs_) {
      if (x.dtype() == DataType::kFloat32) {
        std::memcpy(value, &value_attr_, sizeof(float));
      } else if (x.dtype() == DataType::kFloat64) {
        const double v = value_attr_;
        std::memcpy(value, &v, sizeof(double));
      } else if (value_attr_ != 0.0f) {
        return EPCTX_ERROR(kUnsupported, "Pad value {} for type {} is not supported", value_attr_,
                           DataTypeName(x.dtype()));
      }
      return Status::Ok();
    }
    const Tensor* v = ctx.input_count() > 2 ? ctx.input(2) : nullptr;
    if (v == nullptr || v->element_count() == 0) return Status::Ok();
    if (v->dtype() != x.dtype() || v->element_count() != 1) {
      return EPCTX_ERROR(
          kInvalidArgument, "constant_value has type {} and shape {}, expected one {} element",
          DataTypeName(v->dtype()), ShapeToString(v->shape()), DataTypeName(x.dtype()));
    }
    if (element > 16) return EPCTX_ERROR(kUnsupported, "element size {} too large", element);
    std::memcpy(value, v->data(), element);
    return Status::Ok();
  }

  PadMode mode_ = PadMode::kConstant;
  bool pads_are_inputs_ = true;
  std::vector<int64_t> pads_;
  float value_attr_ = 0.0f;
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreatePad(const NodeInfo& node) {
  return PadKernel::Create(node, node.opset >= 11);
}

}  // namespace epctx::exec::kernels
