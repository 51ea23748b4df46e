#include "convert/coco_annotations.h"

#include <map>
#include <string>

#include <gtest/gtest.h>

namespace unirecord::convert_internal {
namespace {

// The reason of the rejects row for `where`, or "" when there is none.
std::string ReasonFor(const CocoAnnotations& coco, const std::string& where) {
  for (const ConvertRejection& row : coco.rejected) {
    if (row.path == where) return row.reason;
  }
  return "";
}

TEST(CocoAnnotations, ImagesAndAnnotationsComeByIdWithDefaults) {
  const char* json = R"({
    "images": [{"id": 9, "file_name": "b/nine.jpg"}, {"id": 2, "file_name": "two.jpg", "width": 64, "height": 48}],
    "annotations": [
      {"id": 30, "image_id": 9, "category_id": 5, "bbox": [1, 2, 3, 4], "segmentation": [[0, 0, 1, 1]]},
      {"id": 10, "image_id": 9, "category_id": 1, "bbox": [0.5, 0, 10, 20], "area": 7.5, "iscrowd": 1}],
    "categories": [{"id": 5, "name": "cat", "supercategory": "animal"}, {"id": 1, "name": "NaN \"Infinity\""}]})";
  Result<CocoAnnotations> coco = ParseCocoAnnotations(json, "a.json");
  ASSERT_TRUE(coco.ok()) << coco.status().ToString();
  EXPECT_TRUE(coco->rejected.empty());
  ASSERT_EQ(coco->images.size(), 2u);
  EXPECT_EQ(coco->images[0].id, 2);
  EXPECT_EQ(coco->images[0].width, 64);
  EXPECT_TRUE(coco->images[0].annotations.empty());
  const CocoImage& nine = coco->images[1];
  EXPECT_EQ(nine.file_name, "b/nine.jpg");
  EXPECT_EQ(nine.width, -1);
  ASSERT_EQ(nine.annotations.size(), 2u);
  EXPECT_EQ(nine.annotations[0].id, 10);
  EXPECT_EQ(nine.annotations[0].area, 7.5f);
  EXPECT_EQ(nine.annotations[0].iscrowd, 1);
  EXPECT_EQ(nine.annotations[0].box[0], 0.5f);
  EXPECT_EQ(nine.annotations[0].segmentation, "null");
  EXPECT_EQ(nine.annotations[1].area, 12.0f);  // width * height
  EXPECT_EQ(nine.annotations[1].segmentation, "[[0,0,1,1]]");
  EXPECT_EQ(coco->annotations, 2u);
  // Words inside strings are left alone by the NaN reading.
  EXPECT_EQ(coco->categories_json,
            R"([{"id":1,"name":"NaN \"Infinity\""},{"id":5,"name":"cat","supercategory":"animal"}])");
}

