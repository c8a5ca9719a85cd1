// Why a schema's context-dependent function body was not built for a node. The body builders
// (contrib/) call RefuseBody; the function inliner, which expands in rounds (a later round, knowing
// more types, may still expand a node refused earlier), captures the reasons and logs those of
// the nodes left unexpanded once each, naming the node. With no capture installed the reason is
// logged at once.
#pragma once

#include <string>
#include <string_view>

namespace epctx::compile {

// `op`: "com.microsoft.Attention"; `reason`: what the body does not take.
void RefuseBody(std::string_view op, std::string_view reason);

// While alive, RefuseBody on this thread writes "OP is not expanded into ONNX operators: REASON"
// into `*out` instead of logging it (nested captures restore the outer one).
class ScopedBodyRefusalCapture {
 public:
  explicit ScopedBodyRefusalCapture(std::string* out);
  ~ScopedBodyRefusalCapture();
  ScopedBodyRefusalCapture(const ScopedBodyRefusalCapture&) = delete;
  ScopedBodyRefusalCapture& operator=(const ScopedBodyRefusalCapture&) = delete;

 private:
  std::string* previous_;
};

}  // namespace epctx::compile
