// MatMulInteger with a constant int8 weight becomes com.epctx DnnlMatMulInteger: oneDNN's u8 x s8
// matmul on the weight packed in the blob (PackWeights), the activation's zero point applied
// through the weight's column sums, computed here once. Only where those kernels multiply the
// weight exactly (qdq::Int8KernelsExactFor); elsewhere MatMulInteger keeps its own exact kernel.
#include <numeric>

#include "compile/passes/passes.h"
#include "compile/passes/qdq_pattern.h"
#include "exec/kernels/epctx_ops.h"

namespace epctx::compile {
namespace {

bool IsZeroInt8Constant(const IrValue& v) {
  if (!v.constant || v.dtype != DataType::kInt8) return false;
  for (std::byte b : v.constant->bytes) {
    if (b != std::byte{0}) return false;
  }
  return true;
}

// The pattern the kernel serves: A uint8, B a constant int8 [K, N] with zero point 0 (absent or
// constant zeros), a_zero_point absent or one uint8 (not per row); and B's values multiplied
// exactly by oneDNN's int8 kernels on this CPU (else MatMulInteger's own kernel computes it).
bool Lowerable(const IrGraph& graph, const IrNode& n) {
  if (!n.domain.empty() || n.op_type != "MatMulInteger") return false;
  if (n.inputs.size() < 2 || n.outputs.size() != 1 || n.inputs[0] < 0 || n.inputs[1] < 0) {
    return false;
  }
  const IrValue& a = graph.values[static_cast<size_t>(n.inputs[0])];
  const IrValue& b = graph.values[static_cast<size_t>(n.inputs[1])];
  if (a.dtype != DataType::kUint8 || !b.constant || b.dtype != DataType::kInt8 ||
      b.shape.size() != 2 || b.shape[0] < 1 || b.shape[1] < 1 || !qdq::Int8KernelsExactFor(b)) {
    return false;
  }
  if (a.shape_known && (a.shape.empty() || (a.shape.back() >= 0 && a.shape.back() != b.shape[0]))) {
    return false;
  }
  if (n.inputs.size() > 2 && n.inputs[2] >= 0) {
    const IrValue& zp = graph.values[static_cast<size_t>(n.inputs[2])];
    if (zp.dtype != DataType::kUint8 || !zp.shape_known) return false;
    if (std::accumulate(zp.shape.begin(), zp.shape.end(), int64_t{1}, std::multiplies<>()) != 1) {
      return false;
    }
  }
  if (n.inputs.size() > 3 && n.inputs[3] >= 0 &&
      !IsZeroInt8Constant(graph.values[static_cast<size_t>(n.inputs[3])])) {
    return false;
  }
  return true;
}

}  // namespace

Result<PassStats> LowerMatMulIntegersToDnnl(IrGraph& graph) {
  PassStats stats{"lower-matmul-integer-dnnl", 0};
  for (IrNode& n : graph.nodes) {
    if (!Lowerable(graph, n)) continue;
    const IrValue& b = graph.values[static_cast<size_t>(n.inputs[1])];
    const int64_t k = b.shape[0], cols = b.shape[1];
    const int8_t* w = reinterpret_cast<const int8_t*>(b.constant->bytes.data());
    std::vector<int32_t> colsum(static_cast<size_t>(cols), 0);
    for (int64_t i = 0; i < k; ++i) {
      for (int64_t j = 0; j < cols; ++j) colsum[static_cast<size_t>(j)] += w[i * cols + j];
    }
    const std::string name = b.name + "_colsum";
    const int sums = graph.AddConstant(
        name, ConstantData::FromVector<int32_t>(DataType::kInt32, {cols}, std::move(colsum)));
    const int zero_point = n.inputs.size() > 2 ? n.inputs[2] : -1;
    n.inputs = {n.inputs[0], n.inputs[1], zero_point, sums};
    n.op_type = ops::kDnnlMatMulInteger;
    n.domain = ops::kDomain;
    stats.changed++;
  }
  if (stats.changed > 0) graph.DeclareEpctxOpset();
  return stats;
}

}  // namespace epctx::compile