TEST(CocoAnnotations, EveryUnusableEntryIsARowWithItsReason) {
  const char* json = R"({
    "images": [{"id": 1, "file_name": "one.jpg"}, {"id": 1, "file_name": "again.jpg"}, {"file_name": "noid.jpg"},
               {"id": 4}, {"id": 5, "file_name": "../up.jpg"}, {"id": 6, "file_name": "/abs.jpg"},
               {"id": 7, "file_name": "w.jpg", "width": "wide"}],
    "annotations": [
      {"id": 1, "image_id": 1, "category_id": 1, "bbox": [NaN, 0, 1, 1]},
      {"id": 2, "image_id": 1, "category_id": 1, "bbox": [0, 0, -1, 1]},
      {"id": 3, "image_id": 99, "category_id": 1, "bbox": [0, 0, 1, 1]},
      {"id": 4, "image_id": 1, "category_id": 42, "bbox": [0, 0, 1, 1]},
      {"id": 5, "image_id": 1, "category_id": 1},
      {"id": 6, "image_id": 1, "category_id": 1, "bbox": [0, 0, 1, 1], "iscrowd": 2},
      {"id": 7, "image_id": 1, "category_id": 1, "bbox": [0, 0, 1, Infinity]},
      {"id": 8, "image_id": 1, "category_id": 1, "bbox": [0, 0, 1, 1]},
      {"id": 8, "image_id": 1, "category_id": 1, "bbox": [0, 0, 2, 2]},
      {"image_id": 1, "category_id": 1, "bbox": [0, 0, 1, 1]}],
    "categories": [{"id": 1, "name": "a"}, {"id": 1, "name": "b"}, {"name": "c"}]})";
  Result<CocoAnnotations> coco = ParseCocoAnnotations(json, "a.json");
  ASSERT_TRUE(coco.ok()) << coco.status().ToString();
  EXPECT_EQ(ReasonFor(*coco, "again.jpg"), "duplicate image id 1 (first: one.jpg)");
  EXPECT_EQ(ReasonFor(*coco, "noid.jpg"), "missing key 'id'");
  EXPECT_EQ(ReasonFor(*coco, "images[3]"), "missing key 'file_name'");
  EXPECT_NE(ReasonFor(*coco, "../up.jpg").find("leaves the images folder"), std::string::npos);
  EXPECT_NE(ReasonFor(*coco, "/abs.jpg").find("is absolute"), std::string::npos);
  EXPECT_EQ(ReasonFor(*coco, "w.jpg"), "'width' must be an integer, not \"wide\"");
  EXPECT_NE(ReasonFor(*coco, "annotation 1").find("'bbox' holds null"), std::string::npos);
  EXPECT_NE(ReasonFor(*coco, "annotation 2").find("negative width or height"), std::string::npos);
  EXPECT_EQ(ReasonFor(*coco, "annotation 3"), "image_id 99 is not among the usable images");
  EXPECT_EQ(ReasonFor(*coco, "annotation 4"), "category_id 42 is not among the categories");
  EXPECT_EQ(ReasonFor(*coco, "annotation 5"), "missing key 'bbox'");
  EXPECT_EQ(ReasonFor(*coco, "annotation 6"), "'iscrowd' must be 0 or 1, not 2");
  EXPECT_NE(ReasonFor(*coco, "annotation 7").find("'bbox' holds null"), std::string::npos);
  EXPECT_EQ(ReasonFor(*coco, "annotation 8"), "duplicate annotation id 8");
  EXPECT_EQ(ReasonFor(*coco, "annotations[9]"), "missing key 'id'");
  EXPECT_EQ(ReasonFor(*coco, "categories[1]"), "duplicate category id 1");
  EXPECT_EQ(ReasonFor(*coco, "categories[2]"), "missing key 'id'");
  ASSERT_EQ(coco->images.size(), 1u);
  ASSERT_EQ(coco->images[0].annotations.size(), 1u);  // the first annotation 8
  EXPECT_EQ(coco->images[0].annotations[0].box[2], 1.0f);
  EXPECT_EQ(coco->images_rejected, 6u);
  EXPECT_EQ(coco->annotations_rejected, 9u);
  EXPECT_EQ(coco->rejected.size(), 6u + 9u + 2u);
}

TEST(CocoAnnotations, TextThatIsNotACocoFileIsCorruptionNamingIt) {
  for (const char* text : {"", "{\"images\": [", "[1, 2]", "{\"annotations\": []}", "{\"images\": {}}",
                           "{\"images\": [], \"annotations\": 3}"}) {
    Result<CocoAnnotations> coco = ParseCocoAnnotations(text, "dir/a.json");
    ASSERT_FALSE(coco.ok()) << text;
    EXPECT_EQ(coco.status().code(), StatusCode::kCorruption) << text;
    EXPECT_EQ(coco.status().message().rfind("dir/a.json: ", 0), 0u) << coco.status().ToString();
  }
  EXPECT_NE(ParseCocoAnnotations("{\"images\": [}", "a.json").status().message().find("column 13"),
            std::string::npos);
}

