#include "unirecord/schema.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace unirecord
