// The C API's enums are written out by hand in epctx_c.h (a C header cannot include the C++
// ones) and cast to and from the C++ enums: every pair is checked here, so that a value added or
// renumbered on one side fails the build instead of a caller at run time.
#include "capi/capi_types.h"
#include "epctx/env.h"

namespace epctx::capi {
namespace {

template <typename C, typename Cpp>
constexpr bool Same(C c, Cpp cpp) {
  return static_cast<int>(c) == static_cast<int>(cpp);
}

static_assert(Same(EPCTX_OK, StatusCode::kOk) &&
                  Same(EPCTX_INVALID_ARGUMENT, StatusCode::kInvalidArgument) &&
                  Same(EPCTX_NOT_FOUND, StatusCode::kNotFound) &&
                  Same(EPCTX_IO_ERROR, StatusCode::kIoError) &&
                  Same(EPCTX_CORRUPT, StatusCode::kCorrupt) &&
                  Same(EPCTX_VERSION_MISMATCH, StatusCode::kVersionMismatch) &&
                  Same(EPCTX_TARGET_MISMATCH, StatusCode::kTargetMismatch) &&
                  Same(EPCTX_STALE, StatusCode::kStale) &&
                  Same(EPCTX_UNSUPPORTED, StatusCode::kUnsupported) &&
                  Same(EPCTX_FAILED_PRECONDITION, StatusCode::kFailedPrecondition) &&
                  Same(EPCTX_INTERNAL, StatusCode::kInternal) &&
                  Same(EPCTX_CANCELLED, StatusCode::kCancelled),
              "epctx_status_code must keep epctx::StatusCode's values");

static_assert(
    Same(EPCTX_TYPE_UNDEFINED, DataType::kUndefined) &&
        Same(EPCTX_TYPE_FLOAT32, DataType::kFloat32) && Same(EPCTX_TYPE_UINT8, DataType::kUint8) &&
        Same(EPCTX_TYPE_INT8, DataType::kInt8) && Same(EPCTX_TYPE_UINT16, DataType::kUint16) &&
        Same(EPCTX_TYPE_INT16, DataType::kInt16) && Same(EPCTX_TYPE_INT32, DataType::kInt32) &&
        Same(EPCTX_TYPE_INT64, DataType::kInt64) && Same(EPCTX_TYPE_STRING, DataType::kString) &&
        Same(EPCTX_TYPE_BOOL, DataType::kBool) && Same(EPCTX_TYPE_FLOAT16, DataType::kFloat16) &&
        Same(EPCTX_TYPE_FLOAT64, DataType::kFloat64) &&
        Same(EPCTX_TYPE_UINT32, DataType::kUint32) && Same(EPCTX_TYPE_UINT64, DataType::kUint64) &&
        Same(EPCTX_TYPE_BFLOAT16, DataType::kBFloat16),
    "epctx_data_type must keep epctx::DataType's values");

static_assert(Same(EPCTX_VALUE_TENSOR, ValueKind::kTensor) &&
                  Same(EPCTX_VALUE_SEQUENCE, ValueKind::kSequence) &&
                  Same(EPCTX_VALUE_NONE, ValueKind::kNone),
              "epctx_value_kind must keep epctx::ValueKind's values");

static_assert(Same(EPCTX_LOG_DEBUG, LogLevel::kDebug) && Same(EPCTX_LOG_INFO, LogLevel::kInfo) &&
                  Same(EPCTX_LOG_WARNING, LogLevel::kWarning) &&
                  Same(EPCTX_LOG_ERROR, LogLevel::kError) && Same(EPCTX_LOG_OFF, LogLevel::kOff),
              "epctx_log_level must keep epctx::LogLevel's values");

}  // namespace
}  // namespace epctx::capi
