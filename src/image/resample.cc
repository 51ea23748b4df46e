#include "image/resample.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "unirecord/image.h"

namespace unirecord::image_internal {
namespace {

constexpr int kWeightBits = 22;  // PIL's PRECISION_BITS for 8-bit images

double Triangle(double x) {
  if (x < 0.0) x = -x;
  return x < 1.0 ? 1.0 - x : 0.0;
}

// Per output sample: the first source index, the tap count, and `taps`
// fixed-point weights (PIL's precompute_coeffs + normalize_coeffs_8bpc).
// Returns taps (the stride of `weights`).
int ComputeWeights(int in_size, double in0, double in1, int out_size, std::vector<int>* first,
                   std::vector<int>* count, std::vector<int32_t>* weights) {
  const double scale = (in1 - in0) / out_size;
  const double filter_scale = std::max(scale, 1.0);
  const double support = 1.0 * filter_scale;  // the triangle's support is 1
  const int taps = static_cast<int>(std::ceil(support)) * 2 + 1;
  first->resize(out_size);
  count->resize(out_size);
  weights->assign(static_cast<size_t>(out_size) * taps, 0);
  std::vector<double> w(taps);
  const double inv_filter_scale = 1.0 / filter_scale;
  for (int i = 0; i < out_size; ++i) {
    const double center = in0 + (i + 0.5) * scale;
    int lo = std::max(static_cast<int>(center - support + 0.5), 0);
    int hi = std::min(static_cast<int>(center + support + 0.5), in_size);
    int n = std::max(hi - lo, 0);
    double total = 0.0;
    for (int k = 0; k < n; ++k) {
      w[k] = Triangle((k + lo - center + 0.5) * inv_filter_scale);
      total += w[k];
    }
    int32_t* out = weights->data() + static_cast<size_t>(i) * taps;
    for (int k = 0; k < n; ++k) {
      double normalized = total != 0.0 ? w[k] / total : w[k];
      out[k] = static_cast<int32_t>(normalized < 0 ? -0.5 + normalized * (1 << kWeightBits)
                                                   : 0.5 + normalized * (1 << kWeightBits));
    }
    (*first)[i] = lo;
    (*count)[i] = n;
  }
  return taps;
}

inline uint8_t ToByte(int32_t acc) {
  int32_t v = acc >> kWeightBits;
  return static_cast<uint8_t>(v < 0 ? 0 : v > 255 ? 255 : v);
}

}  // namespace

void ResampleRgb(const uint8_t* src, int src_width, int src_height, size_t src_stride,
                 const SourceBox& box, uint8_t* dst, int dst_width, int dst_height,
                 size_t dst_stride, bool flip, ResampleScratch* s) {
  const int taps_x =
      ComputeWeights(src_width, box.x0, box.x1, dst_width, &s->first_x, &s->count_x, &s->weights_x);
  const int taps_y = ComputeWeights(src_height, box.y0, box.y1, dst_height, &s->first_y,
                                    &s->count_y, &s->weights_y);
  // Horizontal pass over the rows the vertical pass will read.
  const int row_first = s->first_y[0];
  const int row_end = s->first_y[dst_height - 1] + s->count_y[dst_height - 1];
  const size_t hstride = static_cast<size_t>(dst_width) * 3;
  s->horizontal.resize(hstride * std::max(row_end - row_first, 1));
  const bool need_horizontal = dst_width != src_width || box.x0 != 0 || box.x1 != src_width;
  for (int y = row_first; y < row_end; ++y) {
    const uint8_t* in = src + static_cast<size_t>(y) * src_stride;
    uint8_t* out = s->horizontal.data() + (y - row_first) * hstride;
    if (!need_horizontal) {
      if (!flip) {
        std::memcpy(out, in, hstride);
        continue;
      }
      for (int x = 0; x < dst_width; ++x) std::memcpy(out + (dst_width - 1 - x) * 3, in + x * 3, 3);
      continue;
    }
    for (int x = 0; x < dst_width; ++x) {
      const int32_t* w = s->weights_x.data() + static_cast<size_t>(x) * taps_x;
      const uint8_t* p = in + s->first_x[x] * 3;
      int32_t r = 1 << (kWeightBits - 1), g = r, b = r;
      for (int k = 0, n = s->count_x[x]; k < n; ++k) {
        r += p[3 * k] * w[k];
        g += p[3 * k + 1] * w[k];
        b += p[3 * k + 2] * w[k];
      }
      uint8_t* o = out + (flip ? dst_width - 1 - x : x) * 3;
      o[0] = ToByte(r);
      o[1] = ToByte(g);
      o[2] = ToByte(b);
    }
  }
  // Vertical pass: whole rows at a time so the inner loop vectorises.
  const bool need_vertical = dst_height != src_height || box.y0 != 0 || box.y1 != src_height;
  s->accumulators.resize(hstride);
  int32_t* acc = s->accumulators.data();
  for (int y = 0; y < dst_height; ++y) {
    uint8_t* out = dst + static_cast<size_t>(y) * dst_stride;
    if (!need_vertical) {
      std::memcpy(out, s->horizontal.data() + (s->first_y[y] - row_first) * hstride, hstride);
      continue;
    }
    std::fill(acc, acc + hstride, 1 << (kWeightBits - 1));
    const int32_t* w = s->weights_y.data() + static_cast<size_t>(y) * taps_y;
    for (int k = 0, n = s->count_y[y]; k < n; ++k) {
      const uint8_t* row = s->horizontal.data() + (s->first_y[y] - row_first + k) * hstride;
      const int32_t wk = w[k];
      for (size_t i = 0; i < hstride; ++i) acc[i] += row[i] * wk;
    }
    for (size_t i = 0; i < hstride; ++i) out[i] = ToByte(acc[i]);
  }
}

}  // namespace unirecord::image_internal

namespace unirecord {

Status ResizeRgb(const uint8_t* src, int src_width, int src_height, size_t src_stride,
                 uint8_t* dst, int dst_width, int dst_height, bool flip) {
  if (src == nullptr || dst == nullptr || src_width <= 0 || src_height <= 0 || dst_width <= 0 ||
      dst_height <= 0 || src_stride < static_cast<size_t>(src_width) * 3) {
    return Status::InvalidArgument("ResizeRgb: empty image, null buffer or stride < 3 * width");
  }
  image_internal::ResampleScratch scratch;
  image_internal::ResampleRgb(src, src_width, src_height, src_stride,
                              {0, 0, static_cast<double>(src_width),
                               static_cast<double>(src_height)},
                              dst, dst_width, dst_height, static_cast<size_t>(dst_width) * 3, flip,
                              &scratch);
  return Status::OK();
}

}  // namespace unirecord
