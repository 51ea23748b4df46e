// The per-sample path shared by the native Loader, unirecord.ImageDataset,
// `urec decode` and `urec show`: a record's image (JPEG or PNG, told by its
// magic bytes), a crop window planned on its header, the window decoded
// (crop-first for JPEG), resized (and flipped) by the resizer shared by both
// formats, whose last pass writes the caller's layout (HWC or CHW) into the
// caller's buffer.
//
//   SampleDecoderOptions options;        // transform, image_size, crop, decode
//   UREC_RETURN_IF_ERROR(options.Check());
//   UREC_ASSIGN_OR_RETURN(SampleSource source, SampleSource::Create(dataset, SampleFields{}));
//   UREC_ASSIGN_OR_RETURN(auto decoder, SampleDecoder::Create(options));  // one per thread
//   int64_t label;
//   UREC_RETURN_IF_ERROR(decoder->DecodeRecord(source, id, seed, epoch, out, out_size, &label));
//
// A sample's pixels depend only on the options and (seed, epoch, record id).
#ifndef UNIRECORD_SAMPLE_DECODER_H_
#define UNIRECORD_SAMPLE_DECODER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "unirecord/dataset.h"
#include "unirecord/image.h"
#include "unirecord/status.h"

namespace unirecord {

enum class SampleTransform : uint8_t {
  // training: torchvision's RandomResizedCrop(image_size, scale, ratio) +
  // RandomHorizontalFlip(flip_probability)
  kRandomResizedCrop,
  // evaluation: Resize(resize_shorter) + CenterCrop(image_size), equal to
  // torchvision's byte for byte (ImageDecoder::DecodeCenterCrop; with
  // DecodeOptions::dct_scaling, images at least twice the crop are decoded at
  // a DCT scale and are close to, not equal to, torchvision's).
  kCenterCrop,
};

// "random_resized_crop" | "center_crop" (the names of unirecord's Python
// transforms); parse also takes urec's "train" and "val" for them and returns
// InvalidArgument for another name.
const char* SampleTransformName(SampleTransform transform);
Result<SampleTransform> ParseSampleTransform(std::string_view name);

// Every name of a transform, in one table: "none" (no transform: the whole
// image, as `urec show` draws it by default), then each transform's name
// (the first one of a transform is the name SampleTransformName gives) and
// urec's short name. `urec show --transform` parses with it; a command or
// option that needs a transform refuses "none" (ParseSampleTransform).
struct TransformName {
  const char* name;
  bool none;                  // "none": no transform
  SampleTransform transform;  // unless `none`
};
inline constexpr TransformName kTransformNames[] = {
    {"none", true, SampleTransform::kRandomResizedCrop},
    {"random_resized_crop", false, SampleTransform::kRandomResizedCrop},
    {"center_crop", false, SampleTransform::kCenterCrop},
    {"train", false, SampleTransform::kRandomResizedCrop},
    {"val", false, SampleTransform::kCenterCrop},
};

// A name of kTransformNames (its entry), or InvalidArgument listing them.
inline Result<TransformName> ParseTransformName(std::string_view name) {
  std::string names;
  for (const TransformName& entry : kTransformNames) {
    if (name == entry.name) return entry;
    names += std::string(names.empty() ? "" : ", ") + entry.name;
  }
  return Status::InvalidArgument("unknown transform '" + std::string(name) + "' (expected one of " + names + ")");
}

struct SampleDecoderOptions {
  SampleTransform transform = SampleTransform::kRandomResizedCrop;
  int image_size = 224;  // output height and width
  // kCenterCrop: the shorter side after the resize, at least image_size.
  // 0: no resize, CenterCrop(image_size) alone (an image smaller than the
  // crop is scaled up to it, where torchvision would pad).
  int resize_shorter = 256;
  RandomResizedCropParams crop;  // kRandomResizedCrop: scale, ratio, flip probability
  // strict, apply_exif, dct_scaling, limits, and the layout of the output
  // (kNHWC: packed RGB rows; kNCHW: three planes, torchvision's PILToTensor).
  DecodeOptions decode;

