#include "compile/symbolic/symbolic_shapes.h"

#include <cstring>
#include <set>

#include "compile/symbolic/rules.h"
#include "util/logging.h"

namespace epctx::compile {
namespace {

using symbolic::Data;
using symbolic::DimExpr;
using symbolic::NodeContext;
using symbolic::Shape;
using symbolic::SymbolTable;
using symbolic::ValueFacts;

void CollectDimNames(const IrGraph& g, std::set<std::string>& names) {
  for (const IrValue& v : g.values) {
    for (const std::string& n : v.dim_names) {
      if (!n.empty()) names.insert(n);
    }
  }
  for (const IrNode& n : g.nodes) {
    for (const IrAttribute& a : n.attrs) {
      if (a.body) CollectDimNames(*a.body, names);
    }
  }
}

// The elements of a small integer constant.
std::optional<Data> ConstantElements(const ConstantData& c) {
  if (c.layout != 0 || c.shape.size() > 1 || !symbolic::IsTrackedIntType(c.dtype)) {
    return std::nullopt;
  }
  const size_t size = DataTypeSize(c.dtype);
  if (size == 0 || c.bytes.size() % size != 0) return std::nullopt;
  const size_t count = c.bytes.size() / size;
  if (count > symbolic::kMaxTrackedElements) return std::nullopt;
  Data out;
  for (size_t i = 0; i < count; ++i) {
    const std::byte* p = c.bytes.data() + i * size;
    int64_t v = 0;
    switch (c.dtype) {
      case DataType::kInt64:
        std::memcpy(&v, p, 8);
        break;
      case DataType::kInt32: {
        int32_t x;
        std::memcpy(&x, p, 4);
        v = x;
        break;
      }
      case DataType::kUint32: {
        uint32_t x;
        std::memcpy(&x, p, 4);
        v = x;
        break;
      }
      case DataType::kInt16: {
        int16_t x;
        std::memcpy(&x, p, 2);
        v = x;
        break;
      }
      case DataType::kUint16: {
        uint16_t x;
        std::memcpy(&x, p, 2);
        v = x;
        break;
      }
      case DataType::kInt8:
        v = static_cast<int8_t>(*p);
        break;
      case DataType::kUint8:
        v = static_cast<uint8_t>(*p);
        break;
      case DataType::kBool:
        v = *p != std::byte{0};
        break;
      default:
        return std::nullopt;
    }
    out.push_back(DimExpr::Constant(v));
  }
  return out;
}

// Infers one graph; bodies get a GraphInference of their own sharing the symbol table.
class GraphInference {
 public:
  GraphInference(IrGraph& graph, SymbolTable& symbols, SymbolicShapeStats& stats)
      : g_(graph), symbols_(symbols), stats_(stats), facts_(graph.values.size()) {}

  void Seed(int value, const ValueFacts& facts) { facts_[static_cast<size_t>(value)] = facts; }

  const ValueFacts& FactsOf(int value) {
    std::optional<ValueFacts>& f = facts_[static_cast<size_t>(value)];
    if (!f) f = FromIr(g_.values[static_cast<size_t>(value)]);
    return *f;
  }

  void Run() {
    for (IrNode& node : g_.nodes) InferNode(node);
    WriteBack();
  }

 private:
  // What the IR (ONNX's inference, or the model's declarations) says; an unnamed unknown dim
  // becomes a fresh atom, used by every reader of the value.
  ValueFacts FromIr(const IrValue& v) {
    ValueFacts f;
    if (v.constant) {
      f.shape = Shape();
      for (int64_t d : v.constant->shape) f.shape->push_back(DimExpr::Constant(d));
      f.data = ConstantElements(*v.constant);
      return f;
    }
    if (!v.shape_known) return f;
    f.shape = Shape();
    for (size_t i = 0; i < v.shape.size(); ++i) f.shape->push_back(IrDim(v, i));
    return f;
  }

  DimExpr IrDim(const IrValue& v, size_t i) {
    if (v.shape[i] >= 0) return DimExpr::Constant(v.shape[i]);
    if (i < v.dim_names.size() && !v.dim_names[i].empty()) {
      return symbols_.Canonical(DimExpr::Atom(v.dim_names[i]));
    }
    return symbols_.Fresh();
  }

