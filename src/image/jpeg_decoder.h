// Internal: JpegDecoder, the JPEG side of ImageDecoder (include/unirecord/image.h),
// on libjpeg-turbo. ImageDecoder is the one public decoder; tests and
// bench/image_bench use this one directly, to check and measure JPEG
// decoding without the sniffing in front of it.
#ifndef UNIRECORD_SRC_IMAGE_JPEG_DECODER_H_
#define UNIRECORD_SRC_IMAGE_JPEG_DECODER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "unirecord/image.h"

namespace unirecord {

// One reusable libjpeg decompressor: ImageDecoder's JPEG side, with its four
// calls for JPEG bytes alone (their contracts are ImageDecoder's, in
// unirecord/image.h; a PNG is InvalidArgument "not a JPEG: PNG image"). One
// per thread, reused for every image: it keeps its libjpeg state and scratch
// buffers between calls, and every call resets the error state first.
class JpegDecoder {
 public:
  explicit JpegDecoder(const DecodeOptions& options = {});
  ~JpegDecoder();
  JpegDecoder(const JpegDecoder&) = delete;
  JpegDecoder& operator=(const JpegDecoder&) = delete;
  const DecodeOptions& options() const { return options_; }

  Result<RgbImage> Decode(std::string_view bytes, DecodeStats* stats = nullptr);
  Result<RgbImage> DecodeCrop(std::string_view bytes, const CropWindow& window, DecodeStats* stats = nullptr);
  Status DecodeCropResized(std::string_view bytes, const CropWindow& window, int out_width, int out_height,
                           uint8_t* out, size_t out_size, DecodeStats* stats = nullptr);
  Status DecodeCenterCrop(std::string_view bytes, int size, int resize_shorter, uint8_t* out, size_t out_size,
                          DecodeStats* stats = nullptr);

 private:
  struct State;  // libjpeg objects and scratch buffers
  class Image;   // one JPEG as the crop/resize stage shared with PNG sees it
  DecodeOptions options_;
  std::unique_ptr<State> state_;
};

}  // namespace unirecord

#endif  // UNIRECORD_SRC_IMAGE_JPEG_DECODER_H_
