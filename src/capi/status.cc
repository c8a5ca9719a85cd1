// C statuses, versions and process-wide settings.
#include "capi/capi_types.h"

namespace epctx::capi {

epctx_status* OutOfMemoryStatus() {
  static epctx_status out_of_memory{StatusCode::kInternal, "out of memory"};
  return &out_of_memory;
}

epctx_status* ToC(const Status& status) noexcept {
  if (status.ok()) return nullptr;
  try {
    return new epctx_status{status.code(), status.message()};
  } catch (...) {
    return OutOfMemoryStatus();
  }
}

Status NullArgument(const char* fn, const char* arg) {
  return Status(StatusCode::kInvalidArgument, std::string(fn) + ": argument '" + arg + "' is NULL");
}

}  // namespace epctx::capi

using epctx::capi::Guard;

extern "C" {

uint32_t epctx_c_api_version(void) {
  return EPCTX_C_API_VERSION;
}

const char* epctx_version(void) {
  return epctx::EngineVersion();
}

epctx_status* epctx_set_log_level(epctx_log_level level) {
  return Guard(__func__, [&](const char* fn) {
    // Callers in C can pass any int; the enum's underlying type may be unsigned.
    const int value = epctx::capi::FromC(level);
    if (value < EPCTX_LOG_DEBUG || value > EPCTX_LOG_OFF) {
      return epctx::Status(epctx::StatusCode::kInvalidArgument,
                           std::string(fn) + ": log level " + std::to_string(value) +
                               " is not one of EPCTX_LOG_DEBUG..EPCTX_LOG_OFF (0..4)");
    }
    epctx::SetLogLevel(static_cast<epctx::LogLevel>(value));
    return epctx::Status::Ok();
  });
}

epctx_status_code epctx_status_get_code(const epctx_status* status) {
  return status == nullptr ? EPCTX_OK : static_cast<epctx_status_code>(status->code);
}

const char* epctx_status_message(const epctx_status* status) {
  return status == nullptr ? "" : status->message.c_str();
}

const char* epctx_status_code_name(epctx_status_code code) {
  const int value = epctx::capi::FromC(code);
  if (value < EPCTX_OK || value > EPCTX_CANCELLED) return "Unknown";
  return epctx::StatusCodeName(static_cast<epctx::StatusCode>(value));
}

void epctx_status_release(epctx_status* status) {
  if (status != epctx::capi::OutOfMemoryStatus()) delete status;
}

}  // extern "C"
