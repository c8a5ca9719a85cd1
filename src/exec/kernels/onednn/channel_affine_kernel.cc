// com.epctx ChannelAffine: y = act(x * scale[c] + shift[c]), the inference form of a
// BatchNormalization that could not be folded into a convolution (DenseNet normalizes the
// concatenation of all earlier features before each of its convolutions). It reads and writes
// the layout the compiler planned; in the channel-blocked layout the innermost 16 values are 16
// channels, so one vector of scales and shifts serves a whole row. Our own kernel: oneDNN's
// batch normalization would recompute scale and shift from the statistics on every run.
//
// Inputs: X, S and T (float32 [channels], or [blocks * block] zero-padded in a blocked layout, so
// padding lanes stay zero). Attributes: `layout`, `channels`, `post_ops` (Relu or Clip).
//
// com.epctx ConcatChannelAffine: the same of a channel Concat that only the normalization reads,
// y = act(concat(X0, ..., Xk) * scale[c] + shift[c]), in one pass: each output row is computed
// from the input row it would have been copied from, so the concatenation is never written
// (DenseNet's concatenations grow with depth; writing and reading them again was half of the
// time of the two ops). Blocked layouts only. Inputs: S, T, X0, ..., Xk; every X but the last
// holds whole channel blocks (the compiler only fuses such concatenations), `channels` counts the
// output's channels.
#include <algorithm>
#include <limits>
#include <memory>
#include <vector>

