// Internal: antialiased bilinear resampling of packed RGB with a fractional
// source box, the arithmetic of PIL's Image.resize(BILINEAR) (fixed-point
// weights with 22 fractional bits, horizontal pass then vertical pass, 8-bit
// rounding between them) so that results equal torchvision on PIL images.
#ifndef UNIRECORD_SRC_IMAGE_RESAMPLE_H_
#define UNIRECORD_SRC_IMAGE_RESAMPLE_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace unirecord::image_internal {

// A region of the source in pixel units, as PIL's `box` argument.
struct SourceBox {
  double x0, y0, x1, y1;
};

// Buffers reused across calls (one per JpegDecoder).
struct ResampleScratch {
  std::vector<int32_t> weights_x, weights_y;
  std::vector<int> first_x, count_x, first_y, count_y;
  std::vector<uint8_t> horizontal;  // output of the horizontal pass
  std::vector<int32_t> accumulators;
};

// Resamples `box` of src (src_width x src_height RGB, src_stride bytes per
// row) to dst (dst_width x dst_height, dst_stride bytes per row), mirrored
// left-right when flip. Filter taps are clipped to the source, not to the
// box, as PIL does. Callers validate sizes (all positive, box inside src).
void ResampleRgb(const uint8_t* src, int src_width, int src_height, size_t src_stride,
                 const SourceBox& box, uint8_t* dst, int dst_width, int dst_height,
                 size_t dst_stride, bool flip, ResampleScratch* scratch);

}  // namespace unirecord::image_internal

#endif  // UNIRECORD_SRC_IMAGE_RESAMPLE_H_
