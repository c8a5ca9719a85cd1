// The version the library was built as, for bindings that must report the library they loaded.
#include "epctx/env.h"
#include "epctx_build_info.h"

namespace epctx {

const char* EngineVersion() {
  return EPCTX_ENGINE_VERSION;
}

}  // namespace epctx
