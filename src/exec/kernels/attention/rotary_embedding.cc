// com.microsoft RotaryEmbedding (ONNX Runtime's contrib op, its CPU semantics): rotates every
// head's row of `input` ([batch, seq, heads * head_size], or [batch, heads, seq, head_size]) by
// the angles of its position, read from cos_cache/sin_cache [max_position, rotary_dim / 2].
// position_ids is [batch, seq] (each row's position) or one element (the first row's position,
// the others following it). Attributes: interleaved (which elements pair up), num_heads and
// rotary_embedding_dim (given together; a rotary_dim below head_size rotates only the first
// rotary_dim elements and copies the rest), scale and is_packed_batching. Like ONNX Runtime's
// CPU kernel, scale is read and not used; without rotary_embedding_dim the head size is twice
// the caches' width. float32.
#include <algorithm>
#include <memory>
#include <vector>

#include "exec/kernels/attention/rotary_f32.h"
#include "exec/kernels/common/parallel_for.h"
#include "exec/kernels/common/shape.h"
#include "exec/kernels/common/threads.h"
#include "exec/kernels/families.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

class RotaryEmbeddingKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node) {
    auto k = std::unique_ptr<RotaryEmbeddingKernel>(new RotaryEmbeddingKernel());
    EPCTX_ASSIGN_OR_RETURN(int64_t interleaved, node.attrs->GetInt("interleaved", 0));
    EPCTX_ASSIGN_OR_RETURN(k->num_heads_, node.attrs->GetInt("num_heads", 0));
    EPCTX_ASSIGN_OR_RETURN(k->rotary_dim_, node.attrs->GetInt("rotary_embedding_dim", 0));
    EPCTX_ASSIGN_OR_RETURN(int64_t packed, node.attrs->GetInt("is_packed_batching", 0));
    k->interleaved_ = interleaved == 1;
    k->packed_batching_ = packed == 1;
    if (k->num_heads_ < 0 || k->rotary_dim_ < 0) {
      return EPCTX_ERROR(kInvalidArgument,
                         "num_heads ({}) and rotary_embedding_dim ({}) must not be negative",
                         k->num_heads_, k->rotary_dim_);
    }
    if (k->rotary_dim_ > 0 && k->num_heads_ == 0) {
      return EPCTX_ERROR(kInvalidArgument, "rotary_embedding_dim ({}) is given without num_heads",
                         k->rotary_dim_);
    }
    if (k->rotary_dim_ % 2 != 0) {
      return EPCTX_ERROR(kInvalidArgument, "rotary_embedding_dim {} is odd", k->rotary_dim_);
    }
    EPCTX_RETURN_IF_ERROR(RefuseOtherThanFloat32(node, 0, "input"));
    EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, 1, DataType::kInt64, "position_ids"));
    EPCTX_RETURN_IF_ERROR(RefuseOtherThanFloat32(node, 2, "cos_cache"));
    EPCTX_RETURN_IF_ERROR(RefuseOtherThanFloat32(node, 3, "sin_cache"));
    return std::unique_ptr<Kernel>(std::move(k));
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, "input"));
    EPCTX_ASSIGN_OR_RETURN(const Tensor* pos, RequiredInput(ctx, 1, "position_ids"));
    EPCTX_ASSIGN_OR_RETURN(const Tensor* cos, RequiredInput(ctx, 2, "cos_cache"));
    EPCTX_ASSIGN_OR_RETURN(const Tensor* sin, RequiredInput(ctx, 3, "sin_cache"));
    EPCTX_RETURN_IF_ERROR(ExpectDtype(*x, DataType::kFloat32, "input"));
    EPCTX_RETURN_IF_ERROR(ExpectDtype(*pos, DataType::kInt64, "position_ids"));
    EPCTX_RETURN_IF_ERROR(ExpectDtype(*cos, DataType::kFloat32, "cos_cache"));
    EPCTX_RETURN_IF_ERROR(ExpectDtype(*sin, DataType::kFloat32, "sin_cache"));
    EPCTX_ASSIGN_OR_RETURN(Layout l, LayoutOf(*x, *pos, *cos, *sin));
    EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, DataType::kFloat32, x->shape()));
    if (y->element_count() == 0) return Status::Ok();

    const float* xp = x->data_as<float>();
    float* yp = y->mutable_data_as<float>();
    const int64_t* pp = pos->data_as<int64_t>();
    const float* cp = cos->data_as<float>();
    const float* sp = sin->data_as<float>();
    const int64_t half = l.rotary_dim / 2;
    const int64_t rows = l.batch * l.seq * l.heads;
    const int nt = ThreadsFor(ctx.num_threads(), x->element_count());
    ParallelForRanges(nt, rows, 16, [&](int64_t first, int64_t last) {
      for (int64_t r = first; r < last; ++r) {
        const int64_t n = r % l.heads;
        const int64_t s = (r / l.heads) % l.seq;
        const int64_t b = r / (l.heads * l.seq);
        const int64_t offset = b * l.batch_stride + s * l.seq_stride + n * l.head_stride;
        const int64_t p = l.one_offset ? pp[0] + s : pp[b * l.seq + s];
        // Rows of the caches are rotary_dim / 2 apart, as ONNX Runtime reads them (a cache
        // wider than that, head_size / 2, is accepted by its check and read the same way).
        RotaryRowF32(xp + offset, cp + p * half, sp + p * half, l.rotary_dim, l.head_size,
                     interleaved_, yp + offset);
      }
    });
    return Status::Ok();
  }

 private:
  struct Layout {
    int64_t batch = 0, seq = 0, heads = 0, head_size = 0, rotary_dim = 0;
    int64_t batch_stride = 0, seq_stride = 0, head_stride = 0;
    bool one_offset = false;  // position_ids holds the first row's position only
  };

  RotaryEmbeddingKernel() = default;

  static Status RefuseOtherThanFloat32(const NodeInfo& node, size_t index, std::string_view name) {
    if (!InputPresent(node, index)) return Status::Ok();
    const DataType t = node.inputs[index].dtype;
    if (t == DataType::kUndefined || t == DataType::kFloat32) return Status::Ok();
    return EPCTX_ERROR(kUnsupported, "input {} has type {}: RotaryEmbedding runs on float32 only",
                       name, DataTypeName(t));
  }

  // ONNX Runtime's checks of the inputs (rotary_embedding_helper.h), and what makes the rows'
  // offsets and the cache rows read stay inside the tensors.
  Result<Layout> LayoutOf(const Tensor& x, const Tensor& pos, const Tensor& cos,
                          const Tensor& sin) const {
    const std::vector<int64_t>& xs = x.shape();
    if (xs.size() != 3 && xs.size() != 4) {
      return EPCTX_ERROR(kInvalidArgument, "input has rank {}, expected 3 or 4", xs.size());
    }
    if (cos.shape().size() != 2 || sin.shape() != cos.shape()) {
      return EPCTX_ERROR(kInvalidArgument,
                         "cos_cache {} and sin_cache {} must be matrices of one shape",
                         ShapeToString(cos.shape()), ShapeToString(sin.shape()));
    }
    Layout l;
    l.batch = xs[0];
    const bool bnsh = xs.size() == 4;
    l.seq = bnsh ? xs[2] : xs[1];
    const int64_t hidden = bnsh ? xs[1] * xs[3] : xs[2];
    const int64_t max_position = cos.shape()[0];
    const int64_t width = cos.shape()[1];
    l.head_size = rotary_dim_ == 0 ? width * 2 : (num_heads_ > 0 ? hidden / num_heads_ : 0);
    if (l.head_size <= 0 || hidden % l.head_size != 0) {
      return EPCTX_ERROR(kInvalidArgument, "hidden size {} is not a multiple of head size {}",
                         hidden, l.head_size);
    }
    if (rotary_dim_ > l.head_size) {
      return EPCTX_ERROR(kInvalidArgument, "rotary_embedding_dim {} is above the head size {}",
                         rotary_dim_, l.head_size);
    }
    if (l.head_size / 2 != width && (rotary_dim_ == 0 || rotary_dim_ / 2 != width)) {
      return EPCTX_ERROR(kInvalidArgument,
                         "cos_cache has {} columns, expected head size / 2 ({}) or "
                         "rotary_embedding_dim / 2 ({})",
                         width, l.head_size / 2, rotary_dim_ / 2);
    }
    l.heads = num_heads_ > 0 ? num_heads_ : hidden / l.head_size;
    if (l.heads * l.head_size != hidden || (bnsh && (xs[1] != l.heads || xs[3] != l.head_size))) {
      return EPCTX_ERROR(kInvalidArgument, "input {} is not {} heads of size {}", ShapeToString(xs),
                         l.heads, l.head_size);
    }
    l.rotary_dim = rotary_dim_ > 0 ? rotary_dim_ : l.head_size;
    if (bnsh) {
      l.seq_stride = l.head_size;
      l.head_stride = l.seq * l.seq_stride;
      l.batch_stride = l.heads * l.head_stride;
    } else {
      l.head_stride = l.head_size;
      l.seq_stride = l.heads * l.head_stride;
      l.batch_stride = l.seq * l.seq_stride;
    }
    if (!packed_batching_ && l.seq > max_position) {
      return EPCTX_ERROR(kUnsupported,
                         "sequence length {} is above the caches' {} positions (ONNX Runtime does "
                         "not extend the caches either)",
                         l.seq, max_position);
    }
    const std::vector<int64_t>& ps = pos.shape();
    l.one_offset = ps.empty() || (ps.size() == 1 && ps[0] == 1);
    const int64_t* p = pos.data_as<int64_t>();
    if (l.one_offset) {
      if (p[0] < 0 || p[0] > max_position - l.seq) {
        return EPCTX_ERROR(kInvalidArgument,
                           "position_ids starts at {}: a sequence of {} from there leaves the "
                           "caches' positions [0, {})",
                           p[0], l.seq, max_position);
      }
      return l;
    }
    if (ps.size() != 2 || ps[0] != l.batch || ps[1] != l.seq) {
      return EPCTX_ERROR(kInvalidArgument,
                         "position_ids has shape {}, expected [{}, {}] or one element",
                         ShapeToString(ps), l.batch, l.seq);
    }
    for (int64_t i = 0; i < l.batch * l.seq; ++i) {
      if (p[i] < 0 || p[i] >= max_position) {
        return EPCTX_ERROR(kInvalidArgument,
                           "position_ids[{}] = {} is outside the caches' positions [0, {})", i,
                           p[i], max_position);
      }
    }
    return l;
  }

  int64_t num_heads_ = 0;
  int64_t rotary_dim_ = 0;
  bool interleaved_ = false;
  bool packed_batching_ = false;
};

}  // namespace

namespace attention {

Result<std::unique_ptr<Kernel>> CreateRotaryEmbedding(const NodeInfo& node) {
  return RotaryEmbeddingKernel::Create(node);
}

}  // namespace attention

}  // namespace epctx::exec::kernels