  // Combines ONNX's knowledge of a node output with the rule's: ONNX's static dims win, a dim both
  // know is recorded as one, and the rest comes from whichever knows it.
  ValueFacts Merge(const IrValue& v, ValueFacts mine) {
    ValueFacts out;
    if (!v.shape_known) {
      out.shape = mine.shape;
    } else if (!mine.shape || mine.shape->size() != v.shape.size()) {
      if (mine.shape) {
        Logger().debug("symbolic shapes: '{}' has rank {} by ONNX's inference but {} by ours",
                       v.name, v.shape.size(), mine.shape->size());
      }
      out.shape = FromIr(v).shape;
    } else {
      out.shape = Shape();
      for (size_t i = 0; i < v.shape.size(); ++i) {
        const DimExpr m = symbols_.Canonical((*mine.shape)[i]);
        const bool named = i < v.dim_names.size() && !v.dim_names[i].empty();
        if (v.shape[i] < 0 && !named) {
          out.shape->push_back(m);
          continue;
        }
        const DimExpr o = IrDim(v, i);
        if (!symbols_.Unite(o, m)) {
          Logger().debug("symbolic shapes: '{}' dim {} is {} by ONNX's inference but {} by ours",
                         v.name, i, o.key(), m.key());
        }
        out.shape->push_back(symbols_.Canonical(o));
      }
    }
    if (out.shape) {
      for (DimExpr& d : *out.shape) d = symbols_.Canonical(d);
    }
    // Contents go with a shape of the same element count.
    if (mine.data && out.shape && out.shape->size() <= 1 && symbolic::IsTrackedIntType(v.dtype)) {
      const int64_t n = static_cast<int64_t>(mine.data->size());
      std::optional<int64_t> len = out.shape->empty() ? 1 : (*out.shape)[0].AsConstant();
      if (len == n || (!len && out.shape->size() == 1)) {
        if (!len) (*out.shape)[0] = DimExpr::Constant(n);
        out.data = std::move(mine.data);
      }
    }
    return out;
  }

  void InferNode(IrNode& node) {
    std::vector<const ValueFacts*> ins;
    for (int i : node.inputs) ins.push_back(i < 0 ? nullptr : &FactsOf(i));
    std::vector<ValueFacts> outs(node.outputs.size());
    if (node.has_bodies()) {
      InferControlFlow(node, ins, outs);
    } else if (node.domain.empty()) {
      if (symbolic::Rule rule = symbolic::FindRule(node.op_type)) {
        NodeContext ctx(g_, node, ins, symbols_);
        rule(ctx, outs);
      }
    }
    for (size_t o = 0; o < node.outputs.size(); ++o) {
      const int v = node.outputs[o];
      if (v < 0) continue;
      facts_[static_cast<size_t>(v)] = Merge(g_.values[static_cast<size_t>(v)], std::move(outs[o]));
      produced_.insert(v);
    }
  }

  // Bodies see the facts of the values they capture; an If's outputs are what both branches
  // agree on (or the taken branch's, when the condition is known).
  void InferControlFlow(IrNode& node, const std::vector<const ValueFacts*>& ins,
                        std::vector<ValueFacts>& outs) {
    std::vector<std::vector<ValueFacts>> branch_outputs;
    for (IrAttribute& a : node.attrs) {
      if (!a.body) continue;
      IrGraph& body = *a.body;
      GraphInference inner(body, symbols_, stats_);
      const size_t captured = static_cast<size_t>(node.implicit_inputs);
      const bool seeded = captured <= body.inputs.size() && captured <= ins.size();
      for (size_t k = 0; seeded && k < captured; ++k) {
        const ValueFacts* outer = ins[ins.size() - captured + k];
        if (outer != nullptr) inner.Seed(body.inputs[body.inputs.size() - captured + k], *outer);
      }
      inner.Run();
      std::vector<ValueFacts> results;
      for (int o : body.outputs) results.push_back(inner.FactsOf(o));
      branch_outputs.push_back(std::move(results));
    }
    if (node.op_type != "If" || !node.domain.empty() || branch_outputs.size() != 2) return;
    const IrAttribute* then_attr = node.FindAttr("then_branch");
    const bool then_first = then_attr != nullptr && then_attr == &node.attrs.front();
    const std::vector<ValueFacts>& then_out = branch_outputs[then_first ? 0 : 1];
    const std::vector<ValueFacts>& else_out = branch_outputs[then_first ? 1 : 0];
    std::optional<int64_t> cond;
    if (ins[0] != nullptr && ins[0]->data && ins[0]->data->size() == 1 && (*ins[0]->data)[0]) {
      cond = (*ins[0]->data)[0]->AsConstant();
    }
    for (size_t o = 0; o < outs.size() && o < then_out.size() && o < else_out.size(); ++o) {
      if (cond) {
        outs[o] = *cond != 0 ? then_out[o] : else_out[o];
        continue;
      }
      const std::optional<Shape>& a = then_out[o].shape;
      const std::optional<Shape>& b = else_out[o].shape;
      if (!a || !b || a->size() != b->size()) continue;
      Shape shape;
      for (size_t d = 0; d < a->size(); ++d) {
        shape.push_back((*a)[d] == (*b)[d] ? (*a)[d] : symbols_.Fresh());
      }
      outs[o].shape = shape;
      if (then_out[o].data && else_out[o].data) {
        Data data;
        const Data& da = *then_out[o].data;
        const Data& db = *else_out[o].data;
        if (da.size() != db.size()) continue;
        for (size_t k = 0; k < da.size(); ++k) {
          data.push_back(da[k] && db[k] && *da[k] == *db[k] ? da[k] : std::nullopt);
        }
        outs[o].data = std::move(data);
      }
    }
  }