// Before: nothing limited the nesting, and 10^5 levels inside any of these
// keys crashed the converter while the value was dumped (issue 36).
TEST(CocoAnnotations, DeepNestingAnywhereIsCorruptionNamingTheFileAndThePlace) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  const std::string image = R"({"id": 1, "file_name": "a.jpg"})";
  const std::string annotation = R"({"id": 1, "image_id": 1, "category_id": 1, "bbox": [0, 0, 1, 1]})";
  const std::map<std::string, std::string> docs = {
      {"images[1]", R"({"images": [)" + image + ", " + deep + "]}"},
      {"annotations[0]", R"({"images": [)" + image + R"(], "annotations": [)" + deep + "]}"},
      {"annotations[0].bbox", R"({"images": [)" + image + R"(], "annotations": [{"id": 1, "bbox": )" + deep + "}]}"},
      {"images[0].file_name", R"({"images": [{"id": 1, "file_name": )" + deep + "}]}"},
      {"annotations[0].segmentation",
       R"({"images": [)" + image + R"(], "annotations": [{"id": 1, "segmentation": )" + deep + "}]}"},
  };
  for (const auto& [where, text] : docs) {
    Result<CocoAnnotations> coco = ParseCocoAnnotations(text, "dir/a.json");
    ASSERT_FALSE(coco.ok()) << where;
    EXPECT_EQ(coco.status().code(), StatusCode::kCorruption);
    EXPECT_EQ(coco.status().message().rfind("dir/a.json: arrays and objects nest deeper than 32 levels (at " + where, 0),
              0u)
        << coco.status().message();
  }
  // A segmentation as deep as COCO's own (polygons, RLE) is kept as it is.
  Result<CocoAnnotations> ok = ParseCocoAnnotations(
      R"({"images": [)" + image + R"(], "annotations": [{"id": 1, "image_id": 1, "category_id": 1, "bbox": [0, 0, 1, 1],)"
      R"( "segmentation": {"counts": [1, 2], "size": [4, 4]}}], "categories": [{"id": 1, "name": "c"}]})",
      "a.json");
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ok->images[0].annotations[0].segmentation, R"({"counts":[1,2],"size":[4,4]})");
  (void)annotation;
}

// Before: the last of two equal keys won silently.
TEST(CocoAnnotations, AKeyTwiceIsCorruptionNamingTheKeyAndThePlace) {
  Result<CocoAnnotations> coco = ParseCocoAnnotations(
      R"({"images": [{"id": 1, "file_name": "a.jpg"}], "annotations": [{"id": 1, "image_id": 1, "category_id": 1,)"
      R"( "bbox": [0, 0, 1, 1], "bbox": [0, 0, 9, 9]}], "categories": [{"id": 1, "name": "c"}]})",
      "dir/a.json");
  ASSERT_FALSE(coco.ok());
  EXPECT_EQ(coco.status().code(), StatusCode::kCorruption);
  EXPECT_EQ(coco.status().message(), "dir/a.json: key 'bbox' appears twice in one object (at annotations[0])");
}

