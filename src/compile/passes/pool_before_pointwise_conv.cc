// A 1x1 convolution is the same affine map at every pixel, so the average of its outputs over a
// window is the map of the window's average: AveragePool(Conv1x1(x)) = Conv1x1(AveragePool(x)).
// Pooling first multiplies fewer pixels. DenseNet-121's three transitions (1x1 convolution, then
// a 2x2 average of stride 2) did 1.8 ms of products each at 1 thread on a Zen 4; pooled first,
// a quarter of it.
#include "compile/passes/passes.h"
#include "util/status_macros.h"

namespace epctx::compile {
namespace {

bool AllEqual(const std::vector<int64_t>& values, int64_t want) {
  for (int64_t v : values) {
    if (v != want) return false;
  }
  return true;
}

std::vector<int64_t> IntsAttr(const IrNode& n, std::string_view name) {
  const IrAttribute* a = n.FindAttr(name);
  return a != nullptr && a->type == exec::AttrType::kInts ? a->ints : std::vector<int64_t>();
}

// A default-domain Conv whose filter is a float32 constant with every spatial dim 1, at stride 1
// and without padding: one affine map per pixel.
bool IsPointwiseConv(const IrGraph& g, const IrNode& n) {
  if (!n.IsOp("", "Conv") || n.inputs.size() < 2 || n.outputs.size() != 1) return false;
  const IrValue& w = ValueOf(g, n.inputs[1]);
  if (!w.constant || w.constant->dtype != DataType::kFloat32 || w.shape.size() < 3) return false;
  for (size_t i = 2; i < w.shape.size(); ++i) {
    if (w.shape[i] != 1) return false;
  }
  if (n.inputs.size() > 2 && n.inputs[2] >= 0 && !ValueOf(g, n.inputs[2]).constant) return false;
  // A 1x1 window at stride 1 has no padding under any auto_pad.
  return AllEqual(IntsAttr(n, "strides"), 1) && AllEqual(IntsAttr(n, "pads"), 0);
}

// A default-domain AveragePool that averages whole windows of its input only: no padding, no
// partial windows at the end, no dilation. (With padding the count would include, or leave out,
// pixels the map's bias does not cover the same way.)
bool AveragesWholeWindows(const IrNode& n) {
  if (n.IsOp("", "GlobalAveragePool")) return n.outputs.size() == 1;
  if (!n.IsOp("", "AveragePool") || n.outputs.size() != 1) return false;
  if (const IrAttribute* a = n.FindAttr("auto_pad");
      a != nullptr && a->s != "NOTSET" && a->s != "VALID") {
    return false;
  }
  return AllEqual(IntsAttr(n, "pads"), 0) && IntAttr(n, "ceil_mode", 0) == 0 &&
         AllEqual(IntsAttr(n, "dilations"), 1);
}

}  // namespace

Result<PassStats> PoolBeforePointwiseConvs(IrGraph& graph) {
  PassStats stats{"pool-before-pointwise-conv", 0};
  const std::vector<int> uses = CountUses(graph);
  const std::vector<int> producer = Producers(graph);
  for (size_t k = 0; k < graph.nodes.size(); ++k) {
    if (!AveragesWholeWindows(graph.nodes[k])) continue;
    const int y = graph.nodes[k].inputs.empty() ? -1 : graph.nodes[k].inputs[0];
    if (y < 0 || uses[static_cast<size_t>(y)] != 1 || IsGraphOutput(graph, y)) continue;
    const int c = producer[static_cast<size_t>(y)];
    if (c < 0 || !IsPointwiseConv(graph, graph.nodes[static_cast<size_t>(c)])) continue;
    const int x = graph.nodes[static_cast<size_t>(c)].inputs[0];
    if (!IsFloat32Tensor(graph, x) || !IsFloat32Tensor(graph, y)) continue;
    const int z = graph.nodes[k].outputs[0];
    // The pooled input: the pool's output dims with the convolution's input channels.
    const IrValue& xv = ValueOf(graph, x);
    const IrValue& zv = ValueOf(graph, z);
    IrValue pooled;
    pooled.name = graph.UniqueName(graph.nodes[k].name + "_before_pointwise_conv");
    pooled.dtype = DataType::kFloat32;
    pooled.shape_known = xv.shape_known && zv.shape_known && xv.shape.size() == zv.shape.size();
    if (pooled.shape_known) {
      pooled.shape = zv.shape;
      pooled.shape[1] = xv.shape[1];
      pooled.dim_names = zv.dim_names;
      if (pooled.dim_names.size() > 1) {
        pooled.dim_names[1] = xv.dim_names.size() > 1 ? xv.dim_names[1] : "";
      }
    }
    const int p = graph.AddValue(std::move(pooled));
    // Between the two nodes nothing else reads y, so the pool taking the convolution's place
    // (and the convolution the pool's) keeps the order topological.
    IrNode conv = std::move(graph.nodes[static_cast<size_t>(c)]);
    IrNode pool = std::move(graph.nodes[k]);
    pool.inputs[0] = x;
    pool.outputs[0] = p;
    conv.inputs[0] = p;
    conv.outputs[0] = z;
    graph.nodes[static_cast<size_t>(c)] = std::move(pool);
    graph.nodes[k] = std::move(conv);
    stats.changed++;
  }
  return stats;
}

}  // namespace epctx::compile
