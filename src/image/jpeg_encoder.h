// Internal: packed RGB -> JPEG with libjpeg, for tests and benchmarks that
// need images with chosen sampling, quality and coding (not a public API).
#ifndef UNIRECORD_SRC_IMAGE_JPEG_ENCODER_H_
#define UNIRECORD_SRC_IMAGE_JPEG_ENCODER_H_

#include <cstdint>
#include <string>
#include <vector>

namespace unirecord::image_internal {

enum class Sampling { k444, k422, k420, k440, kGray };

struct EncodeSpec {
  int width = 203;
  int height = 157;
  Sampling sampling = Sampling::k420;
  int quality = 90;
  bool progressive = false;
  bool arithmetic = false;
};

// `rgb` holds spec.width x spec.height packed RGB. Returns the JPEG bytes, or
// an empty string when libjpeg reports an error.
std::string EncodeJpeg(const std::vector<uint8_t>& rgb, const EncodeSpec& spec);

}  // namespace unirecord::image_internal

#endif  // UNIRECORD_SRC_IMAGE_JPEG_ENCODER_H_
