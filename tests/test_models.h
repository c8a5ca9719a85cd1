// Where the tests find the models tests/models/ exports (scripts/test.sh exports them first).
#pragma once

#include <cstdlib>
#include <string>

namespace epctx {

// $EPCTX_TEST_MODELS, or the build's test_models/ (EPCTX_TEST_MODELS_DIR, tests/CMakeLists.txt).
inline std::string ModelsDir() {
  if (const char* env = std::getenv("EPCTX_TEST_MODELS")) return env;
  return EPCTX_TEST_MODELS_DIR;
}

}  // namespace epctx
