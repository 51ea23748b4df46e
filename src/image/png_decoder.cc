// The PNG probe and decoder, on libpng 1.6 (chosen over libspng by
// measurement: docs/image.md).
//
// libpng reports fatal errors through a callback that must not return; ours
// longjmps back. A longjmp over a live C++ object skips its destructor, so
// setjmp and every libpng call live in RunLibpng*(), whose locals are plain
// C data; C++ buffers are sized before and read after those calls.
#include "image/png_decoder.h"

#include <algorithm>
#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <string>

#include <png.h>

#include "image/image_format.h"

namespace unirecord {
namespace {

using image_internal::Rect;
using image_internal::RgbView;

uint32_t ReadU32(const unsigned char* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
}

// PNG's colour types, and the bit depths each allows (PNG spec 11.2.2).
bool ValidDepth(int color_type, int depth) {
  switch (color_type) {
    case 0: return depth == 1 || depth == 2 || depth == 4 || depth == 8 || depth == 16;
    case 3: return depth == 1 || depth == 2 || depth == 4 || depth == 8;
    case 2: case 4: case 6: return depth == 8 || depth == 16;
    default: return false;
  }
}

// Samples per pixel of a colour type.
int Channels(int color_type) {
  switch (color_type) {
    case 2: return 3;
    case 4: return 2;
    case 6: return 4;
    default: return 1;
  }
}

// ------------------------------------------------------------- libpng glue --

struct PngRead {
  const unsigned char* data;
  size_t size;
  size_t offset;
  jmp_buf jump;
  char message[200];
  int warnings;
  char first_warning[200];
};

void ReadData(png_structp png, png_bytep out, size_t n) {
  auto* r = static_cast<PngRead*>(png_get_io_ptr(png));
  if (n > r->size - r->offset) png_error(png, "truncated: the data ends inside a chunk");
  std::memcpy(out, r->data + r->offset, n);
  r->offset += n;
}

[[noreturn]] void OnError(png_structp png, png_const_charp message) {
  auto* r = static_cast<PngRead*>(png_get_error_ptr(png));
  std::snprintf(r->message, sizeof r->message, "%s", message);
  std::longjmp(r->jump, 1);
}

void OnWarning(png_structp png, png_const_charp message) {
  auto* r = static_cast<PngRead*>(png_get_error_ptr(png));
  if (r->warnings++ == 0) std::snprintf(r->first_warning, sizeof r->first_warning, "%s", message);
}

// What to read: rows [y0, y1) into `rows` (row_bytes each, as libpng gives
// them after png_set_packing: one byte per sample below 8 bits, 16-bit
// samples big-endian), `scratch` (row_bytes) for the rows outside.
struct RowRequest {
  int y0, y1;
  bool read_to_end;         // every row and the chunks up to IEND
  unsigned char* rows;
  unsigned char* scratch;
  size_t row_bytes;         // what the caller sized the buffers for
  uint32_t width, height;   // what the probe found, checked against libpng's
  int max_dimension;
  png_color palette[256];   // out: PLTE (num_palette entries)
  int num_palette;
};

bool RunLibpngRead(PngRead* r, RowRequest* req) {
  // Neither pointer changes after setjmp, so both are valid after a longjmp.
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, r, OnError, OnWarning);
  png_infop info = png != nullptr ? png_create_info_struct(png) : nullptr;
  if (info == nullptr) {
    png_destroy_read_struct(&png, nullptr, nullptr);
    std::snprintf(r->message, sizeof r->message, "libpng could not allocate its reader");
    return false;
  }
  if (setjmp(r->jump)) {
    png_destroy_read_struct(&png, &info, nullptr);
    return false;
  }
  png_set_read_fn(png, r, ReadData);
  png_set_user_limits(png, static_cast<png_uint_32>(req->max_dimension),
                      static_cast<png_uint_32>(req->max_dimension));
  png_read_info(png, info);
  if (png_get_image_width(png, info) != req->width || png_get_image_height(png, info) != req->height) {
    png_error(png, "libpng reads another size than the header probe");
  }
  png_set_packing(png);
  const int passes = png_set_interlace_handling(png);
  png_read_update_info(png, info);
  if (png_get_rowbytes(png, info) != req->row_bytes) png_error(png, "unexpected row size");
  req->num_palette = 0;
  if (png_get_color_type(png, info) == PNG_COLOR_TYPE_PALETTE) {
    png_colorp palette = nullptr;
    int count = 0;
    if (png_get_PLTE(png, info, &palette, &count) == 0) png_error(png, "palette image without PLTE");
    req->num_palette = std::min(count, 256);
    std::memcpy(req->palette, palette, sizeof(png_color) * req->num_palette);
  }
  // Interlaced images need every pass; a plain one stops after the window.
  const int last = passes > 1 || req->read_to_end ? static_cast<int>(req->height) : req->y1;
  for (int pass = 0; pass < passes; ++pass) {
    for (int y = 0; y < last; ++y) {
      unsigned char* row = y >= req->y0 && y < req->y1
                               ? req->rows + static_cast<size_t>(y - req->y0) * req->row_bytes
                               : req->scratch;
      png_read_row(png, row, nullptr);
    }
  }
  if (req->read_to_end) png_read_end(png, nullptr);
  png_destroy_read_struct(&png, &info, nullptr);
  return true;
}

// ------------------------------------------------------- PIL's conversion --

// One row of libpng samples (after png_set_packing) to RGB, as Pillow 9's
// PNG reader and convert("RGB") do it (the table in ImageDecoder's comment).
void RowToRgb(const uint8_t* in, int width, int color_type, int depth, const uint8_t* palette,
              uint8_t* out) {
  const bool wide = depth == 16;
  switch (color_type) {
    case 0:
      if (wide) {
        // Mode "I": the 16-bit value, clipped to 255 by convert("RGB").
        for (int x = 0; x < width; ++x, in += 2, out += 3) out[0] = out[1] = out[2] = in[0] ? 255 : in[1];
      } else {
        const int scale = depth == 1 ? 255 : depth == 2 ? 85 : depth == 4 ? 17 : 1;
        for (int x = 0; x < width; ++x, ++in, out += 3) out[0] = out[1] = out[2] = static_cast<uint8_t>(in[0] * scale);
      }
      return;
    case 4: {
      const int step = wide ? 4 : 2;  // the gray sample's high byte, alpha dropped
      for (int x = 0; x < width; ++x, in += step, out += 3) out[0] = out[1] = out[2] = in[0];
      return;
    }
    case 2:
    case 6: {
      const int channels = color_type == 2 ? 3 : 4;
      if (!wide && channels == 3) {
        std::memcpy(out, in, static_cast<size_t>(width) * 3);
        return;
      }
      const int sample = wide ? 2 : 1;  // high bytes of R, G, B; alpha dropped
      const int step = channels * sample;
      for (int x = 0; x < width; ++x, in += step, out += 3) {
        out[0] = in[0];
        out[1] = in[sample];
        out[2] = in[2 * sample];
      }
      return;
    }
    case 3:
      for (int x = 0; x < width; ++x, ++in, out += 3) std::memcpy(out, palette + 3 * in[0], 3);
      return;
  }
}

}  // namespace

