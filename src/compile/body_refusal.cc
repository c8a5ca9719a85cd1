#include "compile/body_refusal.h"

#include <fmt/format.h>

#include "util/logging.h"

namespace epctx::compile {
namespace {

thread_local std::string* capture = nullptr;

}  // namespace

void RefuseBody(std::string_view op, std::string_view reason) {
  std::string message = fmt::format("{} is not expanded into ONNX operators: {}", op, reason);
  if (capture != nullptr) {
    *capture = std::move(message);
  } else {
    Logger().warn("{}", message);
  }
}

ScopedBodyRefusalCapture::ScopedBodyRefusalCapture(std::string* out) : previous_(capture) {
  capture = out;
}

ScopedBodyRefusalCapture::~ScopedBodyRefusalCapture() {
  capture = previous_;
}

}  // namespace epctx::compile
