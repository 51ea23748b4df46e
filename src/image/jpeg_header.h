// Internal: where ProbeJpeg found the parts of a JPEG header that code
// rewriting the file needs (the restart-segment crop of jpeg_restart_crop.h).
#ifndef UNIRECORD_SRC_IMAGE_JPEG_HEADER_H_
#define UNIRECORD_SRC_IMAGE_JPEG_HEADER_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "unirecord/image.h"

namespace unirecord::image_internal {

struct JpegHeaderLayout {
  size_t sof_payload = 0;        // offset of the SOF segment's payload (precision byte)
  int h_samp[4] = {};            // sampling factors of components 0..3
  int v_samp[4] = {};
  uint32_t restart_interval = 0; // from the last DRI before the first SOS; 0 without one
  int scan_components = 0;       // components in the first scan
  size_t scan_data = 0;          // first byte of the first scan's entropy-coded data
};

// ProbeJpeg, also filling `layout` (which may be null).
Result<JpegInfo> ProbeJpegHeader(std::string_view bytes, JpegHeaderLayout* layout);

}  // namespace unirecord::image_internal

#endif  // UNIRECORD_SRC_IMAGE_JPEG_HEADER_H_
