// Reads a whole file into memory with io_uring: several reads in flight, each of a fixed chunk.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "epctx/status.h"

namespace epctx::loader {

// Alignment of every read's offset, length and destination when reading with O_DIRECT.
inline constexpr uint64_t kDirectIoAlignment = 4096;

// Reads bytes [0, length) of the open file `fd` into `dst`. With `direct` (fd opened O_DIRECT),
// `dst` must be kDirectIoAlignment-aligned with room for `length` rounded up to that alignment
// (the last read asks for whole blocks and comes back short). Without io_uring, falls back to
// pread with the reason logged. kIoError when a read fails or the file ends early; `name` is for
// messages.
Status ReadFileWithUring(int fd, uint64_t length, std::span<std::byte> dst, bool direct,
                         const std::string& name);

}  // namespace epctx::loader
