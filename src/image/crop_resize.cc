#include "image/crop_resize.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "image/crop_geometry.h"

namespace unirecord::image_internal {
namespace {

std::string DescribeWindow(const CropWindow& w) {
  return std::to_string(w.width) + "x" + std::to_string(w.height) + "+" + std::to_string(w.x) +
         "+" + std::to_string(w.y);
}

RgbImage CopyOut(const RgbView& view, bool flip) {
  RgbImage image;
  image.width = view.width;
  image.height = view.height;
  const size_t row_bytes = static_cast<size_t>(view.width) * 3;
  image.pixels.resize(row_bytes * view.height);
  for (int y = 0; y < view.height; ++y) {
    const uint8_t* in = view.data + y * view.stride;
    uint8_t* out = image.pixels.data() + y * row_bytes;
    if (!flip) {
      std::memcpy(out, in, row_bytes);
      continue;
    }
    for (int x = 0; x < view.width; ++x) std::memcpy(out + (view.width - 1 - x) * 3, in + x * 3, 3);
  }
  return image;
}

}  // namespace

Status CheckWindow(const CropWindow& window, int w, int h) {
  // Written so that no sum can overflow.
  if (window.x < 0 || window.y < 0 || window.width <= 0 || window.height <= 0 ||
      window.width > w || window.height > h || window.x > w - window.width ||
      window.y > h - window.height) {
    return Status::InvalidArgument("crop " + DescribeWindow(window) + " is not inside the " +
                                   std::to_string(w) + "x" + std::to_string(h) + " image");
  }
  return Status::OK();
}

Result<RgbImage> DecodeWhole(RegionDecoder* image) {
  UREC_RETURN_IF_ERROR(image->Open());
  RgbView view;
  UREC_RETURN_IF_ERROR(image->DecodeRegion(8, {0, 0, image->width(), image->height()}, &view));
  return CopyOut(view, false);
}

Result<RgbImage> DecodeWindow(RegionDecoder* image, const CropWindow& window) {
  UREC_RETURN_IF_ERROR(image->Open());
  UREC_RETURN_IF_ERROR(CheckWindow(window, image->width(), image->height()));
  RgbView view;
  UREC_RETURN_IF_ERROR(
      image->DecodeRegion(8, {window.x, window.y, window.width, window.height}, &view));
  return CopyOut(view, window.flip);
}

namespace {

// DecodeWindowResized once its arguments are checked and the image is open.
Status ResizeWindow(RegionDecoder* image, const CropWindow& window, int out_width, int out_height,
                    ImageLayout layout, ResampleScratch* scratch, uint8_t* out) {
  UREC_RETURN_IF_ERROR(CheckWindow(window, image->width(), image->height()));
  const int scale = image->ChooseScale(window, out_width, out_height);
  // The window in scaled pixels: a whole-pixel region to decode and the
  // exact (fractional) box inside it to resample.
  const double f = scale / 8.0;
  const int display_w = ScaledSize(image->width(), scale);
  const int display_h = ScaledSize(image->height(), scale);
  Rect region;
  region.x = static_cast<int>(window.x * f);
  region.y = static_cast<int>(window.y * f);
  region.width = std::min(ScaledSize(window.x + window.width, scale), display_w) - region.x;
  region.height = std::min(ScaledSize(window.y + window.height, scale), display_h) - region.y;
  RgbView view;
  UREC_RETURN_IF_ERROR(image->DecodeRegion(scale, region, &view));
  const SourceBox box{
      window.x * f - region.x, window.y * f - region.y,
      std::min((window.x + window.width) * f - region.x, static_cast<double>(region.width)),
      std::min((window.y + window.height) * f - region.y, static_cast<double>(region.height))};
  const bool planar = layout == ImageLayout::kNCHW;
  ResampleRgb(view.data, view.width, view.height, view.stride, box, out, out_width, out_height,
              static_cast<size_t>(out_width) * (planar ? 1 : 3), window.flip, scratch,
              planar ? static_cast<size_t>(out_width) * out_height : 0);
  return Status::OK();
}

}  // namespace

Status DecodeWindowResized(RegionDecoder* image, const CropWindow& window, int out_width,
                           int out_height, ImageLayout layout, const DecodeLimits& limits,
                           ResampleScratch* scratch, uint8_t* out, size_t out_size) {
  UREC_RETURN_IF_ERROR(CheckOutputSize(out_width, out_height, limits));
  if (out == nullptr || out_width <= 0 || out_height <= 0 || out_width > 65500 ||
      out_height > 65500 || out_size < static_cast<size_t>(out_width) * out_height * 3) {
    return Status::InvalidArgument("output " + std::to_string(out_width) + "x" +
                                   std::to_string(out_height) + " does not fit a buffer of " +
                                   std::to_string(out_size) + " bytes");
  }
  UREC_RETURN_IF_ERROR(image->Open());
  return ResizeWindow(image, window, out_width, out_height, layout, scratch, out);
}

Status DecodeCenterCropResized(RegionDecoder* image, int size, int resize_shorter,
                               ImageLayout layout, const DecodeLimits& limits,
                               ResampleScratch* scratch, uint8_t* out, size_t out_size) {
  UREC_RETURN_IF_ERROR(CheckOutputSize(size, size, limits));
  if (out == nullptr || size <= 0 || size > 65500 || resize_shorter <= 0 ||
      out_size < static_cast<size_t>(size) * size * 3) {
    return Status::InvalidArgument("center crop " + std::to_string(size) + " of resize " +
                                   std::to_string(resize_shorter) + " does not fit a buffer of " +
                                   std::to_string(out_size) + " bytes");
  }
  UREC_RETURN_IF_ERROR(image->Open());
  const int w = image->width();
  const int h = image->height();
  const CropWindow window = PlanCenterCrop(w, h, size, resize_shorter);
  int resized_w, resized_h;
  ResizedSize(w, h, resize_shorter, &resized_w, &resized_h);
  if (size > resized_w || size > resized_h || image->ChooseScale(window, size, size) != 8) {
    return ResizeWindow(image, window, size, size, layout, scratch, out);
  }
  const Axis ax{w, 0.0, double(w), resized_w, CenterCropOffset(resized_w, size), size};
  const Axis ay{h, 0.0, double(h), resized_h, CenterCropOffset(resized_h, size), size};
  int x0, x1, y0, y1;
  SourceRange(ax, &x0, &x1);
  SourceRange(ay, &y0, &y1);
  RgbView view;
  UREC_RETURN_IF_ERROR(image->DecodeRegion(8, {x0, y0, x1 - x0, y1 - y0}, &view));
  const bool planar = layout == ImageLayout::kNCHW;
  ResampleRgbAxes(view.data, x0, y0, view.width, view.height, view.stride, ax, ay, out,
                  static_cast<size_t>(size) * (planar ? 1 : 3), false, scratch,
                  planar ? static_cast<size_t>(size) * size : 0);
  return Status::OK();
}

}  // namespace unirecord::image_internal
