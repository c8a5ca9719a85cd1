// The contract between the compiler's FuseAttention pass and the com.epctx Attention kernel
// (ops::kAttention, epctx_ops.h): its attributes in one place.
//
// com.epctx Attention: inputs Q [B, N, S, H], K [B, kvN, T, H], V [B, kvN, T, H] (N a multiple of
// kvN; query head n reads key/value head n / (N / kvN)), mask (optional, bool, broadcastable to
// [B, N, S, T]: where true the score is replaced by mask_fill); output softmax(scale * Q K^T) V
// as [B, N, S, H] or [B, S, N, H] (output_layout). With past K and V (inputs 4 and 5, [B, kvN,
// P, H]; FuseCacheConcatIntoAttention), K and V are the new rows and the keys and values are
// past then new, written to outputs 1 and 2 (present K and V, [B, kvN, P + T, H]).
#pragma once

#include <cstdint>

namespace epctx::exec::kernels {

namespace attention_attr {
inline constexpr const char* kScale = "scale";
inline constexpr const char* kMaskFill = "mask_fill";
inline constexpr const char* kOutputLayout = "output_layout";
}  // namespace attention_attr
inline constexpr int64_t kAttentionOutputBnsh = 0;
inline constexpr int64_t kAttentionOutputBsnh = 1;

}  // namespace epctx::exec::kernels
