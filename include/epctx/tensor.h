// A typed n-dimensional array: owning (allocated here) or a view that keeps its owner alive.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "epctx/status.h"

namespace epctx {

// Values follow ONNX's TensorProto.DataType so that files and programs need no translation.
enum class DataType : int32_t {
  kUndefined = 0,
  kFloat32 = 1,
  kUint8 = 2,
  kInt8 = 3,
  kUint16 = 4,
  kInt16 = 5,
  kInt32 = 6,
  kInt64 = 7,
  kString = 8,
  kBool = 9,
  kFloat16 = 10,
  kFloat64 = 11,
  kUint32 = 12,
  kUint64 = 13,
  kBFloat16 = 16,
};

// What a value holds: a tensor (the usual case), a sequence of tensors of one element type
// (ONNX's seq(tensor)), or nothing (an ONNX optional value without one).
enum class ValueKind : uint8_t {
  kTensor = 0,
  kSequence = 1,
  kNone = 2,
};

// Bytes per element; 0 for kUndefined, kString and values outside the enum. String tensors hold
// std::string elements (data_as<std::string>()), never raw bytes.
size_t DataTypeSize(DataType type);
// "float32", "int64", ...; "unknown(<n>)" for values outside the enum.
std::string DataTypeName(DataType type);
// "a tensor", "a sequence", "an empty optional" (for messages).
std::string_view ValueKindName(ValueKind kind);
// "[1,3,224,224]"; negative dims print as "?".
std::string ShapeToString(const std::vector<int64_t>& shape);

// A value of a model: most often a tensor; also a sequence of tensors or an empty optional (see
// ValueKind), as ONNX Runtime's OrtValue carries all three.
class Tensor {
 public:
  // Memory is aligned to 64 bytes; contents are unspecified (kString: empty strings). Fails on a
  // negative dim, kUndefined or a type outside the enum, or a byte size that overflows.
  static Result<Tensor> Allocate(DataType type, std::vector<int64_t> shape);
  // A sequence of `elements`, each of type `element_type` (not checked here).
  static Tensor Sequence(DataType element_type, std::vector<Tensor> elements);
  // An optional value without one; `element_type` is the declared element type, `of` what the
  // optional would hold (kTensor or kSequence).
  static Tensor None(DataType element_type, ValueKind of = ValueKind::kTensor);
  // A view over memory owned elsewhere; `owner` (may be null) is kept alive with the tensor. An
  // empty Tensor() when the product of the dims overflows int64.
  static Tensor View(DataType type, std::vector<int64_t> shape, const void* data,
                     std::shared_ptr<const void> owner);

  Tensor() = default;

  // The same memory (and owner) seen with another shape of the same element count; an empty
  // tensor when the counts differ.
  Tensor Reshaped(std::vector<int64_t> shape) const;

  // A copy that owns its memory (sequences: every element copied).
  Result<Tensor> Clone() const;

  ValueKind kind() const { return kind_; }
  bool is_tensor() const { return kind_ == ValueKind::kTensor; }
  // A sequence's elements; empty for other kinds.
  const std::vector<Tensor>& elements() const;
  // kNone: what the optional would hold.
  ValueKind none_of() const { return none_of_; }

  // Element type; for a sequence or an empty optional, that of its (would-be) elements.
  DataType dtype() const { return dtype_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  int64_t element_count() const { return element_count_; }
  size_t byte_size() const { return static_cast<size_t>(element_count_) * DataTypeSize(dtype_); }
  // A default-constructed tensor: no value at all (an omitted optional input).
  bool empty() const { return kind_ == ValueKind::kTensor && dtype_ == DataType::kUndefined; }

  const void* data() const { return data_; }
  // Writable access; views of read-only memory (weights in a mapped blob) must not be written.
  void* mutable_data() { return const_cast<void*>(data_); }
  template <typename T>
  const T* data_as() const {
    return static_cast<const T*>(data_);
  }
  template <typename T>
  T* mutable_data_as() {
    return static_cast<T*>(mutable_data());
  }

 private:
  Tensor(DataType type, std::vector<int64_t> shape, int64_t count, const void* data,
         std::shared_ptr<const void> owner)
      : dtype_(type),
        shape_(std::move(shape)),
        element_count_(count),
        data_(data),
        owner_(std::move(owner)) {}

  ValueKind kind_ = ValueKind::kTensor;
  ValueKind none_of_ = ValueKind::kTensor;
  DataType dtype_ = DataType::kUndefined;
  std::shared_ptr<const std::vector<Tensor>> elements_;  // kSequence
  std::vector<int64_t> shape_;
  int64_t element_count_ = 0;
  const void* data_ = nullptr;
  std::shared_ptr<const void> owner_;
};

}  // namespace epctx
