// Fixtures of the oneDNN lowering tests: small ONNX models built in memory (random weights),
// imported into the IR the way the compiler imports a file (checker and shape inference
// included), and evaluated node by node with the registered kernels before and after
// RunAllPasses. The unoptimised graph runs the reference kernels (ONNX Conv, MaxPool, Add, ...);
// the optimised one runs DnnlConv, DnnlPool and Reorder. Also linked into the e2e tests, which
// run the same models through sessions.
#pragma once

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "compile/ir.h"
#include "epctx/status.h"
#include "epctx/tensor.h"

namespace epctx::testing::dnnl {

onnx::AttributeProto AttrInt(const std::string& name, int64_t v);
onnx::AttributeProto AttrInts(const std::string& name, std::vector<int64_t> v);
onnx::AttributeProto AttrFloat(const std::string& name, float v);
onnx::AttributeProto AttrString(const std::string& name, const std::string& v);

// An ONNX model under construction. Value names are generated ("v0", "v1", ...); every value is
// float32.
class ModelBuilder {
 public:
  explicit ModelBuilder(uint32_t seed = 1, int64_t opset = 17);

  // A graph input (float32 unless `elem_type`, an onnx::TensorProto data type). A negative dim
  // is symbolic, named by `symbols[i]` (or "d<i>").
  std::string Input(const std::string& name, const std::vector<int64_t>& shape,
                    const std::vector<std::string>& symbols = {},
                    int elem_type = onnx::TensorProto::FLOAT);
  // Initializers: uniform random in [lo, hi], or the given values.
  std::string Weight(const std::vector<int64_t>& shape, float lo, float hi);
  std::string Constant(const std::vector<int64_t>& shape, const std::vector<float>& values);
  std::string Int64Constant(const std::vector<int64_t>& shape, const std::vector<int64_t>& values);
  // A node of the default domain; returns its first output. An empty input name is an omitted
  // optional input.
  std::string Node(const std::string& op, const std::vector<std::string>& inputs,
                   const std::vector<onnx::AttributeProto>& attrs = {});
  // Conv of `x` (c channels) to m channels with a random filter (scaled by 1/sqrt(fan-in), so
  // that chains keep magnitudes near 1) and, when `bias`, a random bias. `attrs` are added as
  // given (kernel_shape is always set).
  std::string Conv(const std::string& x, int64_t c, int64_t m, const std::vector<int64_t>& kernel,
                   std::vector<onnx::AttributeProto> attrs = {}, bool bias = true,
                   int64_t group = 1);
  // A float32 graph output; its shape is filled in by shape inference in Serialized(), or, when
  // `rank` >= 0, declared as that many symbolic dims (for outputs inference cannot shape).
  void Output(const std::string& value, int rank = -1);

  // The model, graph outputs typed with the shapes ONNX's shape inference gives them (the
  // checker wants a shape on every graph output).
  std::string Serialized() const;
  std::mt19937& rng() { return rng_; }

 private:
  std::string NewName();
  onnx::ModelProto model_;
  std::mt19937 rng_;
  int next_ = 0;
};

// The model imported as the compiler imports it (checker, shape inference), not yet optimised.
Result<compile::IrGraph> ImportGraph(const ModelBuilder& builder);

// Runs `graph` node by node (RunNodeOnce with `threads`) on `inputs` (one per graph input, in
// order); returns the graph outputs, or nothing after a failure (reported with ADD_FAILURE,
// naming the node).
std::vector<Tensor> Evaluate(const compile::IrGraph& graph, const std::vector<Tensor>& inputs,
                             int threads = 1);

// The tolerance of the optimised graph against the unoptimised one, relative to max |reference|:
// float32 convolutions in another summation order (oneDNN's blocking) and oneDNN's vectorised
// exp/tanh differ by ~1e-6 of the output's scale in practice; 1e-5 leaves room for chains of
// three convolutions, not for a wrong tap, channel or padding value.
constexpr double kRel = 1e-5;

// Runs every pass on the graph `builder` makes, checks that the optimised graph computes what the
// unoptimised one does on `inputs` (ExpectMatches within `rel`), and returns it (empty after an
// import failure). `what` names the case in failure messages; the optimised graph's kernels run
// on `threads` threads, the reference on one.
compile::IrGraph OptimiseAndCompareWithin(const ModelBuilder& builder,
                                          const std::vector<Tensor>& inputs, double rel,
                                          const std::string& what, int threads = 1);

// A bool tensor of `shape`, true where `value(row, column)` holds (the last two dims).
template <typename Value>
Tensor BoolMatrix(const std::vector<int64_t>& shape, Value value) {
  auto t = Tensor::Allocate(DataType::kBool, shape);
  EXPECT_TRUE(t.ok());
  const int64_t cols = shape.back(), rows = shape[shape.size() - 2];
  uint8_t* p = t->mutable_data_as<uint8_t>();
  for (int64_t i = 0; i < t->element_count(); ++i) p[i] = value((i / cols) % rows, i % cols);
  return *t;
}

// Uniform random float32 in [-1, 1].
Tensor RandomTensor(const std::vector<int64_t>& shape, std::mt19937& rng);

// `actual` matches `reference`: same dtype float32 and shape, every element within
// rel * max|reference| of it, no NaN; the reference must not be all zeros (a fixture that
// computes nothing would pass). `what` names the case in failure messages.
void ExpectMatches(const Tensor& actual, const Tensor& reference, double rel,
                   const std::string& what);

// Strings and numbers joined, for messages and test names (GCC 12 warns falsely on
// "text" + std::to_string(n)).
template <typename... Parts>
std::string Cat(const Parts&... parts) {
  std::ostringstream os;
  (os << ... << parts);
  return os.str();
}

// The graph's nodes as "op_type" (ONNX) or "domain:op_type".
std::vector<std::string> OpList(const compile::IrGraph& graph);
int CountOps(const compile::IrGraph& graph, std::string_view op_type);
// The layout plan keeps graph inputs and outputs plain and computes convolutions in the blocked
// layout, with a Reorder at the edge where they meet (plan_layouts.cc: reading a plain input of a
// block's channels or more, writing a graph output). OpList without those Reorders, and the
// number of Reorders between two nodes of the graph.
std::vector<std::string> OpListInside(const compile::IrGraph& graph);
int CountInnerReorders(const compile::IrGraph& graph);
// The node writing `value`, or null.
const compile::IrNode* Producer(const compile::IrGraph& graph, int value);
// Int attributes of a node, with a fallback when absent.
int64_t IntAttrOr(const compile::IrNode& node, std::string_view name, int64_t fallback);
std::vector<int64_t> IntsAttr(const compile::IrNode& node, std::string_view name);
std::vector<float> FloatsAttr(const compile::IrNode& node, std::string_view name);

// The channel-blocked layout the compiler plans on this CPU (onednn::PlannedBlockedLayout: 16
// channels per block where oneDNN's convolutions run AVX-512 kernels, 8 on AVX2), as the
// src_layout / dst_layout attributes hold it, and its channels per block.
int64_t PlannedBlockedLayout();
int64_t PlannedChannelBlock();

}  // namespace epctx::testing::dnnl
