// com.microsoft GroupQueryAttention with ONNX Runtime 1.30's CPU semantics: the attention of an
// LLM's decoder layer with its KV cache. Inputs: query [B, S, N * H] (or Q, K and V packed
// [B, S, (N + 2 kvN) * H] with key and value omitted), key/value [B, S, kvN * H], past_key and
// past_value [B, kvN, P, H] (optional; P may be 0), seqlens_k [B] int32 (each entry's total
// length - 1), total_sequence_length (int32, one element), cos_cache/sin_cache
// [max_position, rotary_dim / 2] (rotary embedding of Q and K when do_rotary), position_ids
// [B, >= S] int64, attention_bias [B or 1, N or 1, S, total] and head_sink [N]. Outputs: output
// [B, S, N * H] and present_key/present_value [B, kvN, T, H], T = max(total, P): the past rows
// of each entry, its new (rotated) rows after them, zeros after those. When the present is the
// past's own memory (a caller binding both to one buffer of max_sequence_length rows), only the
// new rows are written, in place, as ONNX Runtime does.
// The prompt (S == total) starts at position 0 whatever the past holds; batch entries shorter
// than S are right-padded and their padded rows attend to the entry's keys. Later steps (S == 1,
// or S > 1 with B == 1: a continued prompt) start after the entry's past, total - S.
// Refused at creation: the quantized KV cache (k_quant_type, kv_cache_bit_width, k_scale,
// v_scale), sliding_window_cache, q_norm_weight/k_norm_weight, and qk_output. float32 only.
#include <algorithm>
#include <atomic>
#include <cctype>
#include <cmath>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "exec/kernels/attention/gqa_attention_f32.h"
#include "exec/kernels/attention/rotary_f32.h"
#include "exec/kernels/common/parallel_for.h"
#include "exec/kernels/common/shape.h"
#include "exec/kernels/common/threads.h"
#include "exec/kernels/families.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

enum InputIndex : size_t {
  kQuery = 0,
  kKey = 1,
  kValue = 2,
  kPastKey = 3,
  kPastValue = 4,
  kSeqlensK = 5,
  kTotalSequenceLength = 6,
  kCosCache = 7,
  kSinCache = 8,
  kPositionIds = 9,
  kAttentionBias = 10,
  kHeadSink = 11,
  kKScale = 12,
  kVScale = 13,
  kQNormWeight = 14,
  kKNormWeight = 15,
};

constexpr const char* kInputNames[] = {"query",
                                       "key",
                                       "value",
                                       "past_key",
                                       "past_value",
                                       "seqlens_k",
                                       "total_sequence_length",
                                       "cos_cache",
                                       "sin_cache",
                                       "position_ids",
                                       "attention_bias",
                                       "head_sink",
                                       "k_scale",
                                       "v_scale",
                                       "q_norm_weight",
                                       "k_norm_weight"};

// What one run's input shapes say.
struct Dims {
  int64_t batch = 0, seq = 0, head_size = 0;
  bool packed = false;
  bool has_past = false;
  int64_t past_rows = 0;   // P: rows of the past buffers
  int64_t total = 0;       // total_sequence_length
  int64_t cache_rows = 0;  // T = max(total, P)
  int64_t rotary_dim = 0;  // 0 without caches
  int64_t cos_rows = 0;
  bool first_prompt = false;  // S == total: positions and the cache start at 0
};

class GroupQueryAttentionKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node) {
    auto k = std::unique_ptr<GroupQueryAttentionKernel>(new GroupQueryAttentionKernel());
    const Attributes& a = *node.attrs;
    EPCTX_ASSIGN_OR_RETURN(const AttributeValue* heads, a.Require("num_heads", AttrType::kInt));
    EPCTX_ASSIGN_OR_RETURN(const AttributeValue* kv, a.Require("kv_num_heads", AttrType::kInt));
    k->heads_ = heads->i;
    k->kv_heads_ = kv->i;
    if (k->heads_ <= 0 || k->kv_heads_ <= 0 || k->heads_ % k->kv_heads_ != 0) {
      return EPCTX_ERROR(kInvalidArgument,
                         "num_heads ({}) must be a positive multiple of kv_num_heads ({})",
                         k->heads_, k->kv_heads_);
    }
    EPCTX_ASSIGN_OR_RETURN(k->scale_, a.GetFloat("scale", 0.0f));
    EPCTX_ASSIGN_OR_RETURN(k->softcap_, a.GetFloat("softcap", 0.0f));
    EPCTX_ASSIGN_OR_RETURN(k->window_, a.GetInt("local_window_size", -1));
    EPCTX_ASSIGN_OR_RETURN(int64_t rotary, a.GetInt("do_rotary", 0));
    EPCTX_ASSIGN_OR_RETURN(int64_t interleaved, a.GetInt("rotary_interleaved", 0));
    EPCTX_ASSIGN_OR_RETURN(int64_t smooth, a.GetInt("smooth_softmax", -1));
    EPCTX_ASSIGN_OR_RETURN(int64_t causal, a.GetInt("causal", 1));
    k->do_rotary_ = rotary == 1;
    k->interleaved_ = interleaved == 1;
    k->smooth_ = smooth == 1;
    if (causal != 0 && causal != 1) {
      return EPCTX_ERROR(kInvalidArgument, "causal is {}, expected 0 or 1", causal);
    }
    k->causal_ = causal == 1;
    if (k->window_ == 0 || k->window_ < -1) {
      return EPCTX_ERROR(kInvalidArgument, "local_window_size {} is neither -1 nor positive",
                         k->window_);
    }
    if (!k->causal_ && k->window_ != -1) {
      return EPCTX_ERROR(kInvalidArgument, "local_window_size must be -1 when causal is 0");
    }
    EPCTX_RETURN_IF_ERROR(RefuseUnsupported(node));
    for (size_t i : {kQuery, kKey, kValue, kPastKey, kPastValue, kCosCache, kSinCache,
                     kAttentionBias, kHeadSink}) {
      EPCTX_RETURN_IF_ERROR(RefuseOtherThanFloat32(node, i));
    }
    EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, kSeqlensK, DataType::kInt32, "seqlens_k"));
    EPCTX_RETURN_IF_ERROR(
        ExpectStaticDtype(node, kTotalSequenceLength, DataType::kInt32, "total_sequence_length"));
    EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, kPositionIds, DataType::kInt64, "position_ids"));
    if (!OutputPresent(node, 1) || !OutputPresent(node, 2)) {
      return EPCTX_ERROR(kInvalidArgument, "outputs present_key and present_value are required");
    }
    return std::unique_ptr<Kernel>(std::move(k));
  }

  Status Run(KernelContext& ctx) override;

  // ONNX Runtime's shared past/present buffer: both presents over both pasts (one of them alone
  // would be read as a past to copy from while it is written).
  bool WritesInPlace(std::span<const int32_t> input_of_output) const override {
    for (size_t i = 0; i < input_of_output.size(); ++i) {
      const int32_t want = i == 1   ? static_cast<int32_t>(kPastKey)
                           : i == 2 ? static_cast<int32_t>(kPastValue)
                                    : -1;
      if (input_of_output[i] != want) return false;
    }
    return input_of_output.size() >= 3;
  }

 private:
  GroupQueryAttentionKernel() = default;

  // What epctx does not implement of the operator, named at creation.
  static Status RefuseUnsupported(const NodeInfo& node) {
    const Attributes& a = *node.attrs;
    EPCTX_ASSIGN_OR_RETURN(int64_t sliding, a.GetInt("sliding_window_cache", 0));
    if (sliding != 0) {
      return EPCTX_ERROR(kUnsupported,
                         "sliding_window_cache={} (a window-sized KV cache) is not supported",
                         sliding);
    }
    EPCTX_ASSIGN_OR_RETURN(int64_t qk_output, a.GetInt("qk_output", 0));
    if (qk_output != 0 || OutputPresent(node, 3)) {
      return EPCTX_ERROR(kUnsupported, "qk_output={} (output 3, output_qk) is not supported",
                         qk_output);
    }
    for (const char* name : {"k_quant_type", "v_quant_type"}) {
      EPCTX_ASSIGN_OR_RETURN(std::string quant, a.GetString(name, "NONE"));
      std::string upper = quant;
      for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      if (upper != "NONE") {
        return EPCTX_ERROR(kUnsupported, "{}={} (a quantized KV cache) is not supported", name,
                           quant);
      }
    }
    EPCTX_ASSIGN_OR_RETURN(int64_t bits, a.GetInt("kv_cache_bit_width", 0));
    if (bits != 0) {
      return EPCTX_ERROR(kUnsupported,
                         "kv_cache_bit_width={} (a quantized KV cache) is not supported", bits);
    }
    for (size_t i : {kKScale, kVScale, kQNormWeight, kKNormWeight}) {
      if (InputPresent(node, i)) {
        return EPCTX_ERROR(kUnsupported, "input {} ({}) is not supported", i, kInputNames[i]);
      }
    }
    return Status::Ok();
  }

  static Status RefuseOtherThanFloat32(const NodeInfo& node, size_t index) {
    if (!InputPresent(node, index)) return Status::Ok();
    const DataType t = node.inputs[index].dtype;
    if (t == DataType::kUndefined || t == DataType::kFloat32) return Status::Ok();
    return EPCTX_ERROR(kUnsupported,
                       "input {} has type {}: GroupQueryAttention runs on float32 only",
                       kInputNames[index], DataTypeName(t));
  }

  Result<Dims> CheckShapes(const KernelContext& ctx) const;
  Status CheckSeqlens(const Dims& d, const int32_t* seqlens, bool with_bias) const;
  // Writes each entry's new rows (K rotated) into the present caches after its past. With
  // `old_rows`, also copies the past rows before them and zeros the rest (a decode step leaves
  // that to the attention, which reads those rows right after copying them).
  void BuildCaches(const KernelContext& ctx, const Dims& d, const GqaAttentionF32& p,
                   bool old_rows) const;

  int64_t heads_ = 0;
  int64_t kv_heads_ = 0;
  float scale_ = 0.0f;
  float softcap_ = 0.0f;
  int64_t window_ = -1;
  bool do_rotary_ = false;
  bool interleaved_ = false;
  bool smooth_ = false;
  bool causal_ = true;
};

