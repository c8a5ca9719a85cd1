// Expands ONNX operators that the ONNX schema defines as functions (LayerNormalization,
// SoftmaxCrossEntropyLoss, NegativeLogLikelihoodLoss, Celu, MeanVarianceNormalization, ...) into
// their bodies when no kernel implements them, so they run on the primitive kernels; likewise the
// com.microsoft ops whose schemas epctx registers with a body (Attention, contrib/); a float16
// com.microsoft node is expanded as its float32 body between Casts.
#pragma once

#include <functional>
#include <map>
#include <string>

#include "epctx/status.h"

namespace onnx {
class ModelProto;
}

namespace epctx::compile {

// `has_kernel(domain, op_type, opset)` says whether an op runs natively (then it is kept).
// Returns the number of nodes expanded; the caller re-runs shape inference when it is not zero.
// `refusals` (kept across the caller's rounds) gets why each node left unexpanded was refused
// by its body builder ("node 'N': OP is not expanded into ONNX operators: REASON", by node), and
// loses a node a later round expands; null: the builders log their refusals at once.
Result<int> InlineFunctionOps(
    onnx::ModelProto& model,
    const std::function<bool(const std::string&, const std::string&, int64_t)>& has_kernel,
    const std::string& name, std::map<std::string, std::string>* refusals = nullptr);

}  // namespace epctx::compile
