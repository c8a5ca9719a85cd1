// Whether a value of a run fits what the program declares for it (kind, element type, shape),
// and the errors that say how it does not.
#include "exec/executor.h"
#include "util/status_macros.h"

namespace epctx::exec {

bool BoundProgram::HasDeclaredShape(int32_t v, const Tensor& t) const {
  return HasDeclaredShape(v, t.shape());
}

bool BoundProgram::HasDeclaredShape(int32_t v, std::span<const int64_t> shape) const {
  return slots_[static_cast<size_t>(v)].decl.HasShape(shape);
}

Status BoundProgram::CheckKindAndType(int32_t v, const Tensor& t) const {
  const Slot& slot = slots_[static_cast<size_t>(v)];
  const std::string_view name = slot.decl.name;
  if (t.kind() == ValueKind::kNone) {
    if (slot.decl.optional) return Status::Ok();
    return EPCTX_ERROR(kInvalidArgument,
                       "value '{}' is an empty optional, but the program "
                       "declares {} that is not optional",
                       name, ValueKindName(slot.decl.kind));
  }
  if (t.kind() != slot.decl.kind) {
    return EPCTX_ERROR(kInvalidArgument, "value '{}' is {}, but the program declares {}{}", name,
                       ValueKindName(t.kind()), slot.decl.optional ? "an optional of " : "",
                       ValueKindName(slot.decl.kind));
  }
  if (!slot.decl.AcceptsType(t.dtype()) &&
      !(t.kind() == ValueKind::kSequence && t.dtype() == DataType::kUndefined &&
        t.elements().empty())) {
    return EPCTX_ERROR(kInvalidArgument, "value '{}' is {} of {}, but the program declares {}",
                       name, ValueKindName(t.kind()), DataTypeName(t.dtype()),
                       DataTypeName(slot.decl.dtype));
  }
  return Status::Ok();
}

Status BoundProgram::CheckDeclared(int32_t v, const Tensor& t, bool check_shape) const {
  const Slot& slot = slots_[static_cast<size_t>(v)];
  if (!t.is_tensor() || slot.decl.kind != ValueKind::kTensor || slot.decl.optional) {
    return CheckKindAndType(v, t);
  }
  const bool type_fits = slot.decl.AcceptsType(t.dtype());
  if (type_fits && (!check_shape || HasDeclaredShape(v, t))) return Status::Ok();
  return DeclarationMismatch(v, t.dtype(), t.shape());
}

Status BoundProgram::DeclarationMismatch(int32_t v, DataType type,
                                         const std::vector<int64_t>& shape) const {
  const Slot& slot = slots_[static_cast<size_t>(v)];
  std::vector<int64_t> declared(slot.decl.shape.begin(), slot.decl.shape.end());
  return EPCTX_ERROR(kInvalidArgument, "value '{}' is {} {}, but the program declares {} {}",
                     slot.decl.name, DataTypeName(type), ShapeToString(shape),
                     DataTypeName(slot.decl.dtype),
                     slot.decl.shape_known ? ShapeToString(declared) : "of any shape");
}

}  // namespace epctx::exec
