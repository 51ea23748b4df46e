// Internal: PNG writing on libpng, for tests that need every colour type and
// bit depth and for synth-imagefolder; in the library, since the viewer's
// thumbnails (src/serve) and `urec show` write 8-bit RGB through the public
// EncodePngRgb (unirecord/image.h), which this implements.
#ifndef UNIRECORD_SRC_IMAGE_PNG_ENCODER_H_
#define UNIRECORD_SRC_IMAGE_PNG_ENCODER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "unirecord/status.h"

namespace unirecord::image_internal {

struct PngSpec {
  int width = 0;
  int height = 0;
  int bit_depth = 8;        // 1, 2, 4, 8 or 16, as color_type allows
  int color_type = 2;       // 0 gray, 2 RGB, 3 palette, 4 gray + alpha, 6 RGBA
  bool interlaced = false;  // Adam7
  std::vector<uint8_t> palette;  // color_type 3: RGB triples (1..256 of them)
  std::vector<uint8_t> trns;     // the tRNS chunk's payload, written as given when not empty
  int compression_level = 6;     // zlib's 0..9
};

// Encodes `samples`: height rows, each width * channels samples, one byte
// per sample below 16 bits (values < 2^bit_depth), two big-endian bytes at
// 16; palette indices past the palette are written as given (decoders must
// cope). InvalidArgument for a spec libpng refuses or samples of the wrong size.
Result<std::string> EncodePng(const PngSpec& spec, const std::vector<uint8_t>& samples);

}  // namespace unirecord::image_internal

#endif  // UNIRECORD_SRC_IMAGE_PNG_ENCODER_H_
