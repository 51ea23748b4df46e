// Internal to the convert layer: a COCO instances file (annotations JSON)
// read into one entry per image, with a rejects-report row for every image,
// annotation or category that cannot be used and why (ConvertCoco, convert.h).
#ifndef UNIRECORD_SRC_CONVERT_COCO_ANNOTATIONS_H_
#define UNIRECORD_SRC_CONVERT_COCO_ANNOTATIONS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "unirecord/convert.h"
#include "unirecord/status.h"

namespace unirecord::convert_internal {

struct CocoAnnotation {
  int64_t id = 0;
  int64_t category_id = 0;
  float box[4] = {};         // COCO's x, y, width, height, in pixels
  float area = 0;            // as given; width * height when not given
  uint8_t iscrowd = 0;
  std::string segmentation;  // its JSON text; "null" when not given
};

struct CocoImage {
  int64_t id = 0;
  std::string file_name;      // relative to the images folder, '/'-separated
  int64_t width = -1;         // as the JSON says; -1 when not given
  int64_t height = -1;
  std::vector<CocoAnnotation> annotations;  // by annotation id
};

struct CocoAnnotations {
  std::vector<CocoImage> images;  // by image id
  // The categories, by id, as a JSON array of {"id", "name"[,
  // "supercategory"]} objects: the dataset's metadata "categories".
  std::string categories_json;
  uint64_t annotations = 0;          // usable annotations (of usable images)
  uint64_t annotations_rejected = 0;
  uint64_t images_rejected = 0;
  // What was left out: "images[3]" / "annotation 17" / "categories[2]" and why.
  std::vector<ConvertRejection> rejected;
};

// Parses a COCO instances file: "images" (each with an integer "id" and a
// relative "file_name", optionally "width" and "height"), "annotations"
// (each with integer "id", "image_id", "category_id" and a "bbox" of 4
// numbers, optionally "area", "iscrowd" 0/1 and "segmentation") and
// "categories" (integer "id", string "name"). A bare NaN or Infinity (which
// Python's json module writes) is read as null, so that its box is reported,
// not the whole file. Rows in `rejected`: a missing or mistyped key, a
// duplicate image, annotation or category id, a file_name that leaves the
// images folder, an annotation of an image or category that is not listed,
// a box with a non-finite or negative size. Corruption naming `path` and the
// place when the text is not JSON or not an object with an "images" array.
Result<CocoAnnotations> ParseCocoAnnotations(std::string_view json, const std::string& path);

}  // namespace unirecord::convert_internal

#endif  // UNIRECORD_SRC_CONVERT_COCO_ANNOTATIONS_H_
