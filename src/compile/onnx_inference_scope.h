// Which nodes onnx's shape inference may see. onnx 1.12's inference functions read their inputs'
// types without checking that there is one, and a value made by an operator onnx has no schema
// for (a contrib op it does not know, a custom domain) has none: a Shape or Reshape after such a
// node killed the process (SIGSEGV; found on a MatMulNBits graph). Those operators, and every node
// that reads what they make, are set aside while onnx infers: they get no onnx inference, and
// their values keep the types and shapes the model declares (our symbolic inference, which runs
// later on the IR, fills in what it can).
#pragma once

#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

namespace epctx::compile {

// Sets the nodes aside on construction and puts every node back, in its original order, on
// destruction (the nodes themselves are moved, not copied: inference results written into the
// bodies of If/Loop/Scan nodes stay).
class OnnxInferenceScope {
 public:
  explicit OnnxInferenceScope(onnx::ModelProto& model);
  ~OnnxInferenceScope();
  OnnxInferenceScope(const OnnxInferenceScope&) = delete;
  OnnxInferenceScope& operator=(const OnnxInferenceScope&) = delete;

  // "domain.op" of the first node set aside for want of a schema ("" when none was).
  const std::string& first_unknown_op() const { return first_unknown_op_; }
  int set_aside() const { return set_aside_; }

 private:
  struct Held {
    onnx::GraphProto* graph;
    std::vector<onnx::NodeProto*> nodes;  // every node of the graph, in order
  };
  void Narrow(onnx::GraphProto& graph);

  const onnx::ModelProto& model_;
  std::vector<Held> held_;
  std::string first_unknown_op_;
  int set_aside_ = 0;
};

}  // namespace epctx::compile
