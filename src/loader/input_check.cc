// Acceptance of the tensors a run is given, as ONNX Runtime decides it
// (onnxruntime/core/session/inference_session.cc, InferenceSession::ValidateInputs): the shape is
// checked only against a declaration of rank 1 or more, so a scalar input also takes the
// one-element tensor [1] that users of such models feed (and, as in ONNX Runtime, any other
// shape); the error lists every dim that differs, as ONNX Runtime's does. Beyond ONNX Runtime: a
// bool input's bytes must be 0 or 1.
#include <fmt/format.h>

#include <optional>
#include <span>

#include "epctx/session.h"
#include "util/bool_values.h"
#include "util/declared_shape.h"
#include "util/status_macros.h"

namespace epctx {
namespace {

// Caller memory read in place (a C view, a NumPy array) is not copied, so it cannot be normalized:
// a bool byte other than 0 or 1 is refused here, before any kernel reads it.
Status CheckBoolBytes(const Tensor& t, const std::string& who) {
  if (t.dtype() != DataType::kBool || !t.is_tensor()) return Status::Ok();
  std::span<const std::byte> bytes(static_cast<const std::byte*>(t.data()), t.byte_size());
  if (std::optional<size_t> bad = FirstNonBoolByte(bytes)) {
    return EPCTX_ERROR(kInvalidArgument, "{}: bool element {} is {}, not 0 or 1", who, *bad,
                       static_cast<int>(bytes[*bad]));
  }
  return Status::Ok();
}

}  // namespace

std::string ShapeToString(const ValueInfo& value) {
  std::string out = "[";
  for (size_t i = 0; i < value.shape.size(); ++i) {
    if (i > 0) out += ',';
    if (value.shape[i] >= 0) {
      out += std::to_string(value.shape[i]);
    } else if (i < value.dim_names.size() && !value.dim_names[i].empty()) {
      out += value.dim_names[i];
    } else {
      out += '?';
    }
  }
  return out + "]";
}

Status CheckInput(const ValueInfo& declared, const Tensor& given, const std::string& subject) {
  const std::string who = subject.empty() ? fmt::format("input '{}'", declared.name) : subject;
  if (given.empty()) return EPCTX_ERROR(kInvalidArgument, "{} is an empty tensor", who);
  // Sequences and optionals: the kind and the element type, as ONNX Runtime checks them (its
  // ValidateInputs compares the element type of sequence inputs; an optional input may be given
  // without a value).
  if (given.kind() == ValueKind::kNone) {
    if (declared.optional) return Status::Ok();
    return EPCTX_ERROR(kInvalidArgument, "{} is an empty optional, expected {}", who,
                       ValueKindName(declared.kind));
  }
  if (given.kind() != declared.kind) {
    return EPCTX_ERROR(kInvalidArgument, "{} is {}, expected {}{}", who,
                       ValueKindName(given.kind()), declared.optional ? "an optional of " : "",
                       ValueKindName(declared.kind));
  }
  if (given.kind() == ValueKind::kSequence) {
    for (size_t i = 0; i < given.elements().size(); ++i) {
      if (given.elements()[i].dtype() != declared.dtype || !given.elements()[i].is_tensor()) {
        return EPCTX_ERROR(kInvalidArgument, "{} element {} has type {}, expected {}", who, i,
                           DataTypeName(given.elements()[i].dtype()), DataTypeName(declared.dtype));
      }
      EPCTX_RETURN_IF_ERROR(
          CheckBoolBytes(given.elements()[i], fmt::format("{} element {}", who, i)));
    }
    return Status::Ok();
  }
  if (given.dtype() != declared.dtype) {
    return EPCTX_ERROR(kInvalidArgument, "{} has type {}, expected {}", who,
                       DataTypeName(given.dtype()), DataTypeName(declared.dtype));
  }
  EPCTX_RETURN_IF_ERROR(CheckBoolBytes(given, who));
  // No shape, or a scalar: not checked.
  if (declared.shape.empty()) return Status::Ok();
  const std::vector<int64_t>& shape = given.shape();
  if (shape.size() != declared.shape.size()) {
    return EPCTX_ERROR(kInvalidArgument, "{} has rank {} (shape {}), expected rank {} (shape {})",
                       who, shape.size(), ShapeToString(shape), declared.shape.size(),
                       ShapeToString(declared));
  }
  const std::vector<size_t> differ = DimsDifferingFromDeclared(declared.shape, shape);
  if (differ.empty()) return Status::Ok();
  std::string dims = std::to_string(differ[0]);
  for (size_t i = 1; i < differ.size(); ++i) {
    dims += (i + 1 == differ.size() ? " and " : ", ") + std::to_string(differ[i]);
  }
  return EPCTX_ERROR(kInvalidArgument, "{} has shape {}, expected {} ({} {} {})", who,
                     ShapeToString(shape), ShapeToString(declared),
                     differ.size() == 1 ? "dim" : "dims", dims,
                     differ.size() == 1 ? "differs" : "differ");
}

}  // namespace epctx
