// Crop planning from the probed size alone, before any pixel is decoded.
#include <algorithm>
#include <cmath>

#include "image/crop_geometry.h"
#include "unirecord/image.h"
#include "util/splitmix64.h"

namespace unirecord {
namespace {

// Fixed draw numbers, so the flip does not depend on how many crop attempts
// were made.
constexpr int kAttempts = 10;
constexpr uint64_t kDrawTop = 2 * kAttempts;
constexpr uint64_t kDrawLeft = kDrawTop + 1;
constexpr uint64_t kDrawFlip = kDrawTop + 2;

}  // namespace

namespace image_internal {

// nearbyint rounds in the default FP mode: to nearest, halves to even.
int RoundHalfEven(double v) { return static_cast<int>(std::nearbyint(v)); }

void ResizedSize(int width, int height, int shorter, int* resized_width, int* resized_height) {
  if (width <= height) {
    *resized_width = shorter;
    *resized_height = static_cast<int>(static_cast<double>(shorter) * height / width);
  } else {
    *resized_height = shorter;
    *resized_width = static_cast<int>(static_cast<double>(shorter) * width / height);
  }
}

}  // namespace image_internal

using image_internal::RoundHalfEven;

CropWindow PlanRandomResizedCrop(int width, int height, const RandomResizedCropParams& params,
                                 uint64_t seed, uint64_t epoch, uint64_t record_id) {
  const KeyedRandom rng(seed, epoch, record_id);
  CropWindow window;
  window.flip = rng.Uniform(kDrawFlip) < params.flip_probability;
  if (width <= 0 || height <= 0) return window;

  const double area = static_cast<double>(width) * height;
  const double log_ratio_min = std::log(params.ratio_min);
  const double log_ratio_max = std::log(params.ratio_max);
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    double target_area = area * rng.Uniform(2 * attempt, params.scale_min, params.scale_max);
    double aspect = std::exp(rng.Uniform(2 * attempt + 1, log_ratio_min, log_ratio_max));
    int w = RoundHalfEven(std::sqrt(target_area * aspect));
    int h = RoundHalfEven(std::sqrt(target_area / aspect));
    if (w > 0 && w <= width && h > 0 && h <= height) {
      window.y = rng.Below(kDrawTop, height - h + 1);
      window.x = rng.Below(kDrawLeft, width - w + 1);
      window.width = w;
      window.height = h;
      return window;
    }
  }
  // torchvision's fallback: the central crop with the ratio clamped.
  const double in_ratio = static_cast<double>(width) / height;
  const double ratio_lo = std::min(params.ratio_min, params.ratio_max);
  const double ratio_hi = std::max(params.ratio_min, params.ratio_max);
  int w = width, h = height;
  if (in_ratio < ratio_lo) {
    h = RoundHalfEven(w / ratio_lo);
  } else if (in_ratio > ratio_hi) {
    w = RoundHalfEven(h * ratio_hi);
  }
  window.width = w;
  window.height = h;
  window.y = (height - h) / 2;
  window.x = (width - w) / 2;
  return window;
}

CropWindow PlanRandomResizedCrop(const JpegInfo& info, const RandomResizedCropParams& params,
                                 uint64_t seed, uint64_t epoch, uint64_t record_id) {
  return PlanRandomResizedCrop(info.width, info.height, params, seed, epoch, record_id);
}

CropWindow PlanCenterCrop(int width, int height, int size, int resize_shorter) {
  CropWindow window;
  if (width <= 0 || height <= 0 || size <= 0 || resize_shorter <= 0) return window;
  int resized_w, resized_h;
  image_internal::ResizedSize(width, height, resize_shorter, &resized_w, &resized_h);
  // CenterCrop(size) on the resized image, mapped back to the original.
  const int top = image_internal::CenterCropOffset(resized_h, size);
  const int left = image_internal::CenterCropOffset(resized_w, size);
  const double sx = static_cast<double>(width) / resized_w;
  const double sy = static_cast<double>(height) / resized_h;
  int x0 = std::clamp(RoundHalfEven(left * sx), 0, width - 1);
  int y0 = std::clamp(RoundHalfEven(top * sy), 0, height - 1);
  int x1 = std::clamp(RoundHalfEven((left + size) * sx), x0 + 1, width);
  int y1 = std::clamp(RoundHalfEven((top + size) * sy), y0 + 1, height);
  window.x = x0;
  window.y = y0;
  window.width = x1 - x0;
  window.height = y1 - y0;
  return window;
}

CropWindow PlanCenterCrop(const JpegInfo& info, int size, int resize_shorter) {
  return PlanCenterCrop(info.width, info.height, size, resize_shorter);
}

}  // namespace unirecord