#include "exec/kernels/common/parallel_for.h"
#include "exec/kernels/common/shape.h"
#include "exec/kernels/epctx_ops.h"
#include "exec/kernels/families.h"
#include "exec/kernels/onednn/activation_layout.h"
#include "exec/kernels/onednn/post_ops.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels::onednn {
namespace {

// Rows of work below which one thread does it all.
constexpr int64_t kMinParallelElements = 1 << 15;

class ChannelAffineKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node, bool concat) {
    auto k = std::unique_ptr<ChannelAffineKernel>(new ChannelAffineKernel());
    k->concat_ = concat;
    EPCTX_ASSIGN_OR_RETURN(int64_t layout, node.attrs->GetInt("layout", 0));
    EPCTX_ASSIGN_OR_RETURN(k->layout_, ParseActivationLayout(layout));
    EPCTX_ASSIGN_OR_RETURN(k->channels_, node.attrs->GetInt("channels", 0));
    if (k->channels_ < 1) {
      return EPCTX_ERROR(kInvalidArgument, "channels is {}, expected at least 1", k->channels_);
    }
    EPCTX_ASSIGN_OR_RETURN(std::vector<PostOp> ops, ParsePostOps(*node.attrs));
    for (const PostOp& op : ops) {
      if (op.kind == PostOpKind::kRelu) {
        k->lo_ = 0;
        k->slope_ = op.alpha;
      } else if (op.kind == PostOpKind::kClip && ops.size() == 1) {
        k->lo_ = op.alpha;
        k->hi_ = op.beta;
      } else {
        return EPCTX_ERROR(kUnsupported, "ChannelAffine applies Relu or Clip, not {}",
                           PostOpName(op.kind));
      }
    }
    if (ops.size() > 1) return EPCTX_ERROR(kUnsupported, "ChannelAffine applies one activation");
    k->leaky_ = !ops.empty() && ops[0].kind == PostOpKind::kRelu && ops[0].alpha != 0;
    if (concat && (ChannelBlock(k->layout_) == 1 || node.inputs.size() < 3)) {
      return EPCTX_ERROR(kInvalidArgument,
                         "ConcatChannelAffine takes S, T and at least one X in a blocked layout "
                         "(got {} inputs, layout {})",
                         node.inputs.size(), layout);
    }
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, i, DataType::kFloat32, "X, S or T"));
    }
    return std::unique_ptr<Kernel>(std::move(k));
  }

  Status Run(KernelContext& ctx) override { return concat_ ? RunConcat(ctx) : RunSingle(ctx); }

 private:
  ChannelAffineKernel() = default;

  Status ScalesAndShifts(const KernelContext& ctx, size_t first, int64_t values, const float** s,
                         const float** t) const {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* st, RequiredInput(ctx, first, "S"));
    EPCTX_ASSIGN_OR_RETURN(const Tensor* tt, RequiredInput(ctx, first + 1, "T"));
    for (const Tensor* v : {st, tt})
      EPCTX_RETURN_IF_ERROR(ExpectDtype(*v, DataType::kFloat32, "S or T"));
    if (st->element_count() != values || tt->element_count() != values) {
      return EPCTX_ERROR(kInvalidArgument, "S and T hold {} and {} values, expected {}",
                         st->element_count(), tt->element_count(), values);
    }
    *s = st->data_as<float>();
    *t = tt->data_as<float>();
    return Status::Ok();
  }

  // Row r of the output (batch r / blocks, channel block r % blocks) from the row of the input
  // that holds that channel block.
  Status RunConcat(KernelContext& ctx) {
    const int64_t lanes = ChannelBlock(layout_);
    struct Part {
      const float* data;
      int64_t blocks;
      int64_t first_block;  // in the output
    };
    std::vector<Part> parts;
    std::vector<int64_t> shape;
    int64_t blocks = 0;
    for (size_t i = 2; i < ctx.input_count(); ++i) {
      EPCTX_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, i, "X"));
      EPCTX_RETURN_IF_ERROR(ExpectDtype(*x, DataType::kFloat32, "X"));
      const std::vector<int64_t>& xs = x->shape();
      if (xs.size() < 4 || xs.back() != lanes) {
        return EPCTX_ERROR(kInvalidArgument,
                           "input X{} has shape {}, not a {}-channel-blocked "
                           "activation",
                           i - 2, ShapeToString(xs), lanes);
      }
      if (shape.empty()) {
        shape = xs;
      } else {
        for (size_t d = 0; d < xs.size(); ++d) {
          if (d != 1 && (xs.size() != shape.size() || xs[d] != shape[d])) {
            return EPCTX_ERROR(kInvalidArgument,
                               "input X{} has shape {}, which does not concatenate with {} "
                               "along the channel blocks",
                               i - 2, ShapeToString(xs), ShapeToString(shape));
          }
        }
      }
      parts.push_back({x->data_as<float>(), xs[1], blocks});
      blocks += xs[1];
    }
    if (channels_ > blocks * lanes || channels_ <= (blocks - 1) * lanes) {
      return EPCTX_ERROR(kInvalidArgument,
                         "the inputs hold {} channel blocks of {}, not {} "
                         "channels",
                         blocks, lanes, channels_);
    }
    const float* sd = nullptr;
    const float* td = nullptr;
    EPCTX_RETURN_IF_ERROR(ScalesAndShifts(ctx, 0, blocks * lanes, &sd, &td));
    shape[1] = blocks;
    EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, DataType::kFloat32, shape));
    EPCTX_ASSIGN_OR_RETURN(const int64_t rows, CheckedDimProduct(shape, 0, 2));
    if (rows == 0) return Status::Ok();
    const int64_t inner = y->element_count() / rows;  // spatial positions times lanes
    std::vector<const Part*> part_of_block;
    for (const Part& p : parts) part_of_block.insert(part_of_block.end(), p.blocks, &p);
    float* yd = y->mutable_data_as<float>();
    const int threads = y->element_count() >= kMinParallelElements ? ctx.num_threads() : 1;
    ParallelFor(threads, rows, [&](int64_t row, int) {
      const int64_t n = row / blocks;
      const int64_t g = row % blocks;
      const Part& p = *part_of_block[static_cast<size_t>(g)];
      const float* in = p.data + (n * p.blocks + g - p.first_block) * inner;
      BlockRow(in, yd + row * inner, sd, td, g, inner);
    });
    return Status::Ok();
  }

  Status RunSingle(KernelContext& ctx) {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, "X"));
    EPCTX_RETURN_IF_ERROR(ExpectDtype(*x, DataType::kFloat32, "X"));
    EPCTX_ASSIGN_OR_RETURN(std::vector<int64_t> logical,
                           LogicalShape(x->shape(), layout_, channels_));
    if (logical.size() < 2 || logical[1] != channels_) {
      return EPCTX_ERROR(kInvalidArgument, "input X has shape {}, expected {} channels",
                         ShapeToString(x->shape()), channels_);
    }
    const int64_t lanes = ChannelBlock(layout_);
    const bool blocked = lanes > 1;
    const int64_t groups = blocked ? x->shape()[1] : channels_;  // channel blocks or channels
    const float* sd = nullptr;
    const float* td = nullptr;
    EPCTX_RETURN_IF_ERROR(ScalesAndShifts(ctx, 1, groups * lanes, &sd, &td));
    EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, DataType::kFloat32, x->shape()));
    const int64_t batch = x->shape()[0];
    const int64_t rows = batch * groups;
    if (rows == 0) return Status::Ok();
    const int64_t inner = x->element_count() / rows;  // spatial positions times lanes
    const float* xd = x->data_as<float>();
    float* yd = y->mutable_data_as<float>();
    const int threads = x->element_count() >= kMinParallelElements ? ctx.num_threads() : 1;
    ParallelFor(threads, rows, [&](int64_t row, int) {
      const int64_t g = row % groups;
      const float* in = xd + row * inner;
      float* out = yd + row * inner;
      if (blocked) {
        BlockRow(in, out, sd, td, g, inner);
      } else {
        Row(in, out, sd[g], td[g], inner);
      }
    });
    return Status::Ok();
  }

  float Activate(float v) const {
    if (leaky_) return v < 0 ? v * slope_ : v;
    return std::min(std::max(v, lo_), hi_);
  }

  // One row of channel block `g` in the blocked layout (`inner` values: positions times lanes).
  void BlockRow(const float* in, float* out, const float* scale, const float* shift, int64_t g,
                int64_t inner) const {
    if (ChannelBlock(layout_) == 16) {
      Rows<16>(in, out, scale + g * 16, shift + g * 16, inner / 16);
    } else {
      Rows<8>(in, out, scale + g * 8, shift + g * 8, inner / 8);
    }
  }

  // Rows of the blocked layout: `lanes` channels innermost share one vector of scales.
  template <int64_t lanes>
  void Rows(const float* in, float* out, const float* scale, const float* shift,
            int64_t positions) const {
    for (int64_t p = 0; p < positions; ++p) {
      for (int64_t l = 0; l < lanes; ++l) {
        out[p * lanes + l] = Activate(in[p * lanes + l] * scale[l] + shift[l]);
      }
    }
  }

  void Row(const float* in, float* out, float scale, float shift, int64_t n) const {
    for (int64_t i = 0; i < n; ++i) out[i] = Activate(in[i] * scale + shift);
  }

  ActivationLayout layout_ = ActivationLayout::kPlain;
  int64_t channels_ = 0;
  // Without an activation: min(max(v, lowest), max) is v.
  float lo_ = std::numeric_limits<float>::lowest();
  float hi_ = std::numeric_limits<float>::max();
  bool leaky_ = false;
  float slope_ = 0;
  bool concat_ = false;  // ConcatChannelAffine
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateChannelAffine(const NodeInfo& node) {
  return ChannelAffineKernel::Create(node, /*concat=*/false);
}

Result<std::unique_ptr<Kernel>> CreateConcatChannelAffine(const NodeInfo& node) {
  return ChannelAffineKernel::Create(node, /*concat=*/true);
}

}  // namespace epctx::exec::kernels::onednn
