// Status and Result<T>: how every fallible call in unirecord reports failure.
//
// No exception escapes the library. A function that can fail returns Status
// (nothing else to return) or Result<T> (a value or a Status). Messages name
// the file, record or argument at fault, so they can be shown to users as is.
#ifndef UNIRECORD_STATUS_H_
#define UNIRECORD_STATUS_H_

#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace unirecord {

enum class StatusCode : int {
  kOk = 0,
  kInvalidArgument = 1,     // the caller passed something unusable
  kNotFound = 2,            // a path or file that does not exist
  kIOError = 3,             // the operating system refused a read/write
  kCorruption = 4,          // on-disk data failed a checksum or a bound check
  kNotSupported = 5,        // valid but unsupported input (e.g. 12-bit JPEG)
  kFailedPrecondition = 6,  // wrong call order (e.g. Write after Finish)
  kOutOfRange = 7,          // an index past the end
  kInternal = 8,            // a bug in unirecord
  kKeyNotFound = 9,         // a name that is not in a collection (a field of a schema)
  kUnavailable = 10,        // a remote server did not answer usefully after the last retry
};

// Short stable name of a code ("Corruption", "NotFound", ...).
const char* StatusCodeName(StatusCode code);

// Text from outside (a field name, a key, a path, a value) as a message
// quotes it, the one helper every message uses for that: bytes below 0x20
// and 0x7F as \xNN (a NUL would end the message where it is printed as a C
// string), and at most kMaxMessageTextBytes of it, cut before a character
// and followed by "... (N bytes)" (a 2 MB name is not echoed whole).
inline constexpr size_t kMaxMessageTextBytes = 200;
std::string MessageText(std::string_view text);

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  Status(StatusCode code, std::string message)
      : code_(code), message_(std::move(message)) {}

  static Status OK() { return Status(); }
  static Status InvalidArgument(std::string m) { return {StatusCode::kInvalidArgument, std::move(m)}; }
  static Status NotFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
  static Status IOError(std::string m) { return {StatusCode::kIOError, std::move(m)}; }
  static Status Corruption(std::string m) { return {StatusCode::kCorruption, std::move(m)}; }
  static Status NotSupported(std::string m) { return {StatusCode::kNotSupported, std::move(m)}; }
  static Status FailedPrecondition(std::string m) { return {StatusCode::kFailedPrecondition, std::move(m)}; }
  static Status OutOfRange(std::string m) { return {StatusCode::kOutOfRange, std::move(m)}; }
  static Status Internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }
  static Status KeyNotFound(std::string m) { return {StatusCode::kKeyNotFound, std::move(m)}; }
  static Status Unavailable(std::string m) { return {StatusCode::kUnavailable, std::move(m)}; }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "Corruption: shard x.urec: page 3 checksum mismatch"; "OK" when ok().
  std::string ToString() const;

  // Returns a copy whose message is "context: message" (keeps the code).
  Status WithContext(const std::string& context) const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

// Holds either a T or a non-OK Status. Accessing the value of an error is a
// programming error: in every build type it prints the Status to stderr and
// aborts, instead of reading an empty optional (undefined behaviour that once
// surfaced as a SIGBUS far from the cause).
namespace internal {
// Prints "value() of an error Result: <status>" to stderr and aborts.
[[noreturn]] void DieOnValueOfError(const Status& status);
}  // namespace internal

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {  // NOLINT
    if (status_.ok()) status_ = Status::Internal("Result constructed from OK status without a value");
  }

  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }

  T& value() & { return Checked(); }
  const T& value() const& { return Checked(); }
  T&& value() && { return std::move(Checked()); }
  T* operator->() { return &Checked(); }
  const T* operator->() const { return &Checked(); }
  T& operator*() & { return Checked(); }
  const T& operator*() const& { return Checked(); }

 private:
  T& Checked() {
    if (!value_.has_value()) internal::DieOnValueOfError(status_);
    return *value_;
  }
  const T& Checked() const {
    if (!value_.has_value()) internal::DieOnValueOfError(status_);
    return *value_;
  }

  std::optional<T> value_;
  Status status_;  // OK iff value_ is set
};

}  // namespace unirecord

#define UREC_CONCAT_INNER_(a, b) a##b
#define UREC_CONCAT_(a, b) UREC_CONCAT_INNER_(a, b)

// Returns the Status of `expr` from the enclosing function if it is not OK.
#define UREC_RETURN_IF_ERROR(expr)                          \
  do {                                                      \
    ::unirecord::Status urec_status_ = (expr);              \
    if (!urec_status_.ok()) return urec_status_;            \
  } while (0)

// `UREC_ASSIGN_OR_RETURN(auto x, MakeX());` declares x from a Result's value,
// or returns the Result's Status from the enclosing function.
#define UREC_ASSIGN_OR_RETURN(lhs, expr) \
  UREC_ASSIGN_OR_RETURN_IMPL_(UREC_CONCAT_(urec_result_, __LINE__), lhs, expr)
#define UREC_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                \
  if (!tmp.ok()) return tmp.status();               \
  lhs = std::move(tmp).value()

#endif  // UNIRECORD_STATUS_H_
