// The convolution problem of a DnnlConv node on a concrete input, and the oneDNN primitive
// descriptor for it. Used by the compiler (to learn the weight layout the primitive wants and
// pack the weights into it) and by the kernel (to create the primitive that reads them).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "epctx/status.h"
#include "epctx/tensor.h"
#include "exec/kernel.h"
#include "exec/kernels/nn/conv_shape.h"
#include "exec/kernels/onednn/activation_layout.h"
#include "exec/kernels/onednn/dnnl.h"
#include "exec/kernels/onednn/post_ops.h"

namespace epctx::exec::kernels::onednn {

struct ConvGeometry {
  int64_t batch = 0;
  int64_t in_channels = 0;
  int64_t out_channels = 0;
  int64_t group = 1;
  // One entry per spatial dim (1 to 3).
  std::vector<int64_t> in_spatial, kernel, strides, dilations, pad_begin, pad_end, out_spatial;

  std::vector<int64_t> src_dims() const;
  std::vector<int64_t> dst_dims() const;
  // ONNX's OIHW weight dims; oneDNN's (with a leading group dim when group > 1).
  std::vector<int64_t> onnx_weight_dims() const;
  dnnl::memory::dims dnnl_weight_dims() const;
};

// The geometry of a convolution with ONNX attributes `window` and `group`, ONNX weight dims
// `weight_dims` (OIHW) and logical input dims `src_dims` (NCHW).
Result<ConvGeometry> ResolveConvGeometry(const WindowAttrs& window, int64_t group,
                                         std::span<const int64_t> weight_dims,
                                         std::span<const int64_t> src_dims);

struct ConvConfig {
  ActivationLayout src_layout = ActivationLayout::kPlain;
  ActivationLayout dst_layout = ActivationLayout::kPlain;
  bool has_bias = false;
  bool winograd = false;
  // Source and weights in bfloat16 (compute_type.h); output, bias and residual stay float32.
  bool bf16 = false;
  std::vector<PostOp> post_ops;
  // A uint8 NHWC source times int8 weights, into float32 NHWC scaled per output channel by
  // `output_scales` (one value, or one per channel): dst = scale * (conv + bias). The layouts,
  // Winograd and post-ops above do not apply then, and there is no padding (the kernel pads the
  // source itself, with its zero point).
  bool integer = false;
  std::vector<float> output_scales;
};

// The widest output row (innermost spatial dim) a oneDNN convolution is made for. oneDNN 2.6's
// brgconv implementations take memory per output column while their primitive descriptor is
// created: one block of ~128 bytes a column, ~240 bytes a column of peak RSS (measured on
// AVX-512, float32 and int8 alike; other dims and the input width do not count). 2^21 columns
// cost ~0.5 GB; a forged blob's 16.7M-column convolution asked for 2 GB in one allocation.
// Wider statically shaped convolutions stay ONNX Conv at compile (LowerConvsToDnnl).
inline constexpr int64_t kMaxConvOutputWidth = int64_t{1} << 21;

// `weights`: the layout the primitive must read, or null to let oneDNN choose (its first
// implementation; the descriptor's iterator must not be advanced, as the operation it points at
// is gone: ConvPrimitiveDescReading looks through the others). kUnsupported for an output wider
// than kMaxConvOutputWidth, before oneDNN sees it.
Result<dnnl::convolution_forward::primitive_desc> MakeConvPrimitiveDesc(
    const ConvGeometry& g, const ConvConfig& c, const dnnl::memory::desc* weights);

// Whether oneDNN's first choice for `g` with `c`'s layouts is an optimized implementation, not its
// reference one ("ref:any"), which loops over every element in plain C++: hundreds of times
// slower (a 3x3 convolution of 128 to 256 channels over 64x64 from the blocked layout into the
// plain one: 21 s). Creates the primitive descriptor only (no code is generated).
Result<bool> ConvIsOptimized(const ConvGeometry& g, const ConvConfig& c);

// The primitive descriptor of an inference convolution `desc` that applies the post-ops `ops`
// (their residual in `dst`'s layout), its scratchpad the caller's. Throws dnnl::error as oneDNN
// does; kInvalidArgument for a post-op list oneDNN cannot take.
Result<dnnl::convolution_forward::primitive_desc> ConvWithPostOps(
    const dnnl::convolution_forward::desc& desc, std::span<const PostOp> ops,
    const dnnl::memory::desc& dst);

// oneDNN chooses some Winograd layouts by the number of threads the primitive is made for (in
// ResNet-50's 14x14 layers on an Intel Xeon: the same layout for 1 and for 4 or more threads,
// another for 2 and 3). The compiler packs a 1-thread layout, and a kernel whose session has
// another count makes its primitive for the smallest count here from the session's up to twice
// it that has that layout, and runs it with the session's count: oneDNN's Winograd convolutions
// size their per-thread buffers for the count they were made for and index them by the running
// thread, so fewer threads are safe (its 4x3 one in its per-thread schedule even starts as many
// threads as it was made for). Failing that, a primitive made for more threads still whose
// buffers do not depend on the count (WinogradCandidate), then the largest count below the
// session's, run with that count.
inline constexpr int kWinogradThreadCounts[] = {64, 32, 16, 12, 8, 6, 4, 3, 2, 1};

// One place a session looks for a primitive that reads a stored Winograd layout.
struct WinogradCandidate {
  int made_for = 0;  // the count the primitive is made for
  int run_with = 0;  // the count it runs with; 0: the session's
  // Made for more than twice the session's count: taken only when the primitive's scratchpad is
  // that of the same layout made for 1 thread, so that it holds no per-thread buffers. oneDNN's
  // 4x3 Winograd in its data-parallel schedule (DenseNet-121's 56x56 layers on a Zen 4, whose
  // layout for 2 to 4 threads is another than for 1 and 6 or more) runs on the threads it is
  // given; in its per-thread schedule it starts as many as it was made for.
  bool only_without_per_thread_buffers = false;
};

// Where a session of `threads` threads looks, in order: its own count, the listed counts above it
// up to twice it, the listed counts above that (only_without_per_thread_buffers), then the listed
// counts below it, largest first (run with that count).
std::vector<WinogradCandidate> WinogradCandidates(int threads);

// Whether `pd`, which reads `format`, holds no buffers sized by the thread count it was made for:
// its scratchpad is that of the implementation reading `format` made for 1 thread.
Result<bool> ScratchpadOfOneThread(const ConvGeometry& g, const ConvConfig& c,
                                   std::span<const int64_t> format,
                                   const dnnl::convolution_forward::primitive_desc& pd);

// The primitive descriptor of the first of oneDNN's implementations of the problem (made for
// the current thread budget) whose weight layout is `format`; nullopt when none reads it.
// oneDNN's first choice is not always the one a stored layout needs: at 1 thread it may prefer
// its 2x3 Winograd, whose layout varies with the thread count, where its 4x3 one does not.
Result<std::optional<dnnl::convolution_forward::primitive_desc>> ConvPrimitiveDescReading(
    const ConvGeometry& g, const ConvConfig& c, std::span<const int64_t> format);

// A layout one of oneDNN's implementations reads, and the scratchpad it needs.
struct ConvImplementationLayout {
  std::vector<int64_t> layout;
  size_t scratchpad_bytes = 0;
};

// Each of oneDNN's implementations of a float problem at the current thread budget, in its order
// of preference.
Result<std::vector<ConvImplementationLayout>> ConvImplementations(const ConvGeometry& g,
                                                                  const ConvConfig& c);

// The Winograd weight layout the compiler packs: of the layouts oneDNN's implementations make for
// 1 thread, in its order (the larger tile first on large images, no F(4x4, 3x3) on an image under
// 27 pixels a side: conv_primitive.cc says why), the first that a session of
// every count in kWinogradThreadCounts finds among its WinogradCandidates run with its own
// threads. kUnsupported when oneDNN has no Winograd implementation of the problem or none is
// found so (a session of some count would run on fewer threads than it has).
Result<std::vector<int64_t>> PortableWinogradFormat(const ConvGeometry& g, const ConvConfig& c);

// Checks a convolution's packed weight (`w_type`, `w_bytes` for its stored layout), bias B and
// residual R (null when absent) against `g`, and allocates its output in `dst_layout`:
// kInvalidArgument naming the input that does not fit.
Result<Tensor*> CheckedConvOutput(KernelContext& ctx, const ConvGeometry& g,
                                  ActivationLayout dst_layout, const Tensor& w, DataType w_type,
                                  size_t w_bytes, const Tensor* b, const Tensor* r);

// A key naming the problem, for the process-wide primitive cache.
std::string ConvKey(const ConvGeometry& g, const ConvConfig& c, int threads);

// Memory descriptor of an activation of logical dims `dims` in `layout`.
dnnl::memory::desc ActivationDesc(const std::vector<int64_t>& dims, ActivationLayout layout,
                                  dnnl::memory::data_type type = dnnl::memory::data_type::f32);

}  // namespace epctx::exec::kernels::onednn
