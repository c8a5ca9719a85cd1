// Rules of the network operators: matrix products, convolution and pooling windows (their output
// sizes as floor/ceil expressions of symbolic input sizes) and layer normalization.
#include <algorithm>

#include "compile/symbolic/rules.h"

namespace epctx::compile::symbolic {
namespace {

// numpy matmul: 1-D operands gain (and lose again) a dim; batch dims broadcast.
std::optional<Shape> MatMulShape(const std::optional<Shape>& a0, const std::optional<Shape>& b0,
                                 SymbolTable& symbols) {
  if (!a0 || !b0 || a0->empty() || b0->empty()) return std::nullopt;
  Shape a = *a0, b = *b0;
  const bool a_vector = a.size() == 1, b_vector = b.size() == 1;
  if (a_vector) a.insert(a.begin(), DimExpr::Constant(1));
  if (b_vector) b.push_back(DimExpr::Constant(1));
  std::optional<Shape> batch =
      Broadcast(Shape(a.begin(), a.end() - 2), Shape(b.begin(), b.end() - 2), symbols);
  if (!batch) return std::nullopt;
  Shape out = *batch;
  if (!a_vector) out.push_back(a[a.size() - 2]);
  if (!b_vector) out.push_back(b.back());
  return out;
}

void MatMulRule(const NodeContext& ctx, std::vector<ValueFacts>& out) {
  out[0].shape = MatMulShape(ctx.shape(0), ctx.shape(1), ctx.symbols());
}

void QLinearMatMulRule(const NodeContext& ctx, std::vector<ValueFacts>& out) {
  out[0].shape = MatMulShape(ctx.shape(0), ctx.shape(3), ctx.symbols());
}

void GemmRule(const NodeContext& ctx, std::vector<ValueFacts>& out) {
  const std::optional<Shape>& a = ctx.shape(0);
  const std::optional<Shape>& b = ctx.shape(1);
  if (!a || !b || a->size() != 2 || b->size() != 2) {
    out[0].shape = ctx.FreshShape(2);
    return;
  }
  const bool ta = ctx.IntAttr("transA", 0) != 0, tb = ctx.IntAttr("transB", 0) != 0;
  out[0].shape = Shape{(*a)[ta ? 1 : 0], (*b)[tb ? 0 : 1]};
}

struct Window {
  std::vector<int64_t> kernel, strides, dilations, pads;
  std::string auto_pad = "NOTSET";
  bool ceil_mode = false;
};

// The window attributes of a Conv or pool over `spatial` dims; nullopt when inconsistent.
std::optional<Window> WindowOf(const NodeContext& ctx, size_t spatial,
                               const std::optional<std::vector<int64_t>>& kernel) {
  Window w;
  if (!kernel || kernel->size() != spatial) return std::nullopt;
  w.kernel = *kernel;
  w.strides = ctx.IntsAttr("strides").value_or(std::vector<int64_t>(spatial, 1));
  w.dilations = ctx.IntsAttr("dilations").value_or(std::vector<int64_t>(spatial, 1));
  w.pads = ctx.IntsAttr("pads").value_or(std::vector<int64_t>(2 * spatial, 0));
  if (const IrAttribute* a = ctx.node().FindAttr("auto_pad")) w.auto_pad = a->s;
  w.ceil_mode = ctx.IntAttr("ceil_mode", 0) != 0;
  if (w.strides.size() != spatial || w.dilations.size() != spatial ||
      w.pads.size() != 2 * spatial) {
    return std::nullopt;
  }
  for (size_t i = 0; i < spatial; ++i) {
    if (w.strides[i] <= 0 || w.dilations[i] <= 0 || w.kernel[i] <= 0) return std::nullopt;
  }
  return w;
}

// The output size of one spatial dim of size d.
std::optional<DimExpr> WindowOutput(const DimExpr& d, const Window& w, size_t i) {
  const int64_t s = w.strides[i];
  const int64_t extent = w.dilations[i] * (w.kernel[i] - 1) + 1;
  if (w.auto_pad == "SAME_UPPER" || w.auto_pad == "SAME_LOWER") return CeilDiv(d, s);
  const int64_t pad = w.auto_pad == "VALID" ? 0 : w.pads[i] + w.pads[i + w.pads.size() / 2];
  std::optional<DimExpr> span = Add(d, DimExpr::Constant(pad - extent));
  if (!span) return std::nullopt;
  if (w.ceil_mode) {
    // Ceil mode drops a last window that would start in the end padding: known for constants
    // only.
    std::optional<int64_t> c = d.AsConstant();
    if (!c) return std::nullopt;
    int64_t out = (*c + pad - extent + s - 1) / s + 1;
    if ((out - 1) * s >= *c + w.pads[i]) --out;
    return DimExpr::Constant(out);
  }
  std::optional<DimExpr> steps = FloorDiv(*span, s);
  return steps ? Add(*steps, DimExpr::Constant(1)) : std::nullopt;
}

// N, then `channels`, then each spatial dim through the window.
void WindowRule(const NodeContext& ctx, std::vector<ValueFacts>& out, const DimExpr& channels,
                const std::optional<std::vector<int64_t>>& kernel) {
  const std::optional<Shape>& x = ctx.shape(0);
  if (!x || x->size() < 3) return;
  const size_t spatial = x->size() - 2;
  std::optional<Window> w = WindowOf(ctx, spatial, kernel);
  Shape shape{(*x)[0], channels};
  for (size_t i = 0; i < spatial; ++i) {
    std::optional<DimExpr> d = w ? WindowOutput((*x)[i + 2], *w, i) : std::nullopt;
    shape.push_back(DimOrFresh(d, ctx.symbols()));
  }
  for (ValueFacts& o : out) o.shape = shape;
}

void ConvRule(const NodeContext& ctx, std::vector<ValueFacts>& out) {
  const std::optional<Shape>& w = ctx.shape(1);
  std::optional<std::vector<int64_t>> kernel = ctx.IntsAttr("kernel_shape");
  if (!kernel && w && w->size() >= 3) {
    std::vector<int64_t> k;
    for (size_t i = 2; i < w->size(); ++i) {
      std::optional<int64_t> c = (*w)[i].AsConstant();
      if (!c) break;
      k.push_back(*c);
    }
    if (k.size() + 2 == w->size()) kernel = k;
  }
  DimExpr channels = w && !w->empty() ? (*w)[0] : ctx.symbols().Fresh();
  WindowRule(ctx, out, channels, kernel);
}

void PoolRule(const NodeContext& ctx, std::vector<ValueFacts>& out) {
  const std::optional<Shape>& x = ctx.shape(0);
  if (!x || x->size() < 3) return;
  WindowRule(ctx, out, (*x)[1], ctx.IntsAttr("kernel_shape"));
}

void GlobalPoolRule(const NodeContext& ctx, std::vector<ValueFacts>& out) {
  const std::optional<Shape>& x = ctx.shape(0);
  if (!x || x->size() < 2) return;
  Shape shape{(*x)[0], (*x)[1]};
  shape.resize(x->size(), DimExpr::Constant(1));
  out[0].shape = shape;
}

void LayerNormRule(const NodeContext& ctx, std::vector<ValueFacts>& out) {
  const std::optional<Shape>& x = ctx.shape(0);
  out[0].shape = x;
  if (!x) return;
  std::optional<size_t> axis = NormalizeAxis(ctx.IntAttr("axis", -1), x->size());
  if (!axis) return;
  // Mean and inverse standard deviation keep the leading dims and 1s from the axis on.
  Shape stats(x->begin(), x->begin() + static_cast<int64_t>(*axis));
  stats.resize(x->size(), DimExpr::Constant(1));
  for (size_t o = 1; o < out.size(); ++o) out[o].shape = stats;
}

}  // namespace

Rule FindNnRule(std::string_view op) {
  static const std::pair<std::string_view, Rule> kRules[] = {
      {"MatMul", MatMulRule},
      {"MatMulInteger", MatMulRule},
      {"QLinearMatMul", QLinearMatMulRule},
      {"Gemm", GemmRule},
      {"Conv", ConvRule},
      {"MaxPool", PoolRule},
      {"AveragePool", PoolRule},
      {"LpPool", PoolRule},
      {"GlobalAveragePool", GlobalPoolRule},
      {"GlobalMaxPool", GlobalPoolRule},
      {"GlobalLpPool", GlobalPoolRule},
      {"LayerNormalization", LayerNormRule},
  };
  for (const auto& [name, rule] : kRules) {
    if (name == op) return rule;
  }
  return nullptr;
}

}  // namespace epctx::compile::symbolic
