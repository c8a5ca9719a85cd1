// The compile-time answer to "could a session run this?": every node of the optimized graph (and
// of its control-flow bodies) gets its kernel made once, as a session would make it, and each
// node no kernel takes is named with the reason. A model no session can run is refused when it
// is compiled, next to the build step that made it, instead of when a user loads it.
#pragma once

#include <string>

#include "compile/ir.h"
#include "epctx/status.h"

namespace epctx::compile {

// kUnsupported naming `model` and, one line each, every node that no kernel takes (the op, the
// node and the kernel's reason; at most kMaxListedNodes, then how many more).
Status CheckEveryNodeRuns(const IrGraph& graph, const std::string& model);

inline constexpr size_t kMaxListedNodes = 20;

}  // namespace epctx::compile
