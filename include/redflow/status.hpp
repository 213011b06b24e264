// Status: the outcome of an operation that can fail, and Result<T>, a value or
// the Status saying why there is none. Errors name the node, file or flag at
// fault in their message; redflow reports every failure this way (no exceptions
// cross the public API).
#pragma once

#include <optional>
#include <string>
#include <utility>

namespace redflow {

class Status {
 public:
  enum class Code { kOk, kInvalidArgument, kNotFound, kIOError, kInvalidGraph, kResourceExhausted, kInternal, kActorFailed, kDataLoss, kGaveUp };

  Status() = default;
  static Status Ok() { return Status(); }
  static Status InvalidArgument(std::string msg) { return Status(Code::kInvalidArgument, std::move(msg)); }
  static Status NotFound(std::string msg) { return Status(Code::kNotFound, std::move(msg)); }
  static Status IOError(std::string msg) { return Status(Code::kIOError, std::move(msg)); }
  static Status InvalidGraph(std::string msg) { return Status(Code::kInvalidGraph, std::move(msg)); }
  static Status ResourceExhausted(std::string msg) { return Status(Code::kResourceExhausted, std::move(msg)); }
  static Status Internal(std::string msg) { return Status(Code::kInternal, std::move(msg)); }
  // The user's code failed: an actor's ctx.fail() or exception, a SPITS job's
  // function returning an error, a stream operator's exception. The program's
  // or its inputs' fault, not redflow's; ToString() says "user code error" and
  // the message names the actor, job function or operator.
  static Status ActorFailed(std::string msg) { return Status(Code::kActorFailed, std::move(msg)); }
  // Bytes that crossed a process boundary do not match the checksum their
  // producer reported: the copy is dropped and the value fetched again or
  // recomputed (docs/remote.md, "End-to-end checks").
  static Status DataLoss(std::string msg) { return Status(Code::kDataLoss, std::move(msg)); }
  // Fault tolerance reached its limit: redundancy, re-execution and the tiles
  // in service could not produce a result (replicas that never agreed, too
  // few tiles left after quarantines and losses, an actor that kills every
  // tile it runs on). An outcome of the faults, not a bug in redflow: the
  // message names the actor, the tiles and the attempts. The CLI exits 3.
  static Status GaveUp(std::string msg) { return Status(Code::kGaveUp, std::move(msg)); }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  // "invalid graph: actor 'mul' has 2 output data nodes (expected exactly 1)".
  std::string ToString() const;

 private:
  Status(Code code, std::string msg) : code_(code), message_(std::move(msg)) {}
  Code code_ = Code::kOk;
  std::string message_;
};

// Called by Result<T> when its value is asked for but it holds an error:
// prints "redflow: Result::value() on an error: <status>" to stderr and
// aborts. A programming error (check ok() first), so it is loud, never
// undefined behaviour.
[[noreturn]] void result_value_on_error(const Status& status);

// A value of type T, or the Status explaining its absence. value(), * and ->
// check: on an error they call result_value_on_error() (the process aborts,
// naming the error) rather than reading a value that is not there.
template <typename T>
class Result {
 public:
  Result(T value) : value_(std::move(value)) {}                // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {}        // NOLINT: implicit by design
  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }
  T& value() & { return checked(); }
  const T& value() const& { return checked(); }
  T&& value() && { return std::move(checked()); }
  T* operator->() { return &checked(); }
  const T* operator->() const { return &checked(); }
  T& operator*() { return checked(); }
  const T& operator*() const { return checked(); }

 private:
  T& checked() {
    if (!value_) result_value_on_error(status_);
    return *value_;
  }
  const T& checked() const {
    if (!value_) result_value_on_error(status_);
    return *value_;
  }
  Status status_;
  std::optional<T> value_;
};

}  // namespace redflow

// Propagates a failed Status out of the enclosing function.
#define REDFLOW_RETURN_IF_ERROR(expr)          \
  do {                                         \
    ::redflow::Status _rf_status = (expr);     \
    if (!_rf_status.ok()) return _rf_status;   \
  } while (0)
