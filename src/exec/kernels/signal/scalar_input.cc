// Scalar inputs of the signal ops. The ONNX tests pass them both as rank-0 tensors and as
// one-element vectors, so both are accepted.
#include "exec/kernels/signal/scalar_input.h"
#include "exec/kernels/common/shape.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

Status ExpectOneElement(const Tensor& t, std::string_view name) {
  if (t.shape().size() > 1 || t.element_count() != 1) {
    return EPCTX_ERROR(kInvalidArgument, "input {} has shape {}, expected a scalar", name,
                       ShapeToString(t.shape()));
  }
  return Status::Ok();
}

}  // namespace

Result<int64_t> ReadIntScalar(const Tensor& t, std::string_view name) {
  EPCTX_RETURN_IF_ERROR(ExpectOneElement(t, name));
  EPCTX_ASSIGN_OR_RETURN(std::vector<int64_t> v, ReadIndexVector(t, name));
  return v[0];
}

Result<double> ReadFloatScalar(const Tensor& t, std::string_view name) {
  EPCTX_RETURN_IF_ERROR(ExpectOneElement(t, name));
  switch (t.dtype()) {
    case DataType::kFloat32:
      return static_cast<double>(*t.data_as<float>());
    case DataType::kFloat64:
      return *t.data_as<double>();
    default:
      return EPCTX_ERROR(kUnsupported, "input {} has type {}, expected float32 or float64", name,
                         DataTypeName(t.dtype()));
  }
}

}  // namespace epctx::exec::kernels
