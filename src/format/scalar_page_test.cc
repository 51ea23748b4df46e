#include "format/scalar_page.h"

#include <gtest/gtest.h>

#include <cstring>

namespace unirecord::format {
namespace {

TEST(ScalarPageTest, BuildAndParse) {
  auto schema = Schema::Make({Field::Int32("i"), Field::String("s"), Field::Array("a", FieldType::kFloat64, {2})});
  ASSERT_TRUE(schema.ok());
  std::vector<int> columns = {0, 1, 2};
  ScalarPageBuilder builder(*schema, columns);
  const char* strings[] = {"", "hello", "x"};
  for (int32_t r = 0; r < 3; ++r) {
    double a[2] = {r * 1.5, -r * 1.0};
    builder.AddRow({std::string_view(reinterpret_cast<const char*>(&r), 4), strings[r],
                    std::string_view(reinterpret_cast<const char*>(a), sizeof(a))});
  }
  const uint64_t expected_size = builder.raw_size();
  std::string raw = builder.Finish();
  EXPECT_EQ(raw.size(), expected_size);
  EXPECT_EQ(builder.rows(), 0u);

  auto view = ScalarPageView::Parse(reinterpret_cast<const uint8_t*>(raw.data()), raw.size(), *schema, columns, 3, "t");
  ASSERT_TRUE(view.ok()) << view.status().ToString();
  for (uint32_t r = 0; r < 3; ++r) {
    int32_t i;
    std::memcpy(&i, view->Value(0, r).data(), 4);
    EXPECT_EQ(i, static_cast<int32_t>(r));
    EXPECT_EQ(view->Value(1, r), strings[r]);
    double a[2];
    std::memcpy(a, view->Value(2, r).data(), sizeof(a));
    EXPECT_EQ(a[0], r * 1.5);
  }
  EXPECT_FALSE(ScalarPageView::Parse(reinterpret_cast<const uint8_t*>(raw.data()), raw.size(), *schema, columns, 4, "t").ok());
  EXPECT_FALSE(ScalarPageView::Parse(reinterpret_cast<const uint8_t*>(raw.data()), raw.size() - 9, *schema, columns, 3, "t").ok());
}

// AddRows of numeric columns builds the page AddRow builds row by row, and
// raw_size_after(n) is the size that page has after n more rows.
TEST(ScalarPageTest, RowsAddedAtOnceBuildThePageOfRowByRow) {
  auto schema = Schema::Make({Field::Array("u8", FieldType::kUint8, {3}), Field::Float64("d"),
                              Field::Array("h", FieldType::kInt16, {1})});
  ASSERT_TRUE(schema.ok());
  const std::vector<int> columns = {0, 1, 2};
  constexpr uint32_t kRows = 11;
  std::string u8, d, h;
  for (uint32_t r = 0; r < kRows; ++r) {
    for (int j = 0; j < 3; ++j) u8.push_back(static_cast<char>(r * 3 + j));
    const double value = r / 7.0;
    d.append(reinterpret_cast<const char*>(&value), 8);
    const int16_t small = static_cast<int16_t>(-static_cast<int>(r));
    h.append(reinterpret_cast<const char*>(&small), 2);
  }
  ScalarPageBuilder by_row(*schema, columns), at_once(*schema, columns);
  for (uint32_t r = 0; r < kRows; ++r) {
    EXPECT_EQ(at_once.raw_size_after(r), by_row.raw_size()) << r;
    by_row.AddRow({std::string_view(u8).substr(3 * r, 3), std::string_view(d).substr(8 * r, 8),
                   std::string_view(h).substr(2 * r, 2)});
  }
  EXPECT_EQ(at_once.raw_size_after(kRows), by_row.raw_size());
  at_once.AddRows({u8.substr(0, 12), d.substr(0, 32), h.substr(0, 8)}, 4);  // in two runs
  at_once.AddRows({u8.substr(12), d.substr(32), h.substr(8)}, kRows - 4);
  EXPECT_EQ(at_once.rows(), kRows);
  EXPECT_EQ(at_once.raw_size(), by_row.raw_size());
  EXPECT_TRUE(at_once.Finish() == by_row.Finish());
}

}  // namespace
}  // namespace unirecord::format
