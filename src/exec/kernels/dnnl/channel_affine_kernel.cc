// com.epctx ChannelAffine: y = act(x * scale[c] + shift[c]), the inference form of a
// BatchNormalization that could not be folded into a convolution (DenseNet normalizes the
// concatenation of all earlier features before each of its convolutions). It reads and writes
// the layout the compiler planned; in the channel-blocked layout the innermost 16 values are 16
// channels, so one vector of scales and shifts serves a whole row. Our own kernel: oneDNN's
// batch normalization would recompute scale and shift from the statistics on every run.
//
// Inputs: X, S and T (float32 [channels], or [blocks * block] zero-padded in a blocked layout, so
// padding lanes stay zero). Attributes: `layout`, `channels`, `post_ops` (Relu or Clip).
#include <algorithm>
#include <limits>
#include <memory>

#include "exec/kernels/common/parallel_for.h"
#include "exec/kernels/common/shape.h"
#include "exec/kernels/dnnl/activation_layout.h"
#include "exec/kernels/dnnl/post_ops.h"
#include "exec/kernels/families.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels::onednn {
namespace {

// Rows of work below which one thread does it all.
constexpr int64_t kMinParallelElements = 1 << 15;

class ChannelAffineKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node) {
    auto k = std::unique_ptr<ChannelAffineKernel>(new ChannelAffineKernel());
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
    for (size_t i = 0; i < 3; ++i) {
      EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, i, DataType::kFloat32, "X, S or T"));
    }
    return std::unique_ptr<Kernel>(std::move(k));
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, "X"));
    EPCTX_ASSIGN_OR_RETURN(const Tensor* s, RequiredInput(ctx, 1, "S"));
    EPCTX_ASSIGN_OR_RETURN(const Tensor* t, RequiredInput(ctx, 2, "T"));
    for (const Tensor* v : {x, s, t})
      EPCTX_RETURN_IF_ERROR(ExpectDtype(*v, DataType::kFloat32, "X, S or T"));
    EPCTX_ASSIGN_OR_RETURN(std::vector<int64_t> logical,
                           LogicalShape(x->shape(), layout_, channels_));
    if (logical.size() < 2 || logical[1] != channels_) {
      return EPCTX_ERROR(kInvalidArgument, "input X has shape {}, expected {} channels",
                         ShapeToString(x->shape()), channels_);
    }
    const int64_t lanes = ChannelBlock(layout_);
    const bool blocked = lanes > 1;
    const int64_t groups = blocked ? x->shape()[1] : channels_;  // channel blocks or channels
    if (s->element_count() != groups * lanes || t->element_count() != groups * lanes) {
      return EPCTX_ERROR(kInvalidArgument, "S and T hold {} and {} values, expected {}",
                         s->element_count(), t->element_count(), groups * lanes);
    }
    EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, DataType::kFloat32, x->shape()));
    const int64_t batch = x->shape()[0];
    const int64_t rows = batch * groups;
    if (rows == 0) return Status::Ok();
    const int64_t inner = x->element_count() / rows;  // spatial positions times lanes
    const float* xd = x->data_as<float>();
    const float* sd = s->data_as<float>();
    const float* td = t->data_as<float>();
    float* yd = y->mutable_data_as<float>();
    const int threads = x->element_count() >= kMinParallelElements ? ctx.num_threads() : 1;
    ParallelFor(threads, rows, [&](int64_t row, int) {
      const int64_t g = row % groups;
      const float* in = xd + row * inner;
      float* out = yd + row * inner;
      if (blocked) {
        if (lanes == 16) {
          Rows<16>(in, out, sd + g * 16, td + g * 16, inner / 16);
        } else {
          Rows<8>(in, out, sd + g * 8, td + g * 8, inner / 8);
        }
      } else {
        Row(in, out, sd[g], td[g], inner);
      }
    });
    return Status::Ok();
  }

 private:
  ChannelAffineKernel() = default;

  float Activate(float v) const {
    if (leaky_) return v < 0 ? v * slope_ : v;
    return std::min(std::max(v, lo_), hi_);
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
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateChannelAffine(const NodeInfo& node) {
  return ChannelAffineKernel::Create(node);
}

}  // namespace epctx::exec::kernels::onednn
