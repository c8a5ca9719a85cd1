// Trilu: keeps the upper (j - i >= k) or lower (j - i <= k) triangle of each matrix in the last
// two dims and zeroes the rest. All-zero bytes are zero in every type, so any type works.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "exec/kernels/common/shape.h"
#include "exec/kernels/families.h"
#include "exec/kernels/indexing/index_input.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

class TriluKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node) {
    auto kernel = std::unique_ptr<TriluKernel>(new TriluKernel());
    EPCTX_RETURN_IF_ERROR(ExpectStaticCopyable(node, 0, "input"));
    EPCTX_ASSIGN_OR_RETURN(int64_t upper, node.attrs->GetInt("upper", 1));
    kernel->upper_ = upper != 0;
    return std::unique_ptr<Kernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, "input"));
    EPCTX_ASSIGN_OR_RETURN(size_t element, CopyableElementSize(x->dtype(), "input"));
    int64_t k = 0;
    if (ctx.input_count() > 1 && ctx.input(1) != nullptr) {
      EPCTX_ASSIGN_OR_RETURN(std::vector<int64_t> kv, ReadIndexVector(*ctx.input(1), "k"));
      if (kv.size() != 1) {
        return EPCTX_ERROR(kInvalidArgument, "input k has {} elements, expected 1", kv.size());
      }
      k = kv[0];
    }
    const std::vector<int64_t>& shape = x->shape();
    if (shape.size() < 2) {
      return EPCTX_ERROR(kInvalidArgument, "input has rank {}, expected at least 2", shape.size());
    }
    EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, x->dtype(), shape));
    if (y->element_count() == 0) return Status::Ok();
    const int64_t rows = shape[shape.size() - 2];
    const int64_t cols = shape[shape.size() - 1];
    const int64_t matrices = y->element_count() / (rows * cols);
    const size_t e = element;
    const auto* src = static_cast<const std::byte*>(x->data());
    auto* dst = static_cast<std::byte*>(y->mutable_data());
    // k beyond +-cols would overflow i + k; clamping keeps every row's result the same.
    k = std::clamp<int64_t>(k, -rows - 1, cols + 1);
    for (int64_t m = 0; m < matrices * rows; ++m) {
      const int64_t i = m % rows;
      // Columns [lo, hi) are kept.
      const int64_t lo = upper_ ? std::clamp<int64_t>(i + k, 0, cols) : 0;
      const int64_t hi = upper_ ? cols : std::clamp<int64_t>(i + k + 1, 0, cols);
      const size_t row = static_cast<size_t>(m * cols) * e;
      std::memset(dst + row, 0, static_cast<size_t>(lo) * e);
      std::memcpy(dst + row + static_cast<size_t>(lo) * e, src + row + static_cast<size_t>(lo) * e,
                  static_cast<size_t>(std::max<int64_t>(hi - lo, 0)) * e);
      std::memset(dst + row + static_cast<size_t>(std::max(hi, lo)) * e, 0,
                  static_cast<size_t>(cols - std::max(hi, lo)) * e);
    }
    return Status::Ok();
  }

 private:
  TriluKernel() = default;
  bool upper_ = true;
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateTrilu(const NodeInfo& node) {
  return TriluKernel::Create(node);
}

}  // namespace epctx::exec::kernels
