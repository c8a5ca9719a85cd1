#include "compile/passes/qdq_pattern.h"

#include <cstring>
#include <functional>
#include <numeric>
#include <span>

#include "exec/kernels/onednn/isa.h"

namespace epctx::compile::qdq {
namespace {

const IrValue& ValueAt(const IrGraph& g, int v) {
  return g.values[static_cast<size_t>(v)];
}

int64_t ElementCount(const IrValue& v) {
  return std::accumulate(v.shape.begin(), v.shape.end(), int64_t{1}, std::multiplies<>());
}

bool IsConstantOf(const IrValue& v, DataType type) {
  return v.constant && v.dtype == type;
}

bool AllZero(const IrValue& v) {
  for (std::byte b : v.constant->bytes) {
    if (b != std::byte{0}) return false;
  }
  return true;
}

}  // namespace

const IrNode* DequantizeProducing(const std::vector<IrNode>& nodes,
                                  const std::vector<int>& producer, int value) {
  if (value < 0) return nullptr;
  const int p = producer[static_cast<size_t>(value)];
  if (p < 0) return nullptr;
  const IrNode& n = nodes[static_cast<size_t>(p)];
  if (!n.domain.empty() || n.op_type != "DequantizeLinear" || n.inputs.size() < 2 ||
      n.inputs[0] < 0 || n.inputs[1] < 0) {
    return nullptr;
  }
  return &n;
}

std::optional<QuantizedActivation> MatchActivation(const IrGraph& graph, const IrNode& dq) {
  const IrValue& q = ValueAt(graph, dq.inputs[0]);
  const IrValue& scale = ValueAt(graph, dq.inputs[1]);
  if (q.dtype != DataType::kUint8 || q.constant) return std::nullopt;
  if (!IsConstantOf(scale, DataType::kFloat32) || ElementCount(scale) != 1) return std::nullopt;
  QuantizedActivation out;
  out.q = dq.inputs[0];
  std::memcpy(&out.scale, scale.constant->bytes.data(), sizeof(float));
  if (dq.inputs.size() > 2 && dq.inputs[2] >= 0) {
    const IrValue& zero = ValueAt(graph, dq.inputs[2]);
    if (!IsConstantOf(zero, DataType::kUint8) || ElementCount(zero) != 1) return std::nullopt;
    out.zero = dq.inputs[2];
    out.zero_value = static_cast<uint8_t>(zero.constant->bytes[0]);
  }
  return out;
}

std::optional<QuantizedWeight> MatchWeight(const IrGraph& graph, const IrNode& dq,
                                           int64_t channel_axis) {
  const IrValue& q = ValueAt(graph, dq.inputs[0]);
  const IrValue& scale = ValueAt(graph, dq.inputs[1]);
  if (!IsConstantOf(q, DataType::kInt8) || q.shape.empty() ||
      !IsConstantOf(scale, DataType::kFloat32)) {
    return std::nullopt;
  }
  for (int64_t d : q.shape) {
    if (d < 1) return std::nullopt;
  }
  const int64_t scales = ElementCount(scale);
  if (scales != 1) {
    const IrAttribute* a = dq.FindAttr("axis");
    int64_t axis = a != nullptr ? a->i : 1;
    if (axis < 0) axis += static_cast<int64_t>(q.shape.size());
    if (scale.shape.size() != 1 || axis != channel_axis ||
        scales != q.shape[static_cast<size_t>(channel_axis)]) {
      return std::nullopt;
    }
  }
  if (dq.inputs.size() > 2 && dq.inputs[2] >= 0) {
    const IrValue& zero = ValueAt(graph, dq.inputs[2]);
    if (!IsConstantOf(zero, DataType::kInt8) || !AllZero(zero)) return std::nullopt;
  }
  QuantizedWeight out;
  out.q = dq.inputs[0];
  out.scale.resize(static_cast<size_t>(scales));
  std::memcpy(out.scale.data(), scale.constant->bytes.data(), out.scale.size() * sizeof(float));
  return out;
}

bool Int8KernelsExactFor(const IrValue& w) {
  if (!w.constant || w.constant->dtype != DataType::kInt8) return false;
  const std::span<const std::byte> bytes = w.constant->bytes;
  return exec::kernels::onednn::Int8ProductsExact(
      std::span<const int8_t>(reinterpret_cast<const int8_t*>(bytes.data()), bytes.size()));
}

}  // namespace epctx::compile::qdq
