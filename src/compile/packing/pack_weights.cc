#include "compile/packing/pack_weights.h"

#include "compile/packing/layouts.h"
#include "util/status_macros.h"

namespace epctx::compile {
namespace {

void SetIntAttr(IrNode& n, const std::string& name, int64_t value) {
  if (IrAttribute* a = n.FindAttr(name)) {
    a->i = value;
    return;
  }
  IrAttribute a;
  a.name = name;
  a.type = exec::AttrType::kInt;
  a.i = value;
  n.attrs.push_back(a);
}

void SetFloatAttr(IrNode& n, const std::string& name, float value) {
  if (IrAttribute* a = n.FindAttr(name)) {
    a->f = value;
    return;
  }
  IrAttribute a;
  a.name = name;
  a.type = exec::AttrType::kFloat;
  a.f = value;
  n.attrs.push_back(a);
}

bool PackGemm(IrGraph& graph, IrNode& n) {
  if (n.inputs.size() < 2 || n.inputs[1] < 0) return false;
  const IrValue& b = graph.values[static_cast<size_t>(n.inputs[1])];
  if (!b.constant || b.constant->dtype != DataType::kFloat32 || b.shape.size() != 2) return false;
  if (b.constant->layout == static_cast<uint32_t>(PackLayout::kGemmBTransposed)) return false;
  const IrAttribute* tb = n.FindAttr("transB");
  const IrAttribute* al = n.FindAttr("alpha");
  bool trans_b = tb && tb->i != 0;
  float alpha = al ? al->f : 1.0f;
  // Source B is [K, N] (transB=0) or [N, K] (transB=1); the packed form is [N, K].
  int64_t rows = b.shape[0], cols = b.shape[1];
  int64_t n_dim = trans_b ? rows : cols;
  int64_t k_dim = trans_b ? cols : rows;
  const float* src = reinterpret_cast<const float*>(b.constant->bytes.data());
  std::vector<float> packed(static_cast<size_t>(n_dim * k_dim));
  for (int64_t i = 0; i < n_dim; ++i) {
    for (int64_t k = 0; k < k_dim; ++k) {
      float v = trans_b ? src[i * k_dim + k] : src[k * n_dim + i];
      packed[static_cast<size_t>(i * k_dim + k)] = v * alpha;
    }
  }
  auto data =
      ConstantData::FromVector<float>(DataType::kFloat32, {n_dim, k_dim}, std::move(packed));
  data->layout = static_cast<uint32_t>(PackLayout::kGemmBTransposed);
  std::string name = b.name + "_packed";
  n.inputs[1] = graph.AddConstant(name, std::move(data));
  SetIntAttr(n, "transB", 1);
  SetFloatAttr(n, "alpha", 1.0f);
  return true;
}

void TagConvFilter(IrGraph& graph, const IrNode& n) {
  if (n.inputs.size() < 2 || n.inputs[1] < 0) return;
  IrValue& w = graph.values[static_cast<size_t>(n.inputs[1])];
  if (!w.constant || w.constant->layout != 0) return;
  // Copy-on-write of the descriptor only: the bytes stay shared and in place.
  auto tagged = std::make_shared<ConstantData>(*w.constant);
  tagged->layout = static_cast<uint32_t>(PackLayout::kConvFilterOihw);
  w.constant = std::move(tagged);
}

}  // namespace

Result<PassStats> PackWeights(IrGraph& graph) {
  PassStats stats{"pack-weights", 0};
  for (IrNode& n : graph.nodes) {
    bool onnx = n.domain.empty();
    bool epctx = n.domain == "com.epctx";
    if ((onnx && n.op_type == "Gemm") || (epctx && n.op_type == "FusedGemm")) {
      if (PackGemm(graph, n)) stats.changed++;
    } else if ((onnx && n.op_type == "Conv") || (epctx && n.op_type == "FusedConv")) {
      TagConvFilter(graph, n);
    }
  }
  return stats;
}

}  // namespace epctx::compile
