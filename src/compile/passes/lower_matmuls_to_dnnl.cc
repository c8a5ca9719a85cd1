// LowerMatMulsToDnnl (passes.h): MatMul and Gemm (and FusedGemm) with constant float32 weights
// become com.epctx DnnlMatMul, run by oneDNN.
#include "compile/passes/dnnl_lowering.h"
#include "compile/passes/passes.h"
#include "exec/kernels/epctx_ops.h"
#include "util/status_macros.h"

namespace epctx::compile {
namespace {

std::vector<float> PlainValues(const float* src, int64_t rows, int64_t cols, bool transposed,
                               float alpha) {
  std::vector<float> out(static_cast<size_t>(rows * cols));
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) {
      const float x = src[i * cols + j] * alpha;
      if (transposed) {
        out[static_cast<size_t>(j * rows + i)] = x;
      } else {
        out[static_cast<size_t>(i * cols + j)] = x;
      }
    }
  }
  return out;
}

// `b` as float32 [K, N], times alpha: a new constant unless it already is that. A deferred `b`
// (its bytes made when the blob is written) gives a deferred result.
int PlainWeight(IrGraph& g, int b, bool transposed, float alpha) {
  if (!transposed && alpha == 1.0f) return b;
  const IrValue& v = ValueOf(g, b);
  const int64_t rows = v.shape[0], cols = v.shape[1];
  std::vector<int64_t> shape =
      transposed ? std::vector<int64_t>{cols, rows} : std::vector<int64_t>{rows, cols};
  const std::string name = v.name + "_kn";
  if (v.constant->deferred()) {
    std::shared_ptr<const ConstantData> source = v.constant;
    auto make = [source, rows, cols, transposed, alpha, shape]() -> Result<Tensor> {
      EPCTX_ASSIGN_OR_RETURN(std::shared_ptr<const ConstantData> from, Materialize(source));
      auto values = std::make_shared<std::vector<float>>(PlainValues(
          reinterpret_cast<const float*>(from->bytes.data()), rows, cols, transposed, alpha));
      return Tensor::View(DataType::kFloat32, shape, values->data(), values);
    };
    return g.AddConstant(name, ConstantData::Deferred(DataType::kFloat32, shape, 0, make));
  }
  const float* src = reinterpret_cast<const float*>(v.constant->bytes.data());
  return g.AddConstant(
      name, ConstantData::FromVector<float>(DataType::kFloat32, std::move(shape),
                                            PlainValues(src, rows, cols, transposed, alpha)));
}

// Gemm's C as a bias [N] (times beta), or -2 when C is not a constant row vector or scalar.
int GemmBias(IrGraph& g, const IrNode& n, int64_t cols, float beta) {
  if (n.inputs.size() < 3 || n.inputs[2] < 0) return -1;
  const int c = n.inputs[2];
  if (!IsFloatConstant(g, c)) return -2;
  const IrValue& v = ValueOf(g, c);
  const size_t count = v.constant->bytes.size() / sizeof(float);
  const bool row = IsBiasFor(g, c, cols);
  if (!row && count != 1) return -2;
  if (row && beta == 1.0f && v.shape.size() == 1) return c;
  const float* src = reinterpret_cast<const float*>(v.constant->bytes.data());
  std::vector<float> bias(static_cast<size_t>(cols));
  for (int64_t j = 0; j < cols; ++j) bias[static_cast<size_t>(j)] = beta * src[row ? j : 0];
  return g.AddConstant(v.name + "_bias", ConstantData::FromVector<float>(DataType::kFloat32, {cols},
                                                                         std::move(bias)));
}

float FloatAttr(const IrNode& n, std::string_view name, float fallback) {
  const IrAttribute* a = n.FindAttr(name);
  return a != nullptr && a->type == exec::AttrType::kFloat ? a->f : fallback;
}

}  // namespace

Result<PassStats> LowerMatMulsToDnnl(IrGraph& graph) {
  PassStats stats{"lower-matmul-dnnl", 0};
  for (size_t k = 0; k < graph.nodes.size(); ++k) {
    IrNode& n = graph.nodes[k];
    const bool gemm = IsOnnx(n, "Gemm") || n.IsOp(ops::kDomain, ops::kFusedGemm);
    if (!IsOnnx(n, "MatMul") && !gemm) continue;
    if (n.inputs.size() < 2 || n.outputs.size() != 1 || n.inputs[0] < 0) continue;
    if (!IsFloatConstant(graph, n.inputs[1]) || ValueOf(graph, n.inputs[1]).shape.size() != 2) {
      continue;
    }
    // A's shape may be unknown here (exporters compute shapes at run time); the kernel checks
    // its last dim against K on every run.
    const IrValue& a = ValueOf(graph, n.inputs[0]);
    if (a.dtype != DataType::kFloat32) continue;
    const bool trans_b = gemm && IntAttr(n, "transB", 0) != 0;
    const std::vector<int64_t> bs = ValueOf(graph, n.inputs[1]).shape;
    const int64_t kdim = trans_b ? bs[1] : bs[0];
    const int64_t ndim = trans_b ? bs[0] : bs[1];
    if (a.shape_known && (a.shape.empty() || (a.shape.back() >= 0 && a.shape.back() != kdim))) {
      continue;
    }
    int bias = -1;
    if (gemm) {
      if (IntAttr(n, "transA", 0) != 0 || (a.shape_known && a.shape.size() != 2)) continue;
      bias = GemmBias(graph, n, ndim, FloatAttr(n, "beta", 1.0f));
      if (bias == -2) continue;
      if (n.op_type == ops::kFusedGemm && !TakeFusedActivation(graph.nodes[k])) continue;
    }
    IrNode& m = graph.nodes[k];  // AddConstant may not move nodes, but keep it explicit
    const float alpha = gemm ? FloatAttr(m, "alpha", 1.0f) : 1.0f;
    const int b = PlainWeight(graph, m.inputs[1], trans_b, alpha);
    m.inputs = {m.inputs[0], b};
    if (bias >= 0) m.inputs.push_back(bias);
    for (std::string_view attr : {"transA", "transB", "alpha", "beta"}) m.RemoveAttr(attr);
    m.op_type = ops::kDnnlMatMul;
    m.domain = ops::kDomain;
    stats.changed++;
  }
  if (stats.changed > 0) graph.DeclareEpctxOpset();
  return stats;
}

}  // namespace epctx::compile
