// Internal: the crop / resize / flip stage that every image format shares
// after its decoder. A decoder supplies the pixels of a region of the image
// (RegionDecoder); this stage checks the window, asks for the region the
// window (or the center crop's filter taps) needs, and resamples it into the
// caller's buffer in the caller's layout, mirrored when the window says so.
// JpegDecoder and the PNG decoder both run through it, so a JPEG and a PNG
// of the same pixels give the same output.
#ifndef UNIRECORD_SRC_IMAGE_CROP_RESIZE_H_
#define UNIRECORD_SRC_IMAGE_CROP_RESIZE_H_

#include <cstddef>
#include <cstdint>

#include "image/resample.h"
#include "unirecord/image.h"

namespace unirecord::image_internal {

// A rectangle in pixels of the (possibly scaled) image, display orientation.
struct Rect {
  int x, y, width, height;
};

// Decoded RGB pixels of a Rect: `data` is its top-left pixel.
struct RgbView {
  const uint8_t* data;
  int width, height;
  size_t stride;
};

// The decoder's side of the stage, for one image.
class RegionDecoder {
 public:
  virtual ~RegionDecoder() = default;
  // Reads the header and checks it against the decoder's limits; the stage
  // calls it once, after checking its own arguments, before anything below.
  virtual Status Open() = 0;
  // The image's size in display orientation, full scale.
  virtual int width() const = 0;
  virtual int height() const = 0;
  // The scale M (decode at M/8 of full size) for resampling `window` to
  // out_width x out_height; 8 when the format cannot decode smaller.
  virtual int ChooseScale(const CropWindow& window, int out_width, int out_height) const = 0;
  // The pixels of `region` of the image decoded at scale_num/8, as packed RGB.
  virtual Status DecodeRegion(int scale_num, const Rect& region, RgbView* view) = 0;
};

// M/8 of `size`, rounded up as libjpeg's scaled sizes are.
inline int ScaledSize(int size, int scale_num) { return (size * scale_num + 7) / 8; }

// InvalidArgument unless `window` lies inside a width x height image.
Status CheckWindow(const CropWindow& window, int width, int height);

// The whole image, packed RGB.
Result<RgbImage> DecodeWhole(RegionDecoder* image);

// Exactly `window` (checked), mirrored when window.flip.
Result<RgbImage> DecodeWindow(RegionDecoder* image, const CropWindow& window);

// `window` (checked) resized to out_width x out_height into `out` in
// `layout`, mirrored when window.flip (JpegDecoder::DecodeCropResized).
Status DecodeWindowResized(RegionDecoder* image, const CropWindow& window, int out_width,
                           int out_height, ImageLayout layout, const DecodeLimits& limits,
                           ResampleScratch* scratch, uint8_t* out, size_t out_size);

// torchvision's Resize(resize_shorter) + CenterCrop(size) into `out`
// (JpegDecoder::DecodeCenterCrop): exact unless the decoder chooses a scale
// below 8 or size > the resized image, then the planned window through
// DecodeWindowResized.
Status DecodeCenterCropResized(RegionDecoder* image, int size, int resize_shorter,
                               ImageLayout layout, const DecodeLimits& limits,
                               ResampleScratch* scratch, uint8_t* out, size_t out_size);

}  // namespace unirecord::image_internal

#endif  // UNIRECORD_SRC_IMAGE_CROP_RESIZE_H_
