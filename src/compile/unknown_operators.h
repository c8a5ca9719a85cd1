// Nodes of the ONNX domains whose operator onnx's schema registry does not know at the model's
// opset (an operator newer than the onnx library the build links, 1.12 on Debian 12, for which
// epctx registers no schema: AffineGrid of opset 20, say). onnx's checker would refuse such a
// model as "not a valid ONNX model: No Op registered for ..."; the model is valid, and what is
// missing is a kernel, so the import says that instead, as the compile does for every node no
// kernel runs.
#pragma once

#include <string>

#include "epctx/status.h"

namespace onnx {
class ModelProto;
}  // namespace onnx

namespace epctx::compile {

// kUnsupported naming `model` and, one line each, every such node of the main graph and the
// control-flow bodies (the op, its opset and the node; at most kMaxListedNodes, then how many
// more); Ok when there is none.
Status RefuseUnknownOnnxOperators(const onnx::ModelProto& model, const std::string& name);

}  // namespace epctx::compile
