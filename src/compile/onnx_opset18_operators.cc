#include "compile/onnx_opset18_operators.h"

#include <onnx/defs/schema.h>
#include <onnx/defs/shape_inference.h>

#include <optional>
#include <string>
#include <vector>

#include "compile/newer_opset_inference.h"

namespace epctx::compile {
namespace {

constexpr int kSince18 = 18;
constexpr int kGroupNormPerChannel = 21;
using newer_opsets::ConstantInts;
using newer_opsets::DimIndex;
using newer_opsets::InferenceOf;
using onnx::AttributeProto;
using onnx::OpSchema;

const std::vector<std::string> kIntegerTypes = {
    "tensor(uint8)", "tensor(uint16)", "tensor(uint32)", "tensor(uint64)",
    "tensor(int8)",  "tensor(int16)",  "tensor(int32)",  "tensor(int64)"};
const std::vector<std::string> kFloatTypes = {"tensor(float16)", "tensor(float)", "tensor(double)",
                                              "tensor(bfloat16)"};

OpSchema Named(const char* op) {
  OpSchema s;
  s.SetName(op).SetDomain(onnx::ONNX_DOMAIN).SinceVersion(kSince18);
  return s;
}

OpSchema Mish() {
  OpSchema s = Named("Mish");
  s.Input(0, "X", "", "T")
      .Output(0, "Y", "x * tanh(softplus(x))", "T")
      .TypeConstraint("T", kFloatTypes, "")
      .TypeAndShapeInferenceFunction(onnx::propagateShapeAndTypeFromFirstInput);
  return s;
}

OpSchema BitwiseNot() {
  OpSchema s = Named("BitwiseNot");
  s.Input(0, "X", "", "T")
      .Output(0, "Y", "", "T")
      .TypeConstraint("T", kIntegerTypes, "")
      .TypeAndShapeInferenceFunction(onnx::propagateShapeAndTypeFromFirstInput);
  return s;
}

void InferBroadcast(onnx::InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  if (onnx::hasNInputShapes(ctx, 2)) {
    onnx::bidirectionalBroadcastShapeInference(ctx.getInputType(0)->tensor_type().shape(),
                                               ctx.getInputType(1)->tensor_type().shape(),
                                               *onnx::getOutputShape(ctx, 0));
  }
}

OpSchema BitwiseBinary(const char* op) {
  OpSchema s = Named(op);
  s.Input(0, "A", "", "T")
      .Input(1, "B", "", "T")
      .Output(0, "C", "", "T")
      .TypeConstraint("T", kIntegerTypes, "")
      .TypeAndShapeInferenceFunction(InferBroadcast);
  return s;
}

// Opset 18: scale and bias per group; opset 21: per channel, and stash_type (the type of the
// statistics: 1 = float32).
OpSchema GroupNormalization(int version) {
  const char* per = version >= kGroupNormPerChannel ? "one per channel" : "one per group";
  OpSchema s = Named("GroupNormalization");
  s.SinceVersion(version)
      .Attr("epsilon", "added to the variance", AttributeProto::FLOAT, 1e-5f)
      .Attr("num_groups", "groups the channels divide into", AttributeProto::INT, true)
      .Input(0, "X", "[N, C, ...]", "T")
      .Input(1, "scale", per, "T")
      .Input(2, "bias", per, "T")
      .Output(0, "Y", "", "T")
      .TypeConstraint("T", kFloatTypes, "")
      .TypeAndShapeInferenceFunction(onnx::propagateShapeAndTypeFromFirstInput);
  if (version >= kGroupNormPerChannel) {
    s.Attr("stash_type", "the statistics' element type", AttributeProto::INT, int64_t{1});
  }
  return s;
}

// The input's rank; each axis CenterCropPad sets takes its length from the shape input when that
// is a constant, and is unknown otherwise.
void InferCenterCropPad(onnx::InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  if (!onnx::hasInputShape(ctx, 0)) return;
  const onnx::TensorShapeProto& shape = onnx::getInputShape(ctx, 0);
  const int rank = shape.dim_size();
  std::vector<int64_t> axes;
  if (const AttributeProto* a = ctx.getAttribute("axes"))
    axes.assign(a->ints().begin(), a->ints().end());
  if (axes.empty()) {
    for (int d = 0; d < rank; ++d) axes.push_back(d);
  }
  const std::optional<std::vector<int64_t>> lengths = ConstantInts(ctx, 1);
  if (lengths && lengths->size() != axes.size()) {
    fail_shape_inference("CenterCropPad: shape has ", lengths->size(), " values for ", axes.size(),
                         " axes");
  }
  onnx::TensorShapeProto out = shape;
  for (size_t j = 0; j < axes.size(); ++j) {
    onnx::TensorShapeProto::Dimension& dim =
        *out.mutable_dim(DimIndex(axes[j], rank, "CenterCropPad: axis"));
    dim = onnx::TensorShapeProto::Dimension();
    if (lengths) dim.set_dim_value((*lengths)[j]);
  }
  onnx::updateOutputShape(ctx, 0, out);
}

OpSchema CenterCropPad() {
  OpSchema s = Named("CenterCropPad");
  s.Attr("axes", "the axes shape describes (default: all)", AttributeProto::INTS, false)
      .Input(0, "input_data", "", "T")
      .Input(1, "shape", "the axes' new lengths", "Tind")
      .Output(0, "output_data", "", "T")
      .TypeConstraint("T", OpSchema::all_tensor_types_with_bfloat(), "")
      .TypeConstraint("Tind", {"tensor(int32)", "tensor(int64)"}, "")
      .TypeAndShapeInferenceFunction(InferCenterCropPad);
  return s;
}

// [N, C, image...]: the rank and image dims from a constant image_shape, C from the input's
// second dim and a constant block_shape.
void InferCol2Im(onnx::InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  const std::optional<std::vector<int64_t>> image = ConstantInts(ctx, 1);
  if (!image) return;
  const std::optional<std::vector<int64_t>> block = ConstantInts(ctx, 2);
  if (block && block->size() != image->size()) {
    fail_shape_inference("Col2Im: image_shape has ", image->size(), " dims, block_shape ",
                         block->size());
  }
  onnx::TensorShapeProto out;
  onnx::TensorShapeProto::Dimension* n = out.add_dim();
  onnx::TensorShapeProto::Dimension* c = out.add_dim();
  for (int64_t d : *image) out.add_dim()->set_dim_value(d);
  if (onnx::hasInputShape(ctx, 0)) {
    const onnx::TensorShapeProto& in = onnx::getInputShape(ctx, 0);
    if (in.dim_size() != 3)
      fail_shape_inference("Col2Im: input has rank ", in.dim_size(), ", expected 3");
    *n = in.dim(0);
    int64_t taps = 1;
    for (int64_t b : block.value_or(std::vector<int64_t>{})) taps *= b;
    if (block && taps > 0 && in.dim(1).has_dim_value() && in.dim(1).dim_value() % taps == 0) {
      c->set_dim_value(in.dim(1).dim_value() / taps);
    }
  }
  onnx::updateOutputShape(ctx, 0, out);
}

OpSchema Col2Im() {
  OpSchema s = Named("Col2Im");
  s.Attr("dilations", "", AttributeProto::INTS, false)
      .Attr("pads", "begins then ends", AttributeProto::INTS, false)
      .Attr("strides", "", AttributeProto::INTS, false)
      .Input(0, "input", "[N, C * prod(block_shape), L]", "T")
      .Input(1, "image_shape", "", "tensor(int64)")
      .Input(2, "block_shape", "", "tensor(int64)")
      .Output(0, "output", "[N, C, image_shape...]", "T")
      .TypeConstraint("T", OpSchema::all_tensor_types_with_bfloat(), "")
      .TypeAndShapeInferenceFunction(InferCol2Im);
  return s;
}

// LpPool-18 adds ceil_mode and dilations, which MaxPool's inference (opset 12) reads already.
void InferLpPool(onnx::InferenceContext& ctx) {
  static const onnx::InferenceFunction max_pool = InferenceOf("MaxPool", 12);
  if (max_pool) max_pool(ctx);
}

OpSchema LpPool() {
  OpSchema s = Named("LpPool");
  s.Attr("auto_pad", "", AttributeProto::STRING, std::string("NOTSET"))
      .Attr("ceil_mode", "", AttributeProto::INT, int64_t{0})
      .Attr("dilations", "", AttributeProto::INTS, false)
      .Attr("kernel_shape", "", AttributeProto::INTS, true)
      .Attr("p", "", AttributeProto::INT, int64_t{2})
      .Attr("pads", "", AttributeProto::INTS, false)
      .Attr("strides", "", AttributeProto::INTS, false)
      .Input(0, "X", "", "T")
      .Output(0, "Y", "", "T")
      .TypeConstraint("T", {"tensor(float16)", "tensor(float)", "tensor(double)"}, "")
      .TypeAndShapeInferenceFunction(InferLpPool);
  return s;
}

}  // namespace

void RegisterOpset18Operators() {
  onnx::RegisterSchema(Mish());
  onnx::RegisterSchema(BitwiseNot());
  for (const char* op : {"BitwiseAnd", "BitwiseOr", "BitwiseXor"}) {
    onnx::RegisterSchema(BitwiseBinary(op));
  }
  onnx::RegisterSchema(GroupNormalization(kSince18));
  onnx::RegisterSchema(GroupNormalization(kGroupNormPerChannel));
  onnx::RegisterSchema(CenterCropPad());
  onnx::RegisterSchema(Col2Im());
  onnx::RegisterSchema(LpPool());
}

}  // namespace epctx::compile