Result<Dims> GroupQueryAttentionKernel::CheckShapes(const KernelContext& ctx) const {
  for (size_t i = 0; i < ctx.input_count() && i <= kHeadSink; ++i) {
    const Tensor* t = ctx.input(i);
    if (t == nullptr) continue;
    const DataType want = i == kSeqlensK || i == kTotalSequenceLength ? DataType::kInt32
                          : i == kPositionIds                         ? DataType::kInt64
                                                                      : DataType::kFloat32;
    EPCTX_RETURN_IF_ERROR(ExpectDtype(*t, want, kInputNames[i]));
  }
  Dims d;
  const Tensor* query = ctx.input(kQuery);
  const Tensor* key = ctx.input(kKey);
  const Tensor* value = ctx.input(kValue);
  if (query == nullptr) return EPCTX_ERROR(kInvalidArgument, "required input query is missing");
  const std::vector<int64_t>& qs = query->shape();
  if (qs.size() != 3) {
    return EPCTX_ERROR(kInvalidArgument, "query has shape {}, expected rank 3", ShapeToString(qs));
  }
  d.batch = qs[0];
  d.seq = qs[1];
  d.packed = key == nullptr;
  if (d.packed != (value == nullptr)) {
    return EPCTX_ERROR(kInvalidArgument,
                       "key and value must be both given, or both omitted (packed QKV)");
  }
  const int64_t heads_in_query = d.packed ? heads_ + 2 * kv_heads_ : heads_;
  d.head_size = qs[2] / heads_in_query;
  if (qs[2] % heads_in_query != 0 || d.head_size % 8 != 0 || d.head_size == 0) {
    return EPCTX_ERROR(kInvalidArgument,
                       "query's last dim {} is not {} heads of a size that is a positive "
                       "multiple of 8",
                       qs[2], heads_in_query);
  }
  if (!d.packed) {
    const std::vector<int64_t> want = {d.batch, d.seq, kv_heads_ * d.head_size};
    if (key->shape() != want || value->shape() != want) {
      return EPCTX_ERROR(kInvalidArgument,
                         "key {} and value {} must have shape {} (kv_num_heads {} of head size "
                         "{}, the query's batch and sequence)",
                         ShapeToString(key->shape()), ShapeToString(value->shape()),
                         ShapeToString(want), kv_heads_, d.head_size);
    }
  }
  const Tensor* past_key = ctx.input(kPastKey);
  const Tensor* past_value = ctx.input(kPastValue);
  if ((past_key == nullptr) != (past_value == nullptr)) {
    return EPCTX_ERROR(kInvalidArgument,
                       "past_key and past_value must be both given or both "
                       "omitted");
  }
  d.has_past = past_key != nullptr;
  if (d.has_past) {
    const std::vector<int64_t>& ps = past_key->shape();
    if (ps.size() != 4 || ps[0] != d.batch || ps[1] != kv_heads_ || ps[3] != d.head_size ||
        past_value->shape() != ps) {
      return EPCTX_ERROR(
          kInvalidArgument, "past_key {} and past_value {} must have one shape [{}, {}, P, {}]",
          ShapeToString(ps), ShapeToString(past_value->shape()), d.batch, kv_heads_, d.head_size);
    }
    d.past_rows = ps[2];
  }
  const Tensor* seqlens = ctx.input(kSeqlensK);
  if (seqlens == nullptr)
    return EPCTX_ERROR(kInvalidArgument, "required input seqlens_k is missing");
  if (seqlens->shape() != std::vector<int64_t>{d.batch}) {
    return EPCTX_ERROR(kInvalidArgument, "seqlens_k has shape {}, expected [{}]",
                       ShapeToString(seqlens->shape()), d.batch);
  }
  const Tensor* total = ctx.input(kTotalSequenceLength);
  if (total == nullptr) {
    return EPCTX_ERROR(kInvalidArgument, "required input total_sequence_length is missing");
  }
  if (total->element_count() != 1 || total->shape().size() > 1) {
    return EPCTX_ERROR(kInvalidArgument, "total_sequence_length has shape {}, expected one element",
                       ShapeToString(total->shape()));
  }
  d.total = total->data_as<int32_t>()[0];
  if (d.total <= 0) {
    return EPCTX_ERROR(kInvalidArgument, "total_sequence_length is {}, expected a positive value",
                       d.total);
  }
  d.cache_rows = std::max(d.total, d.past_rows);
  const Tensor* cos = ctx.input(kCosCache);
  const Tensor* sin = ctx.input(kSinCache);
  if ((cos == nullptr) != (sin == nullptr)) {
    return EPCTX_ERROR(kInvalidArgument,
                       "cos_cache and sin_cache must be both given or both "
                       "omitted");
  }
  if (cos != nullptr) {
    const std::vector<int64_t>& cs = cos->shape();
    const std::vector<int64_t>& ss = sin->shape();
    if (d.head_size % 16 != 0) {
      return EPCTX_ERROR(kInvalidArgument,
                         "rotary caches need a head size that is a multiple "
                         "of 16, not {}",
                         d.head_size);
    }
    if (cs.size() != 2 || ss.size() != 2 || cs[1] != ss[1] || cs[1] % 8 != 0 ||
        cs[1] > d.head_size / 2) {
      return EPCTX_ERROR(kInvalidArgument,
                         "cos_cache {} and sin_cache {} must be [positions, width] with one "
                         "width, a multiple of 8 of at most head size / 2 ({})",
                         ShapeToString(cs), ShapeToString(ss), d.head_size / 2);
    }
    if (cs[0] < d.total || ss[0] < d.total) {
      return EPCTX_ERROR(kInvalidArgument,
                         "cos_cache and sin_cache have {} and {} positions, fewer than "
                         "total_sequence_length {}",
                         cs[0], ss[0], d.total);
    }
    d.rotary_dim = 2 * cs[1];
    d.cos_rows = std::min(cs[0], ss[0]);
  } else if (do_rotary_) {
    return EPCTX_ERROR(kInvalidArgument, "do_rotary is 1 but cos_cache and sin_cache are omitted");
  }
  const bool continued = d.seq > 1 && d.seq != d.total;
  if (continued && d.batch != 1) {
    return EPCTX_ERROR(kInvalidArgument,
                       "a sequence of {} after a past ({} of {} in all) needs a batch of 1, "
                       "not {}",
                       d.seq, d.total - d.seq, d.total, d.batch);
  }
  d.first_prompt = !continued && d.seq == d.total;
  if (!continued && !d.first_prompt && d.seq != 1) {
    return EPCTX_ERROR(kInvalidArgument, "sequence length {} must be 1 when it is not a prompt",
                       d.seq);
  }
  const Tensor* position_ids = ctx.input(kPositionIds);
  if (position_ids != nullptr) {
    const std::vector<int64_t>& ps = position_ids->shape();
    if (ps.size() != 2 || ps[0] != d.batch || ps[1] < d.seq) {
      return EPCTX_ERROR(kInvalidArgument, "position_ids has shape {}, expected [{}, >= {}]",
                         ShapeToString(ps), d.batch, d.seq);
    }
  }
  const Tensor* bias = ctx.input(kAttentionBias);
  if (bias != nullptr) {
    const std::vector<int64_t>& bs = bias->shape();
    if (bs.size() != 4 || (bs[0] != 1 && bs[0] != d.batch) || (bs[1] != 1 && bs[1] != heads_) ||
        bs[2] != d.seq || bs[3] != d.total) {
      return EPCTX_ERROR(kInvalidArgument,
                         "attention_bias has shape {}, expected [{} or 1, {} or 1, {}, {}]",
                         ShapeToString(bs), d.batch, heads_, d.seq, d.total);
    }
  }
  const Tensor* sink = ctx.input(kHeadSink);
  if (sink != nullptr) {
    if (smooth_) {
      return EPCTX_ERROR(kInvalidArgument, "head_sink is given with smooth_softmax 1");
    }
    if (sink->shape() != std::vector<int64_t>{heads_}) {
      return EPCTX_ERROR(kInvalidArgument, "head_sink has shape {}, expected [{}]",
                         ShapeToString(sink->shape()), heads_);
    }
  }
  return d;
}

