#include "format/control_flow_validation.h"

#include <string>
#include <string_view>

#include "epctx/tensor.h"
#include "program_generated.h"
#include "util/status_macros.h"

namespace epctx::format {
namespace {

// One control-flow node of program `program_index` and what checking it needs.
class NodeCheck {
 public:
  NodeCheck(std::span<const fb::Program* const> programs, uint32_t program_index,
            const fb::Node& node, uint32_t n)
      : programs_(programs), program_(*programs[program_index]), node_(node) {
    std::string_view name = node.name() ? node.name()->string_view() : std::string_view();
    label_ = fmt::format("program {} node {} ({} '{}')", program_index, n,
                         node.op_type()->string_view(), name);
  }

  uint32_t inputs() const { return node_.inputs() ? node_.inputs()->size() : 0; }
  uint32_t outputs() const { return node_.outputs() ? node_.outputs()->size() : 0; }
  uint32_t implicit() const { return static_cast<uint32_t>(node_.implicit_inputs()); }
  uint32_t explicit_inputs() const { return inputs() - implicit(); }

  DataType InputType(uint32_t i) const { return TypeOf(program_, node_.inputs()->Get(i)); }
  DataType OutputType(uint32_t i) const { return TypeOf(program_, node_.outputs()->Get(i)); }

  // The body program held by graph attribute `attr`.
  Result<const fb::Program*> Body(std::string_view attr) const {
    if (node_.attributes() != nullptr) {
      for (const fb::Attribute* a : *node_.attributes()) {
        if (a->type() == fb::AttrType::Graph && a->name()->string_view() == attr) {
          return programs_[static_cast<uint32_t>(a->graph())];
        }
      }
    }
    return EPCTX_ERROR(kCorrupt, "{} has no graph attribute '{}'", label_, attr);
  }

  // A body's input and output lists, with the counts the node implies.
  Status ExpectCounts(const fb::Program& body, std::string_view attr, uint32_t body_inputs,
                      uint32_t body_outputs) const {
    uint32_t have_in = body.inputs() ? body.inputs()->size() : 0;
    uint32_t have_out = body.outputs() ? body.outputs()->size() : 0;
    if (have_in != body_inputs || have_out != body_outputs) {
      return EPCTX_ERROR(kCorrupt,
                         "{}: body '{}' takes {} inputs and returns {} outputs; the node needs "
                         "{} and {}",
                         label_, attr, have_in, have_out, body_inputs, body_outputs);
    }
    return Status::Ok();
  }

  // `what` of the node has type `have` where `want` is required (undefined on either side is
  // not checked: the compiler did not know it).
  Status ExpectType(DataType have, DataType want, std::string_view what) const {
    if (have == DataType::kUndefined || want == DataType::kUndefined || have == want) {
      return Status::Ok();
    }
    return EPCTX_ERROR(kCorrupt, "{}: {} has type {}, but {} is required", label_, what,
                       DataTypeName(have), DataTypeName(want));
  }

  // The node's implicit inputs are the body's last inputs, in order.
  Status CheckCaptures(const fb::Program& body, uint32_t formal_inputs) const {
    for (uint32_t c = 0; c < implicit(); ++c) {
      EPCTX_RETURN_IF_ERROR(ExpectType(BodyInput(body, formal_inputs + c),
                                       InputType(explicit_inputs() + c),
                                       fmt::format("captured value {} in the body", c)));
    }
    return Status::Ok();
  }

  static DataType BodyInput(const fb::Program& body, uint32_t i) {
    return TypeOf(body, body.inputs()->Get(i));
  }
  static DataType BodyOutput(const fb::Program& body, uint32_t i) {
    return TypeOf(body, body.outputs()->Get(i));
  }

  const std::string& label() const { return label_; }

 private:
  static DataType TypeOf(const fb::Program& p, int32_t v) {
    if (v < 0) return DataType::kUndefined;
    return static_cast<DataType>(p.values()->Get(static_cast<uint32_t>(v))->dtype());
  }