  // Node outputs get what was learnt; graph inputs and outputs keep their declarations.
  void WriteBack() {
    std::set<int> io(g_.inputs.begin(), g_.inputs.end());
    io.insert(g_.outputs.begin(), g_.outputs.end());
    for (int index : produced_) {
      IrValue& v = g_.values[static_cast<size_t>(index)];
      stats_.values++;
      if (!v.shape_known) stats_.unknown_rank_before++;
      const std::optional<Shape>& shape = facts_[static_cast<size_t>(index)]->shape;
      if (io.count(index) > 0 || v.is_constant() || !shape ||
          (v.shape_known && v.shape.size() != shape->size())) {
        if (!v.shape_known) stats_.unknown_rank_after++;
        continue;
      }
      std::vector<int64_t> dims;
      std::vector<std::string> names;
      bool valid = true;
      int improved = 0;
      for (size_t i = 0; i < shape->size(); ++i) {
        const DimExpr e = symbols_.Canonical((*shape)[i]);
        const bool was_static = v.shape_known && v.shape[i] >= 0;
        const bool was_named = v.shape_known && i < v.dim_names.size() && !v.dim_names[i].empty();
        if (was_static) {
          dims.push_back(v.shape[i]);
          names.emplace_back();
          continue;
        }
        if (std::optional<int64_t> c = e.AsConstant()) {
          valid &= *c >= 0;
          dims.push_back(*c);
          names.emplace_back();
          improved++;
          continue;
        }
        dims.push_back(-1);
        names.push_back(symbols_.NameOf(e));
        if (!was_named) improved++;
      }
      if (!valid) {
        if (!v.shape_known) stats_.unknown_rank_after++;
        continue;
      }
      v.shape_known = true;
      v.shape = std::move(dims);
      v.dim_names = std::move(names);
      stats_.dims_improved += improved;
    }
  }

  IrGraph& g_;
  SymbolTable& symbols_;
  SymbolicShapeStats& stats_;
  std::vector<std::optional<ValueFacts>> facts_;
  std::set<int> produced_;
};

}  // namespace

SymbolicShapeStats InferSymbolicShapes(IrGraph& graph) {
  std::set<std::string> reserved, declared;
  CollectDimNames(graph, reserved);
  for (int i : graph.inputs) {
    for (const std::string& n : graph.values[static_cast<size_t>(i)].dim_names) {
      if (!n.empty()) declared.insert(n);
    }
  }
  SymbolTable symbols(std::move(reserved), std::move(declared));
  SymbolicShapeStats stats;
  GraphInference(graph, symbols, stats).Run();
  Logger().debug(
      "symbolic shapes: {} node outputs, {} without a rank after ONNX's inference, {} after ours; "
      "{} dims improved",
      stats.values, stats.unknown_rank_before, stats.unknown_rank_after, stats.dims_improved);
  return stats;
}

}  // namespace epctx::compile
