// ImageDecoder: sniffs the bytes and hands them to the JPEG or the PNG decoder.
#include <memory>

#include "image/image_format.h"
#include "image/jpeg_decoder.h"
#include "image/png_decoder.h"
#include "unirecord/image.h"

namespace unirecord {

struct ImageDecoder::Decoders {
  explicit Decoders(const DecodeOptions& options) : jpeg(options), png(options) {}
  JpegDecoder jpeg;
  PngDecoder png;
};

ImageDecoder::ImageDecoder(const DecodeOptions& options)
    : options_(options), decoders_(std::make_unique<Decoders>(options)) {}

ImageDecoder::~ImageDecoder() = default;

namespace {

Status NotAnImage(std::string_view bytes) {
  return Status::InvalidArgument("not a JPEG or PNG: " + image_internal::DescribeFormat(bytes));
}

}  // namespace

Result<RgbImage> ImageDecoder::Decode(std::string_view bytes, DecodeStats* stats) {
  switch (SniffImageFormat(bytes)) {
    case ImageFormat::kJpeg: return decoders_->jpeg.Decode(bytes, stats);
    case ImageFormat::kPng: return decoders_->png.Decode(bytes);
    default: return NotAnImage(bytes);
  }
}

Result<RgbImage> ImageDecoder::DecodeCrop(std::string_view bytes, const CropWindow& window,
                                          DecodeStats* stats) {
  switch (SniffImageFormat(bytes)) {
    case ImageFormat::kJpeg: return decoders_->jpeg.DecodeCrop(bytes, window, stats);
    case ImageFormat::kPng: return decoders_->png.DecodeCrop(bytes, window);
    default: return NotAnImage(bytes);
  }
}

Status ImageDecoder::DecodeCropResized(std::string_view bytes, const CropWindow& window, int out_width,
                                       int out_height, uint8_t* out, size_t out_size, DecodeStats* stats) {
  switch (SniffImageFormat(bytes)) {
    case ImageFormat::kJpeg:
      return decoders_->jpeg.DecodeCropResized(bytes, window, out_width, out_height, out, out_size, stats);
    case ImageFormat::kPng: return decoders_->png.DecodeCropResized(bytes, window, out_width, out_height, out, out_size);
    default: return NotAnImage(bytes);
  }
}

Status ImageDecoder::DecodeCenterCrop(std::string_view bytes, int size, int resize_shorter, uint8_t* out,
                                      size_t out_size, DecodeStats* stats) {
  switch (SniffImageFormat(bytes)) {
    case ImageFormat::kJpeg:
      return decoders_->jpeg.DecodeCenterCrop(bytes, size, resize_shorter, out, out_size, stats);
    case ImageFormat::kPng: return decoders_->png.DecodeCenterCrop(bytes, size, resize_shorter, out, out_size);
    default: return NotAnImage(bytes);
  }
}

}  // namespace unirecord
