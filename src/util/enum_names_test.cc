#include "util/enum_names.h"

#include <gtest/gtest.h>

namespace unirecord {
namespace {

enum class Colour { kRed, kGreen, kBlue, kUnnamed };

constexpr EnumName<Colour> kColourNames[] = {
    {Colour::kRed, "red"}, {Colour::kGreen, "green"}, {Colour::kBlue, "blue"}};

TEST(EnumNames, EveryValueParsesFromItsName) {
  for (const EnumName<Colour>& entry : kColourNames) {
    EXPECT_STREQ(EnumNameOf(kColourNames, entry.value), entry.name);
    Result<Colour> parsed = ParseEnumName(kColourNames, entry.name, "colour");
    ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
    EXPECT_EQ(*parsed, entry.value);
  }
}

TEST(EnumNames, AValueWithoutANameIsUnknown) { EXPECT_STREQ(EnumNameOf(kColourNames, Colour::kUnnamed), "unknown"); }

TEST(EnumNames, AnotherNameIsRefusedListingTheNames) {
  Result<Colour> parsed = ParseEnumName(kColourNames, "Red", "colour");  // names are case-sensitive
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(parsed.status().message(), "unknown colour 'Red' (expected 'red', 'green' or 'blue')");
  constexpr EnumName<Colour> kTwo[] = {{Colour::kRed, "red"}, {Colour::kBlue, "blue"}};
  EXPECT_EQ(ParseEnumName(kTwo, "", "colour").status().message(), "unknown colour '' (expected 'red' or 'blue')");
}

}  // namespace
}  // namespace unirecord
