#include "exec/value_decl.h"

#include "program_generated.h"
#include "util/declared_shape.h"

namespace epctx::exec {

bool ValueDecl::HasShape(std::span<const int64_t> dims) const {
  return !shape_known || FitsDeclaredShape(shape, dims);
}

ValueInfo ValueDecl::ToValueInfo() const {
  ValueInfo info;
  info.name = std::string(name);
  info.kind = kind;
  info.optional = optional;
  info.dtype = dtype;
  info.shape.assign(shape.begin(), shape.end());
  info.dim_names.assign(info.shape.size(), "");
  if (value != nullptr && value->dim_names() != nullptr) {
    const auto& names = *value->dim_names();
    for (uint32_t i = 0; i < names.size() && i < info.shape.size(); ++i) {
      info.dim_names[i] = names.Get(i)->str();
    }
  }
  return info;
}

ValueDecl DecodeValue(const fb::Value& value) {
  ValueDecl d;
  d.value = &value;
  if (value.name() != nullptr) d.name = value.name()->string_view();
  d.kind = static_cast<ValueKind>(value.kind());
  d.optional = value.optional();
  d.dtype = static_cast<DataType>(value.dtype());
  d.shape_known = value.shape() != nullptr;
  if (d.shape_known) d.shape = {value.shape()->data(), value.shape()->size()};
  return d;
}

namespace {

std::vector<ValueInfo> Describe(const fb::Program& program,
                                const flatbuffers::Vector<int32_t>* indices) {
  std::vector<ValueInfo> out;
  if (indices == nullptr) return out;
  out.reserve(indices->size());
  for (int32_t v : *indices) {
    out.push_back(DecodeValue(*program.values()->Get(static_cast<uint32_t>(v))).ToValueInfo());
  }
  return out;
}

}  // namespace

std::vector<ValueInfo> DescribeInputs(const fb::Program& program) {
  return Describe(program, program.inputs());
}

std::vector<ValueInfo> DescribeOutputs(const fb::Program& program) {
  return Describe(program, program.outputs());
}

}  // namespace epctx::exec
