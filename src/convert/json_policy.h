// Internal to the convert layer: the one JSON policy of every converter's
// text input (COCO instances files, JSON Lines and CSV manifests, schema
// files), and the one range check of a JSON number against the element type
// it is stored as (docs/cli.md, "What the converters accept").
#ifndef UNIRECORD_SRC_CONVERT_JSON_POLICY_H_
#define UNIRECORD_SRC_CONVERT_JSON_POLICY_H_

#include <cstdint>
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

// Parses `text` (a UTF-8 byte-order mark first is skipped) into *value, or
// says why not, naming where in the value it happened:
//   "not valid JSON: parse error at line 1, column 15: ..." (nlohmann's
//     message without its tag; numbers beyond double's range included),
//   "arrays and objects nest deeper than 32 levels (at images[0].file_name)",
//   "key 'image' appears twice in one object (at annotations[3])".
// Nothing is thrown; memory exhaustion is reported as a reason too.
std::string ParseConverterJson(std::string_view text, Json* value);

// `value` as JSON text for a message, cut to 60 bytes.
std::string QuoteJson(const Json& value);

// One element of numeric type `type` (schema.h's TypeInfo: bool, integers,
// float32, float64) from `v`, little-endian into bytes[0, type.width), or why
// not: "\"a\" is not a number", "2.5 is not an integer", "300 is out of
// uint8's range", "1e+39 is out of float32's range", "2 is not a bool (true,
// false, 0 or 1)". A value the type cannot hold is never rounded into it
// (no float32 infinity from a finite double).
std::string JsonToElement(const TypeInfo& type, const Json& v, uint8_t bytes[8]);
// The same for one float32 or int64.
std::string JsonToFloat32(const Json& v, float* out);
std::string JsonToInt64(const Json& v, int64_t* out);

}  // namespace unirecord::convert_internal

#endif  // UNIRECORD_SRC_CONVERT_JSON_POLICY_H_
