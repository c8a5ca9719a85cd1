// What the com.microsoft attention schemas whose bodies are ONNX operators share (Attention,
// QAttention, MultiHeadAttention): the scaled dot-product attention with ONNX Runtime 1.30's
// additive mask, written as ONNX operators into a function body.
#pragma once

#include <onnx/defs/function.h>
#include <onnx/defs/schema.h>

#include "compile/contrib/schema_helpers.h"

#include <cstdint>
#include <string>

namespace epctx::compile::contrib {

// The constants every attention body reads: scalars c0, c1, c2 (int64), one1 = [1], minus1 =
// [-1], column = [-1, 1], row4 = [0, 1, 1, -1], zero_f = 0.0f.
void AddAttentionConstants(onnx::FunctionBuilder& b);

// The attention of body values q [B, N, S, head], k [B, N, T, head] and v [B, N, T, head_v]
// (T = past + S for self-attention), written to body output `output` as [B, S, N * head_v]:
//   softmax(scale q k^T + mask (+ attention_bias)) v
// where the mask adds `fill` where a key is padding (`mask`: an int32 body input of rank
// `mask_rank`: [B] end positions, [2B] end then start positions, [B, T] or [B, S, T] raw 0/1)
// and again where it lies in a query's future (`causal`: key j > past + query row), as ONNX
// Runtime's CPU kernels do, so that a query whose keys are all masked averages them by their
// scores. Needs AddAttentionConstants.
struct ScaledAttention {
  float scale = 1.0f;
  float fill = -10000.0f;
  std::string mask;  // empty: none
  int mask_rank = 0;
  bool causal = false;
  std::string attention_bias;  // empty: none
  std::string output;
  int64_t output_width = 0;  // N * head_v
};
void AddScaledAttention(onnx::FunctionBuilder& b, const ScaledAttention& a);

}  // namespace epctx::compile::contrib
