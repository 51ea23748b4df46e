// Internal: ImageDecoder's PNG side, on libpng 1.6. It produces the RGB
// pixels of a region as PIL's convert("RGB") would and hands them to the crop
// / resize / flip stage shared with JPEG (image/crop_resize.h).
#ifndef UNIRECORD_SRC_IMAGE_PNG_DECODER_H_
#define UNIRECORD_SRC_IMAGE_PNG_DECODER_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "image/crop_resize.h"
#include "image/resample.h"
#include "unirecord/image.h"

namespace unirecord {
namespace image_internal {

// Whether a PNG of `file_bytes` with this header is within `limits`
// (InvalidArgument naming the size and the limit) and plausible: deflate
// codes at most 1032 bytes per input byte, so a file too small for the rows
// its header claims is cut short or a decompression bomb (Corruption).
Status CheckPngSize(const PngInfo& info, uint64_t file_bytes, const DecodeLimits& limits);

// A segmentation mask stored as PNG: its samples as they are, one byte per
// pixel, row-major, into *plane (width x height) -- a palette image's
// indices, an 8-bit gray image's values: what numpy.array(PIL.Image.open(f))
// gives for modes "P" and "L". Any other colour type or depth is
// NotSupported (a mask holds labels, not colours); a damaged file Corruption.
Status DecodePngMask(std::string_view bytes, const DecodeLimits& limits, std::vector<uint8_t>* plane, int* width,
                     int* height);

}  // namespace image_internal

class ImageDecoder::PngDecoder {
 public:
  explicit PngDecoder(const DecodeOptions& options) : options_(options) {}

  Result<RgbImage> Decode(std::string_view bytes);
  Result<RgbImage> DecodeCrop(std::string_view bytes, const CropWindow& window);
  Status DecodeCropResized(std::string_view bytes, const CropWindow& window, int out_width,
                           int out_height, uint8_t* out, size_t out_size);
  Status DecodeCenterCrop(std::string_view bytes, int size, int resize_shorter, uint8_t* out,
                          size_t out_size);

 private:
  class Image;  // one PNG as the shared stage sees it
  DecodeOptions options_;
  std::vector<uint8_t> raw_;  // the region's rows as libpng gives them (+ one scratch row)
  std::vector<uint8_t> rgb_;  // the region converted to RGB
  image_internal::ResampleScratch resample_;
};

}  // namespace unirecord

#endif  // UNIRECORD_SRC_IMAGE_PNG_DECODER_H_
