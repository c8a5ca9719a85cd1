#include "exec/kernels/control/body.h"

#include "util/status_macros.h"

namespace epctx::exec::kernels {

Result<Body> Body::Bind(const NodeInfo& node, std::string_view attr, size_t formal_inputs) {
  EPCTX_ASSIGN_OR_RETURN(const AttributeValue* a, node.attrs->Require(attr, AttrType::kGraph));
  if (node.bind_body == nullptr) {
    return EPCTX_ERROR(kUnsupported,
                       "{} '{}': bodies are bound only when a compiled program is loaded",
                       node.op_type, node.name);
  }
  Body body;
  body.name_ = fmt::format("{} '{}' attribute '{}'", node.op_type, node.name, attr);
  EPCTX_ASSIGN_OR_RETURN(std::unique_ptr<BoundProgram> program, (*node.bind_body)(a->graph));
  size_t want = formal_inputs + node.implicit_inputs;
  if (program->input_count() != want) {
    return EPCTX_ERROR(kInvalidArgument,
                       "{}: the body takes {} inputs, expected {} ({} + {} captured)", body.name_,
                       program->input_count(), want, formal_inputs, node.implicit_inputs);
  }
  body.program_ = std::move(program);
  return body;
}

DataType Body::output_dtype(size_t index) const {
  return program_->output_decl(index).dtype;
}

std::vector<int64_t> Body::output_shape(size_t index, bool* known) const {
  const ValueDecl& decl = program_->output_decl(index);
  *known = decl.shape_known;
  if (!decl.shape_known) return {};
  std::vector<int64_t> dims(decl.shape.begin(), decl.shape.end());
  for (int64_t d : dims) {
    if (d < 0) *known = false;
  }
  return dims;
}

Result<AlignedBuffer> Body::NewArena() const {
  AlignedBuffer arena(program_->arena_bytes(), AlignedBuffer::Fill::kUninitialized);
  if (!arena.valid()) {
    return EPCTX_ERROR(kInternal, "{}: out of memory for a {}-byte arena", name_,
                       program_->arena_bytes());
  }
  return arena;
}

Result<std::vector<Tensor>> Body::Run(std::span<const Tensor> inputs, AlignedBuffer& arena,
                                      const RunControl& control) const {
  auto outputs = program_->Run(inputs, arena.mutable_bytes(), control);
  if (!outputs.ok()) {
    return Status(outputs.status().code(),
                  fmt::format("{}: {}", name_, outputs.status().message()));
  }
  return outputs;
}

Result<std::vector<Tensor>> CaptureInputs(const KernelContext& ctx, size_t explicit_inputs) {
  std::vector<Tensor> captures;
  for (size_t i = explicit_inputs; i < ctx.input_count(); ++i) {
    const Tensor* t = ctx.input(i);
    if (t == nullptr) {
      return EPCTX_ERROR(kInternal, "captured value {} is missing", i - explicit_inputs);
    }
    captures.push_back(*t);
  }
  return captures;
}

}  // namespace epctx::exec::kernels
