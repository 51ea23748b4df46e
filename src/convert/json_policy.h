// Internal to the convert layer: the one JSON policy of every converter's
// text input (COCO instances files, JSON Lines and CSV manifests, schema
// files), and the one range check of a JSON number against the element type
// it is stored as (docs/cli.md, "What the converters accept").
#ifndef UNIRECORD_SRC_CONVERT_JSON_POLICY_H_
#define UNIRECORD_SRC_CONVERT_JSON_POLICY_H_

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "unirecord/schema.h"

namespace unirecord::convert_internal {

using Json = nlohmann::json;

// Arrays and objects nested deeper than this are refused: deeper than any
// field's shape (8 dimensions) inside a manifest line's object, or than a COCO
// segmentation inside its file (5 levels), and shallow enough that nothing
// that walks a parsed value recursively can run out of stack.
inline constexpr int kMaxJsonDepth = 32;

// Integer literals past 64 bits (nlohmann reads them as the nearest double),
// as written, by the value that holds them: JsonToElement names them as given
// ("-9223372036854775809 is out of int64's range", not a rounded double "is
// not an integer"). The addresses hold while the parsed value is not changed.
using WrittenIntegers = std::map<const Json*, std::string>;

// Parses `text` into *value, or says why not, naming where in the value it
// happened:
//   "not valid JSON: parse error at line 1, column 15: ..." (nlohmann's
//     message without its tag; numbers beyond double's range included),
//   "arrays and objects nest deeper than 32 levels (at images[0].file_name)",
//   "key 'image' appears twice in one object (at annotations[3])",
//   "a UTF-8 byte-order mark starts the value (only a file's first bytes may
//     hold one)": a file's reader skips the mark first (WithoutByteOrderMark),
//     so that a JSON Lines line or a CSV cell that starts with one is refused.
// With `written`, the integer literals past 64 bits go there.
// Nothing is thrown; memory exhaustion is reported as a reason too.
std::string ParseConverterJson(std::string_view text, Json* value, WrittenIntegers* written = nullptr);

// `text` without the UTF-8 byte-order mark it may start with (Excel and some
// editors write one): what every converter does with its files' first bytes.
std::string_view WithoutByteOrderMark(std::string_view text);

// `value` as JSON text for a message, cut to 60 bytes.
std::string QuoteJson(const Json& value);

// One element of numeric type `type` (schema.h's TypeInfo: bool, integers,
// float32, float64) from `v`, little-endian into bytes[0, type.width), or why
// not: "\"a\" is not a number", "2.5 is not an integer", "300 is out of
// uint8's range", "1e+39 is out of float32's range", "2 is not a bool (true,
// false, 0 or 1)". Floats follow the one float policy (schema.h's
// NarrowFloat: rounded to the nearest, never rounded into an infinity).
// `written`: ParseConverterJson's, naming an integer past 64 bits as given.
std::string JsonToElement(const TypeInfo& type, const Json& v, uint8_t bytes[8],
                          const WrittenIntegers* written = nullptr);
// The same for one float32 or int64.
std::string JsonToFloat32(const Json& v, float* out);
std::string JsonToInt64(const Json& v, int64_t* out, const WrittenIntegers* written = nullptr);

}  // namespace unirecord::convert_internal

#endif  // UNIRECORD_SRC_CONVERT_JSON_POLICY_H_
