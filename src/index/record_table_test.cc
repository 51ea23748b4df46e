#include "index/record_table.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace unirecord::index {
namespace {

TEST(FieldLayoutTest, ImageNetLikeEntryIsOneCacheLine) {
  auto schema = Schema::Make({Field::Bytes("image"), Field::Int64("label", true), Field::String("path"),
                              Field::Int32("width", true), Field::Int32("height", true)});
  ASSERT_TRUE(schema.ok());
  FieldLayout layout = FieldLayout::For(*schema);
  EXPECT_EQ(layout.entry_stride, 64u);
  EXPECT_EQ(layout.blob_fields, std::vector<int>({0}));
  EXPECT_EQ(layout.indexed_fields, std::vector<int>({1, 3, 4}));
  EXPECT_EQ(layout.column_fields, std::vector<int>({2}));
  EXPECT_EQ(layout.IndexedValueOffset(2), 8u + 24u + 16u);
}

TEST(RecordTableTest, EntryChecksumDependsOnRow) {
  auto schema = Schema::Make({Field::Bytes("b")});
  FieldLayout layout = FieldLayout::For(*schema);
  std::vector<uint8_t> entry(layout.entry_stride, 7);
  SealEntry(layout, entry.data(), 5);
  EXPECT_TRUE(EntryChecksumMatches(layout, entry.data(), 5));
  EXPECT_FALSE(EntryChecksumMatches(layout, entry.data(), 6));
  entry[3] ^= 1;
  EXPECT_FALSE(EntryChecksumMatches(layout, entry.data(), 5));
}

TEST(RecordTableTest, FloatTotalOrder) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double values[] = {-nan, -INFINITY, -1.0, -0.0, 0.0, 1.0, INFINITY, nan};
  for (size_t i = 0; i + 1 < std::size(values); ++i) {
    EXPECT_TRUE(IndexedLess(FieldType::kFloat64, IndexedBitsFromFloat(values[i]), IndexedBitsFromFloat(values[i + 1])))
        << i;
    EXPECT_FALSE(IndexedLess(FieldType::kFloat64, IndexedBitsFromFloat(values[i + 1]), IndexedBitsFromFloat(values[i])))
        << i;
  }
  EXPECT_TRUE(IndexedLess(FieldType::kInt64, IndexedBitsFromInt(-5), IndexedBitsFromInt(3)));
}

}  // namespace
}  // namespace unirecord::index
