#include "unirecord/status.h"

#include <cstdio>
#include <cstdlib>

namespace unirecord {

const char* StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "OK";
    case StatusCode::kInvalidArgument: return "InvalidArgument";
    case StatusCode::kNotFound: return "NotFound";
    case StatusCode::kIOError: return "IOError";
    case StatusCode::kCorruption: return "Corruption";
    case StatusCode::kNotSupported: return "NotSupported";
    case StatusCode::kFailedPrecondition: return "FailedPrecondition";
    case StatusCode::kOutOfRange: return "OutOfRange";
    case StatusCode::kInternal: return "Internal";
    case StatusCode::kKeyNotFound: return "KeyNotFound";
    case StatusCode::kUnavailable: return "Unavailable";
  }
  return "Unknown";
}

std::string MessageText(std::string_view text) {
  std::string out;
  size_t shown = 0;
  for (; shown < text.size(); ++shown) {
    const auto c = static_cast<unsigned char>(text[shown]);
    // Cut before a character: not inside a UTF-8 sequence (at most 3 more bytes).
    const bool continues_character = (c & 0xC0) == 0x80;
    if (out.size() >= kMaxMessageTextBytes && (!continues_character || out.size() >= kMaxMessageTextBytes + 3)) break;
    if (c < 0x20 || c == 0x7F) {
      char hex[5];
      std::snprintf(hex, sizeof(hex), "\\x%02X", c);
      out += hex;
    } else {
      out += static_cast<char>(c);
    }
  }
  if (shown < text.size()) out += "... (" + std::to_string(text.size()) + " bytes)";
  return out;
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  return std::string(StatusCodeName(code_)) + ": " + message_;
}

Status Status::WithContext(const std::string& context) const {
  if (ok()) return *this;
  return Status(code_, context + ": " + message_);
}

namespace internal {

void DieOnValueOfError(const Status& status) {
  std::fprintf(stderr, "unirecord: value() of an error Result: %s\n", status.ToString().c_str());
  std::abort();
}

}  // namespace internal

}  // namespace unirecord