// Every entry's rows must lie inside the present cache, and after the past (once past the first
// prompt) inside the past buffer.
Status GroupQueryAttentionKernel::CheckSeqlens(const Dims& d, const int32_t* seqlens,
                                               bool with_bias) const {
  for (int64_t b = 0; b < d.batch; ++b) {
    const int64_t k = seqlens[b];
    if (k < 0 || k >= d.cache_rows) {
      return EPCTX_ERROR(kInvalidArgument, "seqlens_k[{}] = {} is outside [0, {})", b, k,
                         d.cache_rows);
    }
    if (with_bias && k + 1 > d.total) {
      return EPCTX_ERROR(kInvalidArgument,
                         "seqlens_k[{}] = {} reaches past total_sequence_length {}, the width "
                         "of attention_bias",
                         b, k, d.total);
    }
    if (d.first_prompt) continue;
    if (k + 1 < d.seq) {
      return EPCTX_ERROR(kInvalidArgument,
                         "seqlens_k[{}] = {} is too small for a sequence of {} after a past", b, k,
                         d.seq);
    }
    if (d.has_past && k + 1 - d.seq > d.past_rows) {
      return EPCTX_ERROR(kInvalidArgument,
                         "seqlens_k[{}] = {} needs {} past rows, more than past_key's {}", b, k,
                         k + 1 - d.seq, d.past_rows);
    }
  }
  return Status::Ok();
}

