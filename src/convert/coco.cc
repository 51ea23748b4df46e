// ConvertCoco: a COCO instances file and its images into a unirecord
// dataset, one record per image with its annotations as arrays; the images
// go through the converters' shared machinery (convert/file_records.h).
#include <filesystem>
#include <memory>
#include <utility>
#include <vector>

#include "convert/coco_annotations.h"
#include "convert/file_records.h"
#include "convert/source_image.h"
#include "io/file.h"
#include "unirecord/convert.h"
#include "unirecord/schema.h"
#include "unirecord/writer.h"
#include "util/threads.h"

namespace unirecord {
namespace {

using convert_internal::CocoAnnotations;
using convert_internal::CocoImage;

Result<Schema> CocoSchema() {
  // category_id gets a list index (format 1.2, format/SPEC.md section 8.4):
  // `category_id contains 3` and any(category_id in [...]) answer from the index.
  Field category_id = Field::Array("category_id", FieldType::kInt64, {kVariableDim});
  category_id.indexed = true;
  return Schema::Make({Field::Bytes("image"), Field::String("path"), Field::Int64("image_id", /*indexed=*/true),
                       Field::Int32("width", /*indexed=*/true), Field::Int32("height", /*indexed=*/true),
                       Field::Array("boxes", FieldType::kFloat32, {kVariableDim, 4}), category_id,
                       Field::Array("iscrowd", FieldType::kUint8, {kVariableDim}),
                       Field::Array("area", FieldType::kFloat32, {kVariableDim}),
                       Field::Array("annotation_id", FieldType::kInt64, {kVariableDim}),
                       Field::String("segmentation"), Field::Int32("jpeg_layout"), Field::Int64("source_size"),
                       Field::Int64("source_xxh3")});
}

// One image's annotations as the record's arrays.
struct AnnotationArrays {
  std::vector<float> boxes, area;
  std::vector<int64_t> category_id, annotation_id;
  std::vector<uint8_t> iscrowd;
  std::string segmentation = "[";

  explicit AnnotationArrays(const CocoImage& image) {
    for (const convert_internal::CocoAnnotation& a : image.annotations) {
      boxes.insert(boxes.end(), a.box, a.box + 4);
      area.push_back(a.area);
      category_id.push_back(a.category_id);
      annotation_id.push_back(a.id);
      iscrowd.push_back(a.iscrowd);
      segmentation += (segmentation.size() > 1 ? "," : "") + a.segmentation;
    }
    segmentation += "]";
  }
};

Status FillCocoRecord(const CocoImage& image, RecordBuilder& record) {
  const AnnotationArrays a(image);
  const int64_t n = static_cast<int64_t>(image.annotations.size());
  UREC_RETURN_IF_ERROR(record.SetString("path", image.file_name));
  UREC_RETURN_IF_ERROR(record.SetInt64("image_id", image.id));
  UREC_RETURN_IF_ERROR(record.SetValues("boxes", FieldType::kFloat32, a.boxes.data(), {n, 4}));
  UREC_RETURN_IF_ERROR(record.SetValues("category_id", FieldType::kInt64, a.category_id.data(), {n}));
  UREC_RETURN_IF_ERROR(record.SetValues("iscrowd", FieldType::kUint8, a.iscrowd.data(), {n}));
  UREC_RETURN_IF_ERROR(record.SetValues("area", FieldType::kFloat32, a.area.data(), {n}));
  UREC_RETURN_IF_ERROR(record.SetValues("annotation_id", FieldType::kInt64, a.annotation_id.data(), {n}));
  return record.SetString("segmentation", a.segmentation);
}

}  // namespace

namespace convert_internal {

Result<PreparedConversion> PrepareCoco(const std::string& annotations, const std::string& images_dir,
                                       const std::string& out, const ConvertOptions& options) {
  UREC_RETURN_IF_ERROR(ResolveThreadCount(options.threads, "threads").status());
  if (options.num_shards > 0 && options.target_shard_bytes > 0) {
    return Status::InvalidArgument("give a shard count or a shard size, not both");
  }
  std::string text;
  UREC_RETURN_IF_ERROR(ReadConverterInput("annotations", annotations, &text));
  // What the hooks read, kept with the conversion.
  struct Input {
    CocoAnnotations coco;
    uint64_t annotations_written = 0;  // by the part being written
  };
  auto input = std::make_shared<Input>();
  UREC_ASSIGN_OR_RETURN(input->coco, ParseCocoAnnotations(text, annotations));
  CocoAnnotations& coco = input->coco;
  text = std::string();
  if (!io::IsDirectory(images_dir)) {
    UREC_RETURN_IF_ERROR(io::CheckExists(images_dir));
    return Status::InvalidArgument(images_dir + ": the images folder is not a folder");
  }
  UREC_RETURN_IF_ERROR(CheckOutputOutsideSource(images_dir, out));
  if (coco.images.empty()) return Status::InvalidArgument(annotations + ": no usable images");
  if (options.num_shards > coco.images.size()) {
    return Status::InvalidArgument("num_shards " + std::to_string(options.num_shards) + " is more than the " +
                                   std::to_string(coco.images.size()) + " images: some shards would be empty");
  }
  PreparedConversion c;
  c.name = options.name.empty() ? std::filesystem::path(annotations).stem().string() : options.name;
  c.root = images_dir;
  for (const CocoImage& image : coco.images) c.files.push_back({image.file_name, -1, true});
  if (options.num_shards > 0) c.shard_starts = ShardStarts(c.files, c.files.size(), options.num_shards);
  UREC_ASSIGN_OR_RETURN(c.schema, CocoSchema());
  c.metadata.emplace_back("categories", coco.categories_json);
  Input* in = input.get();
  c.hooks.fill = [in](size_t i, RecordBuilder& record) {
    in->annotations_written += in->coco.images[i].annotations.size();
    return FillCocoRecord(in->coco.images[i], record);
  };
  c.hooks.reject = [in](size_t i, const SourceImageInfo& info) -> std::string {
    const CocoImage& image = in->coco.images[i];
    if ((image.width < 0 || image.width == info.width()) && (image.height < 0 || image.height == info.height())) {
      return "";
    }
    return "the annotations say " + std::to_string(image.width) + "x" + std::to_string(image.height) +
           ", the file is " + std::to_string(info.width()) + "x" + std::to_string(info.height());
  };
  c.finish_part = [in](ConvertReport* part) {
    part->annotations = std::exchange(in->annotations_written, 0);
  };
  c.head.name = c.name;
  c.head.rejected = coco.images_rejected;
  c.head.not_written = std::move(coco.rejected);
  c.head.annotations_rejected = coco.annotations_rejected;
  c.input = std::move(input);
  return c;
}

}  // namespace convert_internal

Result<ConvertReport> ConvertCoco(const std::string& annotations, const std::string& images_dir,
                                  const std::string& out, const ConvertOptions& options) {
  UREC_ASSIGN_OR_RETURN(const convert_internal::PreparedConversion c,
                        convert_internal::PrepareCoco(annotations, images_dir, out, options));
  return convert_internal::ConvertPrepared(c, out, options);
}

}  // namespace unirecord
