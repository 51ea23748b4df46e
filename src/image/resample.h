// Internal: antialiased bilinear resampling of packed RGB with a fractional
// source box, the arithmetic of PIL's Image.resize(BILINEAR) (fixed-point
// weights with 22 fractional bits, horizontal pass then vertical pass, 8-bit
// rounding between them) so that results equal torchvision on PIL images.
#ifndef UNIRECORD_SRC_IMAGE_RESAMPLE_H_
#define UNIRECORD_SRC_IMAGE_RESAMPLE_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "unirecord/status.h"

namespace unirecord::image_internal {

// A region of the source in pixel units, as PIL's `box` argument.
struct SourceBox {
  double x0, y0, x1, y1;
};

// One axis of a resampling in PIL's terms: the source span [in0, in1) of an
// axis in_size long is resampled onto out_size samples, of which outputs
// [out_first, out_first + out_count) are produced. Taps are clipped to
// [0, in_size) -- the image, not the span -- as PIL does, so producing a
// sub-range equals resampling everything and cropping afterwards.
struct Axis {
  int in_size;
  double in0, in1;
  int out_size;
  int out_first;
  int out_count;
};

// The source indices [*lo, *hi) that the produced outputs of `axis` read.
void SourceRange(const Axis& axis, int* lo, int* hi);

// Two adjacent outputs of the AVX2 horizontal pass: byte offsets of their
// first source pixels, the number of tap pairs (-1: too near the row's end
// for 8-byte loads, done in scalar code) and where their weights start (in
// 32-byte units of ResampleScratch::pair_weights).
struct HorizontalPair {
  int src0, src1;
  int tap_pairs;
  int weight_index;
};

// 16 adjacent output bytes of the AVX-512 horizontal pass: the byte offset of
// their 128-byte source window, the number of tap pairs, and where their
// tables start (in 64-byte units of ResampleScratch::group_tables).
struct HorizontalGroup {
  int window;
  int tap_pairs;
  int table_index;
};

// Which kernel set ResampleRgbAxes runs; each falls back to the next one down
// where the CPU lacks its instructions. All give the same bytes.
enum class ResampleKernels {
  kBest,      // AVX-512 (BW, VBMI, VNNI), else AVX2, else portable
  kAvx2,      // AVX2, else portable
  kPortable,  // plain C++ (what a CPU without AVX2 runs)
};

// Buffers reused across calls (one per JpegDecoder).
struct ResampleScratch {
  std::vector<int32_t> weights_x, weights_y;
  std::vector<int> first_x, count_x, first_y, count_y;
  std::vector<uint8_t> horizontal;  // output of the horizontal pass
  std::vector<int32_t> accumulators;
  std::vector<uint8_t> packed_row;  // one output row before it is split into planes
  std::vector<HorizontalPair> pairs;
  std::vector<int16_t> pair_weights;
  std::vector<HorizontalGroup> groups;
  std::vector<int16_t> group_tables;
  // kBest (default) in the library; the others let tests and bench/ compare
  // every kernel set on one box.
  ResampleKernels kernels = ResampleKernels::kBest;
};

// Resamples `box` of src (src_width x src_height RGB, src_stride bytes per
// row) to dst (dst_width x dst_height, dst_stride bytes per row), mirrored
// left-right when flip. Filter taps are clipped to the source, not to the
// box, as PIL does. Callers validate sizes (all positive, box inside src).
// plane_bytes > 0 writes three planes R, G, B instead of packed RGB (CHW, as
// PILToTensor): plane c starts at dst + c * plane_bytes, and dst_stride is
// then the row stride within a plane.
void ResampleRgb(const uint8_t* src, int src_width, int src_height, size_t src_stride,
                 const SourceBox& box, uint8_t* dst, int dst_width, int dst_height,
                 size_t dst_stride, bool flip, ResampleScratch* scratch, size_t plane_bytes = 0);

// The general form: `region` holds image pixels [region_x, region_x +
// region_width) x [region_y, region_y + region_height) with row stride
// region_stride, and must cover SourceRange of both axes; dst receives
// ax.out_count x ay.out_count pixels.
void ResampleRgbAxes(const uint8_t* region, int region_x, int region_y, int region_width,
                     int region_height, size_t region_stride, const Axis& ax, const Axis& ay,
                     uint8_t* dst, size_t dst_stride, bool flip, ResampleScratch* scratch,
                     size_t plane_bytes = 0);

// The instruction sets of the AVX-512 kernels (their target attribute).
#define UNIRECORD_AVX512 "avx512f,avx512bw,avx512vl,avx512vbmi,avx512vnni"

// Packed RGB of `pixels` pixels into the planes r, g, b (split_planes.cc);
// SplitPlanesAvx512, 64 pixels per step, only where the CPU has
// UNIRECORD_AVX512 (ResampleKernels::kBest picks it).
void SplitPlanes(const uint8_t* rgb, size_t pixels, uint8_t* r, uint8_t* g, uint8_t* b);
__attribute__((target(UNIRECORD_AVX512))) void SplitPlanesAvx512(const uint8_t* rgb, size_t pixels, uint8_t* r,
                                                                uint8_t* g, uint8_t* b);

}  // namespace unirecord::image_internal

#endif  // UNIRECORD_SRC_IMAGE_RESAMPLE_H_
