// The viewer's JSON: nlohmann's, written with every string made valid UTF-8
// (a byte that is not becomes U+FFFD), so text from the data can never break
// the answer; the page renders every string as text (docs/viewer.md).
#ifndef UNIRECORD_SRC_SERVE_JSON_H_
#define UNIRECORD_SRC_SERVE_JSON_H_

#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace unirecord::serve {

using Json = nlohmann::json;

inline std::string DumpJson(const Json& json) {
  return json.dump(-1, ' ', false, Json::error_handler_t::replace);
}

// A number as the page reads it: finite values as numbers, the others as
// the strings "nan", "-nan", "inf" and "-inf" (JSON has no such numbers).
inline Json NumberJson(double value) {
  if (std::isnan(value)) return std::signbit(value) ? "-nan" : "nan";
  if (std::isinf(value)) return value < 0 ? "-inf" : "inf";
  return value;
}

// An integer as the page reads it: a number when a JavaScript number holds
// it exactly (|v| <= 2^53), else its decimal digits as a string (a 64-bit
// hash stays exact).
inline Json IntegerJson(int64_t value) {
  constexpr int64_t kExact = int64_t{1} << 53;
  if (value > kExact || value < -kExact) return std::to_string(value);
  return value;
}

}  // namespace unirecord::serve

#endif  // UNIRECORD_SRC_SERVE_JSON_H_
