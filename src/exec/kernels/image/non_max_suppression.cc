// NonMaxSuppression: per batch and class, greedily keep the highest-scoring boxes whose IoU with
// every box already kept is at most iou_threshold. Follows the ONNX reference implementation:
// candidates are the boxes scoring above score_threshold (all boxes when it is omitted), taken
// by descending score and, for equal scores, ascending box index; boxes of zero or negative
// area never suppress or get suppressed. Results are listed per batch, per class, in selection
// order. A NaN score has no rank, so its box is never selected. float32 boxes and scores.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

#include "exec/kernels/common/parallel_for.h"
#include "exec/kernels/common/shape.h"
#include "exec/kernels/common/threads.h"
#include "exec/kernels/families.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

// A box as corners with min <= max when well formed; `area` <= 0 marks a degenerate box.
struct Corners {
  float x_min, y_min, x_max, y_max, area;
};

Corners ToCorners(const float* box, bool center_point_box) {
  Corners c;
  if (center_point_box) {
    // [x_center, y_center, width, height]
    const float half_w = box[2] / 2, half_h = box[3] / 2;
    c.x_min = box[0] - half_w;
    c.x_max = box[0] + half_w;
    c.y_min = box[1] - half_h;
    c.y_max = box[1] + half_h;
  } else {
    // [y1, x1, y2, x2] with either diagonal pair of corners.
    c.x_min = std::min(box[1], box[3]);
    c.x_max = std::max(box[1], box[3]);
    c.y_min = std::min(box[0], box[2]);
    c.y_max = std::max(box[0], box[2]);
  }
  c.area = (c.x_max - c.x_min) * (c.y_max - c.y_min);
  return c;
}

bool Suppresses(const Corners& a, const Corners& b, float iou_threshold) {
  const float ix_min = std::max(a.x_min, b.x_min), ix_max = std::min(a.x_max, b.x_max);
  if (!(ix_max > ix_min)) return false;
  const float iy_min = std::max(a.y_min, b.y_min), iy_max = std::min(a.y_max, b.y_max);
  if (!(iy_max > iy_min)) return false;
  const float inter = (ix_max - ix_min) * (iy_max - iy_min);
  const float uni = a.area + b.area - inter;
  if (!(inter > 0) || !(a.area > 0) || !(b.area > 0) || !(uni > 0)) return false;
  return inter / uni > iou_threshold;
}

// The one value of an optional scalar input given as a rank-0 or 1-element tensor.
Result<float> ReadThreshold(const Tensor& t, const char* name) {
  if (t.dtype() != DataType::kFloat32) {
    return EPCTX_ERROR(kUnsupported, "input {} has type {}, expected float32", name,
                       DataTypeName(t.dtype()));
  }
  if (t.shape().size() > 1 || t.element_count() != 1) {
    return EPCTX_ERROR(kInvalidArgument, "input {} has shape {}, expected a scalar", name,
                       ShapeToString(t.shape()));
  }
  return *t.data_as<float>();
}

class NonMaxSuppressionKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node) {
    auto kernel = std::unique_ptr<NonMaxSuppressionKernel>(new NonMaxSuppressionKernel());
    EPCTX_ASSIGN_OR_RETURN(int64_t center, node.attrs->GetInt("center_point_box", 0));
    if (center != 0 && center != 1) {
      return EPCTX_ERROR(kInvalidArgument, "center_point_box is {}, expected 0 or 1", center);
    }
    kernel->center_point_box_ = center == 1;
    EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, 0, DataType::kFloat32, "boxes"));
    EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, 1, DataType::kFloat32, "scores"));
    EPCTX_RETURN_IF_ERROR(ExpectStaticRank(node, 0, 3, "boxes"));
    EPCTX_RETURN_IF_ERROR(ExpectStaticRank(node, 1, 3, "scores"));
    return std::unique_ptr<Kernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* boxes, RequiredInput(ctx, 0, "boxes"));
    EPCTX_ASSIGN_OR_RETURN(const Tensor* scores, RequiredInput(ctx, 1, "scores"));
    EPCTX_RETURN_IF_ERROR(ExpectDtype(*boxes, DataType::kFloat32, "boxes"));
    EPCTX_RETURN_IF_ERROR(ExpectDtype(*scores, DataType::kFloat32, "scores"));
    const std::vector<int64_t>& bs = boxes->shape();
    const std::vector<int64_t>& ss = scores->shape();
    if (bs.size() != 3 || bs[2] != 4) {
      return EPCTX_ERROR(kInvalidArgument,
                         "input boxes has shape {}, expected [num_batches, num_boxes, 4]",
                         ShapeToString(bs));
    }
    if (ss.size() != 3 || ss[0] != bs[0] || ss[2] != bs[1]) {
      return EPCTX_ERROR(kInvalidArgument,
                         "input scores has shape {}, expected [{}, num_classes, {}] to match "
                         "boxes {}",
                         ShapeToString(ss), bs[0], bs[1], ShapeToString(bs));
    }
    int64_t max_per_class = 0;
    if (const Tensor* t = ctx.input_count() > 2 ? ctx.input(2) : nullptr) {
      EPCTX_ASSIGN_OR_RETURN(std::vector<int64_t> v,
                             ReadIndexVector(*t, "max_output_boxes_per_class"));
      if (v.size() > 1) {
        return EPCTX_ERROR(kInvalidArgument,
                           "input max_output_boxes_per_class has {} values, expected a scalar",
                           v.size());
      }
      if (!v.empty()) max_per_class = std::max<int64_t>(v[0], 0);
    }
    float iou_threshold = 0;
    if (const Tensor* t = ctx.input_count() > 3 ? ctx.input(3) : nullptr) {
      EPCTX_ASSIGN_OR_RETURN(iou_threshold, ReadThreshold(*t, "iou_threshold"));
      if (!(iou_threshold >= 0 && iou_threshold <= 1)) {
        return EPCTX_ERROR(kInvalidArgument, "iou_threshold is {}, expected a value in [0, 1]",
                           iou_threshold);
      }
    }
    bool filter_scores = false;
    float score_threshold = 0;
    if (const Tensor* t = ctx.input_count() > 4 ? ctx.input(4) : nullptr) {
      EPCTX_ASSIGN_OR_RETURN(score_threshold, ReadThreshold(*t, "score_threshold"));
      filter_scores = true;
    }

    const int64_t batches = bs[0], num_boxes = bs[1], classes = ss[1];
    const float* bp = boxes->data_as<float>();
    const float* sp = scores->data_as<float>();
    std::vector<Corners> corners(static_cast<size_t>(batches * num_boxes));
    for (size_t i = 0; i < corners.size(); ++i)
      corners[i] = ToCorners(bp + i * 4, center_point_box_);

    // Box indices kept for each (batch, class), in selection order.
    std::vector<std::vector<int64_t>> kept(static_cast<size_t>(batches * classes));
    if (max_per_class > 0) {
      const int nt = ThreadsFor(ctx.num_threads(), scores->element_count() * 8);
      ParallelFor(nt, batches * classes, [&](int64_t bc, int) {
        const int64_t b = bc / classes;
        const float* s = sp + bc * num_boxes;
        const Corners* box = corners.data() + b * num_boxes;
        std::vector<int64_t> order;
        for (int64_t i = 0; i < num_boxes; ++i) {
          if (std::isnan(s[i]) || (filter_scores && !(s[i] > score_threshold))) continue;
          order.push_back(i);
        }
        std::stable_sort(order.begin(), order.end(),
                         [&](int64_t x, int64_t y) { return s[x] > s[y]; });
        std::vector<int64_t>& out = kept[static_cast<size_t>(bc)];
        for (int64_t i : order) {
          if (static_cast<int64_t>(out.size()) >= max_per_class) break;
          bool keep = true;
          for (int64_t j : out) {
            if (Suppresses(box[i], box[j], iou_threshold)) {
              keep = false;
              break;
            }
          }
          if (keep) out.push_back(i);
        }
      });
    }

    int64_t total = 0;
    for (const std::vector<int64_t>& k : kept) total += static_cast<int64_t>(k.size());
    EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, DataType::kInt64, {total, 3}));
    int64_t* out = y->mutable_data_as<int64_t>();
    for (int64_t bc = 0; bc < batches * classes; ++bc) {
      for (int64_t i : kept[static_cast<size_t>(bc)]) {
        *out++ = bc / classes;
        *out++ = bc % classes;
        *out++ = i;
      }
    }
    return Status::Ok();
  }

 private:
  NonMaxSuppressionKernel() = default;

  bool center_point_box_ = false;
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateNonMaxSuppression(const NodeInfo& node) {
  // Opset 11 changed only the wording of the schema, so this kernel serves both versions.
  return NonMaxSuppressionKernel::Create(node);
}

}  // namespace epctx::exec::kernels
