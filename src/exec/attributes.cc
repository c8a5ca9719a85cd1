#include "exec/attributes.h"

#include "util/status_macros.h"

namespace epctx::exec {
namespace {

Status WrongType(std::string_view name, const char* wanted) {
  return EPCTX_ERROR(kInvalidArgument, "attribute '{}' is not of type {}", name, wanted);
}

}  // namespace

const AttributeValue* Attributes::Find(std::string_view name) const {
  for (const AttributeValue& v : values_) {
    if (v.name == name) return &v;
  }
  return nullptr;
}

Result<int64_t> Attributes::GetInt(std::string_view name, int64_t fallback) const {
  const AttributeValue* v = Find(name);
  if (v == nullptr) return fallback;
  if (v->type != AttrType::kInt) return WrongType(name, "int");
  return v->i;
}

Result<float> Attributes::GetFloat(std::string_view name, float fallback) const {
  const AttributeValue* v = Find(name);
  if (v == nullptr) return fallback;
  if (v->type != AttrType::kFloat) return WrongType(name, "float");
  return v->f;
}

Result<std::string> Attributes::GetString(std::string_view name, std::string fallback) const {
  const AttributeValue* v = Find(name);
  if (v == nullptr) return fallback;
  if (v->type != AttrType::kString) return WrongType(name, "string");
  return std::string(v->s);
}

Result<std::vector<int64_t>> Attributes::GetInts(std::string_view name,
                                                 std::vector<int64_t> fallback) const {
  const AttributeValue* v = Find(name);
  if (v == nullptr) return fallback;
  if (v->type != AttrType::kInts) return WrongType(name, "ints");
  return std::vector<int64_t>(v->ints.begin(), v->ints.end());
}

Result<std::vector<float>> Attributes::GetFloats(std::string_view name,
                                                 std::vector<float> fallback) const {
  const AttributeValue* v = Find(name);
  if (v == nullptr) return fallback;
  if (v->type != AttrType::kFloats) return WrongType(name, "floats");
  return std::vector<float>(v->floats.begin(), v->floats.end());
}

Result<std::vector<std::string>> Attributes::GetStrings(std::string_view name,
                                                        std::vector<std::string> fallback) const {
  const AttributeValue* v = Find(name);
  if (v == nullptr) return fallback;
  if (v->type != AttrType::kStrings) return WrongType(name, "strings");
  return std::vector<std::string>(v->strings.begin(), v->strings.end());
}

Result<const AttributeValue*> Attributes::Require(std::string_view name, AttrType type) const {
  const AttributeValue* v = Find(name);
  if (v == nullptr)
    return EPCTX_ERROR(kInvalidArgument, "required attribute '{}' is missing", name);
  if (v->type != type) {
    return EPCTX_ERROR(kInvalidArgument, "attribute '{}' has type {} (expected {})", name,
                       static_cast<int>(v->type), static_cast<int>(type));
  }
  return v;
}

}  // namespace epctx::exec
