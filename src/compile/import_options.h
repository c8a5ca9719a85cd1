// What an import changes in an original model before checking it and inferring its shapes; part
// of the compile options (CompileOptions::import), handed as they are to ImportModelFile/Bytes.
#pragma once

#include "compile/free_dimension_overrides.h"

namespace epctx::compile {

struct ImportOptions {
  FreeDimensionOverrides free_dimension_overrides;  // epctx.free_dimension_overrides
};

}  // namespace epctx::compile
