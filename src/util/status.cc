#include "epctx/status.h"

namespace epctx {

const char* StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return "OK";
    case StatusCode::kInvalidArgument:
      return "InvalidArgument";
    case StatusCode::kNotFound:
      return "NotFound";
    case StatusCode::kIoError:
      return "IoError";
    case StatusCode::kCorrupt:
      return "Corrupt";
    case StatusCode::kVersionMismatch:
      return "VersionMismatch";
    case StatusCode::kTargetMismatch:
      return "TargetMismatch";
    case StatusCode::kStale:
      return "Stale";
    case StatusCode::kUnsupported:
      return "Unsupported";
    case StatusCode::kFailedPrecondition:
      return "FailedPrecondition";
    case StatusCode::kInternal:
      return "Internal";
    case StatusCode::kCancelled:
      return "Cancelled";
  }
  return "Unknown";
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  return std::string(StatusCodeName(code_)) + ": " + message_;
}

}  // namespace epctx
