// JpegDecoder: crop-before-decode on libjpeg-turbo 2.1.5.
//
// libjpeg reports fatal errors through error_exit, which must not return;
// ours longjmps back. A longjmp over a live C++ object skips its destructor
// (undefined behaviour), so setjmp and every libjpeg call live in
// RunLibjpeg*(), whose locals are plain C data; C++ buffers are sized before
// and read after those calls.
#include <algorithm>
#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <string>

#include <jpeglib.h>

#include "image/crop_resize.h"
#include "image/jpeg_decoder.h"
#include "image/jpeg_header.h"
#include "image/jpeg_huffman.h"
#include "image/jpeg_restart_crop.h"
#include "image/libjpeg_errors.h"
#include "image/resample.h"
#include "util/enum_names.h"

namespace unirecord {

constexpr EnumName<ImageLayout> kImageLayoutNames[] = {{ImageLayout::kNCHW, "NCHW"}, {ImageLayout::kNHWC, "NHWC"}};

const char* ImageLayoutName(ImageLayout layout) { return EnumNameOf(kImageLayoutNames, layout); }

Result<ImageLayout> ParseImageLayout(std::string_view name) { return ParseEnumName(kImageLayoutNames, name, "layout"); }

namespace {

// ------------------------------------------------------------ libjpeg glue --

using image_internal::LibjpegErrors;
using image_internal::Rect;
using image_internal::RgbView;
using image_internal::ScaledSize;

// What to decode, in the stored orientation and in scaled output pixels.
struct RegionRequest {
  const unsigned char* data;
  unsigned long size;
  J_COLOR_SPACE out_color_space;
  int scale_num;               // DCT scale scale_num / 8
  unsigned long max_memory;    // cap on libjpeg's large buffers
  unsigned int image_width;    // scaled size the caller expects
  unsigned int image_height;
  unsigned int crop_x, crop_width;  // columns to ask jpeg_crop_scanline for
  unsigned int y, height;           // rows to return
  unsigned char* rows;         // height rows of `stride` bytes
  size_t stride;
  image_internal::OwnEntropyDecoder* own_entropy;  // our Huffman decoder, when not null
};

struct RegionResult {
  unsigned int x_offset;       // first column libjpeg produced (iMCU-aligned)
  unsigned int output_width;   // columns it produced per row
};

bool RunLibjpegCreate(jpeg_decompress_struct* cinfo, LibjpegErrors* err) {
  cinfo->err = image_internal::InitLibjpegErrors(err, false);
  if (setjmp(err->jump)) return false;
  jpeg_create_decompress(cinfo);
  return true;
}

// Decodes the requested rows. Returns false with err->message set on any
// libjpeg error (the decompressor is reset by jpeg_abort_decompress and
// stays reusable).
bool RunLibjpegDecode(jpeg_decompress_struct* cinfo, LibjpegErrors* err, const RegionRequest* req,
                      RegionResult* result) {
  if (setjmp(err->jump)) {
    jpeg_abort_decompress(cinfo);
    return false;
  }
  jpeg_mem_src(cinfo, req->data, req->size);
  jpeg_read_header(cinfo, TRUE);
  cinfo->out_color_space = req->out_color_space;
  cinfo->scale_num = req->scale_num;
  cinfo->scale_denom = 8;
  cinfo->mem->max_memory_to_use = static_cast<long>(req->max_memory);
  jpeg_start_decompress(cinfo);
  if (cinfo->output_width != req->image_width || cinfo->output_height != req->image_height) {
    std::snprintf(err->message, sizeof err->message,
                  "libjpeg decodes %ux%u pixels but the header probe expected %ux%u",
                  cinfo->output_width, cinfo->output_height, req->image_width,
                  req->image_height);
    jpeg_abort_decompress(cinfo);
    return false;
  }
  if (req->own_entropy != nullptr) req->own_entropy->Install(cinfo, req->max_memory);
  JDIMENSION x = req->crop_x, width = req->crop_width;
  if (x != 0 || width != cinfo->output_width) jpeg_crop_scanline(cinfo, &x, &width);
  result->x_offset = x;
  result->output_width = cinfo->output_width;
  // 2.1.5 skips correctly only from the first row and to the last one.
  if (req->y > 0) jpeg_skip_scanlines(cinfo, req->y);
  const JDIMENSION end = req->y + req->height;
  while (cinfo->output_scanline < end) {
    JSAMPROW rows[16];
    JDIMENSION n = std::min<JDIMENSION>(16, end - cinfo->output_scanline);
    for (JDIMENSION i = 0; i < n; ++i) {
      rows[i] = req->rows + (cinfo->output_scanline - req->y + i) * req->stride;
    }
    jpeg_read_scanlines(cinfo, rows, n);
  }
  if (cinfo->output_scanline < cinfo->output_height) {
    jpeg_skip_scanlines(cinfo, cinfo->output_height - cinfo->output_scanline);
  }
  jpeg_finish_decompress(cinfo);
  return true;
}

// --------------------------------------------------------------- geometry --

// The stored-orientation rectangle under a display-orientation one, for EXIF
// orientation 1..8 (stored image stored_w x stored_h).
Rect DisplayToStored(const Rect& r, int orientation, int stored_w, int stored_h) {
  switch (orientation) {
    case 2: return {stored_w - r.x - r.width, r.y, r.width, r.height};
    case 3: return {stored_w - r.x - r.width, stored_h - r.y - r.height, r.width, r.height};
    case 4: return {r.x, stored_h - r.y - r.height, r.width, r.height};
    case 5: return {r.y, r.x, r.height, r.width};
    case 6: return {r.y, stored_h - r.x - r.width, r.height, r.width};
    case 7: return {stored_w - r.y - r.height, stored_h - r.x - r.width, r.height, r.width};
    case 8: return {stored_w - r.y - r.height, r.x, r.height, r.width};
    default: return r;
  }
}

// Rewrites a stored-orientation RGB block (w x h) in display orientation.
void OrientRgb(const uint8_t* src, int w, int h, size_t stride, int orientation, uint8_t* dst) {
  const bool swap = orientation >= 5;
  const int dw = swap ? h : w, dh = swap ? w : h;
  for (int v = 0; v < dh; ++v) {
    for (int u = 0; u < dw; ++u) {
      int s, t;  // stored column and row of display pixel (u, v)
      switch (orientation) {
        case 2: s = w - 1 - u; t = v; break;
        case 3: s = w - 1 - u; t = h - 1 - v; break;
        case 4: s = u; t = h - 1 - v; break;
        case 5: s = v; t = u; break;
        case 6: s = v; t = h - 1 - u; break;
        case 7: s = w - 1 - v; t = h - 1 - u; break;
        case 8: s = w - 1 - v; t = u; break;
        default: s = u; t = v; break;
      }
      std::memcpy(dst + (static_cast<size_t>(v) * dw + u) * 3, src + t * stride + s * 3, 3);
    }
  }
}

// PIL's CMYK -> RGB (ink amounts; R = (255 - K) * (255 - C) / 255 rounded as
// PIL does). Adobe files store inverted samples.
void CmykToRgb(const uint8_t* src, int width, bool inverted, uint8_t* dst) {
  auto muldiv255 = [](int a, int b) {
    int t = a * b + 128;
    return ((t >> 8) + t) >> 8;
  };
  for (int x = 0; x < width; ++x, src += 4, dst += 3) {
    int c = src[0], m = src[1], y = src[2], k = src[3];
    if (inverted) {
      c = 255 - c;
      m = 255 - m;
      y = 255 - y;
      k = 255 - k;
    }
    const int nk = 255 - k;
    dst[0] = static_cast<uint8_t>(std::max(0, nk - muldiv255(c, nk)));
    dst[1] = static_cast<uint8_t>(std::max(0, nk - muldiv255(m, nk)));
    dst[2] = static_cast<uint8_t>(std::max(0, nk - muldiv255(y, nk)));
  }
}

// DCT scales 1/8, 2/8 and 4/8 have fast reduced IDCTs; the other M/8 do not
// and cost about as much as a full decode, so only these are used.
int ChooseScale(const JpegInfo& info, const CropWindow& window, int out_width, int out_height) {
  // 2.1.5 crops wrongly with DCT scaling for 4x2/2x4-style sampling.
  switch (info.subsampling) {
    case JpegSubsampling::kGray:
    case JpegSubsampling::k444:
    case JpegSubsampling::k422:
    case JpegSubsampling::k420:
    case JpegSubsampling::k440:
      break;
    default:
      return 8;
  }
  for (int m : {1, 2, 4}) {
    if (int64_t{window.width} * m >= int64_t{16} * out_width &&
        int64_t{window.height} * m >= int64_t{16} * out_height) {
      return m;
    }
  }
  return 8;
}

// What the header probe found.
struct Probe {
  JpegInfo info;
  image_internal::JpegHeaderLayout layout;
};

}  // namespace

// ------------------------------------------------------------ JpegDecoder --

struct JpegDecoder::State {
  jpeg_decompress_struct cinfo;
  LibjpegErrors err;
  bool created = false;
  std::vector<uint8_t> rows;      // libjpeg's output (3 or 4 channels)
  std::vector<uint8_t> rgb;       // CMYK converted to RGB
  std::vector<uint8_t> oriented;  // EXIF orientation applied
  image_internal::ResampleScratch resample;
  image_internal::RestartCropScratch restart_crop;
  image_internal::OwnEntropyDecoder own_entropy;

