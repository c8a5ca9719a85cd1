// C tensors: views over caller memory (inputs) and engine-owned results (outputs).
#include <limits>
#include <string>
#include <vector>

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
    auto dtype = static_cast<epctx::DataType>(epctx::capi::FromC(type));
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
    const epctx::Tensor& t = tensor->tensor;
    if (!t.is_tensor()) {
      return Status(StatusCode::kInvalidArgument,
                    std::string(fn) + ": the value is a " +
                        (t.kind() == epctx::ValueKind::kSequence
                             ? "sequence (read it with epctx_tensor_get_sequence_element)"
                             : "empty optional (it has no data)"));
    }
    if (t.dtype() == epctx::DataType::kString) {
      return Status(StatusCode::kInvalidArgument,
                    std::string(fn) +
                        ": a string tensor has no flat data; read its elements "
                        "with epctx_tensor_get_string");
    }
    *data = t.data();
    *data_size = t.byte_size();
    return Status::Ok();
  });
}

epctx_status* epctx_tensor_get_kind(const epctx_tensor* tensor, epctx_value_kind* kind) {
  return Guard(__func__, [&](const char* fn) {
    EPCTX_C_REQUIRE(tensor);
    EPCTX_C_REQUIRE(kind);
    *kind = static_cast<epctx_value_kind>(tensor->tensor.kind());
    return Status::Ok();
  });
}

epctx_status* epctx_tensor_create_strings(const int64_t* shape, size_t rank,
                                          const char* const* strings, const size_t* lengths,
                                          size_t count, epctx_tensor** out) {
  return Guard(__func__, [&](const char* fn) {
    EPCTX_C_REQUIRE(out);
    if (rank > 0) EPCTX_C_REQUIRE(shape);
    if (count > 0) {
      EPCTX_C_REQUIRE(strings);
      EPCTX_C_REQUIRE(lengths);
    }
    std::vector<int64_t> dims(shape, shape + rank);
    auto t = epctx::Tensor::Allocate(epctx::DataType::kString, dims);
    if (!t.ok()) return Status(t.status().code(), std::string(fn) + ": " + t.status().message());
    if (static_cast<uint64_t>(t->element_count()) != count) {
      return Status(StatusCode::kInvalidArgument,
                    std::string(fn) + ": " + std::to_string(count) + " strings for shape " +
                        epctx::ShapeToString(dims) + ", which holds " +
                        std::to_string(t->element_count()));
    }
    auto* elements = t->mutable_data_as<std::string>();
    for (size_t i = 0; i < count; ++i) {
      if (strings[i] == nullptr && lengths[i] > 0) {
        return Status(StatusCode::kInvalidArgument,
                      std::string(fn) + ": strings[" + std::to_string(i) + "] is NULL");
      }
      if (lengths[i] > 0) elements[i].assign(strings[i], lengths[i]);
    }
    *out = new epctx_tensor{std::move(*t)};
    return Status::Ok();
  });
}

epctx_status* epctx_tensor_get_string(const epctx_tensor* tensor, size_t index, const char** data,
                                      size_t* length) {
  return Guard(__func__, [&](const char* fn) {
    EPCTX_C_REQUIRE(tensor);
    EPCTX_C_REQUIRE(data);
    EPCTX_C_REQUIRE(length);
    const epctx::Tensor& t = tensor->tensor;
    if (!t.is_tensor() || t.dtype() != epctx::DataType::kString) {
      return Status(StatusCode::kInvalidArgument, std::string(fn) + ": not a string tensor");
    }
    if (index >= static_cast<uint64_t>(t.element_count())) {
      return Status(StatusCode::kInvalidArgument,
                    std::string(fn) + ": index " + std::to_string(index) + " of " +
                        std::to_string(t.element_count()) + " strings");
    }
    const std::string& s = t.data_as<std::string>()[index];
    *data = s.data();
    *length = s.size();
    return Status::Ok();
  });
}

epctx_status* epctx_tensor_create_sequence(epctx_data_type element_type,
                                           const epctx_tensor* const* elements, size_t count,
                                           epctx_tensor** out) {
  return Guard(__func__, [&](const char* fn) {
    EPCTX_C_REQUIRE(out);
    if (count > 0) EPCTX_C_REQUIRE(elements);
    const auto type = static_cast<epctx::DataType>(epctx::capi::FromC(element_type));
    std::vector<epctx::Tensor> copies;
    copies.reserve(count);
    for (size_t i = 0; i < count; ++i) {
      if (elements[i] == nullptr) {
        return Status(StatusCode::kInvalidArgument,
                      std::string(fn) + ": elements[" + std::to_string(i) + "] is NULL");
      }
      const epctx::Tensor& e = elements[i]->tensor;
      if (!e.is_tensor() || e.dtype() != type) {
        return Status(StatusCode::kInvalidArgument,
                      std::string(fn) + ": elements[" + std::to_string(i) + "] is " +
                          (e.is_tensor() ? epctx::DataTypeName(e.dtype()) : "not a tensor") +
                          ", the sequence holds " + epctx::DataTypeName(type));
      }
      auto copy = e.Clone();
      if (!copy.ok()) {
        return Status(copy.status().code(), std::string(fn) + ": " + copy.status().message());
      }
      copies.push_back(std::move(*copy));
    }
    *out = new epctx_tensor{epctx::Tensor::Sequence(type, std::move(copies))};
    return Status::Ok();
  });
}

epctx_status* epctx_tensor_create_none(epctx_data_type element_type, epctx_tensor** out) {
  return Guard(__func__, [&](const char* fn) {
    EPCTX_C_REQUIRE(out);
    *out = new epctx_tensor{
        epctx::Tensor::None(static_cast<epctx::DataType>(epctx::capi::FromC(element_type)))};
    return Status::Ok();
  });
}

epctx_status* epctx_tensor_get_sequence_length(const epctx_tensor* tensor, size_t* length) {
  return Guard(__func__, [&](const char* fn) {
    EPCTX_C_REQUIRE(tensor);
    EPCTX_C_REQUIRE(length);
    if (tensor->tensor.kind() != epctx::ValueKind::kSequence) {
      return Status(StatusCode::kInvalidArgument, std::string(fn) + ": not a sequence");
    }
    *length = tensor->tensor.elements().size();
    return Status::Ok();
  });
}

epctx_status* epctx_tensor_get_sequence_element(const epctx_tensor* tensor, size_t index,
                                                epctx_tensor** out) {
  return Guard(__func__, [&](const char* fn) {
    EPCTX_C_REQUIRE(tensor);
    EPCTX_C_REQUIRE(out);
    const epctx::Tensor& t = tensor->tensor;
    if (t.kind() != epctx::ValueKind::kSequence) {
      return Status(StatusCode::kInvalidArgument, std::string(fn) + ": not a sequence");
    }
    if (index >= t.elements().size()) {
      return Status(StatusCode::kInvalidArgument, std::string(fn) + ": index " +
                                                      std::to_string(index) + " of a sequence of " +
                                                      std::to_string(t.elements().size()));
    }
    *out = new epctx_tensor{t.elements()[index]};
    return Status::Ok();
  });
}

}  // extern "C"
