// Per-thread scratch memory for kernels that need a work buffer (im2col). Kernels run
// concurrently from several sessions and must not keep mutable state, and allocating megabytes
// on every run would fault fresh pages each time; a buffer per calling thread avoids both.
#pragma once

#include <cstddef>

#include "epctx/status.h"

namespace epctx::exec::kernels {

// At least `count` floats, 64-byte aligned, owned by the calling thread. Valid until the next
// call on the same thread; one kernel uses it at a time.
Result<float*> ThreadScratchF32(size_t count);

}  // namespace epctx::exec::kernels
