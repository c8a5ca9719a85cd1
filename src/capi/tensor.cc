// C tensors: views over caller memory (inputs) and engine-owned results (outputs).
#include <limits>

#include "capi/capi_types.h"

using epctx::Status;
using epctx::StatusCode;
using epctx::capi::Guard;

extern "C" {

epctx_status* epctx_tensor_create_view(epctx_data_type type, const int64_t* shape, size_t rank,
                                       const void* data, size_t data_size, epctx_tensor** out) {
  return Guard(__func__, [&](const char* fn) {
    EPCTX_C_REQUIRE(out);
    if (rank > 0) EPCTX_C_REQUIRE(shape);
    if (data_size > 0) EPCTX_C_REQUIRE(data);
    auto dtype = static_cast<epctx::DataType>(type);
    size_t element_size = epctx::DataTypeSize(dtype);
    if (element_size == 0) {
      return Status(StatusCode::kUnsupported, std::string(fn) + ": element type " +
                                                  epctx::DataTypeName(dtype) +
                                                  " has no fixed size and cannot be viewed");
    }
    std::vector<int64_t> dims(shape, shape + rank);
    uint64_t count = 1;
    for (int64_t d : dims) {
      if (d < 0 || __builtin_mul_overflow(count, static_cast<uint64_t>(d), &count)) {
        return Status(StatusCode::kInvalidArgument, std::string(fn) + ": shape " +
                                                        epctx::ShapeToString(dims) +
                                                        " has a negative dim or too many elements");
      }
    }
    uint64_t bytes = 0;
    if (count > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) ||
        __builtin_mul_overflow(count, element_size, &bytes)) {
      return Status(
          StatusCode::kInvalidArgument,
          std::string(fn) + ": shape " + epctx::ShapeToString(dims) + " has too many elements");
    }
    if (bytes != data_size) {
      return Status(StatusCode::kInvalidArgument,
                    std::string(fn) + ": data_size is " + std::to_string(data_size) +
                        " bytes, but shape " + epctx::ShapeToString(dims) + " of " +
                        epctx::DataTypeName(dtype) + " takes " + std::to_string(bytes));
    }
    *out = new epctx_tensor{epctx::Tensor::View(dtype, std::move(dims), data, nullptr)};
    return Status::Ok();
  });
}

void epctx_tensor_release(epctx_tensor* tensor) {
  delete tensor;
}

epctx_status* epctx_tensor_get_type(const epctx_tensor* tensor, epctx_data_type* type) {
  return Guard(__func__, [&](const char* fn) {
    EPCTX_C_REQUIRE(tensor);
    EPCTX_C_REQUIRE(type);
    *type = static_cast<epctx_data_type>(tensor->tensor.dtype());
    return Status::Ok();
  });
}

epctx_status* epctx_tensor_get_shape(const epctx_tensor* tensor, const int64_t** dims,
                                     size_t* rank) {
  return Guard(__func__, [&](const char* fn) {
    EPCTX_C_REQUIRE(tensor);
    EPCTX_C_REQUIRE(dims);
    EPCTX_C_REQUIRE(rank);
    *dims = tensor->tensor.shape().data();
    *rank = tensor->tensor.shape().size();
    return Status::Ok();
  });
}

epctx_status* epctx_tensor_get_data(const epctx_tensor* tensor, const void** data,
                                    size_t* data_size) {
  return Guard(__func__, [&](const char* fn) {
    EPCTX_C_REQUIRE(tensor);
    EPCTX_C_REQUIRE(data);
    EPCTX_C_REQUIRE(data_size);
    *data = tensor->tensor.data();
    *data_size = tensor->tensor.byte_size();
    return Status::Ok();
  });
}

}  // extern "C"