void GroupQueryAttentionKernel::BuildCaches(const KernelContext& ctx, const Dims& d,
                                            const GqaAttentionF32& p, bool old_rows) const {
  const int64_t h = d.head_size;
  // New rows of (b, s, kv head): the key and value inputs, or the packed query's K and V parts.
  const float* keys = d.packed ? p.query + heads_ * h : ctx.input(kKey)->data_as<float>();
  const float* values =
      d.packed ? p.query + (heads_ + kv_heads_) * h : ctx.input(kValue)->data_as<float>();
  const int64_t token_stride = d.packed ? p.query_token_stride : kv_heads_ * h;
  const int64_t half = d.rotary_dim / 2;
  const size_t row_bytes = static_cast<size_t>(h) * sizeof(float);
  const int64_t units = d.batch * kv_heads_;
  const int64_t rows = old_rows ? d.cache_rows : d.seq;
  const int nt = ThreadsFor(ctx.num_threads(), units * rows * h);
  ParallelFor(nt, units, [&](int64_t u, int) {
    const int64_t b = u / kv_heads_;
    const int64_t kvh = u % kv_heads_;
    const int64_t before = p.RowsBefore(b);
    float* pk = p.keys + u * d.cache_rows * h;
    float* pv = p.values + u * d.cache_rows * h;
    if (old_rows) {
      if (before > 0) {
        const size_t bytes = static_cast<size_t>(before) * row_bytes;
        std::memcpy(pk, p.past_keys + u * d.past_rows * h, bytes);
        std::memcpy(pv, p.past_values + u * d.past_rows * h, bytes);
      }
      const int64_t end = before + d.seq;
      std::memset(pk + end * h, 0, static_cast<size_t>(d.cache_rows - end) * row_bytes);
      std::memset(pv + end * h, 0, static_cast<size_t>(d.cache_rows - end) * row_bytes);
    }
    for (int64_t s = 0; s < d.seq; ++s) {
      const int64_t src = (b * d.seq + s) * token_stride + kvh * h;
      float* k_row = pk + (before + s) * h;
      if (do_rotary_) {
        const int64_t pos = p.Position(b, s);
        RotaryRowF32(keys + src, p.cos + pos * half, p.sin + pos * half, d.rotary_dim, h,
                     interleaved_, k_row);
      } else {
        std::memcpy(k_row, keys + src, row_bytes);
      }
      std::memcpy(pv + (before + s) * h, values + src, row_bytes);
    }
  });
}

