// Scan: runs the body once per slice of the scan inputs, carrying N state values through the
// iterations and stacking K scan outputs.
//   body inputs:  N states, M scan-input slices, captures
//   body outputs: N states, K scan-output slices
// Scan-8 adds a batch axis in front of every input and output and an optional sequence_lens
// input; it runs as one Scan-9 per batch entry.
#include <memory>

#include "exec/kernels/common/copy.h"
#include "exec/kernels/common/shape.h"
#include "exec/kernels/control/body.h"
#include "exec/kernels/control/slices.h"
#include "exec/kernels/families.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

struct ScanConfig {
  size_t states = 0;
  size_t scan_inputs = 0;
  size_t scan_outputs = 0;
  std::vector<int64_t> input_axes;      // per scan input, may be negative
  std::vector<int64_t> input_reverse;   // per scan input: 1 reads the last slice first
  std::vector<int64_t> output_axes;     // per scan output, may be negative
  std::vector<int64_t> output_reverse;  // per scan output: 1 writes the last slice first
};

Result<std::vector<int64_t>> PerItem(const Attributes& attrs, std::string_view name, size_t count,
                                     int64_t fallback) {
  EPCTX_ASSIGN_OR_RETURN(std::vector<int64_t> v, attrs.GetInts(name));
  if (v.empty()) return std::vector<int64_t>(count, fallback);
  if (v.size() != count) {
    return EPCTX_ERROR(kInvalidArgument, "attribute {} has {} entries, expected {}", name, v.size(),
                       count);
  }
  return v;
}

class ScanKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node) {
    const bool batched = node.opset < 9;
    const size_t explicit_inputs = node.inputs.size() - node.implicit_inputs;
    const size_t leading = batched ? 1 : 0;  // Scan-8's sequence_lens
    EPCTX_ASSIGN_OR_RETURN(const AttributeValue* m,
                           node.attrs->Require("num_scan_inputs", AttrType::kInt));
    if (m->i < 1 || static_cast<size_t>(m->i) + leading > explicit_inputs) {
      return EPCTX_ERROR(kInvalidArgument, "num_scan_inputs {} does not fit {} inputs", m->i,
                         explicit_inputs);
    }
    ScanConfig config;
    config.scan_inputs = static_cast<size_t>(m->i);
    config.states = explicit_inputs - leading - config.scan_inputs;
    EPCTX_ASSIGN_OR_RETURN(Body body, Body::Bind(node, "body", config.states + config.scan_inputs));
    if (body.output_count() != node.outputs.size() || body.output_count() < config.states) {
      return EPCTX_ERROR(kInvalidArgument, "Scan has {} outputs but its body returns {}",
                         node.outputs.size(), body.output_count());
    }
    config.scan_outputs = body.output_count() - config.states;
    const Attributes& attrs = *node.attrs;
    if (batched) {
      EPCTX_ASSIGN_OR_RETURN(config.input_reverse,
                             PerItem(attrs, "directions", config.scan_inputs, 0));
      config.input_axes.assign(config.scan_inputs, 0);
      config.output_axes.assign(config.scan_outputs, 0);
      config.output_reverse.assign(config.scan_outputs, 0);
    } else {
      EPCTX_ASSIGN_OR_RETURN(config.input_axes,
                             PerItem(attrs, "scan_input_axes", config.scan_inputs, 0));
      EPCTX_ASSIGN_OR_RETURN(config.input_reverse,
                             PerItem(attrs, "scan_input_directions", config.scan_inputs, 0));
      EPCTX_ASSIGN_OR_RETURN(config.output_axes,
                             PerItem(attrs, "scan_output_axes", config.scan_outputs, 0));
      EPCTX_ASSIGN_OR_RETURN(config.output_reverse,
                             PerItem(attrs, "scan_output_directions", config.scan_outputs, 0));
    }
    return std::unique_ptr<Kernel>(
        new ScanKernel(std::move(body), std::move(config), batched, explicit_inputs));
  }

  Status Run(KernelContext& ctx) override {
    const size_t leading = batched_ ? 1 : 0;
    std::vector<Tensor> states, scan_inputs;
    for (size_t i = 0; i < config_.states; ++i) {
      EPCTX_ASSIGN_OR_RETURN(const Tensor* t, RequiredInput(ctx, leading + i, "initial state"));
      states.push_back(*t);
    }
    for (size_t j = 0; j < config_.scan_inputs; ++j) {
      EPCTX_ASSIGN_OR_RETURN(const Tensor* t,
                             RequiredInput(ctx, leading + config_.states + j, "scan input"));
      scan_inputs.push_back(*t);
    }
    EPCTX_ASSIGN_OR_RETURN(std::vector<Tensor> captures, CaptureInputs(ctx, explicit_inputs_));
    EPCTX_ASSIGN_OR_RETURN(AlignedBuffer arena, body_.NewArena());

    std::vector<Tensor> outputs;
    if (!batched_) {
      EPCTX_ASSIGN_OR_RETURN(outputs,
                             ScanOnce(states, scan_inputs, captures, arena, ctx.run_control()));
    } else {
      EPCTX_ASSIGN_OR_RETURN(outputs, ScanBatch(ctx.input(0), states, scan_inputs, captures, arena,
                                                ctx.run_control()));
    }
    for (size_t o = 0; o < outputs.size(); ++o) {
      EPCTX_RETURN_IF_ERROR(CopyToOutput(ctx, o, outputs[o], outputs[o].shape()));
    }
    return Status::Ok();
  }

 private:
  ScanKernel(Body body, ScanConfig config, bool batched, size_t explicit_inputs)
      : body_(std::move(body)),
        config_(std::move(config)),
        batched_(batched),
        explicit_inputs_(explicit_inputs) {}

  // One Scan-9 run: the final states followed by the stacked scan outputs.
  Result<std::vector<Tensor>> ScanOnce(std::vector<Tensor> states,
                                       const std::vector<Tensor>& scan_inputs,
                                       const std::vector<Tensor>& captures, AlignedBuffer& arena,
                                       const RunControl& control) const {
    std::vector<int64_t> axes;
    int64_t length = -1;
    for (size_t j = 0; j < scan_inputs.size(); ++j) {
      const int64_t rank = static_cast<int64_t>(scan_inputs[j].shape().size());
      EPCTX_ASSIGN_OR_RETURN(int64_t axis,
                             NormalizeAxis(config_.input_axes[j], rank, "scan_input_axes"));
      const int64_t len = scan_inputs[j].shape()[static_cast<size_t>(axis)];
      if (length >= 0 && len != length) {
        return EPCTX_ERROR(kInvalidArgument,
                           "scan inputs have different lengths along their scan axes: {} and {}",
                           length, len);
      }
      length = len;
      axes.push_back(axis);
    }
    std::vector<std::vector<Tensor>> scanned(config_.scan_outputs);
    std::vector<Tensor> inputs(states);
    inputs.resize(config_.states + config_.scan_inputs);
    inputs.insert(inputs.end(), captures.begin(), captures.end());
    for (int64_t t = 0; t < length; ++t) {
      EPCTX_RETURN_IF_ERROR(control.CheckTerminate(fmt::format("in Scan step {}", t)));
      for (size_t j = 0; j < scan_inputs.size(); ++j) {
        const int64_t at = config_.input_reverse[j] ? length - 1 - t : t;
        EPCTX_ASSIGN_OR_RETURN(inputs[config_.states + j], SliceAlong(scan_inputs[j], axes[j], at));
      }
      EPCTX_ASSIGN_OR_RETURN(std::vector<Tensor> outputs, body_.Run(inputs, arena, control));
      for (size_t s = 0; s < config_.states; ++s) inputs[s] = std::move(outputs[s]);
      for (size_t k = 0; k < config_.scan_outputs; ++k) {
        scanned[k].push_back(std::move(outputs[config_.states + k]));
      }
    }
    std::vector<Tensor> results(inputs.begin(),
                                inputs.begin() + static_cast<int64_t>(config_.states));
    for (size_t k = 0; k < config_.scan_outputs; ++k) {
      if (scanned[k].empty()) {
        return EPCTX_ERROR(kUnsupported, "scan inputs of length 0 are not supported");
      }
      const int64_t rank = static_cast<int64_t>(scanned[k][0].shape().size());
      EPCTX_ASSIGN_OR_RETURN(int64_t axis,
                             NormalizeAxis(config_.output_axes[k], rank + 1, "scan_output_axes"));
      EPCTX_ASSIGN_OR_RETURN(
          Tensor stacked,
          StackAlong(scanned[k], axis, config_.output_reverse[k] != 0, "scan outputs"));
      results.push_back(std::move(stacked));
    }
    return results;
  }

  // Scan-8: every input and output has a batch axis in front; each entry is one Scan-9 run.
  Result<std::vector<Tensor>> ScanBatch(const Tensor* sequence_lens,
                                        const std::vector<Tensor>& states,
                                        const std::vector<Tensor>& scan_inputs,
                                        const std::vector<Tensor>& captures, AlignedBuffer& arena,
                                        const RunControl& control) const {
    if (scan_inputs[0].shape().size() < 2) {
      return EPCTX_ERROR(kInvalidArgument, "Scan-8 scan inputs need a batch and a sequence axis");
    }
    const int64_t batch = scan_inputs[0].shape()[0];
    const int64_t length = scan_inputs[0].shape()[1];
    if (sequence_lens != nullptr) {
      EPCTX_ASSIGN_OR_RETURN(std::vector<int64_t> lens,
                             ReadIndexVector(*sequence_lens, "sequence_lens"));
      for (int64_t len : lens) {
        if (len != length) {
          return EPCTX_ERROR(kUnsupported,
                             "Scan-8 with sequence_lens shorter than the sequence ({} of {}) is "
                             "not supported",
                             len, length);
        }
      }
    }
    std::vector<std::vector<Tensor>> per_output;
    for (int64_t b = 0; b < batch; ++b) {
      std::vector<Tensor> batch_states, batch_inputs;
      for (const Tensor& s : states) {
        if (s.shape().empty() || s.shape()[0] != batch) {
          return EPCTX_ERROR(kInvalidArgument, "Scan-8 state {} lacks the batch axis of {}",
                             ShapeToString(s.shape()), batch);
        }
        EPCTX_ASSIGN_OR_RETURN(Tensor slice, SliceAlong(s, 0, b));
        batch_states.push_back(std::move(slice));
      }
      for (const Tensor& x : scan_inputs) {
        if (x.shape().size() < 2 || x.shape()[0] != batch) {
          return EPCTX_ERROR(kInvalidArgument, "Scan-8 scan input {} lacks the batch axis of {}",
                             ShapeToString(x.shape()), batch);
        }
        EPCTX_ASSIGN_OR_RETURN(Tensor slice, SliceAlong(x, 0, b));
        batch_inputs.push_back(std::move(slice));
      }
      EPCTX_ASSIGN_OR_RETURN(
          std::vector<Tensor> outputs,
          ScanOnce(std::move(batch_states), batch_inputs, captures, arena, control));
      per_output.resize(outputs.size());
      for (size_t o = 0; o < outputs.size(); ++o) per_output[o].push_back(std::move(outputs[o]));
    }
    std::vector<Tensor> results;
    for (const std::vector<Tensor>& parts : per_output) {
      EPCTX_ASSIGN_OR_RETURN(Tensor stacked, StackAlong(parts, 0, false, "batch entries"));
      results.push_back(std::move(stacked));
    }
    if (batch == 0) return EPCTX_ERROR(kUnsupported, "Scan-8 with an empty batch is not supported");
    return results;
  }

  Body body_;
  ScanConfig config_;
  bool batched_;
  size_t explicit_inputs_;
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateScan(const NodeInfo& node) {
  return ScanKernel::Create(node);
}

}  // namespace epctx::exec::kernels
