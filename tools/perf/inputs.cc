#include "perf/inputs.h"

#include <cstring>
#include <limits>
#include <random>

#include "util/status_macros.h"

namespace epctx::cli {
namespace {

// The name of dimension `d` of `info` when it is free and named, else "".
const std::string& FreeDimName(const ValueInfo& info, size_t d) {
  static const std::string kNone;
  if (info.shape[d] >= 0 || d >= info.dim_names.size()) return kNone;
  return info.dim_names[d];
}

template <typename T>
void FillUniformInt(Tensor& t, std::default_random_engine& engine) {
  std::uniform_int_distribution<int> dist(0, std::numeric_limits<T>::max());
  T* data = t.mutable_data_as<T>();
  for (int64_t i = 0; i < t.element_count(); ++i) data[i] = static_cast<T>(dist(engine));
}

void Fill(Tensor& t, int seed) {
  std::memset(t.mutable_data(), 0, t.byte_size());
  if (seed < 0) return;
  std::default_random_engine engine(static_cast<unsigned>(seed));
  if (t.dtype() == DataType::kFloat32) {
    std::uniform_real_distribution<float> dist(0.0f, 5.0f);
    float* data = t.mutable_data_as<float>();
    for (int64_t i = 0; i < t.element_count(); ++i) data[i] = dist(engine);
  } else if (t.dtype() == DataType::kInt8) {
    FillUniformInt<int8_t>(t, engine);
  } else if (t.dtype() == DataType::kUint8) {
    FillUniformInt<uint8_t>(t, engine);
  }
}

}  // namespace

std::vector<int64_t> GeneratedShape(const ValueInfo& info,
                                    const std::map<std::string, int64_t>& free_dims) {
  std::vector<int64_t> shape = info.shape;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] >= 0) continue;
    auto it = free_dims.find(FreeDimName(info, d));
    shape[d] = it != free_dims.end() ? it->second : 1;
  }
  return shape;
}

Result<Inputs> GenerateInputs(const std::vector<ValueInfo>& infos,
                              const std::map<std::string, int64_t>& free_dims, int seed) {
  Inputs out;
  for (const ValueInfo& v : infos) {
    if (v.dtype == DataType::kString) {
      return EPCTX_ERROR(kUnsupported, "input '{}' holds strings, which -I cannot generate",
                         v.name);
    }
    EPCTX_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(v.dtype, GeneratedShape(v, free_dims)));
    Fill(t, seed);
    out.emplace(v.name, std::move(t));
  }
  return out;
}

std::vector<std::string> UnusedFreeDims(const std::vector<ValueInfo>& infos,
                                        const std::map<std::string, int64_t>& free_dims) {
  std::vector<std::string> unused;
  for (const auto& [name, value] : free_dims) {
    bool used = false;
    for (const ValueInfo& v : infos) {
      for (size_t d = 0; d < v.shape.size(); ++d) used |= FreeDimName(v, d) == name;
    }
    if (!used) unused.push_back(name);
  }
  return unused;
}

}  // namespace epctx::cli
