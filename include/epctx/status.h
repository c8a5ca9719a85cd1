// Errors as values: every fallible call across a module boundary returns Status or Result<T>.
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace epctx {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,     // the caller passed something unusable (bad option, wrong input)
  kNotFound,            // a file, model, input or output that does not exist
  kIoError,             // the operating system refused a read, write, map or stat
  kCorrupt,             // a file's bytes fail verification (magic, checksum, bounds)
  kVersionMismatch,     // written by another format or engine version
  kTargetMismatch,      // packed for another CPU target or another build of the kernels
  kStale,               // the cache no longer matches its original model
  kUnsupported,         // an operator, attribute or data type the engine does not implement
  kFailedPrecondition,  // a state the call cannot work in
  kInternal,            // a bug in epctx
  kCancelled,           // the run was stopped: RunOptions::SetTerminate, or a limit it reached
};

const char* StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "<CodeName>: <message>", or "OK".
  std::string ToString() const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : storage_(std::move(value)) {}        // NOLINT: implicit by design
  Result(Status status) : storage_(std::move(status)) {  // NOLINT: implicit by design
    assert(!std::get<Status>(storage_).ok() && "Result built from an OK status");
  }

  bool ok() const { return std::holds_alternative<T>(storage_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(storage_);
  }

  T& value() & { return std::get<T>(storage_); }
  const T& value() const& { return std::get<T>(storage_); }
  T&& value() && { return std::get<T>(std::move(storage_)); }

  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<T, Status> storage_;
};

}  // namespace epctx
