// Transpose (perm defaults to reversing the dims) for any fixed-size element type (moved as
// unsigned integers of its size) or strings.
#include <fmt/ranges.h>

#include <cstring>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "exec/kernels/common/shape.h"
#include "exec/kernels/families.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

// Output dims with the input stride each one walks, after dropping unit dims and merging
// output dims that are also adjacent, in order, in the input.
struct TransposePlan {
  std::vector<int64_t> dims;
  std::vector<int64_t> in_strides;
};

TransposePlan PlanTranspose(const std::vector<int64_t>& in, const std::vector<int64_t>& perm) {
  std::vector<int64_t> strides(in.size(), 1);
  for (size_t i = in.size(); i-- > 1;) strides[i - 1] = strides[i] * in[i];
  TransposePlan plan;
  int64_t last_axis = -2;
  for (int64_t axis : perm) {
    const int64_t extent = in[static_cast<size_t>(axis)];
    if (extent == 1) continue;
    if (!plan.dims.empty() && axis == last_axis + 1) {
      plan.dims.back() *= extent;
      plan.in_strides.back() = strides[static_cast<size_t>(axis)];
    } else {
      plan.dims.push_back(extent);
      plan.in_strides.push_back(strides[static_cast<size_t>(axis)]);
    }
    last_axis = axis;
  }
  if (plan.dims.empty()) {
    plan.dims.push_back(1);
    plan.in_strides.push_back(1);
  }
  return plan;
}

template <typename T>
void Permute(const TransposePlan& plan, const T* in, T* out) {
  const size_t rank = plan.dims.size();
  const int64_t inner = plan.dims[rank - 1];
  const int64_t inner_stride = plan.in_strides[rank - 1];
  int64_t rows = 1;
  for (size_t i = 0; i + 1 < rank; ++i) rows *= plan.dims[i];
  std::vector<int64_t> index(rank, 0);
  int64_t offset = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const T* src = in + offset;
    for (int64_t j = 0; j < inner; ++j) out[j] = src[j * inner_stride];
    out += inner;
    for (size_t d = rank - 1; d-- > 0;) {
      offset += plan.in_strides[d];
      if (++index[d] < plan.dims[d]) break;
      offset -= plan.in_strides[d] * plan.dims[d];
      index[d] = 0;
    }
  }
}

class TransposeKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node) {
    auto kernel = std::unique_ptr<TransposeKernel>(new TransposeKernel());
    EPCTX_ASSIGN_OR_RETURN(kernel->perm_, node.attrs->GetInts("perm"));
    return std::unique_ptr<Kernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, "data"));
    const bool strings = x->dtype() == DataType::kString;
    size_t element = 0;
    if (!strings) {
      EPCTX_ASSIGN_OR_RETURN(element, CopyableElementSize(x->dtype(), "data"));
    }
    const std::vector<int64_t>& xs = x->shape();
    std::vector<int64_t> perm = perm_;
    if (perm.empty()) {
      perm.resize(xs.size());
      std::iota(perm.rbegin(), perm.rend(), 0);
    }
    EPCTX_RETURN_IF_ERROR(CheckPerm(perm, xs.size()));
    std::vector<int64_t> shape(xs.size());
    for (size_t i = 0; i < perm.size(); ++i) shape[i] = xs[static_cast<size_t>(perm[i])];
    EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, x->dtype(), std::move(shape)));
    if (y->element_count() == 0) return Status::Ok();
    const TransposePlan plan = PlanTranspose(xs, perm);
    if (strings) {
      Permute(plan, x->data_as<std::string>(), y->mutable_data_as<std::string>());
      return Status::Ok();
    }
    switch (element) {
      case 1:
        Permute(plan, x->data_as<uint8_t>(), y->mutable_data_as<uint8_t>());
        break;
      case 2:
        Permute(plan, x->data_as<uint16_t>(), y->mutable_data_as<uint16_t>());
        break;
      case 4:
        Permute(plan, x->data_as<uint32_t>(), y->mutable_data_as<uint32_t>());
        break;
      case 8:
        Permute(plan, x->data_as<uint64_t>(), y->mutable_data_as<uint64_t>());
        break;
      default:
        return EPCTX_ERROR(kUnsupported, "elements of {} bytes are not supported", element);
    }
    return Status::Ok();
  }

 private:
  TransposeKernel() = default;

  static Status CheckPerm(const std::vector<int64_t>& perm, size_t rank) {
    std::vector<bool> seen(rank, false);
    bool ok = perm.size() == rank;
    for (int64_t p : perm) {
      if (!ok || p < 0 || p >= static_cast<int64_t>(rank) || seen[static_cast<size_t>(p)]) {
        ok = false;
        break;
      }
      seen[static_cast<size_t>(p)] = true;
    }
    if (!ok) {
      return EPCTX_ERROR(kInvalidArgument, "perm [{}] is not a permutation of the {} input dims",
                         fmt::join(perm, ","), rank);
    }
    return Status::Ok();
  }

  std::vector<int64_t> perm_;
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateTranspose(const NodeInfo& node) {
  return TransposeKernel::Create(node);
}

}  // namespace epctx::exec::kernels
