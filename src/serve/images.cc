#include "serve/images.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace unirecord::serve {
namespace {

// zlib level of the PNGs: 0, stored as they are (58 KB for 160x120). The
// page is local, and compressing was half of a thumbnail's time: at level 1,
// 457 thumbnails of 500x375 JPEGs a CPU second; stored, 1,081
// (bench/README.md, "Viewer").
constexpr int kPngLevel = 0;
constexpr int kAtlasPngLevel = 0;

SampleDecoderOptions CropOptions(const CropRequest& crop) {
  SampleDecoderOptions options;
  options.transform = crop.transform;
  options.image_size = crop.size;
  // val: the Loader's Resize(size * 256 / 224) + CenterCrop(size).
  options.resize_shorter = static_cast<int>(std::lround(crop.size * 256.0 / 224.0));
  return options;
}

}  // namespace

void FitInSquare(int width, int height, int size, int* out_width, int* out_height) {
  const double scale = std::min(1.0, std::min(double(size) / width, double(size) / height));
  *out_width = std::clamp(static_cast<int>(std::lround(width * scale)), 1, std::max(width, 1));
  *out_height = std::clamp(static_cast<int>(std::lround(height * scale)), 1, std::max(height, 1));
}

class Images::Lease {
 public:
  explicit Lease(Images* images) : images_(images), decoder_(images->TakeDecoder()) {}
  ~Lease() { images_->ReturnDecoder(std::move(decoder_)); }
  ImageDecoder* operator->() { return decoder_.get(); }

 private:
  Images* images_;
  std::unique_ptr<ImageDecoder> decoder_;
};

Images::Images(std::shared_ptr<const Dataset> dataset, std::string path)
    : dataset_(std::move(dataset)), path_(std::move(path)) {}

std::unique_ptr<ImageDecoder> Images::TakeDecoder() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (decoders_.empty()) return std::make_unique<ImageDecoder>();
  std::unique_ptr<ImageDecoder> decoder = std::move(decoders_.back());
  decoders_.pop_back();
  return decoder;
}

void Images::ReturnDecoder(std::unique_ptr<ImageDecoder> decoder) {
  std::lock_guard<std::mutex> lock(mutex_);
  decoders_.push_back(std::move(decoder));
}

Result<RgbImage> Images::ThumbnailPixels(uint64_t id, size_t field, int size) {
  UREC_ASSIGN_OR_RETURN(Blob blob, dataset_->GetBlob(id, field));
  UREC_ASSIGN_OR_RETURN(ImageInfo info, ProbeImage(blob.data()));
  RgbImage image;
  FitInSquare(info.width, info.height, size, &image.width, &image.height);
  image.pixels.resize(size_t(image.width) * size_t(image.height) * 3);
  Lease decoder(this);
  UREC_RETURN_IF_ERROR(decoder->DecodeCropResized(blob.data(), CropWindow{0, 0, info.width, info.height, false},
                                                  image.width, image.height, image.pixels.data(),
                                                  image.pixels.size()));
  return image;
}

Result<std::string> Images::Thumbnail(uint64_t id, size_t field, int size) {
  UREC_ASSIGN_OR_RETURN(RgbImage image, ThumbnailPixels(id, field, size));
  return EncodePngRgb(image.pixels.data(), image.pixels.size(), image.width, image.height, kPngLevel);
}

Result<Atlas> Images::ThumbnailAtlas(const std::vector<uint64_t>& ids, size_t field, int size) {
  const uint64_t cell_pixels = uint64_t(size) * uint64_t(size);
  if (ids.empty() || size <= 0 || ids.size() > kMaxAtlasPixels / cell_pixels) {
    return Status::InvalidArgument("an atlas holds 1 to " + std::to_string(kMaxAtlasPixels / cell_pixels) +
                                   " thumbnails of size " + std::to_string(size) + ", not " +
                                   std::to_string(ids.size()));
  }
  const int count = static_cast<int>(ids.size());
  Atlas atlas;
  atlas.cell_width = atlas.cell_height = 1;
  std::vector<RgbImage> thumbnails(ids.size());
  for (int k = 0; k < count; ++k) {
    AtlasCell cell{ids[k], 0, 0, 0, 0, ""};
    Result<RgbImage> thumbnail = ThumbnailPixels(ids[k], field, size);
    if (thumbnail.ok()) {
      thumbnails[k] = std::move(*thumbnail);
      cell.width = thumbnails[k].width;  // FitInSquare: at most size x size
      cell.height = thumbnails[k].height;
      atlas.cell_width = std::max(atlas.cell_width, cell.width);
      atlas.cell_height = std::max(atlas.cell_height, cell.height);
    } else {
      cell.error = thumbnail.status().ToString();
    }
    atlas.cells.push_back(std::move(cell));
  }
  atlas.width = std::min(count, kAtlasColumns) * atlas.cell_width;
  atlas.height = (count + kAtlasColumns - 1) / kAtlasColumns * atlas.cell_height;
  std::vector<uint8_t> rgb(size_t(atlas.width) * size_t(atlas.height) * 3, 0);
  const size_t atlas_row = size_t(atlas.width) * 3;
  for (int k = 0; k < count; ++k) {
    AtlasCell& cell = atlas.cells[k];
    cell.x = k % kAtlasColumns * atlas.cell_width;
    cell.y = k / kAtlasColumns * atlas.cell_height;
    const size_t row = size_t(cell.width) * 3;
    for (int y = 0; y < cell.height; ++y) {
      std::memcpy(rgb.data() + size_t(cell.y + y) * atlas_row + size_t(cell.x) * 3,
                  thumbnails[k].pixels.data() + size_t(y) * row, row);
    }
    thumbnails[k] = RgbImage{};
  }
  UREC_ASSIGN_OR_RETURN(atlas.png, EncodePngRgb(rgb.data(), rgb.size(), atlas.width, atlas.height, kAtlasPngLevel));
  return atlas;
}

Result<SampleSource> Images::SourceOf(size_t field) const {
  SampleFields fields;
  fields.image = dataset_->schema().field(field).name;
  fields.label = "";
  return SampleSource::Create(dataset_, fields, path_);
}

Result<std::string> Images::Crop(uint64_t id, size_t field, const CropRequest& crop) {
  UREC_ASSIGN_OR_RETURN(SampleSource source, SourceOf(field));
  UREC_ASSIGN_OR_RETURN(std::unique_ptr<SampleDecoder> decoder, SampleDecoder::Create(CropOptions(crop)));
  std::vector<uint8_t> rgb(decoder->options().output_bytes());
  int64_t label = -1;
  UREC_RETURN_IF_ERROR(decoder->DecodeRecord(source, id, crop.seed, crop.epoch, rgb.data(), rgb.size(), &label));
  return EncodePngRgb(rgb.data(), rgb.size(), crop.size, crop.size, kPngLevel);
}

Result<CropWindow> Images::CropWindowOf(uint64_t id, size_t field, const CropRequest& crop) {
  UREC_ASSIGN_OR_RETURN(Blob blob, dataset_->GetBlob(id, field));
  UREC_ASSIGN_OR_RETURN(ImageInfo info, ProbeImage(blob.data()));
  UREC_ASSIGN_OR_RETURN(std::unique_ptr<SampleDecoder> decoder, SampleDecoder::Create(CropOptions(crop)));
  return decoder->Plan(info, crop.seed, crop.epoch, id);
}

}  // namespace unirecord::serve
