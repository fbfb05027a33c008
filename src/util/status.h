// Status and Result<T>: how faultline reports errors across modules.
//
// A small closed set of codes, a message that already carries its context
// ("logs/vllm.log: truncated gzip stream"), and no exceptions across module
// boundaries. Damaged input that the run can survive is not a Status error:
// it is reported as a warning and counted (see input/warnings.h).
#ifndef FAULTLINE_UTIL_STATUS_H_
#define FAULTLINE_UTIL_STATUS_H_

#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace faultline {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,  // the user asked for something that cannot work
  kNotFound,         // a file, directory or process that is not there
  kDataLoss,         // input damaged beyond use (binary file, corrupt stream)
  kIoError,          // the OS refused a read, write or spawn
  kInternal,         // a bug in faultline
};

class Status {
 public:
  Status() = default;
  static Status Ok() { return Status(); }
  static Status InvalidArgument(std::string msg) { return Status(StatusCode::kInvalidArgument, std::move(msg)); }
  static Status NotFound(std::string msg) { return Status(StatusCode::kNotFound, std::move(msg)); }
  static Status DataLoss(std::string msg) { return Status(StatusCode::kDataLoss, std::move(msg)); }
  static Status IoError(std::string msg) { return Status(StatusCode::kIoError, std::move(msg)); }
  static Status Internal(std::string msg) { return Status(StatusCode::kInternal, std::move(msg)); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  Status(StatusCode code, std::string msg) : code_(code), message_(std::move(msg)) {}
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

// Either a value or a non-ok Status. REQUIRES: ok() before value().
template <typename T>
class Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {}  // NOLINT
  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }
  T& value() { return *value_; }
  const T& value() const { return *value_; }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  T& operator*() { return *value_; }

 private:
  std::optional<T> value_;
  Status status_;
};

}  // namespace faultline

#endif  // FAULTLINE_UTIL_STATUS_H_
