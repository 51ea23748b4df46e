// Internal: the lossless rewrite of a JPEG into the fast layout, done once at
// convert time so that the decoder can entropy-decode only a crop's restart
// segments (docs/image.md, "The fast layout").
//
// The fast layout is a standard JPEG: sequential Huffman coding (baseline SOF0
// whenever the tables allow, SOF1 when a quantisation table needs 16 bits),
// optimized Huffman tables, one interleaved scan of all components, and a
// restart interval of FastLayoutRestartInterval(MCUs per row) MCUs, so that
// restart segments never straddle an MCU row. The quantized DCT coefficients
// are copied, not recomputed: every decoder gives the same pixels as for the
// source. The source's APPn and COM segments (JFIF, EXIF, ICC, Adobe, ...) are
// kept, in their order, right after SOI; libjpeg adds none of its own.
#ifndef UNIRECORD_SRC_IMAGE_JPEG_TRANSCODE_H_
#define UNIRECORD_SRC_IMAGE_JPEG_TRANSCODE_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "unirecord/status.h"

namespace unirecord::image_internal {

// What a stored JPEG is. The values are stored per record by the converter
// (field jpeg_layout) and must not change.
enum class JpegLayout : int32_t {
  kOriginal = 0,  // the source bytes, untouched
  kFast = 1,      // transcoded by TranscodeToFastLayout
};

struct TranscodeResult {
  JpegLayout layout = JpegLayout::kOriginal;
  std::string jpeg;    // kFast: the transcoded JPEG; kOriginal: empty (keep the source)
  // kOriginal: why the transcode was refused, one of a small fixed set
  // ("not 8-bit", "not decodable", "libjpeg warning", "libjpeg error",
  // "data after EOI", "metadata after SOF"), and the specifics (libjpeg's
  // message, a byte count).
  std::string reason;
  std::string detail;
};

// MCUs per MCU row of the single scan the fast layout writes: one 8x8 block
// per MCU for a single component (whatever its declared sampling), else
// 8 * max_h_samp_factor columns per MCU.
int FastLayoutMcusPerRow(int width, int components, int max_h_samp_factor);

// The restart interval, in MCUs, for `mcus_per_row` >= 1: the divisor of
// mcus_per_row nearest to 4, the smaller one on a tie (so 1 for a prime >= 7).
int FastLayoutRestartInterval(int mcus_per_row);

// Rewrites `jpeg` into the fast layout with libjpeg's coefficient API. A file
// it cannot rewrite exactly (not 8-bit, lossless, any libjpeg warning while
// reading it, bytes after its EOI marker such as an MPO's second image, APPn
// or COM segments after the frame header, which the output could only move
// before it) comes back as kOriginal with the reason. Output bytes depend only on the input.
// Errors: what ProbeJpeg returns for data that is not a JPEG header.
Result<TranscodeResult> TranscodeToFastLayout(std::string_view jpeg);

}  // namespace unirecord::image_internal

#endif  // UNIRECORD_SRC_IMAGE_JPEG_TRANSCODE_H_
