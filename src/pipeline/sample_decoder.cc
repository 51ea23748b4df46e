#include "unirecord/sample_decoder.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <utility>

#include "dataset/shard_access.h"
#include "util/enum_names.h"

namespace unirecord {

// Both from kTransformNames (sample_decoder.h), the one table of the names.
const char* SampleTransformName(SampleTransform transform) {
  for (const TransformName& entry : kTransformNames) {
    if (!entry.none && entry.transform == transform) return entry.name;  // a transform's first name
  }
  return "unknown";
}

Result<SampleTransform> ParseSampleTransform(std::string_view name) {
  UREC_ASSIGN_OR_RETURN(TransformName entry, ParseTransformName(name));
  if (!entry.none) return entry.transform;
  std::string transforms;
  for (const TransformName& other : kTransformNames) {
    if (!other.none) transforms += std::string(transforms.empty() ? "" : ", ") + other.name;
  }
  return Status::InvalidArgument("transform '" + std::string(name) + "' is not one the loader runs (expected one of " +
                                 transforms + ")");
}

constexpr EnumName<BoxFormat> kBoxFormatNames[] = {{BoxFormat::kXYWH, "xywh"}, {BoxFormat::kXYXY, "xyxy"}};

const char* BoxFormatName(BoxFormat format) { return EnumNameOf(kBoxFormatNames, format); }

Result<BoxFormat> ParseBoxFormat(std::string_view name) { return ParseEnumName(kBoxFormatNames, name, "box format"); }

size_t MapBoxes(const CropWindow& window, int out_width, int out_height, BoxFormat format, const float* in,
                size_t count, float* out, uint8_t* keep) {
  // In double: the float32 result is then the correctly rounded value of
  // the same formula a float64 reference computes.
  const double sx = double(out_width) / window.width;
  const double sy = double(out_height) / window.height;
  size_t kept = 0;
  for (size_t i = 0; i < count; ++i) {
    const float* b = in + 4 * i;
    double x0 = b[0], y0 = b[1], x1 = b[2], y1 = b[3];
    if (format == BoxFormat::kXYWH) {
      x1 += x0;
      y1 += y0;
    }
    x0 = (x0 - window.x) * sx;
    x1 = (x1 - window.x) * sx;
    y0 = (y0 - window.y) * sy;
    y1 = (y1 - window.y) * sy;
    if (window.flip) {
      const double left = out_width - x1;
      x1 = out_width - x0;
      x0 = left;
    }
    x0 = std::clamp(x0, 0.0, double(out_width));
    x1 = std::clamp(x1, 0.0, double(out_width));
    y0 = std::clamp(y0, 0.0, double(out_height));
    y1 = std::clamp(y1, 0.0, double(out_height));
    // Written so that a NaN coordinate drops the box.
    keep[i] = (x1 - x0 > 0 && y1 - y0 > 0) ? 1 : 0;
    if (!keep[i]) continue;
    float* o = out + 4 * kept++;
    o[0] = float(x0);
    o[1] = float(y0);
    o[2] = float(format == BoxFormat::kXYWH ? x1 - x0 : x1);
    o[3] = float(format == BoxFormat::kXYWH ? y1 - y0 : y1);
  }
  return kept;
}

namespace {

std::string Range(double lo, double hi) { return "(" + std::to_string(lo) + ", " + std::to_string(hi) + ")"; }

}  // namespace

Status SampleDecoderOptions::Check() const {
  if (transform != SampleTransform::kRandomResizedCrop && transform != SampleTransform::kCenterCrop) {
    return Status::InvalidArgument("unknown transform " + std::to_string(int(transform)));
  }
  if (decode.layout != ImageLayout::kNHWC && decode.layout != ImageLayout::kNCHW) {
    return Status::InvalidArgument("unknown layout " + std::to_string(int(decode.layout)));
  }
  UREC_RETURN_IF_ERROR(CheckOutputSize(image_size, image_size, decode.limits).WithContext("image_size"));
  if (transform == SampleTransform::kCenterCrop && resize_shorter != 0 && resize_shorter < image_size) {
    return Status::InvalidArgument("center crop: resize_shorter (" + std::to_string(resize_shorter) +
                                   ") must be at least image_size (" + std::to_string(image_size) +
                                   "), or 0 for no resize");
  }
  if (transform == SampleTransform::kRandomResizedCrop) {
    // Written so that NaN fails every test.
    if (!(crop.scale_min > 0 && crop.scale_min <= crop.scale_max && crop.scale_max <= 1)) {
      return Status::InvalidArgument("random resized crop: scale " + Range(crop.scale_min, crop.scale_max) +
                                     " must satisfy 0 < min <= max <= 1");
    }
    if (!(crop.ratio_min > 0 && crop.ratio_min <= crop.ratio_max && crop.ratio_max < HUGE_VAL)) {
      return Status::InvalidArgument("random resized crop: ratio " + Range(crop.ratio_min, crop.ratio_max) +
                                     " must satisfy 0 < min <= max (finite)");
    }
    if (!(crop.flip_probability >= 0 && crop.flip_probability <= 1)) {
      return Status::InvalidArgument("random resized crop: flip probability " +
                                     std::to_string(crop.flip_probability) + " must be in [0, 1]");
    }
  }
  return Status::OK();
}

// ------------------------------------------------------------ SampleSource --

Result<SampleSource> SampleSource::Create(std::shared_ptr<const Dataset> dataset, const SampleFields& fields,
                                          std::string name) {
  if (dataset == nullptr) return Status::InvalidArgument("no dataset");
  SampleSource source;
  const Schema& schema = dataset->schema();
  if (!fields.image.empty()) {
    UREC_ASSIGN_OR_RETURN(source.image_field_, schema.FindField(fields.image));
    if (schema.field(source.image_field_).type != fields.image_type) {
      return Status::InvalidArgument(fields.image_type == FieldType::kVideo
                                         ? "clip field '" + fields.image + "' is not a video field"
                                         : "image field '" + fields.image + "' is not a bytes field");
    }
  }
  if (!fields.label.empty()) {
    UREC_ASSIGN_OR_RETURN(source.label_field_, schema.FindField(fields.label));
    const Field& label = schema.field(source.label_field_);
    if ((label.type != FieldType::kInt32 && label.type != FieldType::kInt64) || label.is_array()) {
      return Status::InvalidArgument("label field '" + fields.label + "' is not an int32/int64 scalar");
    }
    source.label_indexed_ = label.indexed;
    if (!label.indexed) {
      UREC_ASSIGN_OR_RETURN(source.label_reads_, dataset_internal::ShardAccess::Reads(dataset, {source.label_field_}));
    }
  }
  const int path_field = fields.path.empty() ? -1 : schema.FieldIndex(fields.path);
  if (path_field >= 0 && schema.field(path_field).type == FieldType::kString) {
    source.path_field_ = static_cast<size_t>(path_field);
  }
  source.dataset_ = std::move(dataset);
  source.name_ = std::move(name);
  return source;
}

Status SampleSource::Read(uint64_t id, Blob* image, int64_t* label) const {
  if (image_field_ != kNone) {
    UREC_ASSIGN_OR_RETURN(*image, dataset_->GetBlob(id, image_field_));
  }
  if (label_field_ == kNone) return Status::OK();
  if (label_indexed_) {
    UREC_ASSIGN_OR_RETURN(*label, dataset_->GetIndexedInt64(id, label_field_));
  } else {
    UREC_ASSIGN_OR_RETURN(Record record, dataset_internal::ShardAccess::Get(label_reads_, id));
    UREC_ASSIGN_OR_RETURN(*label, record.GetInt64(label_field_));
  }
  return Status::OK();
}

std::string SampleSource::Describe(uint64_t id) const {
  std::string what = name_.empty() ? "" : "dataset " + name_ + ": ";
  what += "record " + std::to_string(id);
  if (path_field_ != kNone) {
    Result<Record> record = dataset_->Get(id);
    if (record.ok()) {
      Result<std::string_view> path = record->GetString(path_field_);
      if (path.ok()) what += " (" + std::string(*path) + ")";
    }
  }
  return what;
}

// ----------------------------------------------------------- SampleDecoder --

SampleDecoder::SampleDecoder(const SampleDecoderOptions& options) : options_(options), decoder_(options.decode) {}

Result<std::unique_ptr<SampleDecoder>> SampleDecoder::Create(const SampleDecoderOptions& options) {
  UREC_RETURN_IF_ERROR(options.Check());
  return std::unique_ptr<SampleDecoder>(new SampleDecoder(options));
}

CropWindow SampleDecoder::Plan(const ImageInfo& info, uint64_t seed, uint64_t epoch, uint64_t record_id) const {
  // The size the decoder checks windows against (displayed with apply_exif).
  const int width = info.window_width(options_.decode.apply_exif);
  const int height = info.window_height(options_.decode.apply_exif);
  if (options_.transform == SampleTransform::kRandomResizedCrop) {
    return PlanRandomResizedCrop(width, height, options_.crop, seed, epoch, record_id);
  }
  const int size = options_.image_size;
  const int shorter =
      options_.resize_shorter > 0 ? options_.resize_shorter : std::max(std::min(width, height), size);
  return PlanCenterCrop(width, height, size, shorter);
}

Status SampleDecoder::Decode(std::string_view image, uint64_t seed, uint64_t epoch, uint64_t record_id,
                             uint8_t* out, size_t out_size, CropWindow* window) {
  const int size = options_.image_size;
  if (options_.transform == SampleTransform::kCenterCrop && options_.resize_shorter > 0) {
    if (window != nullptr) {
      UREC_ASSIGN_OR_RETURN(ImageInfo info, ProbeImage(image));
      *window = Plan(info, seed, epoch, record_id);
    }
    // torchvision's Resize + CenterCrop byte for byte (unless DCT scaling
    // applies); it probes the header itself.
    return decoder_.DecodeCenterCrop(image, size, options_.resize_shorter, out, out_size);
  }
  UREC_ASSIGN_OR_RETURN(ImageInfo info, ProbeImage(image));
  const CropWindow planned = Plan(info, seed, epoch, record_id);
  if (window != nullptr) *window = planned;
  return decoder_.DecodeCropResized(image, planned, size, size, out, out_size);
}

Status SampleDecoder::DecodeRecord(const SampleSource& source, uint64_t id, uint64_t seed, uint64_t epoch,
                                   uint8_t* out, size_t out_size, int64_t* label, SampleTimes* times,
                                   CropWindow* window) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point t0 = times != nullptr ? Clock::now() : Clock::time_point();
  Blob image;
  Status status = source.Read(id, &image, label);
  if (status.ok()) {
    const Clock::time_point t1 = times != nullptr ? Clock::now() : Clock::time_point();
    status = Decode(image.data(), seed, epoch, id, out, out_size, window);
    if (times != nullptr) {
      times->read_s += std::chrono::duration<double>(t1 - t0).count();
      times->decode_s += std::chrono::duration<double>(Clock::now() - t1).count();
    }
  }
  if (!status.ok()) return status.WithContext(source.Describe(id));
  return status;
}

}  // namespace unirecord