// ------------------------------------------------------------------ probe --

Result<PngInfo> ProbePng(std::string_view bytes) {
  const auto* b = reinterpret_cast<const unsigned char*>(bytes.data());
  if (bytes.substr(0, 8) != image_internal::kPngSignature) {
    return Status::InvalidArgument("not a PNG: " + image_internal::DescribeFormat(bytes));
  }
  // Signature, then IHDR: length 13, type, 13 bytes of fields, CRC.
  if (bytes.size() < 8 + 8 + 13 + 4) return Status::Corruption("PNG header: truncated before the end of IHDR");
  if (ReadU32(b + 8) != 13 || bytes.substr(12, 4) != "IHDR") {
    return Status::Corruption("PNG header: the first chunk is not a 13-byte IHDR");
  }
  const unsigned char* f = b + 16;
  const uint32_t width = ReadU32(f), height = ReadU32(f + 4);
  PngInfo info;
  info.bit_depth = f[8];
  info.color_type = f[9];
  if (width == 0 || height == 0 || width > 0x7fffffffu || height > 0x7fffffffu) {
    return Status::Corruption("PNG header: size " + std::to_string(width) + "x" + std::to_string(height));
  }
  if (!ValidDepth(info.color_type, info.bit_depth)) {
    return Status::Corruption("PNG header: colour type " + std::to_string(info.color_type) +
                              " with bit depth " + std::to_string(info.bit_depth));
  }
  if (f[10] != 0 || f[11] != 0 || f[12] > 1) {
    return Status::Corruption("PNG header: unknown compression, filter or interlace method");
  }
  info.width = static_cast<int>(width);
  info.height = static_cast<int>(height);
  info.interlaced = f[12] == 1;
  static const char kIend[] = "\0\0\0\0IEND\xae\x42\x60\x82";
  info.has_iend = bytes.size() >= 8 + 25 + 12 && bytes.substr(bytes.size() - 12) == std::string_view(kIend, 12);
  return info;
}

