// A control-flow body bound for one node: the bound program plus what the node's kernel needs to
// call it (its input and output counts, arena size, declared output types).
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "epctx/status.h"
#include "epctx/tensor.h"
#include "exec/executor.h"
#include "exec/kernel.h"
#include "util/aligned_buffer.h"

namespace epctx::exec::kernels {

class Body {
 public:
  // Binds the body held by graph attribute `attr` of `node`. The body must take `formal_inputs`
  // inputs of its own followed by the node's implicit inputs.
  static Result<Body> Bind(const NodeInfo& node, std::string_view attr, size_t formal_inputs);

  size_t output_count() const { return program_->output_count(); }
  // Declared type of body output `index` (kUndefined when the compiler did not know it) and its
  // shape, empty when unknown.
  DataType output_dtype(size_t index) const;
  std::vector<int64_t> output_shape(size_t index, bool* known) const;

  // Activation memory for Run; one per concurrent caller, reusable across calls.
  Result<AlignedBuffer> NewArena() const;
  // Runs the body on `inputs` (its own inputs followed by the captures) within the run's limits.
  Result<std::vector<Tensor>> Run(std::span<const Tensor> inputs, AlignedBuffer& arena,
                                  const RunControl& control) const;
  // "<node> attribute '<attr>'", for messages.
  const std::string& name() const { return name_; }

 private:
  std::shared_ptr<const BoundProgram> program_;
  std::string name_;  // "<node> attribute '<attr>'" for messages
};

// The node's implicit inputs (captures of its bodies) as tensors, in order.
Result<std::vector<Tensor>> CaptureInputs(const KernelContext& ctx, size_t explicit_inputs);

}  // namespace epctx::exec::kernels
