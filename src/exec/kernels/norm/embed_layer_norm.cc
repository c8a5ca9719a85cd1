// com.microsoft EmbedLayerNormalization (ONNX Runtime's fusion of a BERT's embeddings with the
// LayerNormalization after them), with ONNX Runtime 1.30's CPU semantics. Inputs: input_ids
// [B, S] int32, segment_ids [B, S] int32 (optional), word_embedding [V, H], position_embedding
// [P, H], segment_embedding [G, H] (optional), gamma [H], beta [H], mask [B, S] int32
// (optional), position_ids int32 [B, S] or [1, S] (optional; token s of each row reads position
// s without it). For each token:
//   sum = word_embedding[id] + position_embedding[position] (+ segment_embedding[segment])
//   output = (sum - mean) / sqrt(var + epsilon) * gamma + beta   over the H values of the row
// Outputs output [B, S, H], mask_index [B] int32 (per row, the number of mask elements equal to
// 1; zeros without a mask) and embedding_sum [B, S, H] (the sums, optional). epsilon defaults to
// 1e-12. An index outside its table is refused, naming the input (ORT reports "input index out
// of range"; it does not check a negative position id, which this kernel refuses too).
// float32 only.
#include <cmath>
#include <memory>
#include <vector>

#include "exec/kernels/common/eigen.h"
#include "exec/kernels/common/parallel_for.h"
#include "exec/kernels/common/shape.h"
#include "exec/kernels/common/threads.h"
#include "exec/kernels/families.h"
#include "exec/kernels/norm/norm_stats.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

enum Input : size_t {
  kIds,
  kSegmentIds,
  kWords,
  kPositions,
  kSegments,
  kGamma,
  kBeta,
  kMask,
  kPositionIds,
  kInputCount
};
constexpr const char* kNames[] = {
    "input_ids", "segment_ids", "word_embedding", "position_embedding", "segment_embedding",
    "gamma",     "beta",        "mask",           "position_ids"};

// A [rows, hidden] float32 table; its row count in `rows`.
Status ExpectTable(const Tensor& t, std::string_view name, int64_t hidden, int64_t* rows) {
  EPCTX_RETURN_IF_ERROR(ExpectDtype(t, DataType::kFloat32, name));
  if (t.shape().size() != 2 || (hidden >= 0 && t.shape()[1] != hidden)) {
    return EPCTX_ERROR(kInvalidArgument, "input {} has shape {}, expected [rows, {}]", name,
                       ShapeToString(t.shape()), hidden >= 0 ? std::to_string(hidden) : "hidden");
  }
  *rows = t.shape()[0];
  return Status::Ok();
}

// An int32 input of input_ids' shape [B, S] (or [1, S] where `broadcast_rows`).
Status ExpectIds(const Tensor& t, std::string_view name, const std::vector<int64_t>& ids,
                 bool broadcast_rows) {
  EPCTX_RETURN_IF_ERROR(ExpectDtype(t, DataType::kInt32, name));
  const std::vector<int64_t>& s = t.shape();
  const bool ok = s == ids || (broadcast_rows && s.size() == 2 && s[0] == 1 && s[1] == ids[1]);
  if (!ok) {
    return EPCTX_ERROR(kInvalidArgument, "input {} has shape {}, expected input_ids' shape {}{}",
                       name, ShapeToString(s), ShapeToString(ids),
                       broadcast_rows ? " or [1, S]" : "");
  }
  return Status::Ok();
}

class EmbedLayerNormKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node) {
    auto kernel = std::unique_ptr<EmbedLayerNormKernel>(new EmbedLayerNormKernel());
    EPCTX_ASSIGN_OR_RETURN(kernel->epsilon_, node.attrs->GetFloat("epsilon", 1e-12f));
    if (!(kernel->epsilon_ >= 0)) {
      return EPCTX_ERROR(kInvalidArgument, "epsilon is {}, it must be 0 or more", kernel->epsilon_);
    }
    if (node.inputs.size() > kInputCount) {
      return EPCTX_ERROR(kInvalidArgument,
                         "EmbedLayerNormalization takes at most {} inputs, the "
                         "node has {}",
                         static_cast<size_t>(kInputCount), node.inputs.size());
    }
    for (size_t i : {kIds, kSegmentIds, kMask, kPositionIds}) {
      EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, i, DataType::kInt32, kNames[i]));
    }
    for (size_t i : {kWords, kPositions, kSegments, kGamma, kBeta}) {
      EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, i, DataType::kFloat32, kNames[i]));
    }
    kernel->mask_index_output_ = OutputPresent(node, 1);
    kernel->sum_output_ = OutputPresent(node, 2);
    return std::unique_ptr<Kernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    const Tensor* in[kInputCount] = {};
    for (size_t i = 0; i < kInputCount; ++i) {
      const bool required =
          i == kIds || i == kWords || i == kPositions || i == kGamma || i == kBeta;
      if (required) {
        EPCTX_ASSIGN_OR_RETURN(in[i], RequiredInput(ctx, i, kNames[i]));
      } else {
        in[i] = ctx.input(i);
      }
    }
    if ((in[kSegmentIds] == nullptr) != (in[kSegments] == nullptr)) {
      return EPCTX_ERROR(kInvalidArgument,
                         "segment_ids and segment_embedding must be both given or both omitted");
    }
    const Tensor& ids = *in[kIds];
    EPCTX_RETURN_IF_ERROR(ExpectDtype(ids, DataType::kInt32, kNames[kIds]));
    const std::vector<int64_t>& ids_shape = ids.shape();
    if (ids_shape.size() != 2) {
      return EPCTX_ERROR(kInvalidArgument, "input input_ids has shape {}, expected [B, S]",
                         ShapeToString(ids_shape));
    }
    int64_t words = 0, positions = 0, segments = 0;
    EPCTX_RETURN_IF_ERROR(ExpectTable(*in[kWords], kNames[kWords], -1, &words));
    const int64_t hidden = in[kWords]->shape()[1];
    EPCTX_RETURN_IF_ERROR(ExpectTable(*in[kPositions], kNames[kPositions], hidden, &positions));
    if (in[kSegments] != nullptr) {
      EPCTX_RETURN_IF_ERROR(ExpectTable(*in[kSegments], kNames[kSegments], hidden, &segments));
      EPCTX_RETURN_IF_ERROR(ExpectIds(*in[kSegmentIds], kNames[kSegmentIds], ids_shape, false));
    }
    for (size_t i : {kGamma, kBeta}) {
      EPCTX_RETURN_IF_ERROR(ExpectDtype(*in[i], DataType::kFloat32, kNames[i]));
      if (in[i]->shape() != std::vector<int64_t>{hidden}) {
        return EPCTX_ERROR(kInvalidArgument,
                           "input {} has shape {}, expected [{}] (the hidden "
                           "size)",
                           kNames[i], ShapeToString(in[i]->shape()), hidden);
      }
    }
    if (in[kMask] != nullptr) {
      EPCTX_RETURN_IF_ERROR(ExpectIds(*in[kMask], kNames[kMask], ids_shape, false));
    }
    if (in[kPositionIds] != nullptr) {
      EPCTX_RETURN_IF_ERROR(ExpectIds(*in[kPositionIds], kNames[kPositionIds], ids_shape, true));
    }

    const int64_t batch = ids_shape[0];
    const int64_t seq = ids_shape[1];
    const std::vector<int64_t> out_shape = {batch, seq, hidden};
    EPCTX_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, DataType::kFloat32, out_shape));
    float* sum_out = nullptr;
    if (sum_output_) {
      EPCTX_ASSIGN_OR_RETURN(Tensor * t, ctx.AllocateOutput(2, DataType::kFloat32, out_shape));
      sum_out = t->mutable_data_as<float>();
    }
    if (mask_index_output_) {
      EPCTX_ASSIGN_OR_RETURN(Tensor * t, ctx.AllocateOutput(1, DataType::kInt32, {batch}));
      int32_t* counts = t->mutable_data_as<int32_t>();
      const int32_t* mask = in[kMask] != nullptr ? in[kMask]->data_as<int32_t>() : nullptr;
      for (int64_t b = 0; b < batch; ++b) {
        int32_t ones = 0;
        for (int64_t s = 0; mask != nullptr && s < seq; ++s) ones += mask[b * seq + s] == 1;
        counts[b] = ones;
      }
    }

    // Indices first, so that a bad one is refused before anything is computed.
    const int64_t tokens = batch * seq;
    const int32_t* id = ids.data_as<int32_t>();
    const int32_t* segment_id =
        in[kSegmentIds] != nullptr ? in[kSegmentIds]->data_as<int32_t>() : nullptr;
    const int32_t* position_id =
        in[kPositionIds] != nullptr ? in[kPositionIds]->data_as<int32_t>() : nullptr;
    const bool broadcast_positions =
        position_id != nullptr && in[kPositionIds]->shape()[0] == 1 && batch != 1;
    auto position_of = [&](int64_t t) -> int64_t {
      if (position_id == nullptr) return t % seq;
      return broadcast_positions ? position_id[t % seq] : position_id[t];
    };
    for (int64_t t = 0; t < tokens; ++t) {
      EPCTX_RETURN_IF_ERROR(CheckIndex(id[t], words, kNames[kIds], t));
      EPCTX_RETURN_IF_ERROR(CheckIndex(
          position_of(t), positions,
          position_id != nullptr ? kNames[kPositionIds] : "the position (place in its row)", t));
      if (segment_id != nullptr) {
        EPCTX_RETURN_IF_ERROR(CheckIndex(segment_id[t], segments, kNames[kSegmentIds], t));
      }
    }

    const float* word = in[kWords]->data_as<float>();
    const float* position = in[kPositions]->data_as<float>();
    const float* segment = in[kSegments] != nullptr ? in[kSegments]->data_as<float>() : nullptr;
    const float* gamma = in[kGamma]->data_as<float>();
    const float* beta = in[kBeta]->data_as<float>();
    float* yp = out->mutable_data_as<float>();
    const int nt = ThreadsFor(ctx.num_threads(), tokens * hidden);
    ParallelForRanges(nt, tokens, 1, [&](int64_t begin, int64_t end) {
      for (int64_t t = begin; t < end; ++t) {
        float* sum = (sum_out != nullptr ? sum_out : yp) + t * hidden;
        const ConstArrayMapF w(word + id[t] * hidden, hidden);
        const ConstArrayMapF p(position + position_of(t) * hidden, hidden);
        if (segment != nullptr) {
          ArrayMapF(sum, hidden) = w + p + ConstArrayMapF(segment + segment_id[t] * hidden, hidden);
        } else {
          ArrayMapF(sum, hidden) = w + p;
        }
        const MeanVar mv = MeanAndVariance(sum, hidden);
        const float inv_std = static_cast<float>(1.0 / std::sqrt(mv.variance + epsilon_));
        CenterScaleRow(sum, static_cast<float>(mv.mean), inv_std, gamma, beta, yp + t * hidden,
                       hidden);
      }
    });
    return Status::Ok();
  }

 private:
  EmbedLayerNormKernel() = default;

  static Status CheckIndex(int64_t index, int64_t rows, const char* name, int64_t token) {
    if (index >= 0 && index < rows) return Status::Ok();
    return EPCTX_ERROR(kInvalidArgument,
                       "{} of token {} is {}, outside the embedding table's {} rows", name, token,
                       index, rows);
  }

  float epsilon_ = 1e-12f;
  bool mask_index_output_ = false;
  bool sum_output_ = false;
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateEmbedLayerNormalization(const NodeInfo& node) {
  return EmbedLayerNormKernel::Create(node);
}

}  // namespace epctx::exec::kernels
