#include "compile/onnx_newer_opsets.h"

#include <onnx/defs/schema.h>
#include <onnx/defs/shape_inference.h>

#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "compile/newer_opset_inference.h"
#include "compile/onnx_opset18_operators.h"

namespace epctx::compile {
namespace {

constexpr int kOpset18 = 18;
constexpr int kOpset20 = 20;
// The newest version of a schema registered here (GroupNormalization's, onnx_opset18_operators.h).
constexpr int kNewestRegistered = 21;
using newer_opsets::ConstantInts;
using newer_opsets::DimIndex;
using newer_opsets::InferenceOf;
using newer_opsets::InputGiven;
using onnx::AttributeProto;
using onnx::OpSchema;

// onnx registers a schema only inside its domain's opset range, which it keeps in a map it hands
// out as const: 1.12 ends the ONNX domain at 17.
void RaiseOnnxOpsetRange() {
  auto& ranges = const_cast<std::unordered_map<std::string, std::pair<int, int>>&>(
      onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map());
  auto it = ranges.find(onnx::ONNX_DOMAIN);
  if (it != ranges.end() && it->second.second < kNewestRegistered) {
    it->second.second = kNewestRegistered;
  }
}

const std::vector<std::string> kReduceTypes = {
    "tensor(uint32)", "tensor(uint64)",  "tensor(int32)", "tensor(int64)",  "tensor(uint8)",
    "tensor(int8)",   "tensor(float16)", "tensor(float)", "tensor(double)", "tensor(bfloat16)"};

// Reduce*-18: the axes move from an attribute to an optional input, and noop_with_empty_axes
// comes with them, as ReduceSum did in 13 (whose inference reads the same node form).
OpSchema Reduce(const char* op) {
  OpSchema s;
  s.SetName(op)
      .SetDomain(onnx::ONNX_DOMAIN)
      .SinceVersion(kOpset18)
      .Attr("keepdims", "keep each reduced dim as 1", AttributeProto::INT, int64_t{1})
      .Attr("noop_with_empty_axes", "without axes: no reduction (1) or over every dim (0)",
            AttributeProto::INT, int64_t{0})
      .Input(0, "data", "", "T")
      .Input(1, "axes", "the dims to reduce", "tensor(int64)", OpSchema::Optional)
      .Output(0, "reduced", "", "T")
      .TypeConstraint("T", kReduceTypes, "")
      .TypeAndShapeInferenceFunction(InferenceOf("ReduceSum", 13));
  return s;
}

// Split-18: without a `split` input the axis splits into num_outputs parts of ceil(dim / n), the
// last one smaller when the dim does not divide.
void InferSplit(onnx::InferenceContext& ctx) {
  const size_t outputs = ctx.getNumOutputs();
  for (size_t i = 0; i < outputs; ++i) onnx::propagateElemTypeFromInputToOutput(ctx, 0, i);
  const AttributeProto* num_outputs = ctx.getAttribute("num_outputs");
  const bool split_given = InputGiven(ctx, 1);
  if (num_outputs != nullptr && split_given) {
    fail_shape_inference("Split: give either the split input or num_outputs, not both");
  }
  if (num_outputs != nullptr && num_outputs->i() != static_cast<int64_t>(outputs)) {
    fail_shape_inference("Split: num_outputs is ", num_outputs->i(), " but the node has ", outputs,
                         " outputs");
  }
  if (!onnx::hasInputShape(ctx, 0)) return;
  const onnx::TensorShapeProto& shape = onnx::getInputShape(ctx, 0);
  const int axis = DimIndex(onnx::getAttribute(ctx, "axis", 0), shape.dim_size(), "Split: axis");
  std::vector<std::optional<int64_t>> sizes(outputs);
  if (split_given) {
    if (std::optional<std::vector<int64_t>> split = ConstantInts(ctx, 1)) {
      if (split->size() != outputs) {
        fail_shape_inference("Split: split has ", split->size(), " sizes for ", outputs,
                             " outputs");
      }
      for (size_t i = 0; i < outputs; ++i) sizes[i] = (*split)[i];
    }
  } else if (shape.dim(axis).has_dim_value() && outputs > 0) {
    const int64_t dim = shape.dim(axis).dim_value();
    const int64_t n = static_cast<int64_t>(outputs);
    const int64_t chunk = (dim + n - 1) / n;
    for (size_t i = 0; i < outputs; ++i) {
      sizes[i] = std::max<int64_t>(0, std::min(chunk, dim - static_cast<int64_t>(i) * chunk));
    }
  }
  for (size_t i = 0; i < outputs; ++i) {
    onnx::TensorShapeProto out = shape;
    *out.mutable_dim(axis) = onnx::TensorShapeProto::Dimension();
    if (sizes[i]) out.mutable_dim(axis)->set_dim_value(*sizes[i]);
    onnx::updateOutputShape(ctx, i, out);
  }
}

OpSchema Split() {
  OpSchema s;
  s.SetName("Split")
      .SetDomain(onnx::ONNX_DOMAIN)
      .SinceVersion(kOpset18)
      .Attr("axis", "the dim to split", AttributeProto::INT, int64_t{0})
      .Attr("num_outputs", "parts of equal size (the last smaller)", AttributeProto::INT, false)
      .Input(0, "input", "", "T")
      .Input(1, "split", "the parts' sizes", "tensor(int64)", OpSchema::Optional)
      .Output(0, "outputs", "", "T", OpSchema::Variadic, true, 1)
      .TypeConstraint("T", OpSchema::all_tensor_types_with_bfloat(), "")
      .TypeAndShapeInferenceFunction(InferSplit);
  return s;
}

// Pad-18 adds an optional axes input, which pads then describe; without it Pad-13's inference.
void InferPad(onnx::InferenceContext& ctx) {
  if (!InputGiven(ctx, 3)) {
    static const onnx::InferenceFunction pad13 = InferenceOf("Pad", 13);
    if (pad13) pad13(ctx);
    return;
  }
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  if (!onnx::hasInputShape(ctx, 0)) return;
  const onnx::TensorShapeProto& shape = onnx::getInputShape(ctx, 0);
  const int rank = shape.dim_size();
  onnx::TensorShapeProto out = shape;
  std::optional<std::vector<int64_t>> pads = ConstantInts(ctx, 1), axes = ConstantInts(ctx, 3);
  if (!pads || !axes) {
    // Which dims change is known only with both.
    for (int d = 0; d < rank; ++d) *out.mutable_dim(d) = onnx::TensorShapeProto::Dimension();
  } else {
    if (pads->size() != 2 * axes->size()) {
      fail_shape_inference("Pad: pads has ", pads->size(), " values for ", axes->size(), " axes");
    }
    for (size_t j = 0; j < axes->size(); ++j) {
      const int d = DimIndex((*axes)[j], rank, "Pad: axis");
      onnx::TensorShapeProto::Dimension& dim = *out.mutable_dim(d);
      if (dim.has_dim_value()) {
        dim.set_dim_value(dim.dim_value() + (*pads)[j] + (*pads)[j + axes->size()]);
      } else {
        dim = onnx::TensorShapeProto::Dimension();
      }
    }
  }
  onnx::updateOutputShape(ctx, 0, out);
}

OpSchema Pad() {
  OpSchema s;
  s.SetName("Pad")
      .SetDomain(onnx::ONNX_DOMAIN)
      .SinceVersion(kOpset18)
      .Attr("mode", "constant, reflect or edge", AttributeProto::STRING, std::string("constant"))
      .Input(0, "data", "", "T")
      .Input(1, "pads", "begins then ends, one per axis", "tensor(int64)")
      .Input(2, "constant_value", "", "T", OpSchema::Optional)
      .Input(3, "axes", "the dims pads describe", "Tind", OpSchema::Optional)
      .Output(0, "output", "", "T")
      .TypeConstraint("T", OpSchema::all_tensor_types_with_bfloat(), "")
      .TypeConstraint("Tind", {"tensor(int32)", "tensor(int64)"}, "")
      .TypeAndShapeInferenceFunction(InferPad);
  return s;
}

// Resize-18 adds antialias, axes and keep_aspect_ratio_policy; a node using none of the last two
// gets Resize-13's inference, one using them the input's rank with the resized dims unknown.
void InferResize(onnx::InferenceContext& ctx) {
  const AttributeProto* axes = ctx.getAttribute("axes");
  const AttributeProto* policy = ctx.getAttribute("keep_aspect_ratio_policy");
  const bool every_axis = axes == nullptr || axes->ints_size() == 0;
  if (every_axis && (policy == nullptr || policy->s() == "stretch")) {
    static const onnx::InferenceFunction resize13 = InferenceOf("Resize", 13);
    if (resize13) resize13(ctx);
    return;
  }
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  if (!onnx::hasInputShape(ctx, 0)) return;
  const onnx::TensorShapeProto& shape = onnx::getInputShape(ctx, 0);
  onnx::TensorShapeProto out = shape;
  for (int d = 0; d < shape.dim_size(); ++d) {
    bool resized = every_axis;
    for (int j = 0; !every_axis && j < axes->ints_size(); ++j) {
      resized = resized || DimIndex(axes->ints(j), shape.dim_size(), "Resize: axis") == d;
    }
    if (resized) *out.mutable_dim(d) = onnx::TensorShapeProto::Dimension();
  }
  onnx::updateOutputShape(ctx, 0, out);
}

OpSchema Resize() {
  OpSchema s;
  s.SetName("Resize")
      .SetDomain(onnx::ONNX_DOMAIN)
      .SinceVersion(kOpset18)
      .Attr("antialias", "filter when downscaling", AttributeProto::INT, int64_t{0})
      .Attr("axes", "the dims roi, scales and sizes describe", AttributeProto::INTS, false)
      .Attr("coordinate_transformation_mode", "", AttributeProto::STRING, std::string("half_pixel"))
      .Attr("cubic_coeff_a", "", AttributeProto::FLOAT, -0.75f)
      .Attr("exclude_outside", "", AttributeProto::INT, int64_t{0})
      .Attr("extrapolation_value", "", AttributeProto::FLOAT, 0.0f)
      .Attr("keep_aspect_ratio_policy", "stretch, not_larger or not_smaller",
            AttributeProto::STRING, std::string("stretch"))
      .Attr("mode", "nearest, linear or cubic", AttributeProto::STRING, std::string("nearest"))
      .Attr("nearest_mode", "", AttributeProto::STRING, std::string("round_prefer_floor"))
      .Input(0, "X", "", "T1")
      .Input(1, "roi", "", "T2", OpSchema::Optional)
      .Input(2, "scales", "", "tensor(float)", OpSchema::Optional)
      .Input(3, "sizes", "", "tensor(int64)", OpSchema::Optional)
      .Output(0, "Y", "", "T1")
      .TypeConstraint("T1", OpSchema::all_tensor_types_with_bfloat(), "")
      .TypeConstraint("T2", {"tensor(float16)", "tensor(float)", "tensor(double)"}, "")
      .TypeAndShapeInferenceFunction(InferResize);
  return s;
}

// Gelu-20: the exact GELU, or its tanh approximation with approximate = "tanh".
OpSchema Gelu() {
  OpSchema s;
  s.SetName("Gelu")
      .SetDomain(onnx::ONNX_DOMAIN)
      .SinceVersion(kOpset20)
      .Attr("approximate", "none or tanh", AttributeProto::STRING, std::string("none"))
      .Input(0, "X", "", "T")
      .Output(0, "Y", "", "T")
      .TypeConstraint(
          "T", {"tensor(float16)", "tensor(float)", "tensor(double)", "tensor(bfloat16)"}, "")
      .TypeAndShapeInferenceFunction(onnx::propagateShapeAndTypeFromFirstInput);
  return s;
}

void RegisterSchemas() {
  const auto& ranges = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  const auto onnx_range = ranges.find(onnx::ONNX_DOMAIN);
  // An onnx that knows opset 18 has these schemas already (the ones of 18; Gelu from 1.15).
  if (onnx_range == ranges.end() || onnx_range->second.second >= kOpset18) return;
  RaiseOnnxOpsetRange();
  onnx::RegisterSchema(Gelu());
  for (const char* op : {"ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax",
                         "ReduceMean", "ReduceMin", "ReduceProd", "ReduceSumSquare"}) {
    onnx::RegisterSchema(Reduce(op));
  }
  onnx::RegisterSchema(Split());
  onnx::RegisterSchema(Pad());
  onnx::RegisterSchema(Resize());
  RegisterOpset18Operators();
}

}  // namespace

void RegisterNewerOpsetSchemas() {
  static std::once_flag once;
  std::call_once(once, RegisterSchemas);
}

}  // namespace epctx::compile
