// Node attributes as kernels see them: non-owning views over a program in a blob, or over the
// compiler's IR. The storage must outlive kernel creation; kernels copy what they keep.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "epctx/status.h"
#include "epctx/tensor.h"

namespace epctx::exec {

enum class AttrType : uint8_t {
  kUndefined = 0,
  kFloat = 1,
  kInt = 2,
  kString = 3,
  kTensor = 4,
  kGraph = 5,
  kFloats = 6,
  kInts = 7,
  kStrings = 8,
};

struct AttributeValue {
  std::string_view name;
  AttrType type = AttrType::kUndefined;
  int64_t i = 0;
  float f = 0;
  std::string_view s;
  std::span<const int64_t> ints;
  std::span<const float> floats;
  std::vector<std::string_view> strings;
  Tensor tensor;       // kTensor: a view of the attribute's data
  int32_t graph = -1;  // kGraph: index of the body program
};

class Attributes {
 public:
  void Add(AttributeValue value) { values_.push_back(std::move(value)); }
  const std::vector<AttributeValue>& all() const { return values_; }

  const AttributeValue* Find(std::string_view name) const;
  bool Has(std::string_view name) const { return Find(name) != nullptr; }

  // Value when present with the right type; `fallback` when absent. A present attribute of the
  // wrong type is an error.
  Result<int64_t> GetInt(std::string_view name, int64_t fallback) const;
  Result<float> GetFloat(std::string_view name, float fallback) const;
  Result<std::string> GetString(std::string_view name, std::string fallback) const;
  Result<std::vector<int64_t>> GetInts(std::string_view name,
                                       std::vector<int64_t> fallback = {}) const;
  Result<std::vector<float>> GetFloats(std::string_view name,
                                       std::vector<float> fallback = {}) const;
  Result<std::vector<std::string>> GetStrings(std::string_view name,
                                              std::vector<std::string> fallback = {}) const;
  // Required attribute: kInvalidArgument naming it when absent.
  Result<const AttributeValue*> Require(std::string_view name, AttrType type) const;

 private:
  std::vector<AttributeValue> values_;
};

}  // namespace epctx::exec
