// What the ai.onnx.preview.training optimizers (Adagrad, Adam, Momentum) share: the input list
// [R, T, then a few lists of N tensors each: X..., G..., state...], the output list [X_new...,
// state_new...], the checks on both, and one loop over the elements. Each op supplies a Rule: its
// list names, the scalar step it derives from R and T, and its update of one element. Elements
// are updated in double whatever the tensors' type (float or double); each X_i, G_i and state_i
// must have one shape (the operator text allows broadcasting among them; no test or exporter
// uses it).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "epctx/status.h"
#include "epctx/tensor.h"
#include "exec/kernel.h"
#include "exec/kernels/common/parallel_for.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels::training {

// The number N of optimized tensors of a node whose inputs are R, T and `lists` lists of N
// tensors, with at most `out_lists` lists of N outputs; refuses at creation what the compiler
// can tell is wrong: the counts, omitted inputs, types outside float/double (R, the tensors) and
// int64 (T), a tensor whose type or shape differs from its X.
Result<size_t> CheckOptimizerNode(const NodeInfo& node, std::string_view op,
                                  std::span<const std::string_view> inputs,
                                  std::span<const std::string_view> outputs);

// R (float or double) and T (int64), each holding one element.
Result<double> ReadLearningRate(const KernelContext& ctx, std::string_view op);
Result<int64_t> ReadUpdateCount(const KernelContext& ctx, std::string_view op);

// Input `index`, present and of the type and shape of `x` (null: it is X itself).
Result<const Tensor*> OptimizedInput(const KernelContext& ctx, size_t index, const Tensor* x,
                                     std::string_view op, std::string_view name, size_t i);

// Rule: a struct with
//   static constexpr std::string_view kOp;
//   static constexpr std::array<std::string_view, I> kInputs;   // "X", "G", state names
//   static constexpr std::array<std::string_view, O> kOutputs;  // "X_new", state names
//   struct Step; Step MakeStep(double r, int64_t t) const;
//   void Apply(const Step&, const double (&in)[I], double (&out)[O]) const;
template <typename Rule>
class OptimizerKernel final : public Kernel {
 public:
  static constexpr size_t kIn = Rule::kInputs.size();
  static constexpr size_t kOut = Rule::kOutputs.size();

  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node, Rule rule) {
    EPCTX_ASSIGN_OR_RETURN(size_t n,
                           CheckOptimizerNode(node, Rule::kOp, Rule::kInputs, Rule::kOutputs));
    std::vector<bool> present(kOut * n);
    for (size_t o = 0; o < present.size(); ++o) {
      present[o] = o < node.outputs.size() && node.outputs[o].present;
    }
    return std::unique_ptr<Kernel>(new OptimizerKernel(rule, n, std::move(present)));
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(double r, ReadLearningRate(ctx, Rule::kOp));
    EPCTX_ASSIGN_OR_RETURN(int64_t t, ReadUpdateCount(ctx, Rule::kOp));
    const typename Rule::Step step = rule_.MakeStep(r, t);
    for (size_t i = 0; i < n_; ++i) {
      std::array<const Tensor*, kIn> in{};
      for (size_t k = 0; k < kIn; ++k) {
        EPCTX_ASSIGN_OR_RETURN(in[k], OptimizedInput(ctx, 2 + k * n_ + i, k == 0 ? nullptr : in[0],
                                                     Rule::kOp, Rule::kInputs[k], i));
      }
      std::array<Tensor*, kOut> out{};
      for (size_t k = 0; k < kOut; ++k) {
        if (!present_[k * n_ + i]) continue;
        EPCTX_ASSIGN_OR_RETURN(out[k],
                               ctx.AllocateOutput(k * n_ + i, in[0]->dtype(), in[0]->shape()));
      }
      if (in[0]->dtype() == DataType::kFloat64) {
        Update<double>(step, in, out, ctx.num_threads());
      } else {
        Update<float>(step, in, out, ctx.num_threads());
      }
    }
    return Status::Ok();
  }

 private:
  OptimizerKernel(Rule rule, size_t n, std::vector<bool> present)
      : rule_(rule), n_(n), present_(std::move(present)) {}

  template <typename T>
  void Update(const typename Rule::Step& step, const std::array<const Tensor*, kIn>& in,
              const std::array<Tensor*, kOut>& out, int threads) const {
    constexpr int64_t kGrain = 1 << 14;
    std::array<const T*, kIn> src{};
    std::array<T*, kOut> dst{};
    for (size_t k = 0; k < kIn; ++k) src[k] = in[k]->template data_as<T>();
    for (size_t k = 0; k < kOut; ++k)
      dst[k] = out[k] ? out[k]->template mutable_data_as<T>() : nullptr;
    ParallelForRanges(threads, in[0]->element_count(), kGrain, [&](int64_t begin, int64_t end) {
      for (int64_t e = begin; e < end; ++e) {
        double a[kIn];
        double b[kOut];
        for (size_t k = 0; k < kIn; ++k) a[k] = static_cast<double>(src[k][e]);
        rule_.Apply(step, a, b);
        for (size_t k = 0; k < kOut; ++k) {
          if (dst[k] != nullptr) dst[k][e] = static_cast<T>(b[k]);
        }
      }
    });
  }

  Rule rule_;
  size_t n_;
  std::vector<bool> present_;  // per output: false where the node omits it
};

}  // namespace epctx::exec::kernels::training
