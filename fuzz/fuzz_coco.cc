// Fuzz target for the COCO annotations reader (urec convert coco): the input
// is the text of an instances file.
//
// ParseCocoAnnotations must return Corruption (naming the file) or a parse
// whose images are in ascending id order with their annotations in
// ascending id order, each box and area finite as float32 and the box of
// non-negative size, every file_name a path the converters' path policy
// accepts (convert/source_path.h), every segmentation JSON that the
// converters' JSON policy (convert/json_policy.h: nesting, duplicate keys)
// parses again, and every left-out entry counted; it must never crash, hang
// or trip a sanitizer.
//
// Seeds: fuzz/corpus/coco/ (small instances files; one per case of issue
// 36: deep nesting, a key twice, numbers past float32, paths that leave the
// folder or hold control characters, a byte-order mark).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "convert/coco_annotations.h"
#include "convert/json_policy.h"
#include "convert/source_path.h"
#include "fuzz_dir.h"

using namespace unirecord;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  Result<convert_internal::CocoAnnotations> coco = convert_internal::ParseCocoAnnotations(text, "fuzz.json");
  if (!coco.ok()) {
    fuzz::Require(coco.status().code() == StatusCode::kCorruption || coco.status().code() == StatusCode::kInvalidArgument,
                  "an error that is neither Corruption nor InvalidArgument");
    fuzz::Require(coco.status().message().rfind("fuzz.json: ", 0) == 0, "an error that does not name the file");
    return 0;
  }
  uint64_t annotations = 0;
  for (size_t i = 0; i < coco->images.size(); ++i) {
    const convert_internal::CocoImage& image = coco->images[i];
    fuzz::Require(i == 0 || coco->images[i - 1].id < image.id, "images not in ascending id order");
    fuzz::Require(!image.file_name.empty() && image.file_name[0] != '/', "a file_name outside the images folder");
    fuzz::Require(convert_internal::CheckSourcePathText(image.file_name, "f", "d").empty(),
                  "a file_name the path policy refuses");
    for (size_t k = 0; k < image.annotations.size(); ++k) {
      const convert_internal::CocoAnnotation& a = image.annotations[k];
      fuzz::Require(k == 0 || image.annotations[k - 1].id < a.id, "annotations not in ascending id order");
      fuzz::Require(std::all_of(a.box, a.box + 4, [](float v) { return std::isfinite(v); }), "a non-finite box");
      fuzz::Require(a.box[2] >= 0 && a.box[3] >= 0, "a box of negative size");
      fuzz::Require(std::isfinite(a.area), "a non-finite area");
      convert_internal::Json segmentation;
      fuzz::Require(convert_internal::ParseConverterJson(a.segmentation, &segmentation).empty(),
                    "a segmentation the JSON policy refuses");
      fuzz::Require(a.iscrowd <= 1, "iscrowd other than 0 or 1");
    }
    annotations += image.annotations.size();
  }
  fuzz::Require(annotations == coco->annotations, "the annotation count differs from the images' annotations");
  fuzz::Require(coco->rejected.size() >= coco->images_rejected + coco->annotations_rejected,
                "a left-out entry without its row");
  return 0;
}
