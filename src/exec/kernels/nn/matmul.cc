// MatMul with numpy semantics: 1-D operands are promoted to matrices (and the added dim dropped
// from the result), leading batch dims broadcast against each other.
#include <algorithm>
#include <memory>
#include <utility>
#include <vector>

#include "exec/kernels/common/broadcast.h"
#include "exec/kernels/common/parallel_for.h"
#include "exec/kernels/common/shape.h"
#include "exec/kernels/families.h"
#include "exec/kernels/nn/gemm_f32.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

// Offsets, in matrices, of A's and B's operand for every output batch index.
std::vector<std::pair<int64_t, int64_t>> BatchOffsets(const std::vector<int64_t>& a_batch,
                                                      const std::vector<int64_t>& b_batch,
                                                      const std::vector<int64_t>& batch) {
  std::vector<std::pair<int64_t, int64_t>> offsets;
  const BroadcastPlan plan = PlanBroadcast(a_batch, b_batch, batch);
  offsets.reserve(static_cast<size_t>(plan.element_count));
  ForEachBroadcastRun(plan, 1,
                      [&](int64_t, int64_t a, int64_t b, int64_t count, int64_t as, int64_t bs) {
                        for (int64_t i = 0; i < count; ++i)
                          offsets.emplace_back(a + i * as, b + i * bs);
                      });
  return offsets;
}

class MatMulKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node) {
    EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, 0, DataType::kFloat32, "A"));
    EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, 1, DataType::kFloat32, "B"));
    const std::vector<int64_t>* sa = StaticShape(node, 0);
    const std::vector<int64_t>* sb = StaticShape(node, 1);
    if (sa != nullptr && sb != nullptr && !sa->empty() && !sb->empty()) {
      const int64_t k = sa->back();
      const int64_t kb = sb->size() == 1 ? (*sb)[0] : (*sb)[sb->size() - 2];
      if (k >= 0 && kb >= 0 && k != kb) {
        return EPCTX_ERROR(kInvalidArgument, "inner dimensions differ: A {} and B {}",
                           ShapeToString(*sa), ShapeToString(*sb));
      }
    }
    return std::unique_ptr<Kernel>(new MatMulKernel());
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* a, RequiredInput(ctx, 0, "A"));
    EPCTX_ASSIGN_OR_RETURN(const Tensor* b, RequiredInput(ctx, 1, "B"));
    EPCTX_RETURN_IF_ERROR(ExpectDtype(*a, DataType::kFloat32, "A"));
    EPCTX_RETURN_IF_ERROR(ExpectDtype(*b, DataType::kFloat32, "B"));
    if (a->shape().empty() || b->shape().empty()) {
      return EPCTX_ERROR(kInvalidArgument, "inputs must have rank 1 or more, got A {} and B {}",
                         ShapeToString(a->shape()), ShapeToString(b->shape()));
    }
    std::vector<int64_t> as = a->shape();
    std::vector<int64_t> bs = b->shape();
    const bool vector_a = as.size() == 1;
    const bool vector_b = bs.size() == 1;
    if (vector_a) as.insert(as.begin(), 1);
    if (vector_b) bs.push_back(1);
    const int64_t m = as[as.size() - 2], k = as.back();
    const int64_t kb = bs[bs.size() - 2], n = bs.back();
    if (k != kb) {
      return EPCTX_ERROR(kInvalidArgument, "inner dimensions differ: A {} and B {}",
                         ShapeToString(a->shape()), ShapeToString(b->shape()));
    }
    const std::vector<int64_t> a_batch(as.begin(), as.end() - 2);
    const std::vector<int64_t> b_batch(bs.begin(), bs.end() - 2);
    EPCTX_ASSIGN_OR_RETURN(std::vector<int64_t> shape, BroadcastShapes(a_batch, b_batch));
    const std::vector<int64_t> batch_shape = shape;
    EPCTX_ASSIGN_OR_RETURN(const int64_t batches, CheckedDimProduct(shape));
    if (!vector_a) shape.push_back(m);
    if (!vector_b) shape.push_back(n);
    EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, DataType::kFloat32, shape));
    if (y->element_count() == 0) return Status::Ok();

    const float* ap = a->data_as<float>();
    const float* bp = b->data_as<float>();
    float* yp = y->mutable_data_as<float>();
    const int threads = std::max(ctx.num_threads(), 1);
    auto no_epilogue = [](int64_t, int64_t, int64_t, int64_t) {};
    EPCTX_ASSIGN_OR_RETURN(const int64_t a_batches, CheckedDimProduct(a_batch));
    EPCTX_ASSIGN_OR_RETURN(const int64_t b_batches, CheckedDimProduct(b_batch));
    if (b_batches == 1 && a_batches == batches) {
      // Every batch uses the same B: the batches of A stack into one tall product.
      ParallelGemmF32(batches * m, n, k, 1.0f, GemmOperand{ap, k, false}, GemmOperand{bp, n, false},
                      yp, n, threads, no_epilogue);
      return Status::Ok();
    }
    const auto offsets = BatchOffsets(a_batch, b_batch, batch_shape);
    const int64_t count = static_cast<int64_t>(offsets.size());
    if (count >= threads || m * n * k < kMinParallelMacs) {
      ParallelFor(m * n * k * count < kMinParallelMacs ? 1 : threads, count, [&](int64_t i, int) {
        GemmF32(m, n, k, 1.0f, GemmOperand{ap + offsets[i].first * m * k, k, false},
                GemmOperand{bp + offsets[i].second * k * n, n, false}, yp + i * m * n, n);
      });
      return Status::Ok();
    }
    for (int64_t i = 0; i < count; ++i) {
      ParallelGemmF32(m, n, k, 1.0f, GemmOperand{ap + offsets[i].first * m * k, k, false},
                      GemmOperand{bp + offsets[i].second * k * n, n, false}, yp + i * m * n, n,
                      threads, no_epilogue);
    }
    return Status::Ok();
  }

 private:
  MatMulKernel() = default;
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateMatMul(const NodeInfo& node) {
  return MatMulKernel::Create(node);
}

}  // namespace epctx::exec::kernels
