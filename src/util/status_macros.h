// Early-return helpers for Status / Result. Messages use fmt syntax and should name the file and
// the field that is wrong.
#pragma once

#include <fmt/format.h>

#include "epctx/status.h"

#define EPCTX_CONCAT_INNER(a, b) a##b
#define EPCTX_CONCAT(a, b) EPCTX_CONCAT_INNER(a, b)

// return Status(code, fmt::format(...))
#define EPCTX_ERROR(code, ...) ::epctx::Status(::epctx::StatusCode::code, fmt::format(__VA_ARGS__))

#define EPCTX_RETURN_IF_ERROR(expr)                \
  do {                                             \
    ::epctx::Status epctx_status_ = (expr);        \
    if (!epctx_status_.ok()) return epctx_status_; \
  } while (0)

#define EPCTX_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                \
  if (!tmp.ok()) return tmp.status();               \
  lhs = std::move(tmp).value()

// EPCTX_ASSIGN_OR_RETURN(auto x, ComputeX()); declares x or returns the error.
#define EPCTX_ASSIGN_OR_RETURN(lhs, expr) \
  EPCTX_ASSIGN_OR_RETURN_IMPL(EPCTX_CONCAT(epctx_result_, __LINE__), lhs, expr)

// Returns the error with extra context prepended: "<context>: <original message>".
#define EPCTX_RETURN_IF_ERROR_CTX(expr, ...)                                             \
  do {                                                                                   \
    ::epctx::Status epctx_status_ = (expr);                                              \
    if (!epctx_status_.ok())                                                             \
      return ::epctx::Status(epctx_status_.code(),                                       \
                             fmt::format(__VA_ARGS__) + ": " + epctx_status_.message()); \
  } while (0)
