#include "exec/kernels/common/broadcast.h"

#include "epctx/tensor.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {

std::vector<int64_t> BroadcastStrides(std::span<const int64_t> shape,
                                      std::span<const int64_t> out) {
  std::vector<int64_t> strides(out.size(), 0);
  int64_t stride = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    strides[out.size() - shape.size() + i] = shape[i] == 1 ? 0 : stride;
    stride *= shape[i];
  }
  return strides;
}

Result<std::vector<int64_t>> BroadcastShapes(std::span<const int64_t> a,
                                             std::span<const int64_t> b) {
  const size_t rank = std::max(a.size(), b.size());
  std::vector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1) {
      return EPCTX_ERROR(kInvalidArgument, "shapes {} and {} cannot be broadcast",
                         ShapeToString({a.begin(), a.end()}), ShapeToString({b.begin(), b.end()}));
    }
    out[i] = da == 1 ? db : da;
  }
  return out;
}

BroadcastPlan PlanBroadcast(std::span<const int64_t> a, std::span<const int64_t> b,
                            std::span<const int64_t> out) {
  // Each kept output dim, with whether a and b are broadcast along it. Dims of extent 1 carry
  // no iteration and are dropped; neighbours with the same broadcast pattern merge into one.
  struct Dim {
    int64_t extent;
    bool a_bcast;
    bool b_bcast;
  };
  const size_t rank = out.size();
  std::vector<Dim> dims;
  BroadcastPlan plan;
  // An empty output has nothing to iterate, and its other dims may multiply beyond int64
  // ([0, 2^32, 2^32]). Otherwise every product here is at most the output's element count.
  if (std::find(out.begin(), out.end(), 0) != out.end()) {
    plan.dims = {1};
    plan.a_strides = {0};
    plan.b_strides = {0};
    plan.element_count = 0;
    return plan;
  }
  plan.element_count = 1;
  for (size_t i = 0; i < rank; ++i) {
    plan.element_count *= out[i];
    if (out[i] == 1) continue;
    const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    Dim d{out[i], da == 1, db == 1};
    if (!dims.empty() && dims.back().a_bcast == d.a_bcast && dims.back().b_bcast == d.b_bcast) {
      dims.back().extent *= d.extent;
    } else {
      dims.push_back(d);
    }
  }
  if (dims.empty()) dims.push_back({1, false, false});
  const size_t n = dims.size();
  plan.dims.resize(n);
  plan.a_strides.resize(n);
  plan.b_strides.resize(n);
  int64_t a_stride = 1;
  int64_t b_stride = 1;
  for (size_t i = n; i-- > 0;) {
    plan.dims[i] = dims[i].extent;
    plan.a_strides[i] = dims[i].a_bcast ? 0 : a_stride;
    plan.b_strides[i] = dims[i].b_bcast ? 0 : b_stride;
    if (!dims[i].a_bcast) a_stride *= dims[i].extent;
    if (!dims[i].b_bcast) b_stride *= dims[i].extent;
  }
  return plan;
}

}  // namespace epctx::exec::kernels
