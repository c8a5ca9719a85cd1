// Rules of element-wise operators: the output has the input's shape (unary) or the broadcast of
// the inputs' shapes; on integer shape tensors, arithmetic, comparisons, Where, Max and Min are
// also applied to the tracked elements when the result is decidable.
#include <functional>

#include "compile/symbolic/rules.h"

namespace epctx::compile::symbolic {
namespace {

using Element = std::optional<DimExpr>;
using ElementOp = std::function<Element(const Element&, const Element&)>;

void SameShapeRule(const NodeContext& ctx, std::vector<ValueFacts>& out) {
  out[0].shape = ctx.shape(0);
}

// Dropout and the like: every output has the input's shape.
void AllOutputsSameShapeRule(const NodeContext& ctx, std::vector<ValueFacts>& out) {
  for (ValueFacts& o : out) o.shape = ctx.shape(0);
}

// Applies `op` element by element with broadcasting, when every input's elements are tracked
// and the inputs have rank 0 or 1.
std::optional<Data> ApplyToData(const NodeContext& ctx, size_t first, size_t count,
                                const ElementOp& op) {
  size_t n = 1;
  for (size_t i = first; i < first + count; ++i) {
    const std::optional<Data>& d = ctx.in(i).data;
    if (!d || !ctx.shape(i) || ctx.shape(i)->size() > 1) return std::nullopt;
    if (d->size() != 1) {
      if (n != 1 && n != d->size()) return std::nullopt;
      n = d->size();
    }
  }
  Data out(n);
  for (size_t k = 0; k < n; ++k) {
    Element acc;
    for (size_t i = first; i < first + count; ++i) {
      const Data& d = *ctx.in(i).data;
      const Element& e = d[d.size() == 1 ? 0 : k];
      acc = i == first ? e : op(acc, e);
    }
    out[k] = acc;
  }
  return out;
}

std::optional<Shape> BroadcastInputs(const NodeContext& ctx, size_t first, size_t count) {
  std::optional<Shape> shape = ctx.shape(first);
  for (size_t i = first + 1; i < first + count; ++i) {
    shape = Broadcast(shape, ctx.shape(i), ctx.symbols());
  }
  return shape;
}

Element Truth(std::optional<bool> b) {
  if (!b) return std::nullopt;
  return DimExpr::Constant(*b ? 1 : 0);
}

std::optional<int64_t> ConstOf(const Element& e) {
  return e ? e->AsConstant() : std::nullopt;
}

// C-style (truncating) integer division, as ONNX's Div on integers.
Element IntDiv(const Element& a, const Element& b) {
  std::optional<int64_t> cb = ConstOf(b);
  if (!a || !cb || *cb == 0) return std::nullopt;
  if (std::optional<int64_t> ca = ConstOf(a)) {
    if (*ca == INT64_MIN && *cb == -1) return std::nullopt;
    return DimExpr::Constant(*ca / *cb);
  }
  // Truncation is floor division when both are non-negative.
  std::optional<int64_t> lo = a->LowerBound();
  if (*cb > 0 && lo && *lo >= 0) return FloorDiv(*a, *cb);
  return std::nullopt;
}

ElementOp OpFor(std::string_view op) {
  auto both = [](auto f) -> ElementOp {
    return [f](const Element& a, const Element& b) -> Element {
      if (!a || !b) return std::nullopt;
      return f(*a, *b);
    };
  };
  if (op == "Add" || op == "Sum") return both([](auto& a, auto& b) { return Add(a, b); });
  if (op == "Sub") return both([](auto& a, auto& b) { return Sub(a, b); });
  if (op == "Mul") return both([](auto& a, auto& b) { return Mul(a, b); });
  if (op == "Div") return IntDiv;
  if (op == "Max") return both([](auto& a, auto& b) { return MaxOf(a, b); });
  if (op == "Min") return both([](auto& a, auto& b) { return MinOf(a, b); });
  if (op == "Equal") return both([](auto& a, auto& b) { return Truth(ProvablyEqual(a, b)); });
  auto compare = [](auto decide) -> ElementOp {
    return [decide](const Element& a, const Element& b) -> Element {
      if (!a || !b) return std::nullopt;
      std::optional<int> c = Compare(*a, *b);
      if (!c) {
        // a >= b or a <= b may still be provable without the sign being fixed.
        if (ProvablyGE(*a, *b)) return decide(std::nullopt, true, false);
        if (ProvablyLE(*a, *b)) return decide(std::nullopt, false, true);
        return std::nullopt;
      }
      return decide(c, *c >= 0, *c <= 0);
    };
  };
  // decide(sign, a >= b known true, a <= b known true)
  if (op == "Less") {
    return compare([](std::optional<int> c, bool ge, bool) -> Element {
      if (c) return Truth(*c < 0);
      return ge ? Truth(false) : std::nullopt;
    });
  }
  if (op == "Greater") {
    return compare([](std::optional<int> c, bool, bool le) -> Element {
      if (c) return Truth(*c > 0);
      return le ? Truth(false) : std::nullopt;
    });
  }
  if (op == "LessOrEqual") {
    return compare([](std::optional<int> c, bool, bool le) -> Element {
      if (c) return Truth(*c <= 0);
      return le ? Truth(true) : std::nullopt;
    });
  }
  if (op == "GreaterOrEqual") {
    return compare([](std::optional<int> c, bool ge, bool) -> Element {
      if (c) return Truth(*c >= 0);
      return ge ? Truth(true) : std::nullopt;
    });
  }
  auto logical = [](auto f) -> ElementOp {
    return [f](const Element& a, const Element& b) -> Element {
      std::optional<int64_t> ca = ConstOf(a), cb = ConstOf(b);
      if (!ca || !cb) return std::nullopt;
      return Truth(f(*ca != 0, *cb != 0));
    };
  };
  if (op == "And") return logical([](bool a, bool b) { return a && b; });
  if (op == "Or") return logical([](bool a, bool b) { return a || b; });
  if (op == "Xor") return logical([](bool a, bool b) { return a != b; });
  return nullptr;
}

// Broadcasting operators over all their inputs; integer elements are computed when the op has an
// element rule.
void BroadcastRule(const NodeContext& ctx, std::vector<ValueFacts>& out) {
  const size_t n = ctx.input_count();
  out[0].shape = BroadcastInputs(ctx, 0, n);
  if (!IsTrackedIntType(ctx.dtype(0))) return;
  if (ElementOp op = OpFor(ctx.node().op_type)) out[0].data = ApplyToData(ctx, 0, n, op);
}

void WhereRule(const NodeContext& ctx, std::vector<ValueFacts>& out) {
  out[0].shape = BroadcastInputs(ctx, 0, 3);
  if (!IsTrackedIntType(ctx.dtype(1))) return;
  // Pick x or y element by element where the condition is known.
  const std::optional<Data>& c = ctx.in(0).data;
  const std::optional<Data>& x = ctx.in(1).data;
  const std::optional<Data>& y = ctx.in(2).data;
  if (!c || !x || !y) return;
  for (size_t i = 0; i < 3; ++i) {
    if (!ctx.shape(i) || ctx.shape(i)->size() > 1) return;
  }
  size_t n = 1;
  for (const Data* d : {&*c, &*x, &*y}) {
    if (d->size() == 1) continue;
    if (n != 1 && n != d->size()) return;
    n = d->size();
  }
  Data data(n);
  for (size_t k = 0; k < n; ++k) {
    auto at = [k](const Data& d) -> const Element& { return d[d.size() == 1 ? 0 : k]; };
    std::optional<int64_t> cond = ConstOf(at(*c));
    if (cond) data[k] = *cond != 0 ? at(*x) : at(*y);
  }
  out[0].data = std::move(data);
}

void NotRule(const NodeContext& ctx, std::vector<ValueFacts>& out) {
  out[0].shape = ctx.shape(0);
  if (!ctx.in(0).data) return;
  Data data;
  for (const Element& e : *ctx.in(0).data) {
    std::optional<int64_t> c = ConstOf(e);
    data.push_back(c ? Truth(*c == 0) : std::nullopt);
  }
  out[0].data = std::move(data);
}

void NegRule(const NodeContext& ctx, std::vector<ValueFacts>& out) {
  out[0].shape = ctx.shape(0);
  if (!ctx.in(0).data || !IsTrackedIntType(ctx.dtype(0))) return;
  Data data;
  for (const Element& e : *ctx.in(0).data) data.push_back(e ? Scale(*e, -1) : std::nullopt);
  out[0].data = std::move(data);
}

}  // namespace

Rule FindElementwiseRule(std::string_view op) {
  static const std::string_view kSameShape[] = {
      "Abs",
      "Acos",
      "Acosh",
      "Asin",
      "Asinh",
      "Atan",
      "Atanh",
      "BitwiseNot",
      "Ceil",
      "Celu",
      "Clip",
      "Cos",
      "Cosh",
      "CumSum",
      "DequantizeLinear",
      "Elu",
      "Erf",
      "Exp",
      "Floor",
      "Gelu",
      "HardSigmoid",
      "HardSwish",
      "Hardmax",
      "IsInf",
      "IsNaN",
      "LeakyRelu",
      "Log",
      "LogSoftmax",
      "LpNormalization",
      "LRN",
      "MeanVarianceNormalization",
      "Mish",
      "QuantizeLinear",
      "Reciprocal",
      "Relu",
      "Round",
      "Selu",
      "Shrink",
      "Sigmoid",
      "Sign",
      "Sin",
      "Sinh",
      "Softmax",
      "Softplus",
      "Softsign",
      "Sqrt",
      "Tan",
      "Tanh",
      "ThresholdedRelu",
      "Trilu",
      "InstanceNormalization",
      "BatchNormalization",
  };
  static const std::string_view kBroadcast[] = {
      "Add",
      "Sub",
      "Mul",
      "Div",
      "Pow",
      "Mod",
      "Equal",
      "Less",
      "Greater",
      "LessOrEqual",
      "GreaterOrEqual",
      "And",
      "Or",
      "Xor",
      "Max",
      "Min",
      "Sum",
      "Mean",
      "BitShift",
      "BitwiseAnd",
      "BitwiseOr",
      "BitwiseXor",
      "PRelu",
  };
  for (std::string_view name : kSameShape) {
    if (name == op) return SameShapeRule;
  }
  for (std::string_view name : kBroadcast) {
    if (name == op) return BroadcastRule;
  }
  if (op == "Dropout") return AllOutputsSameShapeRule;
  if (op == "Where") return WhereRule;
  if (op == "Not") return NotRule;
  if (op == "Neg") return NegRule;
  return nullptr;
}

}  // namespace epctx::compile::symbolic
