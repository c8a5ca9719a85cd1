// Schemas of ONNX Runtime's GELU-family activations (com.microsoft FastGelu, BiasGelu, Gelu,
// QuickGelu): each output has its first input's type and shape.
#include "compile/contrib/contrib_schemas.h"
#include "compile/contrib/schema_helpers.h"

namespace epctx::compile::contrib {
namespace {

void InferLikeFirstInput(onnx::InferenceContext& ctx) {
  PropagateTypeAndShape(ctx, 0, 0);
}

onnx::OpSchema Activation(const char* name) {
  onnx::OpSchema s;
  s.SetName(name)
      .SetDomain(kMicrosoftDomain)
      .SinceVersion(1)
      .Output(0, "Y", "the input's shape", "T")
      .TypeConstraint(
          "T", {"tensor(float16)", "tensor(float)", "tensor(double)", "tensor(bfloat16)"}, "")
      .TypeAndShapeInferenceFunction(InferLikeFirstInput);
  return s;
}

}  // namespace

void RegisterActivationSchemas() {
  using onnx::OpSchema;
  RegisterOne(Activation("FastGelu")
                  .Input(0, "X", "", "T")
                  .Input(1, "bias", "[last dim of X], added first", "T", OpSchema::Optional));
  RegisterOne(Activation("BiasGelu")
                  .Input(0, "A", "", "T")
                  .Input(1, "B", "[last dim of A], added first", "T"));
  RegisterOne(Activation("Gelu").Input(0, "X", "", "T"));
  RegisterOne(Activation("QuickGelu")
                  .Attr("alpha", "the sigmoid's slope", onnx::AttributeProto::FLOAT, 1.702f)
                  .Input(0, "X", "", "T"));
}

}  // namespace epctx::compile::contrib
