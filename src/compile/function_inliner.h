// Expands ONNX operators that the ONNX schema defines as functions (LayerNormalization,
// SoftmaxCrossEntropyLoss, NegativeLogLikelihoodLoss, Celu, MeanVarianceNormalization, ...) into
// their bodies when no kernel implements them, so they run on the primitive kernels; likewise the
// com.microsoft ops whose schemas epctx registers with a body (Attention, contrib/).
#pragma once

#include <functional>
#include <string>

#include "epctx/status.h"

namespace onnx {
class ModelProto;
}

namespace epctx::compile {

// `has_kernel(domain, op_type, opset)` says whether an op runs natively (then it is kept).
// Returns the number of nodes expanded; the caller re-runs shape inference when it is not zero.
Result<int> InlineFunctionOps(
    onnx::ModelProto& model,
    const std::function<bool(const std::string&, const std::string&, int64_t)>& has_kernel,
    const std::string& name);

}  // namespace epctx::compile
