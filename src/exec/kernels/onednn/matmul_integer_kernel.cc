// com.epctx DnnlMatMulInteger: MatMulInteger of a uint8 activation A [..., K] and a constant int8
// weight [K, N] with zero point 0, which the compiler packed into the layout oneDNN's u8 x s8
// matmul reads (`weights_format`, int8 bytes), over the rows of A flattened to [M, K]. The output
// is int32 [..., N]: (A - a_zero_point) times W.
//
// Inputs: A, W (the packed int8 bytes), a_zero_point (optional uint8 scalar or [1]), W_colsum
// (int32 [N], each column's sum, from the compiler). The zero point is applied after the
// primitive, as y -= a_zero_point * colsum: oneDNN's own source zero point would add
// compensation data to the packed layout, which the blob does not record.
//
// With `output_scales` (one value, or one per column: a QDQ MatMul's x_scale * w_scale) the
// output is float32 instead: y = float(int32 product) * scale, what Cast and Mul after the int32
// product would compute, in the same pass.
#include <memory>
#include <vector>

#include "exec/kernels/common/parallel_for.h"
#include "exec/kernels/common/scratch.h"
#include "exec/kernels/common/shape.h"
#include "exec/kernels/common/threads.h"
#include "exec/kernels/epctx_ops.h"
#include "exec/kernels/families.h"
#include "exec/kernels/onednn/packed_matmul.h"
#include "exec/kernels/onednn/runtime.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels::onednn {
namespace {

class DnnlMatMulIntegerKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node) {
    auto k = std::unique_ptr<DnnlMatMulIntegerKernel>(new DnnlMatMulIntegerKernel());
    const Attributes& attrs = *node.attrs;
    MatMulConfig config;
    config.integer = true;
    EPCTX_RETURN_IF_ERROR(k->matmul_.Init(attrs, config));
    if (!InputPresent(node, 3)) return EPCTX_ERROR(kInvalidArgument, "input W_colsum is missing");
    EPCTX_ASSIGN_OR_RETURN(k->output_scales_, attrs.GetFloats(ops::kOutputScales));
    const size_t scales = k->output_scales_.size();
    if (scales > 1 && static_cast<int64_t>(scales) != k->matmul_.n()) {
      return EPCTX_ERROR(kInvalidArgument, "{} output_scales for {} columns", scales,
                         k->matmul_.n());
    }
    EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, 0, DataType::kUint8, "A"));
    EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, 1, DataType::kInt8, "W"));
    EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, 2, DataType::kUint8, "a_zero_point"));
    EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, 3, DataType::kInt32, "W_colsum"));
    return std::unique_ptr<Kernel>(std::move(k));
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* a, RequiredInput(ctx, 0, "A"));
    EPCTX_ASSIGN_OR_RETURN(const Tensor* w, RequiredInput(ctx, 1, "W"));
    const Tensor* zp = ctx.input(2);
    EPCTX_ASSIGN_OR_RETURN(const Tensor* colsum, RequiredInput(ctx, 3, "W_colsum"));
    EPCTX_RETURN_IF_ERROR(ExpectDtype(*a, DataType::kUint8, "A"));
    const std::vector<int64_t>& as = a->shape();
    EPCTX_ASSIGN_OR_RETURN(const MatMulGeometry g, matmul_.GeometryFor(as));
    int32_t zero_point = 0;
    if (zp != nullptr) {
      if (zp->dtype() != DataType::kUint8 || zp->element_count() != 1) {
        return EPCTX_ERROR(kInvalidArgument,
                           "input a_zero_point has type {} and shape {}, expected one uint8",
                           DataTypeName(zp->dtype()), ShapeToString(zp->shape()));
      }
      zero_point = zp->data_as<uint8_t>()[0];
    }
    if (colsum->dtype() != DataType::kInt32 || colsum->element_count() != g.n) {
      return EPCTX_ERROR(kInvalidArgument, "input W_colsum has shape {}, expected int32 [{}]",
                         ShapeToString(colsum->shape()), g.n);
    }
    const bool scaled = !output_scales_.empty();
    EPCTX_ASSIGN_OR_RETURN(Tensor * y,
                           ctx.AllocateOutput(0, scaled ? DataType::kFloat32 : DataType::kInt32,
                                              matmul_.OutputShape(as)));
    if (y->element_count() == 0) return Status::Ok();
    // The int32 product: the output itself, or this thread's scratch when the output is scaled.
    void* product = y->mutable_data();
    if (scaled) {
      EPCTX_ASSIGN_OR_RETURN(float* scratch,
                             ThreadScratchF32(static_cast<size_t>(y->element_count())));
      product = scratch;
    }
    const int threads = ctx.num_threads();
    EPCTX_ASSIGN_OR_RETURN(std::shared_ptr<const CachedPrimitive> prim,
                           matmul_.PrimitiveFor(as, g, threads));
    if (w->dtype() != DataType::kInt8 || w->byte_size() != prim->weights.get_size()) {
      return EPCTX_ERROR(kInvalidArgument, "packed W holds {} bytes; its layout needs {}",
                         w->byte_size(), prim->weights.get_size());
    }
    std::unordered_map<int, dnnl::memory> args;
    try {
      using dnnl::memory;
      using tag = memory::format_tag;
      args.emplace(DNNL_ARG_SRC,
                   Wrap(memory::desc({g.m, g.k}, memory::data_type::u8, tag::ab), a->data()));
      args.emplace(DNNL_ARG_WEIGHTS, Wrap(prim->weights, w->data()));
      args.emplace(DNNL_ARG_DST,
                   Wrap(memory::desc({g.m, g.n}, memory::data_type::s32, tag::ab), product));
    } catch (const dnnl::error& e) {
      return FromDnnlError(e, "preparing an integer matmul");
    }
    EPCTX_RETURN_IF_ERROR(ExecutePrimitive(*prim, args, threads, "an integer matmul"));
    if (zero_point == 0 && !scaled) return Status::Ok();
    // Wrapping arithmetic, as the int32 accumulation of MatMulInteger itself wraps.
    const uint32_t* sums = reinterpret_cast<const uint32_t*>(colsum->data());
    uint32_t* acc = static_cast<uint32_t*>(product);
    float* out = scaled ? y->mutable_data_as<float>() : nullptr;
    const uint32_t z = static_cast<uint32_t>(zero_point);
    const int64_t n = g.n;
    const float* scale = output_scales_.data();
    const bool per_column = output_scales_.size() > 1;
    const int nt = ThreadsFor(threads, g.m * n, int64_t{1} << 16);
    ParallelForRanges(nt, g.m, 1, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        uint32_t* row = acc + r * n;
        if (!scaled) {
          for (int64_t j = 0; j < n; ++j) row[j] -= z * sums[j];
          continue;
        }
        float* dst = out + r * n;
        for (int64_t j = 0; j < n; ++j) {
          const int32_t v = static_cast<int32_t>(row[j] - z * sums[j]);
          dst[j] = static_cast<float>(v) * scale[per_column ? j : 0];
        }
      }
    });
    return Status::Ok();
  }

  std::string_view implementation() const override { return matmul_.implementation(); }

  void Prepare(std::span<const std::vector<int64_t>* const> shapes, int threads) override {
    matmul_.Prepare(shapes, threads);
  }

 private:
  DnnlMatMulIntegerKernel() = default;

  std::vector<float> output_scales_;  // empty: int32 output
  PackedWeightMatMul matmul_;
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateDnnlMatMulInteger(const NodeInfo& node) {
  return DnnlMatMulIntegerKernel::Create(node);
}

}  // namespace epctx::exec::kernels::onednn
