#include "convert/json_policy.h"

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstring>
#include <string>

namespace unirecord::convert_internal {
namespace {

std::string Why(const std::string& text) {
  Json value;
  return ParseConverterJson(text, &value);
}

TEST(ConverterJson, ParsesWhatJsonIs) {
  Json value;
  EXPECT_EQ(ParseConverterJson(R"({"a": [1, 2.5, "x", null, true], "b": {"c": {}}})", &value), "");
  EXPECT_EQ(value["a"][1].get<double>(), 2.5);
  EXPECT_TRUE(value["b"]["c"].is_object());
  EXPECT_EQ(Why("{\"a\": [1,, 2]}").rfind("not valid JSON: parse error at line 1, column 10", 0), 0u) << Why("{\"a\": [1,, 2]}");
  EXPECT_EQ(Why("1e400").rfind("not valid JSON: number overflow", 0), 0u) << Why("1e400");
  EXPECT_EQ(Why("{} x").rfind("not valid JSON: ", 0), 0u);
  // nlohmann's message holds the token it read: bounded (MessageText), not a 2 MB echo.
  const std::string long_token = Why("\"" + std::string(2 << 20, 'x') + "\\q\"");
  EXPECT_EQ(long_token.rfind("not valid JSON: parse error at line 1, column ", 0), 0u) << long_token.substr(0, 300);
  EXPECT_LT(long_token.size(), 300u);
}

// Before: nothing stopped a COCO file nested 10^5 deep, and dumping it
// overflowed the stack (issue 36); nesting up to the limit still parses.
TEST(ConverterJson, NestingPastTheLimitIsRefusedWithWhere) {
  Json value;
  EXPECT_EQ(ParseConverterJson(std::string(kMaxJsonDepth, '[') + std::string(kMaxJsonDepth, ']'), &value), "");
  EXPECT_EQ(value.dump().size(), 2u * kMaxJsonDepth);
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  EXPECT_EQ(Why(deep), "arrays and objects nest deeper than 32 levels (at " + [] {
              std::string p;
              for (int i = 0; i < kMaxJsonDepth; ++i) p += "[0]";
              return p;
            }() + ")");
  const std::string coco = R"({"images": [{"id": 1, "file_name": )" + std::string(100000, '[');
  EXPECT_EQ(Why(coco).rfind("arrays and objects nest deeper than 32 levels (at images[0].file_name[0][0]", 0), 0u)
      << Why(coco);
  EXPECT_TRUE(value.is_null() || value.is_array());
}

// Before: nlohmann kept the last of two equal keys, so a manifest line could
// show one image path and store another (issue 36).
TEST(ConverterJson, AKeyTwiceInOneObjectIsRefusedWithItsName) {
  EXPECT_EQ(Why(R"({"image": "a.jpg", "label": 1, "image": "b.jpg"})"),
            "key 'image' appears twice in one object (at the top level)");
  EXPECT_EQ(Why(R"({"annotations": [{"id": 1}, {"id": 2, "bbox": [1], "bbox": [2]}]})"),
            "key 'bbox' appears twice in one object (at annotations[1])");
  // The same key in two objects is no duplicate.
  EXPECT_EQ(Why(R"([{"id": 1}, {"id": 1, "x": {"id": 2}}])"), "");
}

// Before: nlohmann skips a byte-order mark wherever a parse starts, so one
// was taken at the start of every JSON Lines line and CSV cell (issue 47).
// A file's reader skips the one its first bytes may hold.
TEST(ConverterJson, AByteOrderMarkIsSkippedAtTheStartOfAFileOnly) {
  Json value;
  EXPECT_EQ(ParseConverterJson("\xEF\xBB\xBF{\"a\": 1}", &value),
            "a UTF-8 byte-order mark starts the value (only a file's first bytes may hold one)");
  EXPECT_TRUE(value.is_null());
  EXPECT_EQ(WithoutByteOrderMark("\xEF\xBB\xBF{\"a\": 1}"), "{\"a\": 1}");
  EXPECT_EQ(WithoutByteOrderMark("{}"), "{}");
  EXPECT_EQ(WithoutByteOrderMark("\xEF\xBB"), "\xEF\xBB");
  EXPECT_EQ(ParseConverterJson(WithoutByteOrderMark("\xEF\xBB\xBF{\"a\": 1}"), &value), "");
  EXPECT_EQ(value["a"].get<int>(), 1);
}

TEST(ConverterJson, NumbersAreCheckedAgainstTheTypeTheyAreStoredAs) {
  float f = 0;
  int64_t i = 0;
  // Finite as a double, infinite as float32: refused, never rounded to inf.
  EXPECT_EQ(JsonToFloat32(Json(1e39), &f), "1e+39 is out of float32's range");
  EXPECT_EQ(JsonToFloat32(Json(-3.5e38), &f), "-3.5e+38 is out of float32's range");
  EXPECT_EQ(JsonToFloat32(Json(3.4e38), &f), "");
  EXPECT_EQ(f, 3.4e38f);
  EXPECT_EQ(JsonToFloat32(Json(nullptr), &f), "null is not a number");
  EXPECT_EQ(JsonToFloat32(Json("1"), &f), "\"1\" is not a number");
  EXPECT_EQ(JsonToInt64(Json(uint64_t{1} << 63), &i), "9223372036854775808 is out of int64's range");
  EXPECT_EQ(JsonToInt64(Json(2.5), &i), "2.5 is not an integer");
  EXPECT_EQ(JsonToInt64(Json(-7), &i), "");
  EXPECT_EQ(i, -7);
  uint8_t bytes[8];
  EXPECT_EQ(JsonToElement(*FindType(FieldType::kUint8), Json(256), bytes), "256 is out of uint8's range");
  EXPECT_EQ(JsonToElement(*FindType(FieldType::kInt16), Json(-32768), bytes), "");
  EXPECT_EQ(bytes[0], 0x00);
  EXPECT_EQ(bytes[1], 0x80);
  EXPECT_EQ(JsonToElement(*FindType(FieldType::kBool), Json(2), bytes), "2 is not a bool (true, false, 0 or 1)");
}

// The float policy JSON shares with every writer (NarrowFloat): the nearest
// float32, refused only where that is an infinity; underflow rounds too.
TEST(ConverterJson, Float32ValuesAreRoundedToTheNearestAndNeverToAnInfinity) {
  float f = 1;
  // 2^128 - 2^103, the midpoint between FLT_MAX and 2^128, rounds to inf: refused.
  EXPECT_EQ(JsonToFloat32(Json(0x1.ffffffp+127), &f), "3.4028235677973366e+38 is out of float32's range");
  EXPECT_EQ(JsonToFloat32(Json(-0x1.ffffffp+127), &f), "-3.4028235677973366e+38 is out of float32's range");
  // Below it the nearest is FLT_MAX: numpy's float32 max as printed (3.4028235e+38) is taken.
  EXPECT_EQ(JsonToFloat32(Json(3.4028235e38), &f), "");
  EXPECT_EQ(f, FLT_MAX);
  EXPECT_EQ(JsonToFloat32(Json(0x1.fffffefffffffp+127), &f), "");
  EXPECT_EQ(f, FLT_MAX);
  // Underflow: a subnormal, or below half the smallest (2^-150) a zero of the value's sign.
  EXPECT_EQ(JsonToFloat32(Json(1e-46), &f), "");
  EXPECT_EQ(f, 0.0f);
  EXPECT_FALSE(std::signbit(f));
  EXPECT_EQ(JsonToFloat32(Json(-1e-46), &f), "");
  EXPECT_EQ(f, 0.0f);
  EXPECT_TRUE(std::signbit(f));
  EXPECT_EQ(JsonToFloat32(Json(1e-45), &f), "");
  EXPECT_EQ(f, 0x1p-149f);  // the smallest subnormal, about 1.4e-45
  EXPECT_EQ(JsonToFloat32(Json(0x1p-150), &f), "");
  EXPECT_EQ(f, 0.0f);  // exactly half of it: the tie goes to the even zero
  EXPECT_EQ(JsonToFloat32(Json(0.1), &f), "");
  EXPECT_EQ(f, 0.1f);
}

// Before: an integer past 64 bits was read as the nearest double and called
// "-9.223372036854776e+18 is not an integer" (rounded, the wrong reason).
TEST(ConverterJson, IntegersPast64BitsAreOutOfRangeAsWritten) {
  Json value;
  WrittenIntegers written;
  ASSERT_EQ(ParseConverterJson(R"({"a": -9223372036854775809, "b": [1, [2, 18446744073709551616]], "c": 1e19})",
                               &value, &written),
            "");
  EXPECT_EQ(written.size(), 2u);  // 1e19 is written as a float
  uint8_t bytes[8];
  const TypeInfo& int64 = *FindType(FieldType::kInt64);
  EXPECT_EQ(JsonToElement(int64, value["a"], bytes, &written), "-9223372036854775809 is out of int64's range");
  EXPECT_EQ(JsonToElement(int64, value["b"][1][1], bytes, &written), "18446744073709551616 is out of int64's range");
  EXPECT_EQ(JsonToElement(*FindType(FieldType::kUint8), value["a"], bytes, &written),
            "-9223372036854775809 is out of uint8's range");
  EXPECT_EQ(JsonToElement(int64, value["c"], bytes, &written), "1e+19 is not an integer");
  // A float field takes them, rounded.
  EXPECT_EQ(JsonToElement(*FindType(FieldType::kFloat64), value["b"][1][1], bytes, &written), "");
  double d = 0;
  std::memcpy(&d, bytes, sizeof(d));
  EXPECT_EQ(d, 0x1p64);
  int64_t i = 0;
  EXPECT_EQ(JsonToInt64(value["a"], &i, &written), "-9223372036854775809 is out of int64's range");
  // In range, -2^63 is an integer as ever.
  ASSERT_EQ(ParseConverterJson("[-9223372036854775808]", &value, &written), "");
  EXPECT_TRUE(written.empty());
  EXPECT_EQ(JsonToInt64(value[0], &i, &written), "");
  EXPECT_EQ(i, INT64_MIN);
}

}  // namespace
}  // namespace unirecord::convert_internal
