// com.epctx DnnlBatchMatMul: ONNX MatMul of two activations ([..., M, K] x [..., K, N], batch
// dims broadcast) on oneDNN's matmul, as in attention (Q·Kᵀ, P·V). Transposes around it are
// folded away by the compiler: an input read through a Transpose keeps that Transpose's `perm`
// (a_perm, b_perm) and oneDNN reads the untransposed bytes with permuted strides; an output that
// a Transpose would reorder is written through `out_perm` directly in that order. Activations
// (and a scale, as a linear post-op) are fused after it.
#include <fmt/ranges.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <numeric>
#include <vector>

#include "exec/kernels/common/parallel_for.h"
#include "exec/kernels/common/shape.h"
#include "exec/kernels/epctx_ops.h"
#include "exec/kernels/families.h"
#include "exec/kernels/onednn/post_ops.h"
#include "exec/kernels/onednn/primitive_memo.h"
#include "exec/kernels/onednn/runtime.h"
#include "exec/kernels/onednn/small_batch_gemm.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels::onednn {
namespace {

using Dims = std::vector<int64_t>;

// A 0 dim counts as 1, so an empty tensor's other dims ([0, 2^32, 2^32]) can overflow int64: an
// error rather than wrapped strides.
Result<Dims> RowMajorStrides(const Dims& shape) {
  Dims strides(shape.size());
  int64_t s = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = s;
    if (__builtin_mul_overflow(s, std::max<int64_t>(shape[i], 1), &s)) {
      return EPCTX_ERROR(kInvalidArgument, "the strides of shape {} overflow int64",
                         ShapeToString(shape));
    }
  }
  return strides;
}

Status CheckPerm(const Dims& perm, size_t rank, std::string_view name) {
  if (perm.empty()) return Status::Ok();
  Dims sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  Dims identity(rank);
  std::iota(identity.begin(), identity.end(), 0);
  if (sorted != identity) {
    return EPCTX_ERROR(kInvalidArgument, "{} {} is not a permutation of a rank-{} tensor", name,
                       ShapeToString(perm), rank);
  }
  return Status::Ok();
}

// An operand stored as `stored`, read as its transpose by `perm` and then right-aligned to
// `rank` dims: its dims and strides.
Status Logical(const Dims& stored, const Dims& perm, size_t rank, Dims* dims, Dims* strides) {
  EPCTX_ASSIGN_OR_RETURN(const Dims st, RowMajorStrides(stored));
  Dims d, s;
  for (size_t i = 0; i < stored.size(); ++i) {
    const size_t from = perm.empty() ? i : static_cast<size_t>(perm[i]);
    d.push_back(stored[from]);
    s.push_back(st[from]);
  }
  EPCTX_ASSIGN_OR_RETURN(const int64_t count, CheckedDimProduct(stored));
  const int64_t total = std::max<int64_t>(count, 1);
  while (d.size() < rank) {
    d.insert(d.begin(), 1);
    s.insert(s.begin(), total);
  }
  *dims = std::move(d);
  *strides = std::move(s);
  return Status::Ok();
}

class DnnlBatchMatMulKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node) {
    auto k = std::unique_ptr<DnnlBatchMatMulKernel>(new DnnlBatchMatMulKernel());
    const Attributes& attrs = *node.attrs;
    EPCTX_ASSIGN_OR_RETURN(k->a_perm_, attrs.GetInts(ops::kAPerm));
    EPCTX_ASSIGN_OR_RETURN(k->b_perm_, attrs.GetInts(ops::kBPerm));
    EPCTX_ASSIGN_OR_RETURN(k->out_perm_, attrs.GetInts(ops::kOutPerm));
    EPCTX_ASSIGN_OR_RETURN(k->post_ops_, ParsePostOps(attrs));
    if (ResidualIndex(k->post_ops_) >= 0) {
      return EPCTX_ERROR(kInvalidArgument, "DnnlBatchMatMul adds no residual");
    }
    k->small_products_ = SmallBatchGemmAvailable() && PrimitivePostOpsArePlain(k->post_ops_);
    EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, 0, DataType::kFloat32, "A"));
    EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, 1, DataType::kFloat32, "B"));
    return std::unique_ptr<Kernel>(std::move(k));
  }

  std::string_view implementation() const override {
    return own_path_.load(std::memory_order_relaxed) ? "epctx:small-gemm" : memo_.implementation();
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* a, RequiredInput(ctx, 0, "A"));
    EPCTX_ASSIGN_OR_RETURN(const Tensor* b, RequiredInput(ctx, 1, "B"));
    EPCTX_RETURN_IF_ERROR(ExpectDtype(*a, DataType::kFloat32, "A"));
    EPCTX_RETURN_IF_ERROR(ExpectDtype(*b, DataType::kFloat32, "B"));
    const Dims& as = a->shape();
    const Dims& bs = b->shape();
    if (as.size() < 2 || bs.size() < 2 || as.size() > 8 || bs.size() > 8) {
      return EPCTX_ERROR(kInvalidArgument, "inputs of shapes {} and {}: ranks 2 to 8 only",
                         ShapeToString(as), ShapeToString(bs));
    }
    EPCTX_RETURN_IF_ERROR(CheckPerm(a_perm_, as.size(), ops::kAPerm));
    EPCTX_RETURN_IF_ERROR(CheckPerm(b_perm_, bs.size(), ops::kBPerm));
    const size_t rank = std::max(as.size(), bs.size());
    EPCTX_RETURN_IF_ERROR(CheckPerm(out_perm_, rank, ops::kOutPerm));
    Dims ad, ast, bd, bst;
    EPCTX_RETURN_IF_ERROR(Logical(as, a_perm_, rank, &ad, &ast));
    EPCTX_RETURN_IF_ERROR(Logical(bs, b_perm_, rank, &bd, &bst));
    const int64_t m = ad[rank - 2], kd = ad[rank - 1], n = bd[rank - 1];
    if (bd[rank - 2] != kd) {
      return EPCTX_ERROR(kInvalidArgument, "cannot multiply [..., {}, {}] by [..., {}, {}]", m, kd,
                         bd[rank - 2], n);
    }
    Dims yd(rank);
    for (size_t i = 0; i + 2 < rank; ++i) {
      if (ad[i] != bd[i] && ad[i] != 1 && bd[i] != 1) {
        return EPCTX_ERROR(kInvalidArgument, "batch dims {} and {} do not broadcast",
                           ShapeToString(ad), ShapeToString(bd));
      }
      yd[i] = ad[i] == 1 ? bd[i] : ad[i];
    }
    yd[rank - 2] = m;
    yd[rank - 1] = n;
    Dims stored = yd;
    if (!out_perm_.empty()) {
      for (size_t i = 0; i < rank; ++i) stored[i] = yd[static_cast<size_t>(out_perm_[i])];
    }
    EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, DataType::kFloat32, stored));
    if (y->element_count() == 0) return Status::Ok();
    EPCTX_ASSIGN_OR_RETURN(const Dims st, RowMajorStrides(stored));
    Dims yst(rank);
    for (size_t i = 0; i < rank; ++i) {
      yst[out_perm_.empty() ? i : static_cast<size_t>(out_perm_[i])] = st[i];
    }
    const int threads = ctx.num_threads();
    if (kd == 0) return RunEmptyInner(*y, threads);
    if (small_products_ && IsSmallBatchProduct(m, kd, n)) {
      RunSmall(a->data_as<float>(), ad, ast, b->data_as<float>(), bd, bst,
               y->mutable_data_as<float>(), yd, yst, threads);
      own_path_.store(true, std::memory_order_relaxed);
      float* out = y->mutable_data_as<float>();
      ApplyPrimitivePostOps(post_ops_, out, nullptr, y->element_count());
      ApplyTrailingPostOps(post_ops_, out, y->element_count(), threads);
      return Status::Ok();
    }
    Dims shapes = as;
    shapes.push_back(-1);
    shapes.insert(shapes.end(), bs.begin(), bs.end());
    try {
      using dnnl::memory;
      const memory::desc ad_md(ad, memory::data_type::f32, ast);
      const memory::desc bd_md(bd, memory::data_type::f32, bst);
      const memory::desc yd_md(yd, memory::data_type::f32, yst);
      auto key = [&] {
        std::string k = fmt::format("bmm t{} a{}/{} b{}/{} y{}", threads, fmt::join(ad, ","),
                                    fmt::join(ast, ","), fmt::join(bd, ","), fmt::join(bst, ","),
                                    fmt::join(yst, ","));
        for (const PostOp& op : post_ops_) {
          k += fmt::format(" p{}:{}:{}", static_cast<int>(op.kind), op.alpha, op.beta);
        }
        return k;
      };
      EPCTX_ASSIGN_OR_RETURN(std::shared_ptr<const CachedPrimitive> prim,
                             memo_.FindOrCreate(shapes, threads, key, [&] {
                               return Make(ad_md, bd_md, yd_md, threads);
                             }));
      std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_SRC, Wrap(ad_md, a->data())},
                                                 {DNNL_ARG_WEIGHTS, Wrap(bd_md, b->data())},
                                                 {DNNL_ARG_DST, Wrap(yd_md, y->data())}};
      EPCTX_RETURN_IF_ERROR(ExecutePrimitive(*prim, args, threads, "a batched matmul"));
      own_path_.store(false, std::memory_order_relaxed);
      ApplyTrailingPostOps(post_ops_, y->mutable_data_as<float>(), y->element_count(), threads);
      return Status::Ok();
    } catch (const dnnl::error& e) {
      return FromDnnlError(e, "preparing a batched matmul");
    }
  }

 private:
  DnnlBatchMatMulKernel() = default;

  // A product over an empty inner dimension is zeros (with the fused ops applied): oneDNN 2.x
  // divides by K making such a matmul (SIGFPE).
  Status RunEmptyInner(Tensor& y, int threads) const {
    if (!PrimitivePostOpsArePlain(post_ops_)) {
      return EPCTX_ERROR(kUnsupported,
                         "a batched matmul over an empty inner dimension with fused operations "
                         "other than a residual addition, Relu, Clip or Linear");
    }
    float* out = y.mutable_data_as<float>();
    std::fill(out, out + y.element_count(), 0.0f);
    ApplyPrimitivePostOps(post_ops_, out, nullptr, y.element_count());
    ApplyTrailingPostOps(post_ops_, out, y.element_count(), threads);
    return Status::Ok();
  }

  Result<CachedPrimitive> Make(const dnnl::memory::desc& a, const dnnl::memory::desc& b,
                               const dnnl::memory::desc& y, int threads) const {
    ThreadBudget budget(threads);
    try {
      dnnl::primitive_attr attr;
      attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
      EPCTX_ASSIGN_OR_RETURN(dnnl::post_ops chain, ToDnnlPostOps(post_ops_, nullptr));
      attr.set_post_ops(chain);
      dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a, b, y), attr, CpuEngine());
      CachedPrimitive out;
      out.primitive = dnnl::matmul(pd);
      out.scratchpad_bytes = pd.scratchpad_desc().get_size();
      out.implementation = std::string("onednn:") + pd.impl_info_str();
      return out;
    } catch (const dnnl::error& e) {
      return FromDnnlError(e, "creating a batched matmul");
    }
  }

  // Every product of the batch by SmallGemm (y's batch dims `yd` over the broadcast operands),
  // split between threads by products, and by rows when there are fewer products than threads.
  static void RunSmall(const float* a, const Dims& ad, const Dims& ast, const float* b,
                       const Dims& bd, const Dims& bst, float* y, const Dims& yd, const Dims& yst,
                       int threads) {
    const size_t rank = yd.size();
    const int64_t m = yd[rank - 2], k = ad[rank - 1], n = yd[rank - 1];
    int64_t batches = 1;
    for (size_t i = 0; i + 2 < rank; ++i) batches *= yd[i];
    const int64_t workers = std::max(threads, 1);
    const int64_t parts =
        std::clamp<int64_t>((workers + batches - 1) / batches, 1, std::max<int64_t>(m / 4, 1));
    const int64_t units = batches * parts;
    ParallelFor(static_cast<int>(std::min(workers, units)), units, [&](int64_t unit, int) {
      int64_t batch = unit / parts;
      const int64_t part = unit % parts;
      int64_t a_off = 0, b_off = 0, y_off = 0;
      for (size_t i = rank - 2; i-- > 0;) {
        const int64_t idx = batch % yd[i];
        batch /= yd[i];
        if (ad[i] != 1) a_off += idx * ast[i];
        if (bd[i] != 1) b_off += idx * bst[i];
        y_off += idx * yst[i];
      }
      const int64_t r0 = m * part / parts, r1 = m * (part + 1) / parts;
      thread_local std::vector<float> pack;
      pack.resize(static_cast<size_t>(SmallGemmPackFloats(k, n)));
      SmallGemm({a + a_off + r0 * ast[rank - 2], ast[rank - 2], ast[rank - 1]},
                {b + b_off, bst[rank - 2], bst[rank - 1]}, y + y_off + r0 * yst[rank - 2],
                yst[rank - 2], yst[rank - 1], r1 - r0, k, n, pack.data());
    });
  }

  Dims a_perm_, b_perm_, out_perm_;
  std::vector<PostOp> post_ops_;
  // Small products are ours (SmallBatchGemmAvailable), the post-ops ones ApplyPrimitivePostOps
  // applies.
  bool small_products_ = false;
  std::atomic<bool> own_path_{false};  // the last run took SmallGemm (implementation())
  PrimitiveMemo memo_;
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateDnnlBatchMatMul(const NodeInfo& node) {
  return DnnlBatchMatMulKernel::Create(node);
}

}  // namespace epctx::exec::kernels::onednn
