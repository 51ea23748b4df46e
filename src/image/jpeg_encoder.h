// Internal: packed RGB or CMYK -> JPEG with libjpeg, for tests, benchmarks and
// the synthetic image folders (src/convert/synthetic_images.cc) that need
// images with chosen sampling, quality and coding. In the internal
// unirecord_testing library, not in the installed one.
#ifndef UNIRECORD_SRC_IMAGE_JPEG_ENCODER_H_
#define UNIRECORD_SRC_IMAGE_JPEG_ENCODER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "unirecord/status.h"

namespace unirecord::image_internal {

enum class Sampling { k444, k422, k420, k440, kGray };

struct EncodeSpec {
  int width = 203;
  int height = 157;
  Sampling sampling = Sampling::k420;
  int quality = 90;
  bool progressive = false;
  bool arithmetic = false;
  // The input holds 4-channel CMYK instead of RGB, stored as given: YCCK
  // with an Adobe marker (transform 2), K sampled like Y, as TurboJPEG writes
  // CMYK. Readers of Adobe files (PIL, JpegDecoder) take the samples as
  // inverted ink amounts (255 = no ink). Not with Sampling::kGray.
  bool cmyk = false;
  // libjpeg's fast integer forward DCT (JDCT_IFAST) instead of the accurate
  // one (JDCT_ISLOW); TurboJPEG's choice below quality 96.
  bool fast_dct = false;
  // A restart marker every restart_interval MCUs (0: none), and Huffman
  // tables optimized for the image: with an interval that divides the MCUs
  // per row, the fast layout JpegDecoder crops from restart segments.
  int restart_interval = 0;
  bool optimize_coding = false;
};

// `pixels` holds spec.width x spec.height packed RGB (or CMYK when spec.cmyk),
// rows without padding. Returns the JPEG bytes; InvalidArgument for a bad
// spec or a short buffer, Internal with libjpeg's message when it fails.
Result<std::string> EncodeJpeg(const std::vector<uint8_t>& pixels, const EncodeSpec& spec);

// Packed RGB -> CMYK for spec.cmyk, as Adobe files store it: inverted ink
// amounts (255 = no ink), K = 255 - max(R, G, B). Decoders give back the RGB.
std::vector<uint8_t> RgbToAdobeCmyk(const std::vector<uint8_t>& rgb);

}  // namespace unirecord::image_internal

#endif  // UNIRECORD_SRC_IMAGE_JPEG_ENCODER_H_
