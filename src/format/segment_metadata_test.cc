#include "format/segment_metadata.h"

#include <gtest/gtest.h>

namespace unirecord::format {
namespace {

TEST(SegmentMetadataTest, EqualMetadataFollows) {
  const Metadata m = {{"classes", "cat\ndog"}, {"source", "x"}};
  EXPECT_EQ(MetadataDifference(m, m, ClassList::kEqual), "");
  EXPECT_EQ(MetadataDifference(m, m, ClassList::kMayGrow), "");
  EXPECT_EQ(MetadataDifference({}, {}, ClassList::kMayGrow), "");
}

TEST(SegmentMetadataTest, AClassListMayGainNamesAtItsEndOnlyWhereAllowed) {
  const Metadata earlier = {{"classes", "cat\ndog"}};
  const Metadata grown = {{"classes", "cat\ndog\nemu\nfox"}};
  EXPECT_EQ(MetadataDifference(grown, earlier, ClassList::kMayGrow), "");
  EXPECT_EQ(MetadataDifference(grown, earlier, ClassList::kEqual), "metadata 'classes' (values differ or are missing)");
  EXPECT_EQ(MetadataDifference({{"classes", "cat"}}, {{"classes", ""}}, ClassList::kMayGrow), "");
}

TEST(SegmentMetadataTest, AClassListThatIsNoExtensionIsRefused) {
  const Metadata earlier = {{"classes", "cat\ndog"}};
  const std::string refused = "metadata 'classes' (values differ or are missing; a class list may only gain names at its end)";
  EXPECT_EQ(MetadataDifference({{"classes", "cat"}}, earlier, ClassList::kMayGrow), refused);             // shorter
  EXPECT_EQ(MetadataDifference({{"classes", "dog\ncat\nemu"}}, earlier, ClassList::kMayGrow), refused);  // reordered
  EXPECT_EQ(MetadataDifference({{"classes", "cat\ndogs"}}, earlier, ClassList::kMayGrow), refused);      // a name grew
  EXPECT_EQ(MetadataDifference({}, earlier, ClassList::kMayGrow), refused);                              // missing
}

TEST(SegmentMetadataTest, OtherKeysMustStayEqualAndAreNamed) {
  const Metadata earlier = {{"a", "1"}, {"b", "2"}, {"classes", "cat"}};
  EXPECT_EQ(MetadataDifference({{"a", "1"}, {"b", "2+"}, {"c", "3"}, {"classes", "cat\ndog"}}, earlier,
                               ClassList::kMayGrow),
            "metadata 'b', 'c' (values differ or are missing)");
  // Growth is about name lists only: another key may not grow like one.
  EXPECT_EQ(MetadataDifference({{"a", "1\n2"}, {"b", "2"}, {"classes", "cat"}}, earlier, ClassList::kMayGrow),
            "metadata 'a' (values differ or are missing)");
}

}  // namespace
}  // namespace unirecord::format
