#include "exec/kernels/common/scratch.h"

#include <cstdlib>
#include <memory>

#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

struct FreeDeleter {
  void operator()(float* p) const { std::free(p); }
};

}  // namespace

Result<float*> ThreadScratchF32(size_t count) {
  thread_local std::unique_ptr<float, FreeDeleter> buffer;
  thread_local size_t capacity = 0;
  if (count <= capacity) return buffer.get();
  constexpr size_t kAlign = 64;
  if (count > (SIZE_MAX - kAlign) / sizeof(float)) {
    return EPCTX_ERROR(kInvalidArgument, "scratch of {} floats overflows", count);
  }
  const size_t bytes = (count * sizeof(float) + kAlign - 1) / kAlign * kAlign;
  buffer.reset();
  capacity = 0;
  auto* p = static_cast<float*>(std::aligned_alloc(kAlign, bytes));
  if (p == nullptr) {
    return EPCTX_ERROR(kFailedPrecondition, "cannot allocate {} bytes of scratch", bytes);
  }
  buffer.reset(p);
  capacity = bytes / sizeof(float);
  return p;
}

}  // namespace epctx::exec::kernels