  std::span<const fb::Program* const> programs_;
  const fb::Program& program_;
  const fb::Node& node_;
  std::string label_;
};

Status CheckIf(const NodeCheck& c) {
  if (c.explicit_inputs() != 1) {
    return EPCTX_ERROR(kCorrupt, "{}: takes 1 input (cond), has {}", c.label(),
                       c.explicit_inputs());
  }
  EPCTX_RETURN_IF_ERROR(c.ExpectType(c.InputType(0), DataType::kBool, "cond"));
  for (std::string_view attr : {"then_branch", "else_branch"}) {
    EPCTX_ASSIGN_OR_RETURN(const fb::Program* body, c.Body(attr));
    EPCTX_RETURN_IF_ERROR(c.ExpectCounts(*body, attr, c.implicit(), c.outputs()));
    EPCTX_RETURN_IF_ERROR(c.CheckCaptures(*body, 0));
    for (uint32_t o = 0; o < c.outputs(); ++o) {
      EPCTX_RETURN_IF_ERROR(c.ExpectType(NodeCheck::BodyOutput(*body, o), c.OutputType(o),
                                         fmt::format("{} output {}", attr, o)));
    }
  }
  return Status::Ok();
}

//   node inputs:  M (int64), cond (bool), N carried, captures
//   body inputs:  iteration (int64), cond (bool), N carried, captures
//   body outputs: cond (bool), N carried, K scan outputs
//   node outputs: N carried, K scanned
Status CheckLoop(const NodeCheck& c) {
  if (c.explicit_inputs() < 2) {
    return EPCTX_ERROR(kCorrupt, "{}: takes M, cond and the carried values, has {} inputs",
                       c.label(), c.explicit_inputs());
  }
  const uint32_t carried = c.explicit_inputs() - 2;
  if (c.outputs() < carried) {
    return EPCTX_ERROR(kCorrupt, "{}: {} outputs for {} carried values", c.label(), c.outputs(),
                       carried);
  }
  EPCTX_RETURN_IF_ERROR(c.ExpectType(c.InputType(0), DataType::kInt64, "the trip count M"));
  EPCTX_RETURN_IF_ERROR(c.ExpectType(c.InputType(1), DataType::kBool, "cond"));
  EPCTX_ASSIGN_OR_RETURN(const fb::Program* body, c.Body("body"));
  EPCTX_RETURN_IF_ERROR(c.ExpectCounts(*body, "body", c.inputs(), c.outputs() + 1));
  EPCTX_RETURN_IF_ERROR(c.CheckCaptures(*body, 2 + carried));
  EPCTX_RETURN_IF_ERROR(
      c.ExpectType(NodeCheck::BodyInput(*body, 0), DataType::kInt64, "the body's iteration input"));
  EPCTX_RETURN_IF_ERROR(
      c.ExpectType(NodeCheck::BodyInput(*body, 1), DataType::kBool, "the body's cond input"));
  EPCTX_RETURN_IF_ERROR(
      c.ExpectType(NodeCheck::BodyOutput(*body, 0), DataType::kBool, "the body's cond output"));
  for (uint32_t i = 0; i < carried; ++i) {
    const DataType initial = c.InputType(2 + i);
    EPCTX_RETURN_IF_ERROR(c.ExpectType(NodeCheck::BodyInput(*body, 2 + i), initial,
                                       fmt::format("carried value {} in the body", i)));
    EPCTX_RETURN_IF_ERROR(c.ExpectType(NodeCheck::BodyOutput(*body, 1 + i), initial,
                                       fmt::format("carried value {} out of the body", i)));
    EPCTX_RETURN_IF_ERROR(
        c.ExpectType(c.OutputType(i), initial, fmt::format("carried value {} out of the node", i)));
  }
  for (uint32_t k = carried; k < c.outputs(); ++k) {
    EPCTX_RETURN_IF_ERROR(c.ExpectType(NodeCheck::BodyOutput(*body, 1 + k), c.OutputType(k),
                                       fmt::format("scan output {}", k - carried)));
  }
  return Status::Ok();
}

//   node inputs:  [sequence_lens (Scan-8)], N states, M scan inputs, captures
//   body inputs:  N states, M scan-input slices, captures
//   body outputs / node outputs: N states, K scan outputs
Status CheckScan(const NodeCheck& c, const fb::Node& node, int64_t opset) {
  const uint32_t leading = opset < 9 ? 1 : 0;
  int64_t scan_inputs = -1;
  if (node.attributes() != nullptr) {
    for (const fb::Attribute* a : *node.attributes()) {
      if (a->name()->string_view() == "num_scan_inputs" && a->type() == fb::AttrType::Int) {
        scan_inputs = a->i();
      }
    }
  }
  if (scan_inputs < 1 || static_cast<uint64_t>(scan_inputs) + leading > c.explicit_inputs()) {
    return EPCTX_ERROR(kCorrupt, "{}: num_scan_inputs {} does not fit {} inputs", c.label(),
                       scan_inputs, c.explicit_inputs());
  }
  const uint32_t formal = c.explicit_inputs() - leading;
  const uint32_t states = formal - static_cast<uint32_t>(scan_inputs);
  if (c.outputs() < states) {
    return EPCTX_ERROR(kCorrupt, "{}: {} outputs for {} states", c.label(), c.outputs(), states);
  }
  EPCTX_ASSIGN_OR_RETURN(const fb::Program* body, c.Body("body"));
  EPCTX_RETURN_IF_ERROR(c.ExpectCounts(*body, "body", formal + c.implicit(), c.outputs()));
  EPCTX_RETURN_IF_ERROR(c.CheckCaptures(*body, formal));
  for (uint32_t i = 0; i < formal; ++i) {
    EPCTX_RETURN_IF_ERROR(c.ExpectType(NodeCheck::BodyInput(*body, i), c.InputType(leading + i),
                                       fmt::format("body input {}", i)));
  }
  for (uint32_t o = 0; o < c.outputs(); ++o) {
    EPCTX_RETURN_IF_ERROR(c.ExpectType(NodeCheck::BodyOutput(*body, o), c.OutputType(o),
                                       fmt::format("body output {}", o)));
  }
  for (uint32_t s = 0; s < states; ++s) {
    EPCTX_RETURN_IF_ERROR(c.ExpectType(NodeCheck::BodyOutput(*body, s), c.InputType(leading + s),
                                       fmt::format("state {} out of the body", s)));
  }
  return Status::Ok();
}

int64_t OnnxOpset(const fb::Program& program) {
  if (program.opsets() != nullptr) {
    for (const fb::OpsetImport* op : *program.opsets()) {
      if (op->domain() == nullptr || op->domain()->size() == 0) return op->version();
    }
  }
  return 1;
}

}  // namespace

Status ValidateControlFlow(std::span<const fb::Program* const> programs) {
  for (uint32_t p = 0; p < programs.size(); ++p) {
    const fb::Program& program = *programs[p];
    if (program.nodes() == nullptr) continue;
    for (uint32_t n = 0; n < program.nodes()->size(); ++n) {
      const fb::Node* node = program.nodes()->Get(n);
      if (node->domain() != nullptr && node->domain()->size() != 0) continue;
      std::string_view op = node->op_type()->string_view();
      if (op != "If" && op != "Loop" && op != "Scan") continue;
      NodeCheck check(programs, p, *node, n);
      if (op == "If") EPCTX_RETURN_IF_ERROR(CheckIf(check));
      if (op == "Loop") EPCTX_RETURN_IF_ERROR(CheckLoop(check));
      if (op == "Scan") EPCTX_RETURN_IF_ERROR(CheckScan(check, *node, OnnxOpset(program)));
    }
  }
  return Status::Ok();
}

}  // namespace epctx::format
