// Control-flow nodes against the bodies they run: a body is another program of the same model,
// so what one program passes to another is checked once both are known.
#pragma once

#include <span>

#include "epctx/status.h"

namespace epctx::fb {
struct Program;
}  // namespace epctx::fb

namespace epctx::format {

// Control-flow nodes (If, Loop, Scan of the ONNX domain) agree with their bodies, which are
// `programs` of one model: the number of inputs and outputs, and the type of every value passed
// in, carried from one iteration to the next and passed out (where both sides declare one).
// Loop's trip count is declared int64 and its conditions bool. Every program must have passed
// ValidateProgram. Binding checks the counts again; the types are what keeps a kernel bound for
// one type from being handed a tensor of another.
Status ValidateControlFlow(std::span<const fb::Program* const> programs);

}  // namespace epctx::format
