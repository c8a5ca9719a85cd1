// com.epctx Attention (attention_op.h): the attention a PyTorch export spells out node by node
// (FuseAttention), on GroupQueryAttention's core (gqa_attention_f32.h): each key and value row
// read once for the query heads that share it, the scores of a row kept in cache, no oneDNN
// primitive per sequence length. The mask is read at run time: when it is the causal mask of a
// query block that ends the key sequence (row s sees keys t <= s + T - S), the core's causal
// key ranges serve it and no masked score is computed; any other mask becomes an additive bias
// of mask_fill where masked (FuseAttention takes fills of -1e30 or less, which absorb any score,
// so that the sum is the fill the Where node would have put there).
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <tuple>
#include <vector>

#include "exec/kernels/attention/attention_op.h"
#include "exec/kernels/attention/gqa_attention_f32.h"
#include "exec/kernels/common/shape.h"
#include "exec/kernels/families.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

// The mask as 4 dims [b, n, s, t] (1 where it broadcasts), or an error.
Result<std::vector<int64_t>> MaskDims(const Tensor& mask, int64_t b, int64_t n, int64_t s,
                                      int64_t t) {
  const std::vector<int64_t>& ms = mask.shape();
  if (mask.dtype() != DataType::kBool || ms.size() > 4) {
    return EPCTX_ERROR(kInvalidArgument, "mask is {} {}; a bool of rank 4 or less is expected",
                       DataTypeName(mask.dtype()), ShapeToString(ms));
  }
  std::vector<int64_t> dims(4 - ms.size(), 1);
  dims.insert(dims.end(), ms.begin(), ms.end());
  const int64_t want[4] = {b, n, s, t};
  for (int i = 0; i < 4; ++i) {
    if (dims[static_cast<size_t>(i)] != 1 && dims[static_cast<size_t>(i)] != want[i]) {
      return EPCTX_ERROR(kInvalidArgument, "mask has shape {}, which does not broadcast to {}",
                         ShapeToString(ms), ShapeToString({b, n, s, t}));
    }
  }
  return dims;
}

// Whether every [s, t] plane of the mask is the causal mask of rows that end the sequence.
bool IsCausal(const uint8_t* mask, const std::vector<int64_t>& dims) {
  const int64_t planes = dims[0] * dims[1], s = dims[2], t = dims[3];
  for (int64_t p = 0; p < planes; ++p) {
    const uint8_t* plane = mask + p * s * t;
    for (int64_t i = 0; i < s; ++i) {
      for (int64_t j = 0; j < t; ++j) {
        if ((plane[i * t + j] != 0) != (j > i + t - s)) return false;
      }
    }
  }
  return true;
}

class AttentionKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node) {
    auto k = std::unique_ptr<AttentionKernel>(new AttentionKernel());
    EPCTX_ASSIGN_OR_RETURN(k->scale_, node.attrs->GetFloat(attention_attr::kScale, 1.0f));
    EPCTX_ASSIGN_OR_RETURN(k->fill_, node.attrs->GetFloat(attention_attr::kMaskFill, 0.0f));
    EPCTX_ASSIGN_OR_RETURN(int64_t layout,
                           node.attrs->GetInt(attention_attr::kOutputLayout, kAttentionOutputBnsh));
    if (layout != kAttentionOutputBnsh && layout != kAttentionOutputBsnh) {
      return EPCTX_ERROR(kInvalidArgument,
                         "output_layout is {}; 0 ([B, N, S, H]) or 1 ([B, S, "
                         "N, H]) expected",
                         layout);
    }
    k->heads_first_ = layout == kAttentionOutputBnsh;
    for (size_t i = 0; i < 3; ++i) {
      EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, i, DataType::kFloat32, "Q, K and V"));
      EPCTX_RETURN_IF_ERROR(ExpectStaticRank(node, i, 4, "Q, K and V"));
    }
    for (size_t i = 4; i < 6; ++i) {
      EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, i, DataType::kFloat32, "past K and V"));
    }
    return std::unique_ptr<Kernel>(std::move(k));
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* q, RequiredInput(ctx, 0, "Q"));
    EPCTX_ASSIGN_OR_RETURN(const Tensor* k, RequiredInput(ctx, 1, "K"));
    EPCTX_ASSIGN_OR_RETURN(const Tensor* v, RequiredInput(ctx, 2, "V"));
    const Tensor* mask = ctx.input(3);
    for (const Tensor* t : {q, k, v}) {
      EPCTX_RETURN_IF_ERROR(ExpectDtype(*t, DataType::kFloat32, "Q, K and V"));
      EPCTX_RETURN_IF_ERROR(ExpectRank(*t, 4, "Q, K and V"));
    }
    const std::vector<int64_t>& qs = q->shape();
    const std::vector<int64_t>& ks = k->shape();
    const int64_t b = qs[0], n = qs[1], s = qs[2], h = qs[3];
    const int64_t kvn = ks[1];
    // With the past (inputs 4 and 5), K and V are the new rows and the presents are made here.
    const Tensor* past_k = ctx.input(4);
    const Tensor* past_v = ctx.input(5);
    if ((past_k == nullptr) != (past_v == nullptr)) {
      return EPCTX_ERROR(kInvalidArgument, "past K and past V come together");
    }
    int64_t past_rows = 0;
    if (past_k != nullptr) {
      for (const Tensor* t : {past_k, past_v}) {
        EPCTX_RETURN_IF_ERROR(ExpectDtype(*t, DataType::kFloat32, "past K and V"));
        EPCTX_RETURN_IF_ERROR(ExpectRank(*t, 4, "past K and V"));
      }
      const std::vector<int64_t>& ps = past_k->shape();
      if (ps[0] != ks[0] || ps[1] != kvn || ps[3] != ks[3] || past_v->shape() != ps) {
        return EPCTX_ERROR(kInvalidArgument,
                           "past K {} and V {} do not extend K {}: [B, kvN, P, H] alike expected",
                           ShapeToString(ps), ShapeToString(past_v->shape()), ShapeToString(ks));
      }
      past_rows = ps[2];
    }
    const int64_t t = past_rows + ks[2];
    if (ks[0] != b || ks[3] != h || v->shape() != ks || kvn < 1 || n % kvn != 0) {
      return EPCTX_ERROR(kInvalidArgument,
                         "Q {} with K {} and V {}: K and V must be [B, kvN, T, H] alike, with N "
                         "a multiple of kvN",
                         ShapeToString(qs), ShapeToString(ks), ShapeToString(v->shape()));
    }
    if (h % 8 != 0) {
      return EPCTX_ERROR(kInvalidArgument, "the head size is {}; a multiple of 8 is expected", h);
    }
    if (t < s) {
      return EPCTX_ERROR(kInvalidArgument, "K has {} rows, fewer than Q's {}", t, s);
    }
    const std::vector<int64_t> out_shape =
        heads_first_ ? std::vector<int64_t>{b, n, s, h} : std::vector<int64_t>{b, s, n, h};
    EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, DataType::kFloat32, out_shape));
    float* present_k = const_cast<float*>(k->data_as<float>());  // read only without the past
    float* present_v = const_cast<float*>(v->data_as<float>());
    if (past_k != nullptr) {
      EPCTX_ASSIGN_OR_RETURN(Tensor * pk,
                             ctx.AllocateOutput(1, DataType::kFloat32, {b, kvn, t, h}));
      EPCTX_ASSIGN_OR_RETURN(Tensor * pv,
                             ctx.AllocateOutput(2, DataType::kFloat32, {b, kvn, t, h}));
      present_k = pk->mutable_data_as<float>();
      present_v = pv->mutable_data_as<float>();
    }
    // A one-row step copies the past into the presents as the core reads it (and only when
    // there are rows to read); otherwise the presents are made here first.
    const bool assemble =
        past_k != nullptr && s == 1 && ks[2] == 1 && past_rows > 0 && y->element_count() > 0;
    if (past_k != nullptr) {
      const int64_t new_rows = ks[2];
      for (int64_t e = 0; e < b * kvn; ++e) {
        for (auto [to, past, now] :
             {std::tuple{present_k, past_k, k}, std::tuple{present_v, past_v, v}}) {
          float* entry = to + e * t * h;
          if (!assemble && past_rows > 0) {
            std::memcpy(entry, past->data_as<float>() + e * past_rows * h,
                        static_cast<size_t>(past_rows * h) * sizeof(float));
          }
          std::memcpy(entry + past_rows * h, now->data_as<float>() + e * new_rows * h,
                      static_cast<size_t>(new_rows * h) * sizeof(float));
        }
      }
    }
    if (y->element_count() == 0) return Status::Ok();

    GqaAttentionF32 p;
    p.batch = b;
    p.seq = s;
    p.heads = n;
    p.kv_heads = kvn;
    p.head_size = h;
    p.query = q->data_as<float>();
    p.query_token_stride = h;
    p.query_head_stride = s * h;
    p.query_batch_stride = n * s * h;
    p.keys = present_k;  // read only unless assembled: the caches are complete
    p.values = present_v;
    p.cache_rows = t;
    if (assemble) {
      p.assemble_caches = true;
      p.past_keys = past_k->data_as<float>();
      p.past_values = past_v->data_as<float>();
      p.past_rows = past_rows;
    }
    p.output = y->mutable_data_as<float>();
    p.output_heads_first = heads_first_;
    p.scale = scale_;
    // Every entry holds all T keys; its rows are the last S positions.
    std::vector<int32_t> lengths(static_cast<size_t>(b), static_cast<int32_t>(t - 1));
    if (t - 1 > std::numeric_limits<int32_t>::max()) {
      return EPCTX_ERROR(kInvalidArgument, "K has {} rows, more than this kernel takes", t);
    }
    p.seqlens_k = lengths.data();
    p.causal = false;
    std::vector<float> bias;
    if (mask != nullptr) {
      EPCTX_ASSIGN_OR_RETURN(std::vector<int64_t> md, MaskDims(*mask, b, n, s, t));
      // A mask over fewer dims than [s, t] (broadcast within a plane) goes through the bias.
      const uint8_t* m = mask->data_as<uint8_t>();
      if (md[2] == s && md[3] == t && IsCausal(m, md)) {
        p.causal = true;
      } else {
        bias.resize(static_cast<size_t>(md[0] * md[1] * s * t));
        for (int64_t i = 0; i < md[0] * md[1]; ++i) {
          for (int64_t r = 0; r < s; ++r) {
            for (int64_t c = 0; c < t; ++c) {
              const int64_t src =
                  ((i * md[2]) + (md[2] == 1 ? 0 : r)) * md[3] + (md[3] == 1 ? 0 : c);
              bias[static_cast<size_t>((i * s + r) * t + c)] = m[src] ? fill_ : 0.0f;
            }
          }
        }
        p.bias = bias.data();
        p.bias_batches = md[0];
        p.bias_heads = md[1];
        p.bias_row = t;
      }
    }
    return RunGqaAttentionF32(p, ctx.num_threads());
  }

 private:
  AttentionKernel() = default;
  float scale_ = 1.0f;
  float fill_ = 0.0f;
  bool heads_first_ = true;
};

}  // namespace

namespace attention {
Result<std::unique_ptr<Kernel>> CreateAttention(const NodeInfo& node) {
  return AttentionKernel::Create(node);
}
}  // namespace attention

}  // namespace epctx::exec::kernels
