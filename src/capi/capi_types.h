// What the C API's opaque handles hold, and the one place where C++ results become C statuses.
// Uses only the public C++ API (include/epctx/).
#pragma once

#include <cstring>
#include <memory>
#include <new>
#include <string>

#include "epctx/epctx.h"
#include "epctx/epctx_c.h"

struct epctx_status {
  epctx::StatusCode code;
  std::string message;
};

struct epctx_session_options {
  epctx::SessionOptions options;
};

struct epctx_session {
  std::unique_ptr<epctx::Session> session;
  std::string profile_path;  // what epctx_session_end_profiling returned last
};

struct epctx_run_options {
  epctx::RunOptions options;
};

struct epctx_tensor {
  epctx::Tensor tensor;
};

namespace epctx::capi {

// Returned when even the status cannot be allocated; epctx_status_release leaves it alone.
epctx_status* OutOfMemoryStatus();

// NULL for OK; otherwise a new status (or OutOfMemoryStatus()).
epctx_status* ToC(const Status& status) noexcept;

// Runs `body(fn)`, a lambda returning Status, and turns its result into a C status. No exception
// crosses into C: std::bad_alloc and anything else thrown become kInternal statuses.
template <typename Body>
epctx_status* Guard(const char* fn, Body&& body) noexcept {
  try {
    return ToC(body(fn));
  } catch (const std::bad_alloc&) {
    return OutOfMemoryStatus();
  } catch (const std::exception& e) {
    return ToC(Status(StatusCode::kInternal, std::string(fn) + ": " + e.what()));
  } catch (...) {
    return ToC(Status(StatusCode::kInternal, std::string(fn) + ": unknown exception"));
  }
}

Status NullArgument(const char* fn, const char* arg);

// The int a C caller passed as one of the API's enums. C lets any int through, and in C++
// loading an enum object outside its enumerators' range is undefined (UBSan's enum check), so
// the bytes are read as an int, before anything compares or converts them.
template <typename Enum>
int FromC(const Enum& value) {
  static_assert(sizeof(Enum) == sizeof(int), "the C API's enums are int-sized");
  int bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

}  // namespace epctx::capi

// Inside a Guard body: returns kInvalidArgument naming the function (`fn`) when `arg` is NULL.
#define EPCTX_C_REQUIRE(arg)                                            \
  do {                                                                  \
    if ((arg) == nullptr) return ::epctx::capi::NullArgument(fn, #arg); \
  } while (0)
