// Internal, in unirecord_tools_support (linked into urec, the tests and the
// benchmarks; not in the installed library): a whole RGB image resized, for
// `urec show --transform none`, tests and bench/image_bench (BM_resize). The
// library itself resizes inside its decoders (image/crop_resize.h).
#ifndef UNIRECORD_SRC_IMAGE_RESIZE_RGB_H_
#define UNIRECORD_SRC_IMAGE_RESIZE_RGB_H_

#include <cstddef>
#include <cstdint>

#include "unirecord/status.h"

namespace unirecord::image_internal {

// Antialiased bilinear resize of a whole packed RGB image (PIL's BILINEAR
// "reduce" filter, the one torchvision's Resize(antialias=True) uses on PIL
// images; image/resample.h's ResampleRgb over the whole image): `src` is
// src_width x src_height with row stride src_stride bytes; `dst` is packed
// dst_width x dst_height. Mirrors left-right when flip. Allocates its scratch
// buffers per call (the decoders keep theirs across images).
Status ResizeRgb(const uint8_t* src, int src_width, int src_height, size_t src_stride,
                 uint8_t* dst, int dst_width, int dst_height, bool flip);

}  // namespace unirecord::image_internal

#endif  // UNIRECORD_SRC_IMAGE_RESIZE_RGB_H_
