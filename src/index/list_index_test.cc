// The list index section (format/SPEC.md section 8.4): what the builder
// writes, and one test per way a damaged section is refused.
#include "index/list_index.h"

#include <gtest/gtest.h>

#include <cstring>
#include <limits>

namespace unirecord::index {
namespace {

// Rows: {3, 1, 3}, {}, {-5, INT64_MAX}, {1}, {INT64_MIN}.
std::string Sample() {
  ListIndexBuilder b;
  const int64_t r0[] = {3, 1, 3};
  const int64_t r2[] = {-5, std::numeric_limits<int64_t>::max()};
  const int64_t r3[] = {1};
  const int64_t r4[] = {std::numeric_limits<int64_t>::min()};
  b.AddRow(0, r0, 3);
  b.AddRow(1, nullptr, 0);
  b.AddRow(2, r2, 2);
  b.AddRow(3, r3, 1);
  b.AddRow(4, r4, 1);
  return b.Build(5);
}

Result<ListIndexView> View(const std::string& s, uint64_t records = 5) {
  return ListIndexView::Parse(reinterpret_cast<const uint8_t*>(s.data()), s.size(), records, "list");
}

uint8_t* At(std::string& s, size_t offset) { return reinterpret_cast<uint8_t*>(s.data()) + offset; }

// Offsets of the parts of Sample(): 5 rows, 5 distinct values, 6 pairs.
constexpr size_t kLengths = 16, kValues = 16 + 24, kStarts = kValues + 5 * 8, kRows = kStarts + 6 * 8;

TEST(ListIndexTest, BuildsTheSpecLayout) {
  const std::string s = Sample();
  ASSERT_EQ(s.size(), 16 + 24 + 5 * 8 + 6 * 8 + 6 * 4);  // align(4*5, 8) = 24
  auto v = View(s);
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(v->value_count(), 5u);
  EXPECT_EQ(v->pair_count(), 6u);
  EXPECT_EQ(v->Length(0), 3u);  // repeats count in the length
  EXPECT_EQ(v->Length(1), 0u);
  const int64_t values[] = {std::numeric_limits<int64_t>::min(), -5, 1, 3, std::numeric_limits<int64_t>::max()};
  for (uint64_t i = 0; i < 5; ++i) EXPECT_EQ(v->Value(i), values[i]);
  uint64_t begin = 0, end = 0;
  ASSERT_TRUE(v->Span(2, &begin, &end, "list").ok());  // value 1: rows 0 and 3
  ASSERT_EQ(end - begin, 2u);
  EXPECT_EQ(v->Row(begin), 0u);
  EXPECT_EQ(v->Row(begin + 1), 3u);
  EXPECT_EQ(v->LowerBound(2), 3u);
  EXPECT_EQ(v->LowerBound(std::numeric_limits<int64_t>::min()), 0u);
  EXPECT_TRUE(v->CheckStructure("list").ok());
}

TEST(ListIndexTest, EmptyShardAndEmptyLists) {
  ListIndexBuilder b;
  const std::string empty = b.Build(0);
  auto v = View(empty, 0);
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(v->value_count(), 0u);
  EXPECT_TRUE(v->CheckStructure("list").ok());
  ListIndexBuilder c;
  c.AddRow(0, nullptr, 0);
  const std::string none = c.Build(1);
  auto w = View(none, 1);
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(w->pair_count(), 0u);
  EXPECT_EQ(w->LowerBound(7), 0u);
  EXPECT_TRUE(w->CheckStructure("list").ok());
}

void ExpectParseFails(const std::string& s, const std::string& what, uint64_t records = 5) {
  auto v = View(s, records);
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().code(), StatusCode::kCorruption);
  EXPECT_NE(v.status().message().find(what), std::string::npos) << v.status().ToString();
}

void ExpectStructureFails(const std::string& s, const std::string& what) {
  auto v = View(s);
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  const Status st = v->CheckStructure("list");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kCorruption);
  EXPECT_NE(st.message().find(what), std::string::npos) << st.ToString();
}

TEST(ListIndexCorruptionTest, TooShort) { ExpectParseFails(Sample().substr(0, 15), "shorter than its 16-byte counts"); }

TEST(ListIndexCorruptionTest, BadLengthCutShort) {
  const std::string s = Sample();
  ExpectParseFails(s.substr(0, s.size() - 4), "does not match");
}

