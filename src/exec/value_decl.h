// A program value's declaration, decoded from the blob's program schema (fb::Value) here and
// nowhere else: the executor checks the values of a run against it, kernels are bound against it,
// and sessions describe their inputs and outputs with it.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "epctx/session.h"
#include "epctx/tensor.h"

namespace epctx::fb {
struct Program;
struct Value;
}  // namespace epctx::fb

namespace epctx::exec {

// Views into the program: valid while the program's blob is.
struct ValueDecl {
  const fb::Value* value = nullptr;  // null for a default (undeclared) value
  std::string_view name;
  ValueKind kind = ValueKind::kTensor;  // kTensor or kSequence
  bool optional = false;                // may be ValueKind::kNone
  DataType dtype = DataType::kUndefined;
  bool shape_known = false;
  std::span<const int64_t> shape;  // -1 for dims unknown at compile time

  // Whether a value of type `given` may fill this declaration: the same type, or any numeric type
  // where the compiler did not know it (a string never reaches a kernel not bound for strings).
  bool AcceptsType(DataType given) const {
    return given == dtype || (dtype == DataType::kUndefined && given != DataType::kString);
  }
  // Whether `dims` have the declared rank and static dims (any dims when the shape is unknown).
  bool HasShape(std::span<const int64_t> dims) const;
  // The public description: name, kind, type, shape and dim names ("" where unnamed).
  ValueInfo ToValueInfo() const;
};

ValueDecl DecodeValue(const fb::Value& value);

// The public descriptions of `program`'s inputs and outputs, in order.
std::vector<ValueInfo> DescribeInputs(const fb::Program& program);
std::vector<ValueInfo> DescribeOutputs(const fb::Program& program);

}  // namespace epctx::exec
