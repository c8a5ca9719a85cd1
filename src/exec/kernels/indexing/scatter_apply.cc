#include "exec/kernels/indexing/scatter_apply.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

// Integer add and mul wrap instead of overflowing (undefined for signed types).
template <typename T>
T Add(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
  } else {
    return a + b;
  }
}

template <typename T>
T Mul(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
  } else {
    return a * b;
  }
}

template <typename T>
void Combine(ScatterReduction reduction, T* out, std::span<const int64_t> offsets, const T* updates,
             int64_t slab) {
  for (size_t i = 0; i < offsets.size(); ++i) {
    T* dst = out + offsets[i];
    const T* src = updates + static_cast<int64_t>(i) * slab;
    switch (reduction) {
      case ScatterReduction::kAdd:
        for (int64_t j = 0; j < slab; ++j) dst[j] = Add(dst[j], src[j]);
        break;
      case ScatterReduction::kMul:
        for (int64_t j = 0; j < slab; ++j) dst[j] = Mul(dst[j], src[j]);
        break;
      case ScatterReduction::kMax:
        for (int64_t j = 0; j < slab; ++j) dst[j] = std::max(dst[j], src[j]);
        break;
      case ScatterReduction::kMin:
        for (int64_t j = 0; j < slab; ++j) dst[j] = std::min(dst[j], src[j]);
        break;
      case ScatterReduction::kNone:
        break;
    }
  }
}

template <typename T>
void CombineBytes(ScatterReduction reduction, std::byte* out, std::span<const int64_t> offsets,
                  const std::byte* updates, int64_t slab) {
  Combine(reduction, reinterpret_cast<T*>(out), offsets, reinterpret_cast<const T*>(updates), slab);
}

}  // namespace

Result<Tensor*> AllocateCopyOf(KernelContext& ctx, size_t index, const Tensor& data) {
  EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(index, data.dtype(), data.shape()));
  if (data.byte_size() > 0) std::memcpy(y->mutable_data(), data.data(), data.byte_size());
  return y;
}

Result<ScatterReduction> ParseScatterReduction(std::string_view name) {
  if (name == "none") return ScatterReduction::kNone;
  if (name == "add") return ScatterReduction::kAdd;
  if (name == "mul") return ScatterReduction::kMul;
  if (name == "max") return ScatterReduction::kMax;
  if (name == "min") return ScatterReduction::kMin;
  return EPCTX_ERROR(kUnsupported, "reduction '{}' is not supported", name);
}

Status ScatterSlabs(ScatterReduction reduction, DataType type, std::byte* out,
                    std::span<const int64_t> offsets, const std::byte* updates, int64_t slab) {
  if (reduction == ScatterReduction::kNone) {
    const size_t element = DataTypeSize(type);
    const size_t bytes = static_cast<size_t>(slab) * element;
    for (size_t i = 0; i < offsets.size(); ++i) {
      std::memcpy(out + static_cast<size_t>(offsets[i]) * element, updates + i * bytes, bytes);
    }
    return Status::Ok();
  }
  switch (type) {
    case DataType::kFloat32:
      CombineBytes<float>(reduction, out, offsets, updates, slab);
      return Status::Ok();
    case DataType::kFloat64:
      CombineBytes<double>(reduction, out, offsets, updates, slab);
      return Status::Ok();
    case DataType::kInt32:
      CombineBytes<int32_t>(reduction, out, offsets, updates, slab);
      return Status::Ok();
    case DataType::kInt64:
      CombineBytes<int64_t>(reduction, out, offsets, updates, slab);
      return Status::Ok();
    case DataType::kInt8:
      CombineBytes<int8_t>(reduction, out, offsets, updates, slab);
      return Status::Ok();
    case DataType::kUint8:
      CombineBytes<uint8_t>(reduction, out, offsets, updates, slab);
      return Status::Ok();
    case DataType::kInt16:
      CombineBytes<int16_t>(reduction, out, offsets, updates, slab);
      return Status::Ok();
    case DataType::kUint16:
      CombineBytes<uint16_t>(reduction, out, offsets, updates, slab);
      return Status::Ok();
    case DataType::kUint32:
      CombineBytes<uint32_t>(reduction, out, offsets, updates, slab);
      return Status::Ok();
    case DataType::kUint64:
      CombineBytes<uint64_t>(reduction, out, offsets, updates, slab);
      return Status::Ok();
    case DataType::kBool:  // add is or, mul is and (as ONNX Runtime's)
      CombineBytes<bool>(reduction, out, offsets, updates, slab);
      return Status::Ok();
    default:
      return EPCTX_ERROR(kUnsupported, "scatter with a reduction does not support type {}",
                         DataTypeName(type));
  }
}

}  // namespace epctx::exec::kernels
