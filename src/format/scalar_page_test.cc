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

}  // namespace
}  // namespace unirecord::format
