#include "unirecord/schema.h"

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace unirecord {
namespace {

TEST(SchemaTest, ValidSchema) {
  auto schema = Schema::Make({Field::Bytes("image"), Field::Int64("label", true),
                              Field::Array("mean", FieldType::kFloat32, {3}), Field::String("path")});
  ASSERT_TRUE(schema.ok()) << schema.status().ToString();
  EXPECT_EQ(schema->num_fields(), 4u);
  EXPECT_EQ(schema->FieldIndex("label"), 1);
  EXPECT_EQ(schema->FieldIndex("nope"), -1);
  EXPECT_EQ(schema->FindField("nope").status().code(), StatusCode::kKeyNotFound);
  EXPECT_EQ(schema->ToString(), "image: bytes, label: int64 (indexed), mean: float32[3], path: string");
  EXPECT_EQ(schema->field(2).num_elements(), 3);
}

TEST(SchemaTest, RejectsBadSchemas) {
  struct Case {
    std::vector<Field> fields;
    const char* message_part;
  };
  Field bad_shape = Field::String("s");
  bad_shape.shape = {2};
  Field indexed_string = Field::String("s");
  indexed_string.indexed = true;
  Field compressed_int = Field::Int32("i");
  compressed_int.compression = BlobCompression::kZstd;
  const Case cases[] = {
      {{}, "no fields"},
      {{Field::Int32("")}, "empty name"},
      {{Field::Int32("a"), Field::Int64("a")}, "used twice"},
      {{bad_shape}, "only numeric"},
      {{Field::Array("a", FieldType::kInt32, {2, 0})}, "< 1"},
      {{Field::Array("a", FieldType::kInt32, {1, 1, 1, 1, 1, 1, 1, 1, 1})}, "8 dimensions"},
      {{Field::Array("a", FieldType::kInt32, {1 << 20, 1 << 20})}, "2^28"},
      {{indexed_string}, "indexed"},
      {{compressed_int}, "compression"},
      {{Field::Int32(std::string(256, 'x'))}, "255"},
  };
  for (const Case& c : cases) {
    auto schema = Schema::Make(c.fields);
    ASSERT_FALSE(schema.ok()) << c.message_part;
    EXPECT_EQ(schema.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(schema.status().message().find(c.message_part), std::string::npos) << schema.status().message();
  }
}

TEST(NameListTest, RoundTrip) {
  auto encoded = EncodeNameList({"cat", "dog", "n01440764"});
  ASSERT_TRUE(encoded.ok());
  EXPECT_EQ(*encoded, "cat\ndog\nn01440764");
  EXPECT_EQ(DecodeNameList(*encoded), (std::vector<std::string>{"cat", "dog", "n01440764"}));
  EXPECT_EQ(*EncodeNameList({}), "");
  EXPECT_TRUE(DecodeNameList("").empty());
  EXPECT_FALSE(EncodeNameList({"a\nb"}).ok());
  EXPECT_FALSE(EncodeNameList({""}).ok());
}

TEST(HalfTest, FloatToHalfRoundsToNearestEven) {
  EXPECT_EQ(FloatToHalf(1.0f), 0x3c00);
  EXPECT_EQ(FloatToHalf(-2.0f), 0xc000);
  EXPECT_EQ(FloatToHalf(0.0f), 0x0000);
  EXPECT_EQ(FloatToHalf(-0.0f), 0x8000);
  EXPECT_EQ(FloatToHalf(65504.0f), 0x7bff);             // the largest half
  EXPECT_EQ(FloatToHalf(65519.0f), 0x7bff);             // below the midpoint to 2^16
  EXPECT_EQ(FloatToHalf(65520.0f), 0x7c00);             // the midpoint: to even, which is inf
  EXPECT_EQ(FloatToHalf(1e6f), 0x7c00);
  EXPECT_EQ(FloatToHalf(-std::numeric_limits<float>::infinity()), 0xfc00);
  EXPECT_EQ(FloatToHalf(std::ldexp(1.0f, -24)), 0x0001);  // the smallest subnormal
  EXPECT_EQ(FloatToHalf(std::ldexp(1.0f, -25)), 0x0000);  // half of it: to even (0)
  EXPECT_EQ(FloatToHalf(std::ldexp(3.0f, -25)), 0x0002);  // 1.5 units: to even (2)
  EXPECT_EQ(FloatToHalf(std::ldexp(1.0f, -14)), 0x0400);  // the smallest normal
  EXPECT_EQ(FloatToHalf(1.0f + std::ldexp(1.0f, -11)), 0x3c00);      // tie: to even
  EXPECT_EQ(FloatToHalf(1.0f + std::ldexp(3.0f, -11)), 0x3c02);      // tie: to even
  EXPECT_EQ(FloatToHalf(1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -20)), 0x3c01);
  EXPECT_TRUE(std::isnan(HalfToFloat(FloatToHalf(std::numeric_limits<float>::quiet_NaN()))));
}

TEST(HalfTest, EveryHalfSurvivesARoundTrip) {
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    const uint16_t half = static_cast<uint16_t>(bits);
    const bool nan = (half & 0x7c00) == 0x7c00 && (half & 0x3ff) != 0;
    if (nan) continue;
    ASSERT_EQ(FloatToHalf(HalfToFloat(half)), half) << std::hex << bits;
  }
}

// The one float policy of every writer (issue 47: numpy and Python numbers
// stored inf for 1e39 where JSON refused it).
TEST(NarrowFloatTest, RoundsToTheNearestAndRefusesWhatWouldBecomeAnInfinity) {
  float f = 0;
  EXPECT_FALSE(NarrowFloat(FieldType::kFloat32, 1e39, &f));
  EXPECT_FALSE(NarrowFloat(FieldType::kFloat32, -1e39, &f));
  EXPECT_FALSE(NarrowFloat(FieldType::kFloat32, 0x1.ffffffp+127, &f));  // the midpoint to 2^128
  ASSERT_TRUE(NarrowFloat(FieldType::kFloat32, 0x1.fffffefffffffp+127, &f));
  EXPECT_EQ(f, FLT_MAX);
  ASSERT_TRUE(NarrowFloat(FieldType::kFloat32, -1e-46, &f));
  EXPECT_TRUE(f == 0.0f && std::signbit(f));
  ASSERT_TRUE(NarrowFloat(FieldType::kFloat32, 3e-45, &f));
  EXPECT_EQ(f, 0x1p-148f);  // 2.14 units of 2^-149: 2
  // NaN and infinities stay what they are.
  ASSERT_TRUE(NarrowFloat(FieldType::kFloat32, -INFINITY, &f));
  EXPECT_EQ(f, -INFINITY);
  ASSERT_TRUE(NarrowFloat(FieldType::kFloat32, NAN, &f));
  EXPECT_TRUE(std::isnan(f));
  double d = 0;
  ASSERT_TRUE(NarrowFloat(FieldType::kFloat64, 1e300, &d));
  EXPECT_EQ(d, 1e300);
  EXPECT_FALSE(NarrowFloat(FieldType::kInt32, 1.0, &d));  // not a float type
}

TEST(NarrowFloatTest, Float16IsRoundedOnceFromTheDouble) {
  uint16_t h = 0;
  EXPECT_FALSE(NarrowFloat(FieldType::kFloat16, 65520.0, &h));
  EXPECT_FALSE(NarrowFloat(FieldType::kFloat16, -1e5, &h));
  ASSERT_TRUE(NarrowFloat(FieldType::kFloat16, 65519.99, &h));
  EXPECT_EQ(h, 0x7bff);
  ASSERT_TRUE(NarrowFloat(FieldType::kFloat16, -INFINITY, &h));
  EXPECT_EQ(h, 0xfc00);
  ASSERT_TRUE(NarrowFloat(FieldType::kFloat16, std::ldexp(1.0, -26), &h));
  EXPECT_EQ(h, 0x0000);
  // Just past the midpoint of 1 and 1 + 2^-10: through a float it would
  // round onto the midpoint, then to even (1); once, it rounds up.
  ASSERT_TRUE(NarrowFloat(FieldType::kFloat16, 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40), &h));
  EXPECT_EQ(h, 0x3c01);
  // Every float below the overflow: as FloatToHalf rounds it (one rounding either way).
  uint32_t state = 12345;
  for (int k = 0; k < 200000; ++k) {
    state = state * 1664525u + 1013904223u;
    const uint32_t exponent = 127 - 26 + (state >> 8) % 43;  // 2^-26 .. 2^16: subnormal halves to overflow
    const uint32_t bits = (state & 0x80000000u) | (exponent << 23) | ((state * 2654435761u) & 0x7fffffu);
    float x;
    std::memcpy(&x, &bits, sizeof(x));
    if (std::isnan(x) || std::fabs(x) >= 65520.0f) continue;
    ASSERT_TRUE(NarrowFloat(FieldType::kFloat16, x, &h)) << x;
    ASSERT_EQ(h, FloatToHalf(x)) << std::hexfloat << x;
  }
}

}  // namespace
}  // namespace unirecord