  // Decodes `region` (display orientation, scaled pixels at scale_num/8) of
  // the image into a view of RGB pixels.
  Status DecodeRegion(std::string_view bytes, const Probe& probe, const DecodeOptions& options,
                      int scale_num, const Rect& region, RgbView* view, DecodeStats* stats);
};

JpegDecoder::JpegDecoder(const DecodeOptions& options)
    : options_(options), state_(std::make_unique<State>()) {
  std::memset(&state_->cinfo, 0, sizeof state_->cinfo);
  std::memset(&state_->err, 0, sizeof state_->err);
  state_->created = RunLibjpegCreate(&state_->cinfo, &state_->err);
}

JpegDecoder::~JpegDecoder() {
  if (state_->created) jpeg_destroy_decompress(&state_->cinfo);
}

Status JpegDecoder::State::DecodeRegion(std::string_view bytes, const Probe& probe,
                                        const DecodeOptions& options, int scale_num,
                                        const Rect& region, RgbView* view, DecodeStats* stats) {
  if (!created) return Status::Internal("libjpeg decompressor could not be created");
  const JpegInfo& info = probe.info;
  const int orientation = options.apply_exif ? info.exif_orientation : 1;
  const int stored_w = ScaledSize(info.width, scale_num);
  const int stored_h = ScaledSize(info.height, scale_num);
  const Rect stored = DisplayToStored(region, orientation, stored_w, stored_h);
  const bool cmyk = info.components == 4;
  const int channels = cmyk ? 4 : 3;

  RegionRequest req;
  req.out_color_space = cmyk ? JCS_CMYK : JCS_RGB;
  req.scale_num = scale_num;
  req.max_memory = static_cast<unsigned long>(
      std::min<int64_t>(options.limits.max_pixels * 8, int64_t{1} << 31));
  req.height = static_cast<unsigned int>(stored.height);
  RegionResult result{};
  // Decodes `data` (an image_w x image_h scaled-pixel JPEG whose top-left is
  // (origin_x, origin_y) of the stored image) into `rows`. Extra columns:
  // with fancy upsampling, the first and last columns of a cropped decode
  // differ from the same columns of a full decode. One on the right is not
  // enough when the crop starts at column 0 and is 2 wide (both columns are
  // then edges), hence two.
  bool own_entropy_used = false;
  auto decode = [&](std::string_view data, int image_w, int image_h, int origin_x, int origin_y,
                    bool strict, bool own_entropy_wanted) {
    const int x = stored.x - origin_x;
    const int crop_x0 = std::max(x - 1, 0);
    const int crop_x1 = std::min(x + stored.width + 2, image_w);
    req.data = reinterpret_cast<const unsigned char*>(data.data());
    req.size = data.size();
    req.image_width = static_cast<unsigned int>(image_w);
    req.image_height = static_cast<unsigned int>(image_h);
    req.crop_x = static_cast<unsigned int>(crop_x0);
    req.crop_width = static_cast<unsigned int>(crop_x1 - crop_x0);
    req.y = static_cast<unsigned int>(stored.y - origin_y);
    req.stride = static_cast<size_t>(image_w) * channels;
    rows.resize(req.stride * stored.height);
    req.rows = rows.data();
    req.own_entropy = own_entropy_wanted && options.own_entropy_decoder ? &own_entropy : nullptr;
    image_internal::InitLibjpegErrors(&err, strict);
    const bool ok = RunLibjpegDecode(&cinfo, &err, &req, &result);
    own_entropy_used = ok && req.own_entropy != nullptr && own_entropy.installed();
    result.x_offset += origin_x;  // now a column of the stored image
    return ok;
  };

  // The fast layout: decode only the restart segments under the region,
  // plus one pixel around it for the chroma upsampler, entropy-decoded by
  // our decoder (jpeg_huffman.h). Any warning there means the data is not
  // what the grid promised: fall back to the whole scan, all libjpeg's.
  bool ok = false;
  int segments = 0;
  image_internal::RestartGrid grid;
  bool whole_scan_own_entropy = false;  // the region needs every segment
  if (image_internal::FindRestartGrid(info, probe.layout, &grid)) {
    const int unit = 8 / scale_num;  // full-scale pixels per decoded pixel
    const int x0 = std::max(stored.x - 1, 0), x1 = std::min(stored.x + stored.width + 1, stored_w);
    const int y0 = std::max(stored.y - 1, 0), y1 = std::min(stored.y + stored.height + 1, stored_h);
    image_internal::SubImage sub;
    if (image_internal::AssembleSubImage(bytes, probe.layout, grid, x0 * unit, y0 * unit,
                                         (x1 - 1) * unit + 1, (y1 - 1) * unit + 1, &restart_crop,
                                         &sub)) {
      if (sub.whole_image) {
        whole_scan_own_entropy = true;
      } else {
        ok = decode(restart_crop.jpeg, ScaledSize(sub.width, scale_num),
                    ScaledSize(sub.height, scale_num), sub.x / unit, sub.y / unit, true, true);
        if (ok) segments = sub.segments;
      }
    }
  }
  if (!ok) ok = decode(bytes, stored_w, stored_h, 0, 0, options.strict, whole_scan_own_entropy);
  if (stats != nullptr) {
    stats->warnings = err.warnings;
    stats->first_warning = err.first_warning;
    stats->scale_num = scale_num;
    stats->decoded_width = static_cast<int>(result.output_width);
    stats->decoded_height = stored.height;
    stats->restart_segments = segments;
    stats->own_entropy_decoder = own_entropy_used;
  }
  if (!ok) {
    std::string message = err.message;
    if (options.strict && err.warnings > 0) {
      return Status::Corruption("JPEG data (strict mode): " + message);
    }
    return Status::Corruption("JPEG decode: " + message);
  }
  const size_t stride = req.stride;  // of the image libjpeg decoded (the sub-image's or the file's)
  const uint8_t* block = rows.data() + (stored.x - static_cast<int>(result.x_offset)) * channels;
  size_t block_stride = stride;
  if (cmyk) {
    rgb.resize(static_cast<size_t>(stored.width) * 3 * stored.height);
    for (int y = 0; y < stored.height; ++y) {
      CmykToRgb(block + y * stride, stored.width, info.has_adobe_marker,
                rgb.data() + static_cast<size_t>(y) * stored.width * 3);
    }
    block = rgb.data();
    block_stride = static_cast<size_t>(stored.width) * 3;
  }
  if (orientation != 1) {
    oriented.resize(static_cast<size_t>(stored.width) * stored.height * 3);
    OrientRgb(block, stored.width, stored.height, block_stride, orientation, oriented.data());
    block = oriented.data();
    block_stride = static_cast<size_t>(region.width) * 3;
  }
  *view = {block, region.width, region.height, block_stride};
  return Status::OK();
}

namespace {

// Probes and checks limits (and, in strict mode, the EOI marker).
Status Prepare(std::string_view bytes, const DecodeOptions& options, Probe* probe) {
  JpegInfo* info = &probe->info;
  UREC_ASSIGN_OR_RETURN(*info, image_internal::ProbeJpegHeader(bytes, &probe->layout));
  UREC_RETURN_IF_ERROR(CheckDecodable(*info, options.limits));
  if (options.strict && !info->has_eoi) {
    return Status::Corruption("JPEG data (strict mode): truncated, no EOI marker at the end");
  }
  return Status::OK();
}

}  // namespace

// One JPEG as the shared crop/resize stage sees it.
class JpegDecoder::Image : public image_internal::RegionDecoder {
 public:
  Image(State* state, std::string_view bytes, const DecodeOptions& options, DecodeStats* stats)
      : state_(state), bytes_(bytes), options_(options), stats_(stats) {}

