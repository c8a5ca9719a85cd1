// com.epctx DnnlMatMul: A [..., K] times a constant weight [K, N] that the compiler packed into
// the layout oneDNN's matmul reads (`weights_format`), over the rows of A flattened to
// [M, K]; bias, activations and a residual addition fused as post-ops. The output is
// [..., N] (A's leading dims).
//
// Inputs: A, W (the packed bytes as float32 [n], bfloat16 [n] with compute_type "bf16", or
// float16 [n] when weights_format is float16's: a float16 model's weight, multiplied in float32
// by our own kernels, blocked_gemv.h and chunked_weight_gemm.h), B (optional bias [N]), R (the
// residual, present when post_ops adds one; the output's shape).
#include <algorithm>
#include <atomic>
#include <memory>
#include <vector>

#include "exec/kernels/common/parallel_for.h"
#include "exec/kernels/common/shape.h"
#include "exec/kernels/epctx_ops.h"
#include "exec/kernels/families.h"
#include "exec/kernels/onednn/blocked_gemv.h"
#include "exec/kernels/onednn/chunked_weight_gemm.h"
#include "exec/kernels/onednn/compute_type.h"
#include "exec/kernels/onednn/packed_matmul.h"
#include "exec/kernels/onednn/panel_matmul.h"
#include "exec/kernels/onednn/runtime.h"
#include "exec/kernels/onednn/weight_format.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels::onednn {
namespace {

class DnnlMatMulKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node) {
    auto k = std::unique_ptr<DnnlMatMulKernel>(new DnnlMatMulKernel());
    const Attributes& attrs = *node.attrs;
    MatMulConfig config;
    EPCTX_ASSIGN_OR_RETURN(config.post_ops, ParsePostOps(attrs));
    EPCTX_ASSIGN_OR_RETURN(config.bf16, ParseComputeBf16(attrs));
    config.has_bias = InputPresent(node, 2);
    const bool wants_residual = ResidualIndex(config.post_ops) >= 0;
    if (wants_residual != InputPresent(node, 3)) {
      return EPCTX_ERROR(kInvalidArgument, "post_ops {} a residual, but input R is {}",
                         wants_residual ? "adds" : "does not add",
                         InputPresent(node, 3) ? "present" : "absent");
    }
    EPCTX_RETURN_IF_ERROR(k->matmul_.Init(attrs, config));
    const GemvLayout layout =
        GemvLayoutOf(k->matmul_.format(), k->matmul_.k(), k->matmul_.n(), &k->gemv_row_stride_);
    // Panels are the 1x1 convolution's layout: it takes every product our passes do not.
    if (layout == GemvLayout::kFloat32Panels) {
      k->panels_ = std::make_unique<PanelMatMul>(k->matmul_.k(), k->matmul_.n(), config);
    }
    // One row (a decode step): our own pass over the packed bytes, then the post-ops.
    if (PrimitivePostOpsArePlain(config.post_ops)) k->gemv_ = layout;
    EPCTX_RETURN_IF_ERROR(k->CheckFloat16Weights());
    EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, 0, DataType::kFloat32, "A"));
    EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, 1, k->weight_type(), "W"));
    EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, 2, DataType::kFloat32, "B"));
    EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, 3, DataType::kFloat32, "R"));
    return std::unique_ptr<Kernel>(std::move(k));
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* a, RequiredInput(ctx, 0, "A"));
    EPCTX_ASSIGN_OR_RETURN(const Tensor* w, RequiredInput(ctx, 1, "W"));
    const Tensor* b = ctx.input(2);
    const Tensor* r = ctx.input(3);
    EPCTX_RETURN_IF_ERROR(ExpectDtype(*a, DataType::kFloat32, "A"));
    const std::vector<int64_t>& as = a->shape();
    EPCTX_ASSIGN_OR_RETURN(const MatMulGeometry g, matmul_.GeometryFor(as));
    EPCTX_ASSIGN_OR_RETURN(Tensor * y,
                           ctx.AllocateOutput(0, DataType::kFloat32, matmul_.OutputShape(as)));
    if (y->element_count() == 0) return Status::Ok();
    if (b != nullptr && (b->dtype() != DataType::kFloat32 || b->element_count() != g.n)) {
      return EPCTX_ERROR(kInvalidArgument, "input B has shape {}, expected [{}]",
                         ShapeToString(b->shape()), g.n);
    }
    if (r != nullptr && (r->dtype() != DataType::kFloat32 || r->shape() != y->shape())) {
      return EPCTX_ERROR(kInvalidArgument, "residual R has shape {}, expected {}",
                         ShapeToString(r->shape()), ShapeToString(y->shape()));
    }
    const int threads = ctx.num_threads();
    const char* own_path = nullptr;
    if (g.m == 1 && gemv_ != GemvLayout::kNone) {
      own_path = "epctx:one-row";
      EPCTX_RETURN_IF_ERROR(RunOneRow(*a, *w, b, r, g, *y, threads));
    } else if (ReadsFloat32Rows() && IsSmallProduct(g)) {
      own_path = "epctx:row-by-row";
      EPCTX_RETURN_IF_ERROR(RunRowByRow(*a, *w, b, r, g, *y, threads));
    } else if (half_) {
      EPCTX_RETURN_IF_ERROR(RunHalfRows(*a, *w, b, r, g, *y, threads));
    } else if (panels_ != nullptr) {
      EPCTX_RETURN_IF_ERROR(panels_->Run(*a, *w, b, r, g, *y, threads));
    } else {
      EPCTX_RETURN_IF_ERROR(RunPrimitive(*a, *w, b, r, g, *y, threads));
    }
    ApplyTrailingPostOps(config().post_ops, y->mutable_data_as<float>(), y->element_count(),
                         threads);
    last_own_path_.store(own_path, std::memory_order_relaxed);
    return Status::Ok();
  }

  // What the last run took (a profile asks after the run): our own pass over the weights, or
  // oneDNN's primitive (also before any run: the prepared one).
  std::string_view implementation() const override {
    if (half_) return "epctx:float16-weights";
    const char* own = last_own_path_.load(std::memory_order_relaxed);
    if (own != nullptr) return own;
    return panels_ != nullptr ? panels_->implementation() : matmul_.implementation();
  }
  void Prepare(std::span<const std::vector<int64_t>* const> shapes, int threads) override {
    if (half_) return;  // no primitive reads float16 weights
    if (panels_ != nullptr) {
      // (TakesOneDnnGemm of a known shape has its geometry.)
      if (!shapes.empty() && shapes[0] != nullptr && TakesOneDnnGemm(shapes)) {
        panels_->Prepare(*shapes[0], *matmul_.GeometryFor(*shapes[0]), threads);
      }
      return;
    }
    // One known row takes our own pass: no primitive to make (oneDNN's one-row matmul over
    // ResNet-50's classifier took 6.5 ms to make, on the first run's way at 2 threads).
    if (TakesOneRow(shapes)) return;
    if (gemv_ == GemvLayout::kFloat32Rows && TakesOneDnnGemm(shapes)) WarmUpGemm();
    matmul_.Prepare(shapes, threads);
  }

 private:
  // Float16 weights (weights_format's element type) are read by our kernels only: in the one
  // layout they read, with the post-ops they apply, computing in float32.
  Status CheckFloat16Weights() {
    auto desc = DecodeBlockedWeightFormat(matmul_.format());
    half_ = desc.ok() && desc->data.data_type == dnnl_f16;
    if (!half_) return Status::Ok();
    if (config().bf16) {
      return EPCTX_ERROR(kInvalidArgument, "float16 weights with compute_type bf16");
    }
    if (!PrimitivePostOpsArePlain(config().post_ops)) {
      return EPCTX_ERROR(kUnsupported,
                         "float16 weights with post-ops the float16 kernels do not apply");
    }
    if (gemv_ != GemvLayout::kFloat16Blocked) {
      return EPCTX_ERROR(kUnsupported,
                         "float16 weights in layout {} (this build reads float16 weights only in "
                         "64-column blocks, with AVX-512 or with AVX2, F16C and FMA)",
                         DescribeWeightFormat(matmul_.format()));
    }
    return Status::Ok();
  }

  Status RunPrimitive(const Tensor& a, const Tensor& w, const Tensor* b, const Tensor* r,
                      const MatMulGeometry& g, Tensor& y, int threads) {
    EPCTX_ASSIGN_OR_RETURN(std::shared_ptr<const CachedPrimitive> prim,
                           matmul_.PrimitiveFor(a.shape(), g, threads));
    if (w.dtype() != weight_type() || w.byte_size() != prim->weights.get_size()) {
      return EPCTX_ERROR(kInvalidArgument, "packed W holds {} bytes; its layout needs {}",
                         w.byte_size(), prim->weights.get_size());
    }
    std::unordered_map<int, dnnl::memory> args;
    try {
      using tag = dnnl::memory::format_tag;
      args.emplace(DNNL_ARG_SRC, Wrap(PlainDesc({g.m, g.k}, tag::ab), a.data()));
      args.emplace(DNNL_ARG_WEIGHTS, Wrap(prim->weights, w.data()));
      if (b != nullptr) args.emplace(DNNL_ARG_BIAS, Wrap(PlainDesc({1, g.n}, tag::ab), b->data()));
      args.emplace(DNNL_ARG_DST, Wrap(PlainDesc({g.m, g.n}, tag::ab), y.data()));
      if (r != nullptr) {
        args.emplace(
            DNNL_ARG_ATTR_MULTIPLE_POST_OP(ResidualIndex(config().post_ops)) | DNNL_ARG_SRC_1,
            Wrap(PlainDesc({g.m, g.n}, tag::ab), r->data()));
      }
    } catch (const dnnl::error& e) {
      return FromDnnlError(e, "preparing a matmul");
    }
    return ExecutePrimitive(*prim, args, threads, "a matmul");
  }

  // W and R as the kernels that compute without the primitive read them.
  Status CheckOwnKernelInputs(const Tensor& w, const Tensor* r, const MatMulGeometry& g) const {
    if (w.dtype() != weight_type() ||
        static_cast<int64_t>(w.byte_size()) != GemvWeightBytes(gemv_, g.k, g.n, gemv_row_stride_)) {
      return EPCTX_ERROR(kInvalidArgument, "packed W holds {} bytes; its layout needs {}",
                         w.byte_size(), GemvWeightBytes(gemv_, g.k, g.n, gemv_row_stride_));
    }
    if (r == nullptr && ResidualIndex(config().post_ops) >= 0) {
      return EPCTX_ERROR(kInvalidArgument, "post_ops add a residual, but input R is absent");
    }
    return Status::Ok();
  }

  // Rows times float16 weights: the product, then bias and post-ops row by row.
  Status RunHalfRows(const Tensor& a, const Tensor& w, const Tensor* b, const Tensor* r,
                     const MatMulGeometry& g, Tensor& y, int threads) const {
    EPCTX_RETURN_IF_ERROR(CheckOwnKernelInputs(w, r, g));
    float* out = y.mutable_data_as<float>();
    EPCTX_RETURN_IF_ERROR(HalfWeightGemm(static_cast<const uint16_t*>(w.data()), g.m, g.k, g.n,
                                         a.data_as<float>(), out, threads));
    const float* bias = b != nullptr ? b->data_as<float>() : nullptr;
    const float* residual = r != nullptr ? r->data_as<float>() : nullptr;
    ParallelFor(threads, g.m, [&](int64_t row, int) {
      float* y_row = out + row * g.n;
      if (bias != nullptr) {
        for (int64_t c = 0; c < g.n; ++c) y_row[c] += bias[c];
      }
      ApplyPrimitivePostOps(config().post_ops, y_row,
                            residual != nullptr ? residual + row * g.n : nullptr, g.n);
    });
    return Status::Ok();
  }

  Status RunOneRow(const Tensor& a, const Tensor& w, const Tensor* b, const Tensor* r,
                   const MatMulGeometry& g, Tensor& y, int threads) const {
    EPCTX_RETURN_IF_ERROR(CheckOwnKernelInputs(w, r, g));
    float* out = y.mutable_data_as<float>();
    BlockedGemv(gemv_, w.data(), g.k, g.n, gemv_row_stride_, a.data_as<float>(),
                b != nullptr ? b->data_as<float>() : nullptr, out, threads);
    ApplyPrimitivePostOps(config().post_ops, out, r != nullptr ? r->data_as<float>() : nullptr,
                          g.n);
    return Status::Ok();
  }

  // A small product over plain float32 rows (AVX2), one row at a time: oneDNN's GEMM would make
  // its code at the process's first product, 20-35 ms on a Zen 3 core, which a small model's
  // first run (a log-mel spectrogram's [~100, 201] x [201, 80] filter bank) paid several times
  // over; the weight stays in the cache from row to row.
  static constexpr int64_t kSmallProductMacs = int64_t{4} << 20;

  // (N comes from the node's attributes: its product with M and K may not fit 64 bits.)
  static bool IsSmallProduct(const MatMulGeometry& g) {
    int64_t rows_k = 0, macs = 0;
    return !__builtin_mul_overflow(g.m, g.k, &rows_k) &&
           !__builtin_mul_overflow(rows_k, g.n, &macs) && macs <= kSmallProductMacs;
  }

  // Whether a run with A of these shapes may take oneDNN's GEMM over plain rows (or the 1x1
  // convolution over panels): not one row, not a small product; when A's shape is known before
  // the run only.
  bool TakesOneDnnGemm(std::span<const std::vector<int64_t>* const> shapes) const {
    if (shapes.empty() || shapes[0] == nullptr) return true;
    auto g = matmul_.GeometryFor(*shapes[0]);
    return g.ok() && g->m > 1 && !IsSmallProduct(*g);
  }

  // Whether a run with A of these shapes takes our one-row pass; when A's shape is known before
  // the run only.
  bool TakesOneRow(std::span<const std::vector<int64_t>* const> shapes) const {
    if (gemv_ == GemvLayout::kNone || shapes.empty() || shapes[0] == nullptr) return false;
    auto g = matmul_.GeometryFor(*shapes[0]);
    return g.ok() && g->m == 1;
  }

  Status RunRowByRow(const Tensor& a, const Tensor& w, const Tensor* b, const Tensor* r,
                     const MatMulGeometry& g, Tensor& y, int threads) const {
    EPCTX_RETURN_IF_ERROR(CheckOwnKernelInputs(w, r, g));
    const float* rows = a.data_as<float>();
    const float* bias = b != nullptr ? b->data_as<float>() : nullptr;
    const float* residual = r != nullptr ? r->data_as<float>() : nullptr;
    float* out = y.mutable_data_as<float>();
    // A thread per kMacsPerThread multiply-adds at most: waking another costs microseconds.
    constexpr int64_t kMacsPerThread = int64_t{256} << 10;
    const int workers = static_cast<int>(
        std::clamp<int64_t>(g.m * g.k * g.n / kMacsPerThread, 1, std::max(threads, 1)));
    ParallelFor(workers, g.m, [&](int64_t row, int) {
      float* y_row = out + row * g.n;
      BlockedGemv(gemv_, w.data(), g.k, g.n, gemv_row_stride_, rows + row * g.k, bias, y_row, 1);
      ApplyPrimitivePostOps(config().post_ops, y_row,
                            residual != nullptr ? residual + row * g.n : nullptr, g.n);
    });
    return Status::Ok();
  }

  DnnlMatMulKernel() = default;

  // Float32 weights our one-row pass reads row by row for a small product.
  bool ReadsFloat32Rows() const {
    return gemv_ == GemvLayout::kFloat32Rows || gemv_ == GemvLayout::kFloat32Panels;
  }

  const MatMulConfig& config() const { return matmul_.config(); }
  DataType weight_type() const {
    return half_ ? DataType::kFloat16 : PackedFloatWeightType(config().bf16);
  }

  PackedWeightMatMul matmul_;
  GemvLayout gemv_ = GemvLayout::kNone;
  int64_t gemv_row_stride_ = 0;          // kFloat32Rows: floats from one row of W to the next
  bool half_ = false;                    // float16 weights (CheckFloat16Weights)
  std::unique_ptr<PanelMatMul> panels_;  // float32 weights in panels: the 1x1 convolution
  std::atomic<const char*> last_own_path_{nullptr};  // see implementation()
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateDnnlMatMul(const NodeInfo& node) {
  return DnnlMatMulKernel::Create(node);
}

}  // namespace epctx::exec::kernels::onednn
