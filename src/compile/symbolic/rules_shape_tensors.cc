// Rules of the operators exporters build shapes with: Shape and Size make shape tensors, Gather,
// Slice, Concat, (Un)Squeeze, Cast and Reshape move their elements around, and ConstantOfShape,
// Expand, Reshape, Range and Tile turn them back into output shapes.
#include <algorithm>
#include <climits>
#include <cstring>

#include "compile/symbolic/rules.h"

namespace epctx::compile::symbolic {
namespace {

// Slice ends at or beyond this mean "to the end" (exporters write INT64_MAX or INT32_MAX).
constexpr int64_t kSliceToEnd = INT32_MAX;

void ShapeRule(const NodeContext& ctx, std::vector<ValueFacts>& out) {
  const std::optional<Shape>& in = ctx.shape(0);
  if (!in) {
    out[0].shape = ctx.FreshShape(1);
    return;
  }
  const int64_t rank = static_cast<int64_t>(in->size());
  auto clamp = [rank](int64_t i) { return std::clamp(i < 0 ? i + rank : i, int64_t{0}, rank); };
  const int64_t begin = clamp(ctx.IntAttr("start", 0));
  const int64_t end = std::max(begin, clamp(ctx.IntAttr("end", rank)));
  Shape dims(in->begin() + begin, in->begin() + end);
  out[0].shape = Shape{DimExpr::Constant(end - begin)};
  out[0].data = ShapeAsData(dims);
}

void SizeRule(const NodeContext& ctx, std::vector<ValueFacts>& out) {
  out[0].shape = Shape{};
  std::optional<DimExpr> count = ctx.shape(0) ? Product(*ctx.shape(0)) : std::nullopt;
  out[0].data = Data{count};
}

void IdentityRule(const NodeContext& ctx, std::vector<ValueFacts>& out) {
  for (ValueFacts& o : out) o = ctx.in(0);
}

void CastRule(const NodeContext& ctx, std::vector<ValueFacts>& out) {
  out[0].shape = ctx.shape(0);
  const DataType from = ctx.dtype(0), to = ctx.output_dtype(0);
  if (!ctx.in(0).data || !IsTrackedIntType(from) || !IsTrackedIntType(to)) return;
  if (to == DataType::kBool) {
    // Only known constants have a known truth value.
    Data data;
    for (const std::optional<DimExpr>& e : *ctx.in(0).data) {
      std::optional<int64_t> c = e ? e->AsConstant() : std::nullopt;
      data.push_back(c ? std::optional<DimExpr>(DimExpr::Constant(*c != 0)) : std::nullopt);
    }
    out[0].data = std::move(data);
    return;
  }
  // Shape arithmetic is cast between int64 and int32: elements pass unchanged (dims fit in
  // int32; constants are checked). Other targets drop what is known.
  if (to != DataType::kInt64 && to != DataType::kInt32) return;
  Data data;
  for (const std::optional<DimExpr>& e : *ctx.in(0).data) {
    std::optional<int64_t> c = e ? e->AsConstant() : std::nullopt;
    const bool fits = !c || to == DataType::kInt64 || (*c >= INT32_MIN && *c <= INT32_MAX);
    data.push_back(fits ? e : std::nullopt);
  }
  out[0].data = std::move(data);
}

void GatherRule(const NodeContext& ctx, std::vector<ValueFacts>& out) {
  const std::optional<Shape>& data = ctx.shape(0);
  const std::optional<Shape>& indices = ctx.shape(1);
  if (!data || !indices) return;
  std::optional<size_t> axis = NormalizeAxis(ctx.IntAttr("axis", 0), data->size());
  if (!axis) return;
  Shape shape(data->begin(), data->begin() + static_cast<int64_t>(*axis));
  shape.insert(shape.end(), indices->begin(), indices->end());
  shape.insert(shape.end(), data->begin() + static_cast<int64_t>(*axis) + 1, data->end());
  out[0].shape = shape;
  // Elements of a shape tensor picked by constant indices.
  std::optional<std::vector<int64_t>> picks = ctx.ConstInts(1);
  if (!ctx.in(0).data || data->size() != 1 || indices->size() > 1 || !picks) return;
  const Data& elements = *ctx.in(0).data;
  const int64_t n = static_cast<int64_t>(elements.size());
  Data picked;
  for (int64_t i : *picks) {
    if (i < -n || i >= n) return;
    picked.push_back(elements[static_cast<size_t>(i < 0 ? i + n : i)]);
  }
  out[0].data = std::move(picked);
}

// The position where a slice starts or ends on a dim of size d, before clamping: negative values
// count from the end. nullopt when the sign of a symbolic position is unknown.
std::optional<DimExpr> FromEnd(const DimExpr& pos, const DimExpr& d) {
  std::optional<int64_t> lo = pos.LowerBound(), hi = pos.UpperBound();
  if (lo && *lo >= 0) return pos;
  if (hi && *hi < 0) return Add(pos, d);
  return std::nullopt;
}

// min(max(v, lo), hi): for a negative step on an empty dim hi < lo, and hi wins, as in the
// kernels (ONNX Runtime's too), so the slice is empty.
std::optional<DimExpr> Clamp(const std::optional<DimExpr>& v, const DimExpr& lo,
                             const DimExpr& hi) {
  if (!v) return std::nullopt;
  std::optional<DimExpr> lower = MaxOf(*v, lo);
  return lower ? MinOf(*lower, hi) : std::nullopt;
}

// Elements a Slice keeps on a dim of size d (ONNX's clamping, both step signs).
std::optional<DimExpr> SliceLength(const DimExpr& d, const DimExpr& start, const DimExpr& end,
                                   int64_t step) {
  if (step == 0) return std::nullopt;
  const std::optional<int64_t> cs = start.AsConstant(), ce = end.AsConstant();
  const DimExpr zero = DimExpr::Constant(0);
  std::optional<DimExpr> dm1 = Sub(d, DimExpr::Constant(1));
  if (!dm1) return std::nullopt;
  std::optional<DimExpr> s, e;
  if (step > 0) {
    s = cs && *cs >= kSliceToEnd ? d : Clamp(FromEnd(start, d), zero, d);
    e = ce && *ce >= kSliceToEnd    ? std::optional<DimExpr>(d)
        : ce && *ce <= -kSliceToEnd ? std::optional<DimExpr>(zero)
                                    : Clamp(FromEnd(end, d), zero, d);
  } else {
    s = cs && *cs >= kSliceToEnd ? dm1 : Clamp(FromEnd(start, d), zero, *dm1);
    e = ce && *ce <= -kSliceToEnd ? std::optional<DimExpr>(DimExpr::Constant(-1))
                                  : Clamp(FromEnd(end, d), DimExpr::Constant(-1), *dm1);
  }
  if (!s || !e) return std::nullopt;
  std::optional<DimExpr> span = step > 0 ? Sub(*e, *s) : Sub(*s, *e);
  if (!span) return std::nullopt;
  std::optional<DimExpr> count = CeilDiv(*span, step > 0 ? step : -step);
  return count ? MaxOf(*count, zero) : std::nullopt;
}

void SliceRule(const NodeContext& ctx, std::vector<ValueFacts>& out) {
  const std::optional<Shape>& in = ctx.shape(0);
  if (!in) return;
  const size_t rank = in->size();
  // starts/ends may be symbolic; axes and steps must be constants.
  std::optional<Data> starts, ends;
  std::optional<std::vector<int64_t>> axes, steps;
  auto as_data = [](const std::vector<int64_t>& v) {
    Data d;
    for (int64_t x : v) d.push_back(DimExpr::Constant(x));
    return d;
  };
  if (ctx.opset() < 10) {
    if (auto s = ctx.IntsAttr("starts")) starts = as_data(*s);
    if (auto e = ctx.IntsAttr("ends")) ends = as_data(*e);
    axes = ctx.IntsAttr("axes");
  } else {
    starts = ctx.in(1).data;
    ends = ctx.in(2).data;
    if (ctx.present(3)) axes = ctx.ConstInts(3);
    if (ctx.present(4)) steps = ctx.ConstInts(4);
  }
  const bool axes_given = ctx.opset() < 10 ? ctx.IntsAttr("axes").has_value() : ctx.present(3);
  const bool steps_given = ctx.opset() >= 10 && ctx.present(4);
  Shape shape = *in;
  const bool known = starts && ends && starts->size() == ends->size() &&
                     (!axes_given || (axes && axes->size() == starts->size())) &&
                     (!steps_given || (steps && steps->size() == starts->size()));
  if (!known) {
    // Which axes change is unknown when the axes are; otherwise only the listed ones.
    for (size_t d = 0; d < rank; ++d) {
      bool listed = !axes_given || !axes;
      if (axes) {
        for (int64_t a : *axes) listed |= NormalizeAxis(a, rank) == d;
      }
      if (listed) shape[d] = ctx.symbols().Fresh();
    }
    out[0].shape = shape;
    return;
  }
  std::vector<bool> seen(rank, false);
  for (size_t k = 0; k < starts->size(); ++k) {
    std::optional<size_t> axis =
        NormalizeAxis(axes_given ? (*axes)[k] : static_cast<int64_t>(k), rank);
    if (!axis || seen[*axis]) return;  // the kernel refuses it
    seen[*axis] = true;
    const int64_t step = steps_given ? (*steps)[k] : 1;
    const std::optional<DimExpr>& s = (*starts)[k];
    const std::optional<DimExpr>& e = (*ends)[k];
    std::optional<DimExpr> len = s && e ? SliceLength((*in)[*axis], *s, *e, step) : std::nullopt;
    shape[*axis] = DimOrFresh(len, ctx.symbols());
  }
  out[0].shape = shape;

  // A slice of a shape tensor's elements.
  if (!ctx.in(0).data || rank != 1 || starts->empty()) return;
  const int64_t n = static_cast<int64_t>(ctx.in(0).data->size());
  std::optional<int64_t> len = shape[0].AsConstant();
  std::optional<int64_t> s = (*starts)[0] ? (*starts)[0]->AsConstant() : std::nullopt;
  const int64_t step = steps_given ? (*steps)[0] : 1;
  if (!len || !s) return;
  const int64_t s0 = s.value_or(0);
  int64_t first = s0 < 0 ? s0 + n : s0;
  first = step > 0 ? std::clamp<int64_t>(first, 0, n) : std::clamp<int64_t>(first, 0, n - 1);
  Data data;
  for (int64_t i = 0; i < *len; ++i) {
    const int64_t at = first + i * step;
    if (at < 0 || at >= n) return;
    data.push_back((*ctx.in(0).data)[static_cast<size_t>(at)]);
  }
  out[0].data = std::move(data);
}

void ConcatRule(const NodeContext& ctx, std::vector<ValueFacts>& out) {
  std::optional<size_t> rank;
  for (size_t i = 0; i < ctx.input_count(); ++i) {
    if (ctx.shape(i)) rank = ctx.shape(i)->size();
  }
  if (!rank) return;
  // Concat-1 defaults the axis to 1.
  std::optional<size_t> axis = NormalizeAxis(ctx.IntAttr("axis", ctx.opset() < 4 ? 1 : 0), *rank);
  if (!axis) return;
  Shape shape;
  std::optional<DimExpr> total = DimExpr::Constant(0);
  bool first = true;
  for (size_t i = 0; i < ctx.input_count(); ++i) {
    const std::optional<Shape>& s = ctx.shape(i);
    if (!s) {
      total = std::nullopt;
      continue;
    }
    if (s->size() != *rank) return;  // the kernel refuses it
    if (total) total = Add(*total, (*s)[*axis]);
    if (first) {
      shape = *s;
      first = false;
      continue;
    }
    for (size_t d = 0; d < *rank; ++d) {
      if (d != *axis) shape[d] = SameDim(shape[d], (*s)[d], ctx.symbols());
    }
  }
  shape[*axis] = DimOrFresh(total, ctx.symbols());
  out[0].shape = shape;
  if (*rank != 1) return;
  Data data;
  for (size_t i = 0; i < ctx.input_count(); ++i) {
    if (!ctx.in(i).data) return;
    data.insert(data.end(), ctx.in(i).data->begin(), ctx.in(i).data->end());
  }
  if (data.size() <= kMaxTrackedElements) out[0].data = std::move(data);
}

void UnsqueezeRule(const NodeContext& ctx, std::vector<ValueFacts>& out) {
  const std::optional<Shape>& in = ctx.shape(0);
  std::optional<std::vector<int64_t>> axes = ctx.IntsAttrOrInput("axes", 1);
  if (!in || !axes) return;
  const size_t rank = in->size() + axes->size();
  std::vector<bool> inserted(rank, false);
  for (int64_t a : *axes) {
    std::optional<size_t> axis = NormalizeAxis(a, rank);
    if (!axis || inserted[*axis]) return;
    inserted[*axis] = true;
  }
  Shape shape;
  size_t next = 0;
  for (size_t d = 0; d < rank; ++d) {
    shape.push_back(inserted[d] ? DimExpr::Constant(1) : (*in)[next++]);
  }
  out[0].shape = shape;
  if (in->empty() && rank == 1) out[0].data = ctx.in(0).data;
}

void SqueezeRule(const NodeContext& ctx, std::vector<ValueFacts>& out) {
  const std::optional<Shape>& in = ctx.shape(0);
  if (!in) return;
  std::optional<std::vector<int64_t>> axes = ctx.IntsAttrOrInput("axes", 1);
  const bool axes_given = ctx.node().FindAttr("axes") != nullptr || ctx.present(1);
  if (axes_given && !axes) return;
  std::vector<bool> removed(in->size(), false);
  if (axes) {
    for (int64_t a : *axes) {
      std::optional<size_t> axis = NormalizeAxis(a, in->size());
      if (!axis) return;
      removed[*axis] = true;
    }
  } else {
    // Every dim of size 1 goes: a dim that may or may not be 1 leaves the rank unknown.
    for (size_t d = 0; d < in->size(); ++d) {
      std::optional<int64_t> c = (*in)[d].AsConstant();
      std::optional<int64_t> lo = (*in)[d].LowerBound();
      if (c == 1) {
        removed[d] = true;
      } else if (!c && !(lo && *lo >= 2)) {
        return;
      }
    }
  }
  Shape shape;
  for (size_t d = 0; d < in->size(); ++d) {
    if (!removed[d]) shape.push_back((*in)[d]);
  }
  out[0].shape = shape;
  if (in->size() == 1 && shape.empty()) out[0].data = ctx.in(0).data;
}

// Reshape's -1: the input's element count over the other output dims, cancelling equal factors.
std::optional<DimExpr> InferredDim(const Shape& in, const Shape& others) {
  int64_t num = 1, den = 1;
  std::vector<DimExpr> num_factors, den_factors;
  for (const DimExpr& d : in) {
    auto [c, f] = d.Factors();
    if (__builtin_mul_overflow(num, c, &num)) return std::nullopt;
    num_factors.insert(num_factors.end(), f.begin(), f.end());
  }
  for (const DimExpr& d : others) {
    auto [c, f] = d.Factors();
    if (__builtin_mul_overflow(den, c, &den)) return std::nullopt;
    for (const DimExpr& x : f) {
      auto match = std::find(num_factors.begin(), num_factors.end(), x);
      if (match == num_factors.end()) {
        den_factors.push_back(x);
      } else {
        num_factors.erase(match);
      }
    }
  }
  if (!den_factors.empty() || den <= 0) return std::nullopt;
  std::optional<DimExpr> rest = Product(num_factors);
  if (!rest) return std::nullopt;
  if (num % den == 0) return Scale(*rest, num / den);
  std::optional<DimExpr> scaled = Scale(*rest, num);
  // The division is exact in every run that succeeds.
  return scaled ? FloorDiv(*scaled, den) : std::nullopt;
}

void ReshapeRule(const NodeContext& ctx, std::vector<ValueFacts>& out) {
  const std::optional<Shape>& in = ctx.shape(0);
  std::optional<Data> target;
  if (ctx.opset() < 5) {
    if (auto s = ctx.IntsAttr("shape")) {
      target.emplace();
      for (int64_t x : *s) target->push_back(DimExpr::Constant(x));
    }
  } else {
    target = ctx.in(1).data;
  }
  if (!target) {
    const std::optional<Shape>& ts = ctx.shape(1);
    std::optional<int64_t> n = ts && ts->size() == 1 ? (*ts)[0].AsConstant() : std::nullopt;
    if (n) out[0].shape = ctx.FreshShape(static_cast<size_t>(*n));
    return;
  }
  // A 1-D result holds every element, whatever the target says.
  if (target->size() == 1 && in) {
    if (std::optional<DimExpr> count = Product(*in)) {
      out[0].shape = Shape{*count};
      if (ctx.in(0).data) out[0].data = ctx.in(0).data;
      return;
    }
  }
  const bool allow_zero = ctx.IntAttr("allowzero", 0) != 0;
  Shape shape;
  std::optional<size_t> inferred;
  for (size_t i = 0; i < target->size(); ++i) {
    const std::optional<DimExpr>& e = (*target)[i];
    // The element's value when constant (`known`); read through value_or, which GCC 12's
    // -Wmaybe-uninitialized does not misread at -O1 as it did comparisons of the optional.
    const std::optional<int64_t> constant = e ? e->AsConstant() : std::nullopt;
    const bool known = constant.has_value();
    const int64_t c = constant.value_or(0);
    if (known && c == -1) {
      if (inferred) return;  // the kernel refuses two -1s
      inferred = i;
      shape.push_back(DimExpr::Constant(0));  // replaced below
      continue;
    }
    const bool copies = in && i < in->size();
    if (known && c == 0 && !allow_zero) {
      shape.push_back(copies ? (*in)[i] : ctx.symbols().Fresh());
      continue;
    }
    if (!e || (known && c < 0)) {
      shape.push_back(ctx.symbols().Fresh());
      continue;
    }
    // A symbolic element that may be 0 copies the input dim in that run: known only when that
    // dim is the same expression (or zeros are kept).
    std::optional<int64_t> lo = e->LowerBound();
    const bool never_zero = lo && *lo >= 1;
    if (known || allow_zero || never_zero || (copies && (*in)[i] == *e)) {
      shape.push_back(*e);
    } else {
      shape.push_back(ctx.symbols().Fresh());
    }
  }
  if (inferred) {
    Shape others = shape;
    others.erase(others.begin() + static_cast<int64_t>(*inferred));
    std::optional<DimExpr> d = in ? InferredDim(*in, others) : std::nullopt;
    shape[*inferred] = DimOrFresh(d, ctx.symbols());
  }
  out[0].shape = shape;
  if (ctx.in(0).data && shape.size() <= 1) out[0].data = ctx.in(0).data;
}

void FlattenRule(const NodeContext& ctx, std::vector<ValueFacts>& out) {
  const std::optional<Shape>& in = ctx.shape(0);
  if (!in) {
    out[0].shape = ctx.FreshShape(2);
    return;
  }
  int64_t axis = ctx.IntAttr("axis", 1);
  const int64_t rank = static_cast<int64_t>(in->size());
  if (axis < 0) axis += rank;
  if (axis < 0 || axis > rank) return;
  Shape outer(in->begin(), in->begin() + axis), inner(in->begin() + axis, in->end());
  out[0].shape =
      Shape{DimOrFresh(Product(outer), ctx.symbols()), DimOrFresh(Product(inner), ctx.symbols())};
}

// The single value of ConstantOfShape's `value` attribute, when it is an integer.
std::optional<int64_t> FillValue(const NodeContext& ctx) {
  const IrAttribute* a = ctx.node().FindAttr("value");
  if (a == nullptr) return std::nullopt;  // float 0
  if (a->tensor == nullptr || a->tensor->bytes.size() == 0) return std::nullopt;
  const std::byte* p = a->tensor->bytes.data();
  switch (a->tensor->dtype) {
    case DataType::kInt64: {
      int64_t v;
      std::memcpy(&v, p, sizeof v);
      return v;
    }
    case DataType::kInt32: {
      int32_t v;
      std::memcpy(&v, p, sizeof v);
      return v;
    }
    case DataType::kBool:
      return static_cast<int64_t>(p[0] != std::byte{0});
    default:
      return std::nullopt;
  }
}

void ConstantOfShapeRule(const NodeContext& ctx, std::vector<ValueFacts>& out) {
  std::optional<Shape> shape = DataAsShape(ctx.in(0).data, ctx.symbols());
  if (!shape) {
    const std::optional<Shape>& s = ctx.shape(0);
    std::optional<int64_t> n = s && s->size() == 1 ? (*s)[0].AsConstant() : std::nullopt;
    if (n) out[0].shape = ctx.FreshShape(static_cast<size_t>(*n));
    return;
  }
  out[0].shape = shape;
  std::optional<int64_t> value = FillValue(ctx);
  std::optional<int64_t> count = shape->empty() ? 1 : (*shape)[0].AsConstant();
  if (value && shape->size() <= 1 && count && *count <= static_cast<int64_t>(kMaxTrackedElements)) {
    out[0].data = Data(static_cast<size_t>(*count), DimExpr::Constant(*value));
  }
}

void ExpandRule(const NodeContext& ctx, std::vector<ValueFacts>& out) {
  std::optional<Shape> target = DataAsShape(ctx.in(1).data, ctx.symbols());
  if (!target) {
    const std::optional<Shape>& s = ctx.shape(1);
    std::optional<int64_t> n = s && s->size() == 1 ? (*s)[0].AsConstant() : std::nullopt;
    if (n && ctx.shape(0)) {
      out[0].shape = ctx.FreshShape(std::max(static_cast<size_t>(*n), ctx.shape(0)->size()));
    }
    return;
  }
  out[0].shape = Broadcast(ctx.shape(0), target, ctx.symbols());
  const std::optional<Data>& data = ctx.in(0).data;
  if (!out[0].shape || out[0].shape->size() > 1 || !data || data->size() != 1) return;
  std::optional<int64_t> n = out[0].shape->empty() ? 1 : (*out[0].shape)[0].AsConstant();
  if (n && *n <= static_cast<int64_t>(kMaxTrackedElements)) {
    out[0].data = Data(static_cast<size_t>(*n), (*data)[0]);
  }
}

void RangeRule(const NodeContext& ctx, std::vector<ValueFacts>& out) {
  auto scalar = [&](size_t i) -> std::optional<DimExpr> {
    const std::optional<Data>& d = ctx.in(i).data;
    return d && d->size() == 1 ? (*d)[0] : std::nullopt;
  };
  std::optional<DimExpr> start = scalar(0), limit = scalar(1), delta = scalar(2);
  // A zero step is refused by the kernel.
  const int64_t step = delta ? delta->AsConstant().value_or(0) : 0;
  std::optional<DimExpr> count;
  if (start && limit && step != 0) {
    std::optional<DimExpr> span = step > 0 ? Sub(*limit, *start) : Sub(*start, *limit);
    if (span) count = CeilDiv(*span, step > 0 ? step : -step);
    if (count) count = MaxOf(*count, DimExpr::Constant(0));
  }
  DimExpr n = DimOrFresh(count, ctx.symbols());
  out[0].shape = Shape{n};
  std::optional<int64_t> cn = n.AsConstant();
  std::optional<int64_t> s0 = start ? start->AsConstant() : std::nullopt;
  if (cn && s0 && step != 0 && *cn <= static_cast<int64_t>(kMaxTrackedElements)) {
    Data data;
    for (int64_t i = 0; i < *cn; ++i) data.push_back(DimExpr::Constant(*s0 + i * step));
    out[0].data = std::move(data);
  }
}

void TileRule(const NodeContext& ctx, std::vector<ValueFacts>& out) {
  const std::optional<Shape>& in = ctx.shape(0);
  if (!in) return;
  const std::optional<Data>& repeats = ctx.in(1).data;
  if (!repeats || repeats->size() != in->size()) {
    out[0].shape = ctx.FreshShape(in->size());
    return;
  }
  Shape shape;
  for (size_t d = 0; d < in->size(); ++d) {
    const std::optional<DimExpr>& r = (*repeats)[d];
    shape.push_back(DimOrFresh(r ? Mul((*in)[d], *r) : std::nullopt, ctx.symbols()));
  }
  out[0].shape = shape;
}

}  // namespace

Rule FindShapeTensorRule(std::string_view op) {
  static const std::pair<std::string_view, Rule> kRules[] = {
      {"Shape", ShapeRule},
      {"Size", SizeRule},
      {"Identity", IdentityRule},
      {"Cast", CastRule},
      {"CastLike", CastRule},
      {"Gather", GatherRule},
      {"Slice", SliceRule},
      {"Concat", ConcatRule},
      {"Unsqueeze", UnsqueezeRule},
      {"Squeeze", SqueezeRule},
      {"Reshape", ReshapeRule},
      {"Flatten", FlattenRule},
      {"ConstantOfShape", ConstantOfShapeRule},
      {"Expand", ExpandRule},
      {"Range", RangeRule},
      {"Tile", TileRule},
  };
  for (const auto& [name, rule] : kRules) {
    if (name == op) return rule;
  }
  return nullptr;
}

}  // namespace epctx::compile::symbolic
