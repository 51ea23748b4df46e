#include "format/array_values.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "format/endian.h"

namespace unirecord::format {
namespace {

Field Boxes() { return Field::Array("boxes", FieldType::kFloat32, {kVariableDim, 4}); }

TEST(ArrayValuesTest, TypeTableIsIndexedByFieldType) {
  for (const TypeInfo& t : AllTypes()) {
    ASSERT_NE(FindType(t.type), nullptr);
    EXPECT_EQ(FindType(t.type)->type, t.type);
    EXPECT_STREQ(FindType(t.type)->name, t.name);
    EXPECT_EQ(FindType(std::string_view(t.name)), FindType(t.type));
  }
  EXPECT_EQ(FindType(static_cast<FieldType>(0)), nullptr);
  EXPECT_EQ(FindType(static_cast<FieldType>(16)), nullptr);
  EXPECT_EQ(FindType("complex64"), nullptr);
  EXPECT_EQ(NumericWidth(FieldType::kFloat16), 2u);
  EXPECT_EQ(NumericWidth(FieldType::kBool), 1u);
  EXPECT_TRUE(IsIntegral(FieldType::kBool));
  EXPECT_TRUE(IsIntegral(FieldType::kUint32));
  EXPECT_FALSE(IsIntegral(FieldType::kFloat16));
}

TEST(ArrayValuesTest, HalfToFloatMatchesKnownValues) {
  EXPECT_EQ(HalfToFloat(0x3c00), 1.0f);
  EXPECT_EQ(HalfToFloat(0xc000), -2.0f);
  EXPECT_EQ(HalfToFloat(0x7bff), 65504.0f);                  // largest normal
  EXPECT_EQ(HalfToFloat(0x0001), std::ldexp(1.0f, -24));    // smallest subnormal
  EXPECT_EQ(HalfToFloat(0x3555), 0.333251953125f);
  EXPECT_TRUE(std::isinf(HalfToFloat(0xfc00)) && HalfToFloat(0xfc00) < 0);
  EXPECT_TRUE(std::isnan(HalfToFloat(0x7e00)));
  EXPECT_TRUE(std::signbit(HalfToFloat(0x8000)));
}

TEST(ArrayValuesTest, LoadsEveryIntegerWidthWithItsSign) {
  const uint8_t ff[8] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
  EXPECT_EQ(ElementToInt64(FieldType::kUint8, ff), 255);
  EXPECT_EQ(ElementToInt64(FieldType::kInt8, ff), -1);
  EXPECT_EQ(ElementToInt64(FieldType::kUint16, ff), 65535);
  EXPECT_EQ(ElementToInt64(FieldType::kInt16, ff), -1);
  EXPECT_EQ(ElementToInt64(FieldType::kUint32, ff), 4294967295);
  EXPECT_EQ(ElementToInt64(FieldType::kInt32, ff), -1);
  EXPECT_EQ(ElementToInt64(FieldType::kInt64, ff), -1);
  const uint8_t one = 1;
  EXPECT_EQ(ElementToInt64(FieldType::kBool, &one), 1);
}

TEST(ArrayValuesTest, ShapeChecksNameFieldAndShapes) {
  EXPECT_TRUE(CheckShape(Boxes(), {0, 4}).ok());
  EXPECT_TRUE(CheckShape(Boxes(), {7, 4}).ok());
  Status wrong_rank = CheckShape(Boxes(), {4});
  EXPECT_EQ(wrong_rank.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(wrong_rank.message().find("'boxes' takes shape (-1, 4)"), std::string::npos) << wrong_rank.ToString();
  EXPECT_NE(wrong_rank.message().find("got (4,)"), std::string::npos) << wrong_rank.ToString();
  EXPECT_FALSE(CheckShape(Boxes(), {3, 5}).ok());
  EXPECT_FALSE(CheckShape(Boxes(), {-1, 4}).ok());
  EXPECT_FALSE(CheckShape(Boxes(), {int64_t{1} << 27, 4}).ok());  // 2^29 elements
  EXPECT_TRUE(CheckShape(Boxes(), {int64_t{1} << 26, 4}).ok());
}

TEST(ArrayValuesTest, EncodeParseRoundTrip) {
  const Field mask = Field::Array("mask", FieldType::kUint8, {kVariableDim, 3, kVariableDim});
  EXPECT_EQ(ShapePrefixBytes(mask), 8u);
  const uint8_t elements[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  std::string stored;
  EncodeVarArray(mask, {2, 3, 2}, std::string_view(reinterpret_cast<const char*>(elements), 12), &stored);
  ASSERT_EQ(stored.size(), 8u + 12u);
  EXPECT_EQ(LoadLE<uint32_t>(reinterpret_cast<const uint8_t*>(stored.data())), 2u);
  EXPECT_EQ(LoadLE<uint32_t>(reinterpret_cast<const uint8_t*>(stored.data()) + 4), 2u);
  ParsedArray parsed;
  ASSERT_TRUE(ParseVarArray(mask, stored, &parsed).ok());
  EXPECT_EQ(parsed.dims[0], 2);
  EXPECT_EQ(parsed.dims[1], 3);
  EXPECT_EQ(parsed.dims[2], 2);
  EXPECT_EQ(parsed.count, 12u);
  EXPECT_EQ(std::memcmp(parsed.data, elements, 12), 0);
}

// One test per way a stored shape can be forged (SPEC.md 6.3).
Status ParseForged(std::string stored) {
  ParsedArray parsed;
  return ParseVarArray(Boxes(), stored, &parsed);
}

std::string Prefix(uint32_t extent, uint32_t pad = 0) {
  std::string s(8, '\0');
  StoreLE<uint32_t>(reinterpret_cast<uint8_t*>(s.data()), extent);
  StoreLE<uint32_t>(reinterpret_cast<uint8_t*>(s.data()) + 4, pad);
  return s;
}

TEST(ArrayValuesCorruptionTest, ShorterThanPrefix) {
  EXPECT_EQ(ParseForged(std::string(5, '\0')).code(), StatusCode::kCorruption);
}

TEST(ArrayValuesCorruptionTest, NonzeroPrefixPadding) {
  EXPECT_EQ(ParseForged(Prefix(0, 1)).code(), StatusCode::kCorruption);
}

TEST(ArrayValuesCorruptionTest, HugeExtentIsRefusedWithoutAllocating) {
  const Status s = ParseForged(Prefix(0xffffffffu));
  EXPECT_EQ(s.code(), StatusCode::kCorruption);
  EXPECT_NE(s.message().find("impossible shape"), std::string::npos) << s.ToString();
}

TEST(ArrayValuesCorruptionTest, ExtentTimesFixedDimsOverLimit) {
  EXPECT_EQ(ParseForged(Prefix(1u << 27)).code(), StatusCode::kCorruption);  // 2^27 x 4 > 2^28
}

TEST(ArrayValuesCorruptionTest, ShapeLargerThanTheValue) {
  EXPECT_EQ(ParseForged(Prefix(2) + std::string(16, '\0')).code(), StatusCode::kCorruption);
}

TEST(ArrayValuesCorruptionTest, ShapeSmallerThanTheValue) {
  EXPECT_EQ(ParseForged(Prefix(0) + std::string(16, '\0')).code(), StatusCode::kCorruption);
}

TEST(ArrayValuesCorruptionTest, EmptyArrayIsValid) {
  EXPECT_TRUE(ParseForged(Prefix(0)).ok());
}

}  // namespace
}  // namespace unirecord::format
