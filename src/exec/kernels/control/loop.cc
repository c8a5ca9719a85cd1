// Loop: runs the body while the trip count and the condition allow, carrying N values from one
// iteration to the next and stacking K per-iteration scan outputs along a new first axis.
//   body inputs:  iteration number (int64 scalar), condition (bool scalar), N carried, captures
//   body outputs: condition, N carried, K scan outputs
#include <cstring>
#include <memory>

#include "exec/kernels/common/copy.h"
#include "exec/kernels/common/shape.h"
#include "exec/kernels/control/body.h"
#include "exec/kernels/control/slices.h"
#include "exec/kernels/families.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

Result<Tensor> Scalar(DataType type, const void* value) {
  EPCTX_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(type, {}));
  std::memcpy(t.mutable_data(), value, DataTypeSize(type));
  return t;
}

class LoopKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node) {
    const size_t explicit_inputs = node.inputs.size() - node.implicit_inputs;
    if (explicit_inputs < 2) {
      return EPCTX_ERROR(kInvalidArgument,
                         "Loop takes M, cond and the carried values, got {} inputs",
                         explicit_inputs);
    }
    const size_t carried = explicit_inputs - 2;
    EPCTX_ASSIGN_OR_RETURN(Body body, Body::Bind(node, "body", 2 + carried));
    if (body.output_count() < 1 + carried) {
      return EPCTX_ERROR(kInvalidArgument,
                         "Loop body returns {} outputs; it must return the condition and the {} "
                         "carried values",
                         body.output_count(), carried);
    }
    const size_t scans = body.output_count() - 1 - carried;
    if (node.outputs.size() != carried + scans) {
      return EPCTX_ERROR(kInvalidArgument,
                         "Loop has {} outputs, but its body gives {} carried values and {} scan "
                         "outputs",
                         node.outputs.size(), carried, scans);
    }
    auto kernel = std::unique_ptr<LoopKernel>(new LoopKernel(std::move(body)));
    kernel->carried_ = carried;
    kernel->explicit_inputs_ = explicit_inputs;
    for (size_t i = 0; i < node.outputs.size(); ++i)
      kernel->present_.push_back(OutputPresent(node, i));
    return std::unique_ptr<Kernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    const Tensor* max_trips = ctx.input(0);
    const Tensor* cond = ctx.input(1);
    int64_t trip_limit = -1;  // none
    if (max_trips != nullptr) {
      if (max_trips->dtype() != DataType::kInt64 || max_trips->element_count() != 1) {
        return EPCTX_ERROR(kInvalidArgument, "M must be one int64, got {} {}",
                           DataTypeName(max_trips->dtype()), ShapeToString(max_trips->shape()));
      }
      trip_limit = *max_trips->data_as<int64_t>();
    }
    bool keep_going = true;
    if (cond != nullptr) {
      if (cond->dtype() != DataType::kBool || cond->element_count() != 1) {
        return EPCTX_ERROR(kInvalidArgument, "cond must be one bool, got {} {}",
                           DataTypeName(cond->dtype()), ShapeToString(cond->shape()));
      }
      keep_going = *cond->data_as<bool>();
    }
    std::vector<Tensor> inputs(2);  // iteration number and condition, set per iteration
    for (size_t i = 0; i < carried_; ++i) {
      EPCTX_ASSIGN_OR_RETURN(const Tensor* v, RequiredInput(ctx, 2 + i, "v_initial"));
      inputs.push_back(*v);
    }
    EPCTX_ASSIGN_OR_RETURN(std::vector<Tensor> captures, CaptureInputs(ctx, explicit_inputs_));
    inputs.insert(inputs.end(), captures.begin(), captures.end());
    const size_t scans = body_.output_count() - 1 - carried_;
    std::vector<std::vector<Tensor>> scanned(scans);
    EPCTX_ASSIGN_OR_RETURN(AlignedBuffer arena, body_.NewArena());

    const RunControl& control = ctx.run_control();
    for (int64_t i = 0; (trip_limit < 0 || i < trip_limit) && keep_going; ++i) {
      EPCTX_RETURN_IF_ERROR(control.CheckTerminate(fmt::format("in Loop iteration {}", i)));
      if (control.max_loop_iterations > 0 && i >= control.max_loop_iterations) {
        return EPCTX_ERROR(kCancelled,
                           "the loop was stopped after {} iterations, the limit "
                           "epctx.max_loop_iterations sets",
                           i);
      }
      EPCTX_ASSIGN_OR_RETURN(inputs[0], Scalar(DataType::kInt64, &i));
      EPCTX_ASSIGN_OR_RETURN(inputs[1], Scalar(DataType::kBool, &keep_going));
      EPCTX_ASSIGN_OR_RETURN(std::vector<Tensor> outputs, body_.Run(inputs, arena, control));
      const Tensor& cond_out = outputs[0];
      if (cond_out.dtype() != DataType::kBool || cond_out.element_count() != 1) {
        return EPCTX_ERROR(kInvalidArgument, "the body's condition must be one bool, got {} {}",
                           DataTypeName(cond_out.dtype()), ShapeToString(cond_out.shape()));
      }
      // Without a cond input the loop is a plain for loop: the body's condition is ignored.
      if (cond != nullptr) keep_going = *cond_out.data_as<bool>();
      for (size_t c = 0; c < carried_; ++c) inputs[2 + c] = std::move(outputs[1 + c]);
      for (size_t k = 0; k < scans; ++k) scanned[k].push_back(std::move(outputs[1 + carried_ + k]));
    }

    for (size_t c = 0; c < carried_; ++c) {
      if (!present_[c]) continue;
      EPCTX_RETURN_IF_ERROR(CopyToOutput(ctx, c, inputs[2 + c], inputs[2 + c].shape()));
    }
    for (size_t k = 0; k < scans; ++k) {
      if (!present_[carried_ + k]) continue;
      if (scanned[k].empty()) {
        EPCTX_RETURN_IF_ERROR(EmptyScanOutput(ctx, k));
        continue;
      }
      EPCTX_ASSIGN_OR_RETURN(Tensor stacked, StackAlong(scanned[k], 0, false, "scan outputs"));
      EPCTX_RETURN_IF_ERROR(CopyToOutput(ctx, carried_ + k, stacked, stacked.shape()));
    }
    return Status::Ok();
  }

 private:
  explicit LoopKernel(Body body) : body_(std::move(body)) {}

  // No iteration ran: [0, ...] with the body's declared per-iteration shape when it is known.
  Status EmptyScanOutput(KernelContext& ctx, size_t k) const {
    bool known = false;
    std::vector<int64_t> shape = body_.output_shape(1 + carried_ + k, &known);
    if (!known) shape.clear();
    shape.insert(shape.begin(), 0);
    DataType type = body_.output_dtype(1 + carried_ + k);
    if (DataTypeSize(type) == 0) {
      return EPCTX_ERROR(kUnsupported,
                         "the loop ran no iteration and the type of scan output {} is unknown", k);
    }
    return ctx.AllocateOutput(carried_ + k, type, std::move(shape)).status();
  }

  Body body_;
  size_t carried_ = 0;
  size_t explicit_inputs_ = 0;
  std::vector<bool> present_;
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateLoop(const NodeInfo& node) {
  return LoopKernel::Create(node);
}

}  // namespace epctx::exec::kernels
