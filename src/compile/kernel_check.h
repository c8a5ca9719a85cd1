// The compile-time answer to "could a session run this?": every node of the optimized graph (and
// of its control-flow bodies) gets its kernel made once, as a session would make it, and each
// node no kernel takes is named with the reason. A model no session can run is refused when it
// is compiled, next to the build step that made it, instead of when a user loads it.
#pragma once

#include <string>
#include <vector>

#include "compile/ir.h"
#include "epctx/status.h"

namespace epctx::compile {

// kUnsupported naming `model` and, one line each, every node that no kernel takes (the op, the
// node and the kernel's reason; at most kMaxListedNodes, then how many more).
Status CheckEveryNodeRuns(const IrGraph& graph, const std::string& model);

inline constexpr size_t kMaxListedNodes = 20;

// kUnsupported naming `model` and `count` nodes no kernel runs, one of `lines` each (at most
// kMaxListedNodes of them, then how many more); Ok when `count` is 0. The import's refusal of
// operators onnx does not know (unknown_operators.h) says it the same way.
Status RefuseNodes(const std::string& model, const std::vector<std::string>& lines, size_t count);

}  // namespace epctx::compile
