#include "exec/kernels/common/legacy_broadcast.h"

#include <algorithm>
#include <string>

#include "epctx/tensor.h"
#include "exec/kernels/common/broadcast.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

std::string ToString(std::span<const int64_t> s) {
  return ShapeToString({s.begin(), s.end()});
}

}  // namespace

Result<LegacyBroadcast> ParseLegacyBroadcast(const Attributes& attrs) {
  LegacyBroadcast lb;
  EPCTX_ASSIGN_OR_RETURN(int64_t broadcast, attrs.GetInt("broadcast", 0));
  if (broadcast != 0 && broadcast != 1) {
    return EPCTX_ERROR(kInvalidArgument, "attribute broadcast is {}, expected 0 or 1", broadcast);
  }
  lb.enabled = broadcast == 1;
  lb.has_axis = attrs.Has("axis");
  if (lb.has_axis) {
    if (!lb.enabled) {
      return EPCTX_ERROR(kInvalidArgument,
                         "attribute axis is set but broadcast is 0 (axis needs broadcast=1)");
    }
    EPCTX_ASSIGN_OR_RETURN(lb.axis, attrs.GetInt("axis", 0));
  }
  return lb;
}

Result<std::vector<int64_t>> LegacyShapeOfB(const LegacyBroadcast& lb, std::span<const int64_t> a,
                                            std::span<const int64_t> b) {
  const auto rank_a = static_cast<int64_t>(a.size());
  const auto rank_b = static_cast<int64_t>(b.size());
  if (!lb.enabled) {
    bool same = rank_a == rank_b;
    for (int64_t i = 0; same && i < rank_a; ++i) {
      same = a[i] == b[i] || a[i] < 0 || b[i] < 0;
    }
    if (!same) {
      return EPCTX_ERROR(kInvalidArgument,
                         "shapes {} and {} differ and broadcast is 0 (legacy opset needs equal "
                         "shapes, or broadcast=1 to broadcast B onto A)",
                         ToString(a), ToString(b));
    }
    return std::vector<int64_t>(b.begin(), b.end());
  }
  bool single = true;  // one element: broadcasts onto any A, whatever its rank
  for (int64_t d : b) single = single && d == 1;
  if (single) return std::vector<int64_t>(a.size(), 1);
  int64_t first = rank_a - rank_b;
  if (lb.has_axis) first = lb.axis < 0 ? lb.axis + rank_a : lb.axis;
  if (first < 0 || rank_b > rank_a - first) {
    if (lb.has_axis) {
      return EPCTX_ERROR(kInvalidArgument,
                         "B of shape {} does not fit A of shape {} starting at axis {}",
                         ToString(b), ToString(a), lb.axis);
    }
    return EPCTX_ERROR(kInvalidArgument, "B of shape {} has a higher rank than A of shape {}",
                       ToString(b), ToString(a));
  }
  std::vector<int64_t> out(a.size(), 1);
  for (int64_t i = 0; i < rank_b; ++i) {
    const int64_t da = a[first + i];
    const int64_t db = b[i];
    if (db != 1 && db != da && db >= 0 && da >= 0) {
      return EPCTX_ERROR(kInvalidArgument,
                         "B of shape {} does not broadcast onto A of shape {}: dim {} of B is {}, "
                         "dim {} of A is {}",
                         ToString(b), ToString(a), i, db, first + i, da);
    }
    out[first + i] = db;
  }
  return out;
}

Result<std::vector<int64_t>> LegacySlopeShape(std::span<const int64_t> x,
                                              std::span<const int64_t> slope) {
  bool single = true;
  for (int64_t d : slope) single = single && d == 1;
  if (single) return std::vector<int64_t>(x.size(), 1);
  if (slope.size() == 1 && x.size() >= 2 && slope[0] == x[1]) {
    std::vector<int64_t> out(x.size(), 1);
    out[1] = slope[0];
    return out;
  }
  Result<std::vector<int64_t>> joint = BroadcastShapes(x, slope);
  if (!joint.ok() || !std::equal(joint->begin(), joint->end(), x.begin(), x.end())) {
    return EPCTX_ERROR(kInvalidArgument,
                       "slope of shape {} is neither a single value, one per channel (dim 1) of X "
                       "of shape {}, nor broadcastable onto X",
                       ToString(slope), ToString(x));
  }
  return std::vector<int64_t>(slope.begin(), slope.end());
}

}  // namespace epctx::exec::kernels
