// SequenceMap: runs its body once per element of the input sequence; the body takes element i of
// every sequence input and every tensor input as it is, and output j of the node is the sequence
// of the body's output j over the iterations.
#include <memory>
#include <vector>

#include "exec/kernels/common/shape.h"
#include "exec/kernels/control/body.h"
#include "exec/kernels/families.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

class SequenceMapKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node) {
    const size_t formal = node.inputs.size() - node.implicit_inputs;
    if (formal == 0) return EPCTX_ERROR(kInvalidArgument, "SequenceMap needs an input sequence");
    EPCTX_ASSIGN_OR_RETURN(Body body, Body::Bind(node, "body", formal));
    if (body.output_count() != node.outputs.size()) {
      return EPCTX_ERROR(kInvalidArgument, "SequenceMap has {} outputs but its body returns {}",
                         node.outputs.size(), body.output_count());
    }
    auto k = std::unique_ptr<SequenceMapKernel>(new SequenceMapKernel(std::move(body)));
    k->formal_ = formal;
    for (size_t j = 0; j < node.outputs.size(); ++j) {
      k->output_types_.push_back(node.outputs[j].dtype != DataType::kUndefined
                                     ? node.outputs[j].dtype
                                     : k->body_.output_dtype(j));
    }
    return std::unique_ptr<Kernel>(std::move(k));
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* first, RequiredInput(ctx, 0, "input_sequence"));
    if (first->kind() != ValueKind::kSequence) {
      return EPCTX_ERROR(kInvalidArgument, "input 0 (input_sequence) is not a sequence");
    }
    const size_t count = first->elements().size();
    std::vector<const Tensor*> inputs(formal_);
    for (size_t i = 0; i < formal_; ++i) {
      EPCTX_ASSIGN_OR_RETURN(inputs[i], RequiredInput(ctx, i, "additional_inputs"));
      if (inputs[i]->kind() == ValueKind::kSequence && inputs[i]->elements().size() != count) {
        return EPCTX_ERROR(kInvalidArgument, "input {} is a sequence of {}, input 0 of {}", i,
                           inputs[i]->elements().size(), count);
      }
      if (inputs[i]->kind() == ValueKind::kNone) {
        return EPCTX_ERROR(kInvalidArgument, "input {} is an empty optional", i);
      }
    }
    EPCTX_ASSIGN_OR_RETURN(std::vector<Tensor> captures, CaptureInputs(ctx, formal_));
    EPCTX_ASSIGN_OR_RETURN(AlignedBuffer arena, body_.NewArena());
    std::vector<std::vector<Tensor>> results(output_types_.size());
    std::vector<Tensor> args(formal_ + captures.size());
    for (size_t c = 0; c < captures.size(); ++c) args[formal_ + c] = captures[c];
    for (size_t it = 0; it < count; ++it) {
      EPCTX_RETURN_IF_ERROR(
          ctx.run_control().CheckTerminate(fmt::format("in SequenceMap iteration {}", it)));
      for (size_t i = 0; i < formal_; ++i) {
        args[i] =
            inputs[i]->kind() == ValueKind::kSequence ? inputs[i]->elements()[it] : *inputs[i];
      }
      EPCTX_ASSIGN_OR_RETURN(std::vector<Tensor> outs, body_.Run(args, arena, ctx.run_control()));
      for (size_t j = 0; j < outs.size() && j < results.size(); ++j) {
        if (!outs[j].is_tensor()) {
          return EPCTX_ERROR(kInvalidArgument, "body output {} is not a tensor", j);
        }
        results[j].push_back(std::move(outs[j]));
      }
    }
    for (size_t j = 0; j < results.size(); ++j) {
      EPCTX_RETURN_IF_ERROR(
          ctx.SetOutput(j, Tensor::Sequence(output_types_[j], std::move(results[j]))));
    }
    return Status::Ok();
  }

 private:
  explicit SequenceMapKernel(Body body) : body_(std::move(body)) {}
  Body body_;
  size_t formal_ = 0;
  std::vector<DataType> output_types_;
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateSequenceMap(const NodeInfo& node) {
  return SequenceMapKernel::Create(node);
}

}  // namespace epctx::exec::kernels
