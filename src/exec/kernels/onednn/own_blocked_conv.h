// Which DnnlConv nodes our own AVX-512 code computes instead of a oneDNN primitive, and running
// them: 1x1 windows (blocked_conv1x1.h) and depthwise windows (blocked_depthwise_conv.h) on
// float32 16-channel blocks, with weights in the layout oneDNN chose at compile, which that code
// reads. oneDNN makes code for each problem before its first run; this code is compiled ahead,
// so a small CNN's first run does not wait for it.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "epctx/status.h"
#include "epctx/tensor.h"
#include "exec/kernel.h"
#include "exec/kernels/onednn/conv_primitive.h"

namespace epctx::exec::kernels::onednn {

// The narrowest output row our depthwise code takes: at 7 pixels it ran at 1.1-1.6x oneDNN's
// time on a Zen 4 (3x3 windows; rows of 14 and more within 0.6-1.15x).
inline constexpr int64_t kMinOwnDepthwiseWidth = 14;

class OwnBlockedConv {
 public:
  // The node's code when ours computes it, nullopt when a primitive does: from the node's
  // weight dims (ONNX's), group, window attributes, configuration, stored weight format, and
  // (for a depthwise window, whose row width decides) its input's declared physical shape.
  static Result<std::optional<OwnBlockedConv>> For(std::span<const int64_t> weight_dims,
                                                   int64_t group, const WindowAttrs& window,
                                                   const ConvConfig& config,
                                                   std::span<const int64_t> format,
                                                   const ValueDesc& input);

  // Whether it takes this input's geometry (another shape of a dynamic input may not qualify).
  bool Takes(const ConvGeometry& g) const;

  // Computes y (allocated here, in the configured layout) from x, the packed w, bias b and
  // residual r (null when absent), the post-ops included. Checks w's, b's and r's sizes.
  Status Run(KernelContext& ctx, const ConvGeometry& g, const ConvConfig& config, const Tensor& x,
             const Tensor& w, const Tensor* b, const Tensor* r) const;

  // "epctx:blocked_1x1" or "epctx:blocked_dw".
  std::string_view name() const;

 private:
  enum class Kind { kPointwise, kDepthwise };
  OwnBlockedConv(Kind kind, size_t weight_bytes) : kind_(kind), weight_bytes_(weight_bytes) {}

  Kind kind_;
  size_t weight_bytes_;
};

}  // namespace epctx::exec::kernels::onednn