// Before: a box or area finite as a double but past float32 was stored as
// inf with no rejects row; the JSON Lines converter rejected the same value
// (issue 36). Now both say so, through one check (convert/json_policy.h).
TEST(CocoAnnotations, NumbersPastTheStoredTypeAreRejectsRowsNamingFieldAndValue) {
  const char* json = R"({
    "images": [{"id": 1, "file_name": "a.jpg"}, {"id": 9223372036854775808, "file_name": "big.jpg"},
               {"id": 2, "file_name": "b.jpg", "width": 1.5}],
    "annotations": [
      {"id": 1, "image_id": 1, "category_id": 1, "bbox": [0, 0, 1e39, 1]},
      {"id": 2, "image_id": 1, "category_id": 1, "bbox": [0, 0, 1, 1], "area": 1e39},
      {"id": 3, "image_id": 1, "category_id": 1, "bbox": [0, 0, 3e38, 3e38]},
      {"id": 4, "image_id": 1, "category_id": 1, "bbox": [-1e39, 0, 1, 1]},
      {"id": 5, "image_id": 1, "category_id": 1, "bbox": [0, 0, 3.4e38, 1]},
      {"id": 6, "image_id": 1, "category_id": 18446744073709551615, "bbox": [0, 0, 1, 1]},
      {"id": 7, "image_id": -9223372036854775809, "category_id": 1, "bbox": [0, 0, 1, 1]}],
    "categories": [{"id": 1, "name": "c"}]})";
  Result<CocoAnnotations> coco = ParseCocoAnnotations(json, "a.json");
  ASSERT_TRUE(coco.ok()) << coco.status().ToString();
  EXPECT_EQ(ReasonFor(*coco, "annotation 1"), "'bbox': 1e+39 is out of float32's range (in [0,0,1e+39,1])");
  EXPECT_EQ(ReasonFor(*coco, "annotation 2"), "'area': 1e+39 is out of float32's range");
  EXPECT_EQ(ReasonFor(*coco, "annotation 3"),
            "'area' (not given: the box's width * height): 9.000000032986535e+76 is out of float32's range");
  EXPECT_EQ(ReasonFor(*coco, "annotation 4"), "'bbox': -1e+39 is out of float32's range (in [-1e+39,0,1,1])");
  EXPECT_EQ(ReasonFor(*coco, "annotation 6"), "'category_id': 18446744073709551615 is out of int64's range");
  EXPECT_EQ(ReasonFor(*coco, "big.jpg"), "'id': 9223372036854775808 is out of int64's range");
  // Past 64 bits, as written (issue 47: "must be an integer, not -9.223372036854776e+18").
  EXPECT_EQ(ReasonFor(*coco, "annotation 7"), "'image_id': -9223372036854775809 is out of int64's range");
  EXPECT_EQ(ReasonFor(*coco, "b.jpg"), "'width' must be an integer, not 1.5");
  ASSERT_EQ(coco->images.size(), 1u);
  ASSERT_EQ(coco->images[0].annotations.size(), 1u);
  EXPECT_EQ(coco->images[0].annotations[0].box[2], 3.4e38f);
  EXPECT_EQ(coco->images[0].annotations[0].area, 3.4e38f);
}

// The path policy's text half (convert/source_path.h), as for manifests.
TEST(CocoAnnotations, FileNamesThatLeaveTheFolderOrHoldControlCharactersAreRejected) {
  const std::string json = R"({"images": [{"id": 1, "file_name": "imgs/../../secret.jpg"},)"
                           R"( {"id": 2, "file_name": "a\u0000.jpg"}, {"id": 3, "file_name": "a\nb.jpg"},)"
                           R"( {"id": 4, "file_name": "imgs/../ok.jpg"}]})";
  Result<CocoAnnotations> coco = ParseCocoAnnotations(json, "a.json");
  ASSERT_TRUE(coco.ok()) << coco.status().ToString();
  EXPECT_EQ(ReasonFor(*coco, "imgs/../../secret.jpg"),
            "'file_name' 'imgs/../../secret.jpg' leaves the images folder ('..')");
  EXPECT_EQ(ReasonFor(*coco, "images[1]"),
            "'file_name' 'a\\x00.jpg' holds the control character 0x00 at byte 1 (a NUL: the file read would not be "
            "the one named)");
  EXPECT_EQ(ReasonFor(*coco, "images[2]"), "'file_name' 'a\\x0Ab.jpg' holds the control character 0x0A at byte 1");
  ASSERT_EQ(coco->images.size(), 1u);
  EXPECT_EQ(coco->images[0].file_name, "imgs/../ok.jpg");
}

}  // namespace
}  // namespace unirecord::convert_internal