  Status Open() override { return Prepare(bytes_, options_, &probe_); }

  int width() const override { return probe_.info.window_width(options_.apply_exif); }
  int height() const override { return probe_.info.window_height(options_.apply_exif); }
  int ChooseScale(const CropWindow& window, int out_width, int out_height) const override {
    return options_.dct_scaling ? unirecord::ChooseScale(probe_.info, window, out_width, out_height) : 8;
  }
  Status DecodeRegion(int scale_num, const Rect& region, RgbView* view) override {
    return state_->DecodeRegion(bytes_, probe_, options_, scale_num, region, view, stats_);
  }

 private:
  State* state_;
  std::string_view bytes_;
  const DecodeOptions& options_;
  DecodeStats* stats_;
  Probe probe_;
};

Result<RgbImage> JpegDecoder::Decode(std::string_view bytes, DecodeStats* stats) {
  Image image(state_.get(), bytes, options_, stats);
  return image_internal::DecodeWhole(&image);
}

Result<RgbImage> JpegDecoder::DecodeCrop(std::string_view bytes, const CropWindow& window,
                                         DecodeStats* stats) {
  Image image(state_.get(), bytes, options_, stats);
  return image_internal::DecodeWindow(&image, window);
}

Status JpegDecoder::DecodeCropResized(std::string_view bytes, const CropWindow& window,
                                      int out_width, int out_height, uint8_t* out,
                                      size_t out_size, DecodeStats* stats) {
  Image image(state_.get(), bytes, options_, stats);
  return image_internal::DecodeWindowResized(&image, window, out_width, out_height,
                                             options_.layout, options_.limits,
                                             &state_->resample, out, out_size);
}

Status JpegDecoder::DecodeCenterCrop(std::string_view bytes, int size, int resize_shorter,
                                     uint8_t* out, size_t out_size, DecodeStats* stats) {
  Image image(state_.get(), bytes, options_, stats);
  return image_internal::DecodeCenterCropResized(&image, size, resize_shorter, options_.layout,
                                                 options_.limits, &state_->resample, out,
                                                 out_size);
}

}  // namespace unirecord
