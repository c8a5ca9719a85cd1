#include "loader/io_ring.h"

#include <cstring>

#include "util/status_macros.h"

namespace epctx::loader {

void IoRing::Deleter::operator()(io_uring* ring) const {
  io_uring_queue_exit(ring);
  delete ring;
}

Result<IoRing> IoRing::Create(unsigned entries) {
  auto raw = std::make_unique<io_uring>();
  int ret = io_uring_queue_init(entries, raw.get(), 0);
  if (ret < 0) {
    return EPCTX_ERROR(kUnsupported, "io_uring_queue_init({}) failed: {}", entries,
                       std::strerror(-ret));
  }
  return IoRing(std::unique_ptr<io_uring, Deleter>(raw.release()));
}

bool IoRing::Supports(int opcode) {
  io_uring_probe* probe = io_uring_get_probe_ring(ring_.get());
  if (probe == nullptr) return false;
  bool supported = io_uring_opcode_supported(probe, opcode) != 0;
  io_uring_free_probe(probe);
  return supported;
}

}  // namespace epctx::loader
