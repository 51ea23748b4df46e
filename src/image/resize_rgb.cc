#include "image/resize_rgb.h"

#include "image/resample.h"

namespace unirecord::image_internal {

Status ResizeRgb(const uint8_t* src, int src_width, int src_height, size_t src_stride,
                 uint8_t* dst, int dst_width, int dst_height, bool flip) {
  if (src == nullptr || dst == nullptr || src_width <= 0 || src_height <= 0 || dst_width <= 0 ||
      dst_height <= 0 || src_stride < static_cast<size_t>(src_width) * 3) {
    return Status::InvalidArgument("ResizeRgb: empty image, null buffer or stride < 3 * width");
  }
  ResampleScratch scratch;
  ResampleRgb(src, src_width, src_height, src_stride,
              {0, 0, static_cast<double>(src_width), static_cast<double>(src_height)}, dst, dst_width,
              dst_height, static_cast<size_t>(dst_width) * 3, flip, &scratch);
  return Status::OK();
}

}  // namespace unirecord::image_internal