Status image_internal::CheckPngSize(const PngInfo& info, uint64_t file_bytes, const DecodeLimits& limits) {
  UREC_RETURN_IF_ERROR(CheckOutputSize(info.width, info.height, limits).WithContext("PNG"));
  const uint64_t filtered_row = (uint64_t(info.width) * Channels(info.color_type) * info.bit_depth + 7) / 8 + 1;
  if (file_bytes * 1032 < filtered_row * uint64_t(info.height)) {
    return Status::Corruption("PNG header claims " + std::to_string(info.width) + "x" +
                              std::to_string(info.height) + " pixels, more than a " +
                              std::to_string(file_bytes) + "-byte file can code");
  }
  return Status::OK();
}

// ---------------------------------------------------------------- decoder --

Status image_internal::DecodePngMask(std::string_view bytes, const DecodeLimits& limits, std::vector<uint8_t>* plane,
                                     int* width, int* height) {
  UREC_ASSIGN_OR_RETURN(const PngInfo info, ProbePng(bytes));
  const bool labels = info.color_type == PNG_COLOR_TYPE_PALETTE || (info.color_type == PNG_COLOR_TYPE_GRAY && info.bit_depth == 8);
  if (!labels) {
    return Status::NotSupported("a mask PNG must be a palette or an 8-bit gray image, not colour type " +
                                std::to_string(info.color_type) + " of " + std::to_string(info.bit_depth) +
                                " bits");
  }
  UREC_RETURN_IF_ERROR(CheckPngSize(info, bytes.size(), limits));
  // One byte per sample after png_set_packing (palette indices unscaled).
  const size_t row_bytes = static_cast<size_t>(info.width);
  plane->resize(row_bytes * (static_cast<size_t>(info.height) + 1));
  PngRead r{};
  r.data = reinterpret_cast<const unsigned char*>(bytes.data());
  r.size = bytes.size();
  RowRequest req{};
  req.y0 = 0;
  req.y1 = info.height;
  req.read_to_end = false;
  req.rows = plane->data();
  req.scratch = plane->data() + row_bytes * info.height;
  req.row_bytes = row_bytes;
  req.width = static_cast<uint32_t>(info.width);
  req.height = static_cast<uint32_t>(info.height);
  req.max_dimension = limits.max_dimension;
  if (!RunLibpngRead(&r, &req)) return Status::Corruption(std::string("PNG decode: ") + r.message);
  plane->resize(row_bytes * info.height);
  *width = info.width;
  *height = info.height;
  return Status::OK();
}

class ImageDecoder::PngDecoder::Image : public image_internal::RegionDecoder {
 public:
  Image(PngDecoder* decoder, std::string_view bytes) : decoder_(decoder), bytes_(bytes) {}

  Status Open() override {
    UREC_ASSIGN_OR_RETURN(info_, ProbePng(bytes_));
    return image_internal::CheckPngSize(info_, bytes_.size(), decoder_->options_.limits);
  }

