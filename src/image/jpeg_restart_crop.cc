#include "image/jpeg_restart_crop.h"

#include <algorithm>
#include <cstring>

namespace unirecord::image_internal {
namespace {

int CeilDiv(int a, int b) { return (a + b - 1) / b; }

// Records where segments 0..last begin and end (the end is the first byte
// of the marker, or of the fill bytes before it). False unless they are
// numbered RST0..RST7 in turn and the scan has at least last + 1 of them
// and at most `total`.
bool FindSegments(std::string_view bytes, size_t scan_data, int last, int total,
                  RestartCropScratch* scratch) {
  const auto* b = reinterpret_cast<const unsigned char*>(bytes.data());
  const size_t n = bytes.size();
  scratch->segment_begin.assign(1, scan_data);
  scratch->segment_end.clear();
  size_t pos = scan_data;
  for (;;) {
    const void* hit = pos < n ? std::memchr(b + pos, 0xFF, n - pos) : nullptr;
    if (hit == nullptr) return false;  // cut short: no marker ends the segment
    const size_t marker_begin = static_cast<const unsigned char*>(hit) - b;
    size_t p = marker_begin;
    while (p < n && b[p] == 0xFF) ++p;
    if (p >= n) return false;
    const unsigned char code = b[p];
    pos = p + 1;
    if (code == 0x00) continue;  // a stuffed 0xFF data byte
    const int segment = static_cast<int>(scratch->segment_end.size());
    if (code >= 0xD0 && code <= 0xD7) {
      if (code != 0xD0 + segment % 8 || segment + 1 >= total) return false;
      scratch->segment_end.push_back(marker_begin);
      if (segment == last) return true;
      scratch->segment_begin.push_back(pos);
      continue;
    }
    if (code != 0xD9 || segment != total - 1) return false;  // EOI after the last segment only
    scratch->segment_end.push_back(marker_begin);
    return true;
  }
}

void PutU16(std::string* s, size_t at, int value) {
  (*s)[at] = static_cast<char>(value >> 8);
  (*s)[at + 1] = static_cast<char>(value & 0xFF);
}

}  // namespace

bool FindRestartGrid(const JpegInfo& info, const JpegHeaderLayout& layout, RestartGrid* grid) {
  if (info.arithmetic || info.precision != 8 || layout.restart_interval == 0 ||
      (info.process != JpegProcess::kBaseline &&
       info.process != JpegProcess::kExtendedSequential) ||
      info.components < 1 || info.components > 4 || layout.scan_components != info.components ||
      info.width <= 0 || info.height <= 0) {
    return false;
  }
  int max_h = 1, max_v = 1;
  if (info.components > 1) {
    for (int c = 0; c < info.components; ++c) {
      max_h = std::max(max_h, layout.h_samp[c]);
      max_v = std::max(max_v, layout.v_samp[c]);
    }
  }
  // A single-component scan codes 8x8 blocks one by one, whatever the
  // sampling factors the frame header declares.
  grid->image_width = info.width;
  grid->image_height = info.height;
  grid->mcu_width = 8 * max_h;
  grid->mcu_height = 8 * max_v;
  grid->mcus_per_row = CeilDiv(info.width, grid->mcu_width);
  grid->mcu_rows = CeilDiv(info.height, grid->mcu_height);
  grid->segment_mcus = static_cast<int>(layout.restart_interval);
  if (grid->mcus_per_row % grid->segment_mcus != 0) return false;
  grid->segments_per_row = grid->mcus_per_row / grid->segment_mcus;
  return true;
}

bool AssembleSubImage(std::string_view bytes, const JpegHeaderLayout& layout,
                      const RestartGrid& grid, int x0, int y0, int x1, int y1,
                      RestartCropScratch* scratch, SubImage* sub) {
  const int seg_w = grid.segment_width();
  int c0 = x0 / seg_w;
  const int c1 = (x1 - 1) / seg_w;
  const int r0 = y0 / grid.mcu_height;
  const int r1 = (y1 - 1) / grid.mcu_height;
  if (x0 < 0 || y0 < 0 || x1 <= x0 || y1 <= y0 || c1 >= grid.segments_per_row ||
      r1 >= grid.mcu_rows) {
    return false;
  }
  const int width = grid.image_width, height = grid.image_height;
  // libjpeg upsamples chroma less smoothly ("fancy" off) in an image whose
  // subsampled width is at most 2: a sub-image of only the partial MCU at the
  // right edge would differ from the whole image. Give it a neighbour.
  if (c0 > 0 && width - c0 * seg_w < grid.mcu_width) --c0;
  sub->x = c0 * seg_w;
  sub->y = r0 * grid.mcu_height;
  sub->width = std::min((c1 + 1) * seg_w, width) - sub->x;
  sub->height = std::min((r1 + 1) * grid.mcu_height, height) - sub->y;
  sub->segments = (c1 - c0 + 1) * (r1 - r0 + 1);
  sub->whole_image = sub->width == width && sub->height == height;
  if (sub->whole_image) return true;

  const int total = grid.segments_per_row * grid.mcu_rows;
  const int last = r1 * grid.segments_per_row + c1;
  if (!FindSegments(bytes, layout.scan_data, last, total, scratch)) return false;

  std::string& out = scratch->jpeg;
  out.assign(bytes.data(), layout.scan_data);
  PutU16(&out, layout.sof_payload + 1, sub->height);
  PutU16(&out, layout.sof_payload + 3, sub->width);
  int written = 0;
  for (int r = r0; r <= r1; ++r) {
    for (int c = c0; c <= c1; ++c) {
      const int s = r * grid.segments_per_row + c;
      if (written > 0) {
        out.push_back(static_cast<char>(0xFF));
        out.push_back(static_cast<char>(0xD0 + (written - 1) % 8));
      }
      out.append(bytes.data() + scratch->segment_begin[s],
                 scratch->segment_end[s] - scratch->segment_begin[s]);
      ++written;
    }
  }
  out.push_back(static_cast<char>(0xFF));
  out.push_back(static_cast<char>(0xD9));
  return true;
}

}  // namespace unirecord::image_internal
