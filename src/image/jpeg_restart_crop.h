// Internal: a crop of a JPEG in the fast layout, decoded from only the
// restart segments that cover it.
//
// The fast layout (what `urec convert` writes, docs/image.md) is a standard
// JPEG: one sequential Huffman scan of every component with a restart
// interval that divides the MCUs per row, so every restart segment is a
// rectangle of k MCUs inside one MCU row. Each segment starts with fresh DC
// predictors, so a crop needs the entropy decoding of its own segments only:
// AssembleSubImage copies them, with renumbered RST markers and a frame header
// of the sub-image's size, into a small standalone JPEG that libjpeg decodes
// to the same coefficients, hence the same pixels, as the whole file.
// Nothing is stored beside the JPEG: the segments are found by scanning the
// entropy-coded data for RST markers, which costs a memchr over the bytes.
#ifndef UNIRECORD_SRC_IMAGE_JPEG_RESTART_CROP_H_
#define UNIRECORD_SRC_IMAGE_JPEG_RESTART_CROP_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "image/jpeg_header.h"

namespace unirecord::image_internal {

// The restart-segment grid, in full-scale pixels.
struct RestartGrid {
  int image_width = 0;
  int image_height = 0;
  int mcu_width = 0;
  int mcu_height = 0;
  int mcus_per_row = 0;
  int mcu_rows = 0;
  int segment_mcus = 0;      // the restart interval
  int segments_per_row = 0;
  int segment_width() const { return segment_mcus * mcu_width; }
};

// True, with *grid, when the header describes the fast layout: 8-bit
// sequential Huffman coding, a first scan holding every component, and a
// restart interval that divides the MCUs per row. (Whether the data really
// has the markers is found by AssembleSubImage.)
bool FindRestartGrid(const JpegInfo& info, const JpegHeaderLayout& layout, RestartGrid* grid);

// Where the assembled JPEG lies in the source image (full-scale pixels).
struct SubImage {
  int x = 0;
  int y = 0;
  int width = 0;
  int height = 0;
  int segments = 0;
  bool whole_image = false;  // it covers the whole source: decode the source instead
};

// Buffers reused from image to image (one per decoder).
struct RestartCropScratch {
  std::vector<size_t> segment_begin;
  std::vector<size_t> segment_end;
  std::string jpeg;
};

// Assembles into scratch->jpeg the JPEG of the segments covering the
// full-scale pixel rectangle [x0, x1) x [y0, y1) of `bytes` (the caller adds
// the margin its upsampler needs). False when the entropy-coded data does not
// match the grid: an RST marker missing, out of order or after the end of the
// image, another marker inside the scan, data cut short. The caller then
// decodes the file the ordinary way, which reports what is wrong.
bool AssembleSubImage(std::string_view bytes, const JpegHeaderLayout& layout,
                      const RestartGrid& grid, int x0, int y0, int x1, int y1,
                      RestartCropScratch* scratch, SubImage* sub);

}  // namespace unirecord::image_internal

#endif  // UNIRECORD_SRC_IMAGE_JPEG_RESTART_CROP_H_