  int width() const override { return info_.width; }
  int height() const override { return info_.height; }
  int ChooseScale(const CropWindow&, int, int) const override { return 8; }
  Status DecodeRegion(int scale_num, const Rect& region, RgbView* view) override;

 private:
  PngDecoder* decoder_;
  std::string_view bytes_;
  PngInfo info_;
};

Status ImageDecoder::PngDecoder::Image::DecodeRegion(int scale_num, const Rect& region, RgbView* view) {
  if (scale_num != 8) return Status::Internal("PNG has no scaled decode");
  const DecodeOptions& options = decoder_->options_;
  const size_t sample_bytes = info_.bit_depth == 16 ? 2 : 1;
  const size_t row_bytes = static_cast<size_t>(info_.width) * Channels(info_.color_type) * sample_bytes;
  std::vector<uint8_t>& raw = decoder_->raw_;
  raw.resize(row_bytes * (static_cast<size_t>(region.height) + 1));

  PngRead r{};
  r.data = reinterpret_cast<const unsigned char*>(bytes_.data());
  r.size = bytes_.size();
  RowRequest req{};
  req.y0 = region.y;
  req.y1 = region.y + region.height;
  req.read_to_end = options.strict;
  req.rows = raw.data();
  req.scratch = raw.data() + row_bytes * region.height;
  req.row_bytes = row_bytes;
  req.width = static_cast<uint32_t>(info_.width);
  req.height = static_cast<uint32_t>(info_.height);
  req.max_dimension = options.limits.max_dimension;
  if (!RunLibpngRead(&r, &req)) return Status::Corruption(std::string("PNG decode: ") + r.message);
  if (options.strict && r.warnings > 0) {
    return Status::Corruption(std::string("PNG data (strict mode): ") + r.first_warning);
  }

  // Pillow's palette: entries past the PLTE are gray (i, i, i).
  uint8_t palette[256 * 3];
  for (int i = 0; i < 256; ++i) {
    const bool stored = i < req.num_palette;
    palette[3 * i] = stored ? req.palette[i].red : static_cast<uint8_t>(i);
    palette[3 * i + 1] = stored ? req.palette[i].green : static_cast<uint8_t>(i);
    palette[3 * i + 2] = stored ? req.palette[i].blue : static_cast<uint8_t>(i);
  }
  const size_t out_stride = static_cast<size_t>(region.width) * 3;
  std::vector<uint8_t>& rgb = decoder_->rgb_;
  rgb.resize(out_stride * region.height);
  const size_t first = static_cast<size_t>(region.x) * Channels(info_.color_type) * sample_bytes;
  for (int y = 0; y < region.height; ++y) {
    RowToRgb(raw.data() + y * row_bytes + first, region.width, info_.color_type, info_.bit_depth,
             palette, rgb.data() + y * out_stride);
  }
  *view = {rgb.data(), region.width, region.height, out_stride};
  return Status::OK();
}

Result<RgbImage> ImageDecoder::PngDecoder::Decode(std::string_view bytes) {
  Image image(this, bytes);
  return image_internal::DecodeWhole(&image);
}

Result<RgbImage> ImageDecoder::PngDecoder::DecodeCrop(std::string_view bytes, const CropWindow& window) {
  Image image(this, bytes);
  return image_internal::DecodeWindow(&image, window);
}

Status ImageDecoder::PngDecoder::DecodeCropResized(std::string_view bytes, const CropWindow& window,
                                                   int out_width, int out_height, uint8_t* out,
                                                   size_t out_size) {
  Image image(this, bytes);
  return image_internal::DecodeWindowResized(&image, window, out_width, out_height, options_.layout,
                                             options_.limits, &resample_, out, out_size);
}

Status ImageDecoder::PngDecoder::DecodeCenterCrop(std::string_view bytes, int size, int resize_shorter,
                                                  uint8_t* out, size_t out_size) {
  Image image(this, bytes);
  return image_internal::DecodeCenterCropResized(&image, size, resize_shorter, options_.layout,
                                                 options_.limits, &resample_, out, out_size);
}

}  // namespace unirecord