Status GroupQueryAttentionKernel::Run(KernelContext& ctx) {
  EPCTX_ASSIGN_OR_RETURN(Dims d, CheckShapes(ctx));
  const int32_t* seqlens = ctx.input(kSeqlensK)->data_as<int32_t>();
  const Tensor* bias = ctx.input(kAttentionBias);
  const Tensor* sink = ctx.input(kHeadSink);
  EPCTX_RETURN_IF_ERROR(CheckSeqlens(d, seqlens, bias != nullptr));

  GqaAttentionF32 p;
  p.batch = d.batch;
  p.seq = d.seq;
  p.heads = heads_;
  p.kv_heads = kv_heads_;
  p.head_size = d.head_size;
  p.query = ctx.input(kQuery)->data_as<float>();
  p.query_token_stride = (d.packed ? heads_ + 2 * kv_heads_ : heads_) * d.head_size;
  p.cache_rows = d.cache_rows;
  p.seqlens_k = seqlens;
  p.positions_from_zero = d.first_prompt || !d.has_past;
  p.causal = causal_;
  p.window = window_;
  p.scale = scale_ != 0.0f ? scale_ : 1.0f / std::sqrt(static_cast<float>(d.head_size));
  p.softcap = softcap_;
  if (bias != nullptr) {
    p.bias = bias->data_as<float>();
    p.bias_batches = bias->shape()[0];
    p.bias_heads = bias->shape()[1];
    p.bias_row = bias->shape()[3];
  }
  p.head_sink = sink != nullptr ? sink->data_as<float>() : nullptr;
  p.smooth_softmax = smooth_;
  // ONNX Runtime takes its flash path in exactly these cases; it differs from the other only in
  // where a local window starts for the padded rows of a short batch entry.
  p.window_from_position = d.total > 1 && softcap_ == 0.0f && !smooth_ && sink == nullptr;
  if (do_rotary_) {
    p.cos = ctx.input(kCosCache)->data_as<float>();
    p.sin = ctx.input(kSinCache)->data_as<float>();
    p.rotary_dim = d.rotary_dim;
    p.rotary_interleaved = interleaved_;
    const Tensor* position_ids = ctx.input(kPositionIds);
    p.position_ids = position_ids != nullptr ? position_ids->data_as<int64_t>() : nullptr;
    p.first_position_only = d.first_prompt;
    for (int64_t b = 0; b < d.batch; ++b) {
      for (int64_t s = 0; s < d.seq; ++s) {
        const int64_t pos = p.Position(b, s);
        if (pos < 0 || pos >= d.cos_rows) {
          return EPCTX_ERROR(kInvalidArgument,
                             "position {} of entry {}, row {} is outside the rotary caches' "
                             "positions [0, {})",
                             pos, b, s, d.cos_rows);
        }
      }
    }
  }

  const int64_t hidden = heads_ * d.head_size;
  EPCTX_ASSIGN_OR_RETURN(Tensor * out,
                         ctx.AllocateOutput(0, DataType::kFloat32, {d.batch, d.seq, hidden}));
  const std::vector<int64_t> cache_shape = {d.batch, kv_heads_, d.cache_rows, d.head_size};
  EPCTX_ASSIGN_OR_RETURN(Tensor * present_k,
                         ctx.AllocateOutput(1, DataType::kFloat32, cache_shape));
  EPCTX_ASSIGN_OR_RETURN(Tensor * present_v,
                         ctx.AllocateOutput(2, DataType::kFloat32, cache_shape));
  if (out->element_count() == 0) return Status::Ok();
  float* pk = present_k->mutable_data_as<float>();
  float* pv = present_v->mutable_data_as<float>();
  // ONNX Runtime's test of a shared buffer: both presents are the pasts' own memory.
  const bool shared = d.has_past && pk == ctx.input(kPastKey)->data_as<float>() &&
                      pv == ctx.input(kPastValue)->data_as<float>();
  p.keys = pk;
  p.values = pv;
  p.output = out->mutable_data_as<float>();
  p.past_keys = d.has_past ? ctx.input(kPastKey)->data_as<float>() : nullptr;
  p.past_values = d.has_past ? ctx.input(kPastValue)->data_as<float>() : nullptr;
  p.past_rows = d.past_rows;
  p.assemble_caches = !shared && d.seq == 1;
  BuildCaches(ctx, d, p, !shared && !p.assemble_caches);
  return RunGqaAttentionF32(p, ctx.num_threads());
}

}  // namespace

namespace attention {

Result<std::unique_ptr<Kernel>> CreateGroupQueryAttention(const NodeInfo& node) {
  return GroupQueryAttentionKernel::Create(node);
}

}  // namespace attention

}  // namespace epctx::exec::kernels
