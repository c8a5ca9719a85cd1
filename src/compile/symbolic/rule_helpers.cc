#include <algorithm>

#include "compile/symbolic/rules.h"

namespace epctx::compile::symbolic {

const ValueFacts& NodeContext::in(size_t i) const {
  static const ValueFacts kNothing;
  return present(i) ? *inputs_[i] : kNothing;
}

DataType NodeContext::dtype(size_t i) const {
  if (i >= node_.inputs.size() || node_.inputs[i] < 0) return DataType::kUndefined;
  return graph_.values[static_cast<size_t>(node_.inputs[i])].dtype;
}

DataType NodeContext::output_dtype(size_t o) const {
  if (o >= node_.outputs.size() || node_.outputs[o] < 0) return DataType::kUndefined;
  return graph_.values[static_cast<size_t>(node_.outputs[o])].dtype;
}

std::optional<std::vector<int64_t>> NodeContext::ConstInts(size_t i) const {
  const std::optional<Data>& data = in(i).data;
  if (!data) return std::nullopt;
  std::vector<int64_t> out;
  out.reserve(data->size());
  for (const std::optional<DimExpr>& e : *data) {
    std::optional<int64_t> c = e ? e->AsConstant() : std::nullopt;
    if (!c) return std::nullopt;
    out.push_back(*c);
  }
  return out;
}

std::optional<int64_t> NodeContext::ConstScalar(size_t i) const {
  std::optional<std::vector<int64_t>> v = ConstInts(i);
  if (!v || v->size() != 1) return std::nullopt;
  return (*v)[0];
}

int64_t NodeContext::IntAttr(std::string_view name, int64_t fallback) const {
  const IrAttribute* a = node_.FindAttr(name);
  return a != nullptr && a->type == exec::AttrType::kInt ? a->i : fallback;
}

std::optional<std::vector<int64_t>> NodeContext::IntsAttr(std::string_view name) const {
  const IrAttribute* a = node_.FindAttr(name);
  if (a == nullptr || a->type != exec::AttrType::kInts) return std::nullopt;
  return a->ints;
}

std::optional<std::vector<int64_t>> NodeContext::IntsAttrOrInput(std::string_view name,
                                                                 size_t i) const {
  if (node_.FindAttr(name) != nullptr) return IntsAttr(name);
  return ConstInts(i);
}

Shape NodeContext::FreshShape(size_t rank) const {
  Shape out;
  for (size_t d = 0; d < rank; ++d) out.push_back(symbols_.Fresh());
  return out;
}

DimExpr BroadcastDim(const DimExpr& a, const DimExpr& b, SymbolTable& symbols) {
  if (a == b) return a;
  const std::optional<int64_t> ca = a.AsConstant(), cb = b.AsConstant();
  if (ca == 1) return b;
  if (cb == 1) return a;
  if (ca && cb) return symbols.Fresh();  // two different non-1 sizes: the run fails
  // A size other than 1 is the result whichever the other dim is (it is 1 or equal).
  if (ca) return a;
  if (cb) return b;
  // min(b, X...) with every X >= 2 is 1 only when b is: the result is b in every run.
  for (auto [m, other] : {std::pair{&a, &b}, std::pair{&b, &a}}) {
    const std::vector<DimExpr>* args = m->AsMinArgs();
    if (args == nullptr || std::find(args->begin(), args->end(), *other) == args->end()) continue;
    bool others_above_one = true;
    for (const DimExpr& x : *args) {
      if (x == *other) continue;
      std::optional<int64_t> lo = x.LowerBound();
      others_above_one &= lo.has_value() && *lo >= 2;
    }
    if (others_above_one) return *other;
  }
  // Neither can be 1: they are equal.
  std::optional<int64_t> la = a.LowerBound(), lb = b.LowerBound();
  if (la && lb && *la >= 2 && *lb >= 2) return a;
  return symbols.Fresh();
}

std::optional<Shape> Broadcast(const std::optional<Shape>& a, const std::optional<Shape>& b,
                               SymbolTable& symbols) {
  if (!a || !b) return std::nullopt;
  const size_t rank = std::max(a->size(), b->size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    // Right-aligned; missing leading dims are 1.
    const DimExpr one = DimExpr::Constant(1);
    const DimExpr& da = i + a->size() >= rank ? (*a)[i + a->size() - rank] : one;
    const DimExpr& db = i + b->size() >= rank ? (*b)[i + b->size() - rank] : one;
    out[i] = BroadcastDim(da, db, symbols);
  }
  return out;
}

DimExpr SameDim(const DimExpr& a, const DimExpr& b, SymbolTable& symbols) {
  if (a == b || a.AsConstant()) return a;
  if (b.AsConstant()) return b;
  (void)symbols;
  return a;
}

std::optional<size_t> NormalizeAxis(int64_t axis, size_t rank) {
  const int64_t r = static_cast<int64_t>(rank);
  if (axis < -r || axis >= r) return std::nullopt;
  return static_cast<size_t>(axis < 0 ? axis + r : axis);
}

std::optional<DimExpr> Product(const std::vector<DimExpr>& dims) {
  std::optional<DimExpr> out = DimExpr::Constant(1);
  for (const DimExpr& d : dims) {
    if (!out) return std::nullopt;
    out = Mul(*out, d);
  }
  return out;
}

DimExpr DimOrFresh(const std::optional<DimExpr>& e, SymbolTable& symbols) {
  if (!e) return symbols.Fresh();
  std::optional<int64_t> c = e->AsConstant();
  if (c && *c < 0) return symbols.Fresh();
  return *e;
}

std::optional<Shape> DataAsShape(const std::optional<Data>& data, SymbolTable& symbols) {
  if (!data) return std::nullopt;
  Shape out;
  for (const std::optional<DimExpr>& e : *data) out.push_back(DimOrFresh(e, symbols));
  return out;
}

Data ShapeAsData(const Shape& shape) {
  return Data(shape.begin(), shape.end());
}

bool IsTrackedIntType(DataType dtype) {
  switch (dtype) {
    case DataType::kInt64:
    case DataType::kInt32:
    case DataType::kInt16:
    case DataType::kInt8:
    case DataType::kUint8:
    case DataType::kUint16:
    case DataType::kUint32:
    case DataType::kBool:
      return true;
    default:
      return false;
  }
}

Rule FindRule(std::string_view op_type) {
  for (Rule (*family)(std::string_view) :
       {FindShapeTensorRule, FindElementwiseRule, FindLayoutRule, FindNnRule}) {
    if (Rule r = family(op_type)) return r;
  }
  return nullptr;
}

}  // namespace epctx::compile::symbolic