  // The one check of these options: InvalidArgument naming the option at
  // fault (an unknown transform or layout, an output over decode.limits, a
  // resize_shorter below image_size, crop scale outside 0 < min <= max <= 1,
  // ratio outside 0 < min <= max, a flip probability outside [0, 1]).
  Status Check() const;
  // Bytes of one output image: image_size * image_size * 3.
  size_t output_bytes() const { return size_t(image_size) * size_t(image_size) * 3; }
};

// How a box's four values are given: (x, y, width, height), COCO's, or
// (x0, y0, x1, y1).
enum class BoxFormat : uint8_t { kXYWH, kXYXY };

// "xywh" | "xyxy"; parse returns InvalidArgument for another name.
const char* BoxFormatName(BoxFormat format);
Result<BoxFormat> ParseBoxFormat(std::string_view name);

// Maps `count` boxes (4 floats each, in `format`, in the pixel frame the
// window was planned in) onto the out_width x out_height output that
// `window` was resized to: shift by the window's origin, scale by
// out / window size, mirror when window.flip, clip to the output. The boxes
// left with a positive width and height are written to `out` in order (in
// `format`; `out` may be `in`), keep[i] says which input boxes those are
// (1 kept, 0 dropped); returns how many were kept. The one box mapping of
// the Loader and `urec show` (docs/loader.md, "Boxes").
size_t MapBoxes(const CropWindow& window, int out_width, int out_height, BoxFormat format, const float* in,
                size_t count, float* out, uint8_t* keep);

// The fields a sample is read from.
struct SampleFields {
  std::string image = "image";  // a bytes field holding JPEGs or PNGs; "" for no image
  std::string label = "label";  // an int32/int64 scalar field; "" for no labels
  std::string path = "path";    // a string field named in errors; ignored when absent or not a string
  // The image field's type: kBytes, or kVideo for a clip loader's video field.
  FieldType image_type = FieldType::kBytes;
};

// A dataset's samples: the fields resolved and type-checked once. Immutable
// and thread-safe; keeps the dataset open.
class SampleSource {
 public:
  // KeyNotFound for a missing image or label field; InvalidArgument when the
  // image field is not bytes (an empty image name: no image; Read leaves
  // *image empty) or the label not an int32/int64 scalar.
  // `name` (e.g. the dataset's path) prefixes the records' descriptions.
  static Result<SampleSource> Create(std::shared_ptr<const Dataset> dataset, const SampleFields& fields,
                                     std::string name = "");

  const Dataset& dataset() const { return *dataset_; }
  bool has_labels() const { return label_field_ != kNone; }
  bool has_image() const { return image_field_ != kNone; }

  // Record `id`'s image (a view into the mapped shard unless compressed)
  // and, with a label field, its label (int32 widened) in *label.
  Status Read(uint64_t id, Blob* image, int64_t* label) const;

  // "record 12 (cat/img_000.jpg)": the id and, with a path field, the
  // record's path; "dataset NAME: record 12 (...)" when named. Reads the
  // record again: meant for errors.
  std::string Describe(uint64_t id) const;

 private:
  static constexpr size_t kNone = static_cast<size_t>(-1);
  SampleSource() = default;
  std::shared_ptr<const Dataset> dataset_;
  std::string name_;
  size_t image_field_ = kNone;
  size_t label_field_ = kNone;
  bool label_indexed_ = false;
  // A label that is not indexed is read alone from its scalar page (not
  // with the record's other fields, the image among them).
  std::shared_ptr<const dataset_internal::FieldReads> label_reads_;
  size_t path_field_ = kNone;
};

// Seconds spent, added to by SampleDecoder::DecodeRecord.
struct SampleTimes {
  double read_s = 0;    // fetching the image and the label
  double decode_s = 0;  // probe, plan, decode, resize into the output
  uint64_t frames_decoded = 0;  // video frames (a clip loader's)
};

// One thread's decoder: the options and a reusable ImageDecoder. Not
// thread-safe; use one per thread (they are cheap to keep, not to make per
// sample).
class SampleDecoder {
 public:
  // Checks the options (SampleDecoderOptions::Check).
  static Result<std::unique_ptr<SampleDecoder>> Create(const SampleDecoderOptions& options);

  const SampleDecoderOptions& options() const { return options_; }

  // The window of the image (display orientation with decode.apply_exif:
  // planned on info.window_width/height) that sample (seed, epoch,
  // record_id) shows: PlanRandomResizedCrop or PlanCenterCrop.
  CropWindow Plan(const ImageInfo& info, uint64_t seed, uint64_t epoch, uint64_t record_id) const;

  // `image` (JPEG or PNG bytes) as sample (seed, epoch, record_id):
  // output_bytes() uint8 RGB in decode.layout into `out` (out_size >=
  // output_bytes()). kCenterCrop with a resize_shorter is
  // ImageDecoder::DecodeCenterCrop; otherwise the Plan() window through
  // DecodeCropResized. With `window`, the Plan() window the output shows
  // (for an exact center crop, the integer window nearest to it).
  Status Decode(std::string_view image, uint64_t seed, uint64_t epoch, uint64_t record_id, uint8_t* out,
                size_t out_size, CropWindow* window = nullptr);

  // Reads record `id` from `source` and decodes it as Decode does, the
  // label into *label (untouched without a label field). Errors name the
  // record (SampleSource::Describe). With `times`, adds the time spent;
  // with `window`, stores the window as Decode does.
  Status DecodeRecord(const SampleSource& source, uint64_t id, uint64_t seed, uint64_t epoch, uint8_t* out,
                      size_t out_size, int64_t* label, SampleTimes* times = nullptr, CropWindow* window = nullptr);

 private:
  explicit SampleDecoder(const SampleDecoderOptions& options);
  SampleDecoderOptions options_;
  ImageDecoder decoder_;
};

}  // namespace unirecord

#endif  // UNIRECORD_SAMPLE_DECODER_H_
