#include "exec/kernels/nn/conv_f32.h"

#include <algorithm>

#include "exec/kernels/common/parallel_for.h"
#include "exec/kernels/nn/gemm_f32.h"
#include "exec/kernels/nn/im2col.h"

namespace epctx::exec::kernels {
namespace {

// im2col floats per thread: about half a typical L2, so a tile stays cached for its GEMM.
constexpr int64_t kTileBudgetFloats = int64_t{1} << 18;
// Narrower tiles make Eigen repack the weights too often for too little work.
constexpr int64_t kMinTileColumns = 32;
constexpr int64_t kMinChunkRows = 16;
// Tasks are handed out dynamically; a few per thread let the others take over the work of a
// thread the OS has descheduled (the machine is often shared) instead of waiting for it.
constexpr int64_t kTasksPerThread = 3;

bool IsPointwise(const Window3d& w) {
  for (int i = 0; i < 3; ++i) {
    if (w.kernel[i] != 1 || w.stride[i] != 1 || w.pad_begin[i] != 0 || w.in[i] != w.out[i]) {
      return false;
    }
  }
  return true;
}

void BiasActivationRows(const Activation& act, const float* bias, float* y, int64_t ld,
                        int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    ApplyBiasActivation(act, bias != nullptr ? bias[r] : 0.0f, y + r * ld, cols);
  }
}

void ConvTiled(const ConvShape& p, const ConvPlan& plan, const float* x, const float* w,
               const float* bias, const Activation& act, float* y, float* scratch) {
  const int64_t groups = p.group, cg = p.in_per_group(), mg = p.out_per_group();
  const int64_t k = p.patch_size(), positions = p.window.out_size();
  const int64_t in_size = p.window.in_size();
  const int64_t tasks = p.batch * groups * plan.tiles;
  ParallelFor(plan.threads, tasks, [&](int64_t task, int worker) {
    const int64_t tile = task % plan.tiles;
    const int64_t g = task / plan.tiles % groups;
    const int64_t n = task / plan.tiles / groups;
    const int64_t p0 = tile * plan.tile;
    const int64_t cols = std::min(positions, p0 + plan.tile) - p0;
    if (cols <= 0) return;
    const float* xg = x + (n * p.in_channels + g * cg) * in_size;
    GemmOperand rhs{xg + p0, positions, false};
    if (!plan.pointwise) {
      float* col = scratch + static_cast<size_t>(worker * k * plan.tile);
      Im2Col(xg, p.window, 0, k, p0, p0 + cols, col, cols);
      rhs = GemmOperand{col, cols, false};
    }
    float* yb = y + (n * p.out_channels + g * mg) * positions + p0;
    GemmF32(mg, cols, k, 1.0f, GemmOperand{w + g * mg * k, k, false}, rhs, yb, positions);
    BiasActivationRows(act, bias != nullptr ? bias + g * mg : nullptr, yb, positions, mg, cols);
  });
}

void ConvSplitRows(const ConvShape& p, const ConvPlan& plan, const float* x, const float* w,
                   const float* bias, const Activation& act, float* y, float* scratch) {
  const int64_t groups = p.group, cg = p.in_per_group(), mg = p.out_per_group();
  const int64_t k = p.patch_size(), positions = p.window.out_size();
  const int64_t in_size = p.window.in_size();
  const int64_t chunks = plan.chunks;
  for (int64_t n = 0; n < p.batch; ++n) {
    for (int64_t g = 0; g < groups; ++g) {
      const float* xg = x + (n * p.in_channels + g * cg) * in_size;
      GemmOperand rhs{xg, positions, false};
      if (!plan.pointwise) {
        ParallelForRanges(plan.threads, k, 16, [&](int64_t r0, int64_t r1) {
          Im2Col(xg, p.window, r0, r1, 0, positions, scratch + r0 * positions, positions);
        });
        rhs = GemmOperand{scratch, positions, false};
      }
      ParallelFor(plan.threads, chunks, [&](int64_t chunk, int) {
        const int64_t r0 = mg * chunk / chunks;
        const int64_t r1 = mg * (chunk + 1) / chunks;
        if (r1 == r0) return;
        float* yb = y + (n * p.out_channels + g * mg + r0) * positions;
        GemmF32(r1 - r0, positions, k, 1.0f, GemmOperand{w + (g * mg + r0) * k, k, false}, rhs, yb,
                positions);
        BiasActivationRows(act, bias != nullptr ? bias + g * mg + r0 : nullptr, yb, positions,
                           r1 - r0, positions);
      });
    }
  }
}

}  // namespace

ConvPlan PlanConvF32(const ConvShape& p, int threads) {
  ConvPlan plan;
  const int64_t positions = p.window.out_size();
  const int64_t k = p.patch_size();
  const int64_t mg = p.out_per_group();
  const int64_t macs = p.batch * p.out_channels * positions * k;
  plan.threads = macs >= kMinParallelMacs ? std::max(threads, 1) : 1;
  if (p.in_per_group() == 1) {
    plan.method = ConvPlan::Method::kDepthwise;
    return plan;
  }
  plan.pointwise = IsPointwise(p.window);
  const int64_t nt = plan.threads;
  const int64_t images = p.batch * p.group;
  const int64_t widest =
      plan.pointwise ? positions : std::clamp(kTileBudgetFloats / k, kMinTileColumns, positions);
  int64_t tiles = std::max<int64_t>(1, (positions + widest - 1) / widest);
  if (nt > 1 && images * tiles < kTasksPerThread * nt) {
    // Too few natural tasks. Every column tile repacks the group's weights and every row chunk
    // repacks its patches, so split whichever side makes the smaller copy.
    if (mg >= positions && mg >= kMinChunkRows * nt) {
      plan.method = ConvPlan::Method::kSplitRows;
      plan.chunks = std::min(kTasksPerThread * nt, mg / kMinChunkRows);
      plan.scratch_floats = plan.pointwise ? 0 : static_cast<size_t>(k * positions);
      return plan;
    }
    while (images * tiles < kTasksPerThread * nt && positions / (tiles + 1) >= kMinTileColumns) {
      ++tiles;
    }
  }
  plan.method = ConvPlan::Method::kTiled;
  plan.tiles = tiles;
  plan.tile = (positions + tiles - 1) / tiles;
  plan.scratch_floats = plan.pointwise ? 0 : static_cast<size_t>(nt * k * plan.tile);
  return plan;
}

void ConvF32(const ConvShape& p, const ConvPlan& plan, const float* x, const float* w,
             const float* bias, const Activation& act, float* y, float* scratch) {
  switch (plan.method) {
    case ConvPlan::Method::kDepthwise:
      DepthwiseConvF32(p, plan.threads, x, w, bias, act, y);
      return;
    case ConvPlan::Method::kTiled:
      ConvTiled(p, plan, x, w, bias, act, y, scratch);
      return;
    case ConvPlan::Method::kSplitRows:
      ConvSplitRows(p, plan, x, w, bias, act, y, scratch);
      return;
  }
}

}  // namespace epctx::exec::kernels
