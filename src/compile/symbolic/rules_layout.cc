// Rules of operators that move, split, pad, reduce or select along axes: Transpose, Split, Pad,
// the reductions, ArgMax/ArgMin, TopK, the scatter/gather-elements family, NonZero,
// DepthToSpace/SpaceToDepth and Resize with explicit sizes.
#include <algorithm>

#include "compile/symbolic/rules.h"

namespace epctx::compile::symbolic {
namespace {

void TransposeRule(const NodeContext& ctx, std::vector<ValueFacts>& out) {
  const std::optional<Shape>& in = ctx.shape(0);
  if (!in) return;
  std::vector<int64_t> perm;
  if (std::optional<std::vector<int64_t>> p = ctx.IntsAttr("perm")) {
    perm = *p;
  } else {
    for (size_t i = in->size(); i > 0; --i) perm.push_back(static_cast<int64_t>(i - 1));
  }
  if (perm.size() != in->size()) return;
  Shape shape;
  for (int64_t p : perm) {
    std::optional<size_t> axis = NormalizeAxis(p, in->size());
    if (!axis) return;
    shape.push_back((*in)[*axis]);
  }
  out[0].shape = shape;
}

void SplitRule(const NodeContext& ctx, std::vector<ValueFacts>& out) {
  const std::optional<Shape>& in = ctx.shape(0);
  if (!in) return;
  std::optional<size_t> axis = NormalizeAxis(ctx.IntAttr("axis", 0), in->size());
  if (!axis) return;
  const size_t n = out.size();
  const DimExpr& d = (*in)[*axis];
  std::vector<std::optional<DimExpr>> sizes(n);
  const bool given = ctx.node().FindAttr("split") != nullptr || ctx.present(1);
  if (given) {
    std::optional<std::vector<int64_t>> split = ctx.IntsAttrOrInput("split", 1);
    if (split && split->size() == n) {
      for (size_t k = 0; k < n; ++k) sizes[k] = DimExpr::Constant((*split)[k]);
    }
  } else if (ctx.opset() >= 18) {
    // num_outputs chunks of ceil(d / n); the last one takes the rest.
    std::optional<DimExpr> chunk = CeilDiv(d, static_cast<int64_t>(n));
    std::optional<DimExpr> before =
        chunk ? Scale(*chunk, static_cast<int64_t>(n) - 1) : std::nullopt;
    for (size_t k = 0; k + 1 < n; ++k) sizes[k] = chunk;
    if (before) sizes[n - 1] = Sub(d, *before);
  } else {
    // Equal parts, which the kernel requires to divide exactly.
    for (size_t k = 0; k < n; ++k) sizes[k] = FloorDiv(d, static_cast<int64_t>(n));
  }
  for (size_t k = 0; k < n; ++k) {
    Shape shape = *in;
    shape[*axis] = DimOrFresh(sizes[k], ctx.symbols());
    out[k].shape = shape;
  }
}

void PadRule(const NodeContext& ctx, std::vector<ValueFacts>& out) {
  const std::optional<Shape>& in = ctx.shape(0);
  if (!in) return;
  const size_t rank = in->size();
  std::optional<std::vector<int64_t>> pads = ctx.IntsAttrOrInput("pads", 1);
  std::vector<size_t> axes;
  if (ctx.present(3)) {
    std::optional<std::vector<int64_t>> a = ctx.ConstInts(3);
    if (!a) pads.reset();
    for (int64_t x : a.value_or(std::vector<int64_t>{})) {
      std::optional<size_t> axis = NormalizeAxis(x, rank);
      if (!axis) return;
      axes.push_back(*axis);
    }
  } else {
    for (size_t d = 0; d < rank; ++d) axes.push_back(d);
  }
  if (!pads || pads->size() != 2 * axes.size()) {
    out[0].shape = ctx.FreshShape(rank);
    return;
  }
  Shape shape = *in;
  for (size_t k = 0; k < axes.size(); ++k) {
    std::optional<DimExpr> d = Add(shape[axes[k]], DimExpr::Constant((*pads)[k]));
    if (d) d = Add(*d, DimExpr::Constant((*pads)[k + axes.size()]));
    shape[axes[k]] = DimOrFresh(d, ctx.symbols());
  }
  out[0].shape = shape;
}

// The shape after reducing `axes` (empty: all of them) with or without keeping them as 1s.
std::optional<Shape> Reduced(const Shape& in, const std::vector<int64_t>& axes, bool keepdims) {
  std::vector<bool> reduced(in.size(), axes.empty());
  for (int64_t a : axes) {
    std::optional<size_t> axis = NormalizeAxis(a, in.size());
    if (!axis) return std::nullopt;
    reduced[*axis] = true;
  }
  Shape shape;
  for (size_t d = 0; d < in.size(); ++d) {
    if (!reduced[d]) {
      shape.push_back(in[d]);
    } else if (keepdims) {
      shape.push_back(DimExpr::Constant(1));
    }
  }
  return shape;
}

void ReduceRule(const NodeContext& ctx, std::vector<ValueFacts>& out) {
  const std::optional<Shape>& in = ctx.shape(0);
  if (!in) return;
  const bool keepdims = ctx.IntAttr("keepdims", 1) != 0;
  const bool axes_input = ctx.node().FindAttr("axes") == nullptr && ctx.present(1);
  std::optional<std::vector<int64_t>> axes =
      axes_input ? ctx.ConstInts(1) : ctx.IntsAttr("axes").value_or(std::vector<int64_t>{});
  if (!axes) {
    // Which axes go is unknown: the rank survives only when they are kept.
    if (keepdims) out[0].shape = ctx.FreshShape(in->size());
    return;
  }
  if (axes->empty() && ctx.IntAttr("noop_with_empty_axes", 0) != 0) {
    out[0].shape = in;
    return;
  }
  out[0].shape = Reduced(*in, *axes, keepdims);
}

void ArgReduceRule(const NodeContext& ctx, std::vector<ValueFacts>& out) {
  const std::optional<Shape>& in = ctx.shape(0);
  if (!in) return;
  out[0].shape = Reduced(*in, {ctx.IntAttr("axis", 0)}, ctx.IntAttr("keepdims", 1) != 0);
}

void TopKRule(const NodeContext& ctx, std::vector<ValueFacts>& out) {
  const std::optional<Shape>& in = ctx.shape(0);
  if (!in) return;
  std::optional<size_t> axis = NormalizeAxis(ctx.IntAttr("axis", -1), in->size());
  if (!axis) return;
  std::optional<DimExpr> k;
  if (ctx.opset() < 10) {
    k = DimExpr::Constant(ctx.IntAttr("k", -1));
  } else if (const std::optional<Data>& d = ctx.in(1).data; d && d->size() == 1) {
    k = (*d)[0];
  }
  Shape shape = *in;
  shape[*axis] = DimOrFresh(k, ctx.symbols());
  for (ValueFacts& o : out) o.shape = shape;
}

void ShapeOfInputRule(const NodeContext& ctx, std::vector<ValueFacts>& out, size_t input) {
  out[0].shape = ctx.shape(input);
}

void GatherElementsRule(const NodeContext& ctx, std::vector<ValueFacts>& out) {
  ShapeOfInputRule(ctx, out, 1);
}

void ScatterRule(const NodeContext& ctx, std::vector<ValueFacts>& out) {
  ShapeOfInputRule(ctx, out, 0);
}

void NonZeroRule(const NodeContext& ctx, std::vector<ValueFacts>& out) {
  if (!ctx.shape(0)) return;
  out[0].shape =
      Shape{DimExpr::Constant(static_cast<int64_t>(ctx.shape(0)->size())), ctx.symbols().Fresh()};
}

void DepthSpaceRule(const NodeContext& ctx, std::vector<ValueFacts>& out) {
  const std::optional<Shape>& in = ctx.shape(0);
  const int64_t b = ctx.IntAttr("blocksize", 0);
  if (!in || in->size() != 4 || b <= 0) return;
  const bool to_space = ctx.node().op_type == "DepthToSpace";
  const DimExpr& c = (*in)[1];
  std::optional<DimExpr> channels = to_space ? FloorDiv(c, b * b) : Scale(c, b * b);
  Shape shape{(*in)[0], DimOrFresh(channels, ctx.symbols())};
  for (size_t d = 2; d < 4; ++d) {
    shape.push_back(
        DimOrFresh(to_space ? Scale((*in)[d], b) : FloorDiv((*in)[d], b), ctx.symbols()));
  }
  out[0].shape = shape;
}

void ResizeRule(const NodeContext& ctx, std::vector<ValueFacts>& out) {
  const std::optional<Shape>& in = ctx.shape(0);
  if (!in) return;
  // Explicit sizes over every axis give the shape; scales leave it to ONNX's inference.
  const size_t sizes_input = ctx.opset() >= 11 ? 3 : 99;
  const std::optional<Data>& sizes = ctx.in(sizes_input).data;
  const IrAttribute* policy = ctx.node().FindAttr("keep_aspect_ratio_policy");
  const bool stretch = policy == nullptr || policy->s == "stretch";
  if (ctx.node().FindAttr("axes") == nullptr && stretch && sizes && sizes->size() == in->size()) {
    out[0].shape = DataAsShape(sizes, ctx.symbols());
    return;
  }
  out[0].shape = ctx.FreshShape(in->size());
}

}  // namespace

Rule FindLayoutRule(std::string_view op) {
  static const std::string_view kReductions[] = {
      "ReduceSum", "ReduceMean", "ReduceMax",    "ReduceMin",       "ReduceProd",
      "ReduceL1",  "ReduceL2",   "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare",
  };
  for (std::string_view name : kReductions) {
    if (name == op) return ReduceRule;
  }
  static const std::pair<std::string_view, Rule> kRules[] = {
      {"Transpose", TransposeRule},
      {"Split", SplitRule},
      {"Pad", PadRule},
      {"ArgMax", ArgReduceRule},
      {"ArgMin", ArgReduceRule},
      {"TopK", TopKRule},
      {"GatherElements", GatherElementsRule},
      {"ScatterElements", ScatterRule},
      {"ScatterND", ScatterRule},
      {"Scatter", ScatterRule},
      {"NonZero", NonZeroRule},
      {"DepthToSpace", DepthSpaceRule},
      {"SpaceToDepth", DepthSpaceRule},
      {"Resize", ResizeRule},
  };
  for (const auto& [name, rule] : kRules) {
    if (name == op) return rule;
  }
  return nullptr;
}

}  // namespace epctx::compile::symbolic
