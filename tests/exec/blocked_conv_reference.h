// What the tests of our own blocked convolutions (blocked_conv1x1_test.cc,
// blocked_depthwise_conv_test.cc) share: the post-ops they apply, written out on one value, the
// comparison of an output with the expected one, and the sweep over problems and thread counts.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "exec/kernels/onednn/post_ops.h"

namespace epctx::exec::testing {

// Padded input lanes and outputs not written yet hold it: a pass must neither read nor leave it.
inline constexpr float kBlockedNaN = std::numeric_limits<float>::quiet_NaN();

// `ops` applied in order to v; kAddTensor adds `residual`.
inline float ReferencePostOps(std::span<const kernels::onednn::PostOp> ops, float v,
                              float residual) {
  using kernels::onednn::PostOpKind;
  for (const kernels::onednn::PostOp& op : ops) {
    switch (op.kind) {
      case PostOpKind::kAddTensor:
        v += residual;
        break;
      case PostOpKind::kRelu:
        v = v > 0 ? v : op.alpha * v;
        break;
      case PostOpKind::kClip:
        v = std::min(std::max(v, op.alpha), op.beta);
        break;
      case PostOpKind::kLinear:
        v = op.alpha * v + op.beta;
        break;
      default:
        ADD_FAILURE() << "no reference for post-op " << static_cast<int>(op.kind);
    }
  }
  return v;
}

// Every element of `got` within 1e-5 x `terms` x (1 + |want|) of `want` (padded lanes, wanted 0,
// exactly); at most 5 failures reported.
inline void ExpectWithinSums(const std::vector<float>& got, const std::vector<float>& want,
                             int64_t terms, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  int bad = 0;
  for (size_t i = 0; i < got.size() && bad < 5; ++i) {
    const float tol = 1e-5f * static_cast<float>(terms) * (1 + std::fabs(want[i]));
    if (!(std::fabs(got[i] - want[i]) <= tol)) {
      ADD_FAILURE() << what << ": element " << i << " is " << got[i] << ", want " << want[i];
      ++bad;
    }
  }
}

// For each problem at 1, 2 and 3 threads: a Case (a struct with fields p, ops and bias and a
// Make(rng) that fills its tensors and expected output) with the post-op lists in turn and every
// third one without bias, made and passed to `run(c, threads)`.
template <typename Case, typename Problem, typename Run>
void ForEachCaseAndThreadCount(const std::vector<Problem>& problems,
                               const std::vector<std::vector<kernels::onednn::PostOp>>& op_lists,
                               std::mt19937& rng, Run run) {
  size_t index = 0;
  for (const Problem& p : problems) {
    for (int threads : {1, 2, 3}) {
      Case c;
      c.p = p;
      c.ops = op_lists[index % op_lists.size()];
      c.bias = index % 3 != 2;
      ++index;
      c.Make(rng);
      run(c, threads);
    }
  }
}

}  // namespace epctx::exec::testing