TEST(ListIndexCorruptionTest, BadLengthTooLong) { ExpectParseFails(Sample() + std::string(8, '\0'), "does not match"); }

// 6 rows would pad to the same 24 bytes of lengths; 7 take 32.
TEST(ListIndexCorruptionTest, RecordCountMismatch) { ExpectParseFails(Sample(), "does not match", 7); }

TEST(ListIndexCorruptionTest, ValueCountMismatch) {
  std::string s = Sample();
  format::StoreLE<uint64_t>(At(s, 0), 4);
  ExpectParseFails(s, "does not match");
}

TEST(ListIndexCorruptionTest, HugeCountsDoNotOverflow) {
  std::string s = Sample();
  format::StoreLE<uint64_t>(At(s, 0), std::numeric_limits<uint64_t>::max() / 2);
  ExpectParseFails(s, "does not match");
  s = Sample();
  format::StoreLE<uint64_t>(At(s, 8), std::numeric_limits<uint64_t>::max());
  ExpectParseFails(s, "does not match");
  ExpectParseFails(Sample(), "does not match", std::numeric_limits<uint64_t>::max() / 2);
}

TEST(ListIndexCorruptionTest, PairCountMismatch) {
  std::string s = Sample();
  format::StoreLE<uint64_t>(At(s, 8), 5);
  ExpectParseFails(s, "does not match");
}

TEST(ListIndexCorruptionTest, UnsortedValues) {
  std::string s = Sample();
  format::StoreLE<uint64_t>(At(s, kValues + 8), 7);  // -5 -> 7, after 1 and before 3? 7 > 3: not sorted
  ExpectStructureFails(s, "values not sorted");
}

TEST(ListIndexCorruptionTest, UnsortedRows) {
  std::string s = Sample();
  // Value 1's rows are 0, 3: swap them.
  const uint64_t begin = format::LoadLE<uint64_t>(At(s, kStarts + 2 * 8));
  format::StoreLE<uint32_t>(At(s, kRows + begin * 4), 3);
  format::StoreLE<uint32_t>(At(s, kRows + (begin + 1) * 4), 0);
  ExpectStructureFails(s, "not sorted");
}

TEST(ListIndexCorruptionTest, RowOutOfRange) {
  std::string s = Sample();
  format::StoreLE<uint32_t>(At(s, kRows + 5 * 4), 5);
  ExpectStructureFails(s, "names row 5 of 5");
}

TEST(ListIndexCorruptionTest, StartsBadOffset) {
  std::string s = Sample();
  format::StoreLE<uint64_t>(At(s, kStarts + 2 * 8), 100);  // past the pairs
  ExpectStructureFails(s, "starts not ascending");
  auto v = View(s);
  ASSERT_TRUE(v.ok());
  uint64_t begin = 0, end = 0;
  EXPECT_EQ(v->Span(2, &begin, &end, "list").code(), StatusCode::kCorruption);  // checked even unverified
}

TEST(ListIndexCorruptionTest, StartsDoNotEndAtPairCount) {
  std::string s = Sample();
  format::StoreLE<uint64_t>(At(s, kStarts + 5 * 8), 5);
  ExpectStructureFails(s, "not at the pair count");
}

TEST(ListIndexCorruptionTest, FirstStartNotZero) {
  std::string s = Sample();
  format::StoreLE<uint64_t>(At(s, kStarts), 1);
  ExpectStructureFails(s, "do not start at pair 0");
}

TEST(ListIndexCorruptionTest, RowListedMoreThanItsLength) {
  std::string s = Sample();
  format::StoreLE<uint32_t>(At(s, kLengths + 3 * 4), 0);  // row 3 holds [1] but says length 0
  ExpectStructureFails(s, "more values than its length");
}

TEST(ListIndexCorruptionTest, LengthOverLimit) {
  std::string s = Sample();
  format::StoreLE<uint32_t>(At(s, kLengths + 4), (1u << 28) + 1);
  ExpectStructureFails(s, "over 2^28");
}

TEST(ListIndexCorruptionTest, NonzeroPadding) {
  std::string s = Sample();
  *At(s, kLengths + 20) = 1;  // 5 lengths = 20 bytes, padded to 24
  ExpectStructureFails(s, "nonzero padding");
}

}  // namespace
}  // namespace unirecord::index
