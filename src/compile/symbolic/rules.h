// Per-operator rules of the symbolic shape inference: from what is known of a node's inputs
// (shapes as dim expressions, and the contents of small integer tensors) to what is known of its
// outputs. A rule states only what holds in every run that does not fail; anything it cannot
// tell stays unknown (no shape, or a fresh atom for one dim, or an unknown element).
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "compile/ir.h"
#include "compile/symbolic/dim_expr.h"
#include "compile/symbolic/symbol_table.h"

namespace epctx::compile::symbolic {

using Shape = std::vector<DimExpr>;
// Elements of an integer tensor of rank 0 or 1; nullopt elements are unknown (they may be
// negative, so an unknown element is never a fresh atom).
using Data = std::vector<std::optional<DimExpr>>;

// The longest integer tensor whose contents are tracked.
inline constexpr size_t kMaxTrackedElements = 64;

struct ValueFacts {
  std::optional<Shape> shape;  // nullopt: rank unknown
  std::optional<Data> data;    // set only for integer (or bool) tensors of rank 0 or 1
};

class NodeContext {
 public:
  NodeContext(const IrGraph& graph, const IrNode& node, std::vector<const ValueFacts*> inputs,
              SymbolTable& symbols)
      : graph_(graph), node_(node), inputs_(std::move(inputs)), symbols_(symbols) {}

  const IrNode& node() const { return node_; }
  int64_t opset() const { return graph_.OpsetOf(node_.domain); }
  SymbolTable& symbols() const { return symbols_; }
  size_t input_count() const { return inputs_.size(); }
  bool present(size_t i) const { return i < inputs_.size() && inputs_[i] != nullptr; }
  // Facts of input i; an absent input has no facts.
  const ValueFacts& in(size_t i) const;
  const std::optional<Shape>& shape(size_t i) const { return in(i).shape; }
  DataType dtype(size_t i) const;
  DataType output_dtype(size_t o) const;

  // Input i's contents when every element is a known constant.
  std::optional<std::vector<int64_t>> ConstInts(size_t i) const;
  // Input i's contents as one known constant (rank 0 or one element).
  std::optional<int64_t> ConstScalar(size_t i) const;
  int64_t IntAttr(std::string_view name, int64_t fallback) const;
  std::optional<std::vector<int64_t>> IntsAttr(std::string_view name) const;
  // The attribute when the node has it, else input i's constant contents (ops that moved an
  // attribute to an input across opsets: axes, split, pads, ...).
  std::optional<std::vector<int64_t>> IntsAttrOrInput(std::string_view name, size_t i) const;

  // A fresh atom for every dim of a tensor of known rank.
  Shape FreshShape(size_t rank) const;

 private:
  const IrGraph& graph_;
  const IrNode& node_;
  std::vector<const ValueFacts*> inputs_;
  SymbolTable& symbols_;
};

// Fills `outputs` (one entry per node output, preset to "nothing known").
using Rule = void (*)(const NodeContext& ctx, std::vector<ValueFacts>& outputs);

// The rule of an ONNX-domain operator, or nullptr.
Rule FindRule(std::string_view op_type);

// Families of rules, each in its own file; FindRule looks in all of them.
Rule FindShapeTensorRule(std::string_view op_type);  // rules_shape_tensors.cc
Rule FindElementwiseRule(std::string_view op_type);  // rules_elementwise.cc
Rule FindLayoutRule(std::string_view op_type);       // rules_layout.cc
Rule FindNnRule(std::string_view op_type);           // rules_nn.cc

// Shared helpers of the rules (rule_helpers.cc).

// The numpy-style broadcast of two shapes; unknown rank when either is unknown.
std::optional<Shape> Broadcast(const std::optional<Shape>& a, const std::optional<Shape>& b,
                               SymbolTable& symbols);
// The broadcast of two dims.
DimExpr BroadcastDim(const DimExpr& a, const DimExpr& b, SymbolTable& symbols);
// Two dims that every successful run has equal (Concat's other axes, MatMul's K): the one that
// says more, recording the equality.
DimExpr SameDim(const DimExpr& a, const DimExpr& b, SymbolTable& symbols);
// An axis attribute normalized to [0, rank), or nullopt when out of range.
std::optional<size_t> NormalizeAxis(int64_t axis, size_t rank);
// The product of dims, or nullopt when it cannot be expressed.
std::optional<DimExpr> Product(const std::vector<DimExpr>& dims);
// A dim computed by `e`, or a fresh atom when it could not be (or could be negative).
DimExpr DimOrFresh(const std::optional<DimExpr>& e, SymbolTable& symbols);
// The contents of a tensor, viewed as a shape (each element a dim): unknown or negative elements
// become fresh atoms; nullopt when the contents are unknown.
std::optional<Shape> DataAsShape(const std::optional<Data>& data, SymbolTable& symbols);
// A shape's dims as contents.
Data ShapeAsData(const Shape& shape);
// Whether a dtype is an integer type whose contents are tracked.
bool IsTrackedIntType(DataType dtype);

}  // namespace epctx::compile::symbolic
