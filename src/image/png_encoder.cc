#include "image/png_encoder.h"

#include <csetjmp>
#include <cstdio>
#include <cstring>

#include <png.h>

namespace unirecord::image_internal {
namespace {

// Plain C data only: setjmp/longjmp cross the function that uses it.
struct PngWrite {
  jmp_buf jump;
  char message[200];
  std::string* out;
};

[[noreturn]] void OnError(png_structp png, png_const_charp message) {
  auto* w = static_cast<PngWrite*>(png_get_error_ptr(png));
  std::snprintf(w->message, sizeof w->message, "%s", message);
  std::longjmp(w->jump, 1);
}

void OnWarning(png_structp, png_const_charp) {}

void WriteData(png_structp png, png_bytep data, size_t n) {
  static_cast<PngWrite*>(png_get_io_ptr(png))->out->append(reinterpret_cast<const char*>(data), n);
}

void Flush(png_structp) {}

struct WriteRequest {
  const PngSpec* spec;
  const uint8_t* samples;
  size_t row_bytes;  // as given, one byte per sample below 16 bits
};

// libpng wants sub-byte samples packed; png_set_packing packs them.
bool RunLibpngWrite(PngWrite* w, const WriteRequest* req) {
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, w, OnError, OnWarning);
  png_infop info = png != nullptr ? png_create_info_struct(png) : nullptr;
  if (info == nullptr) {
    png_destroy_write_struct(&png, nullptr);
    std::snprintf(w->message, sizeof w->message, "libpng could not allocate its writer");
    return false;
  }
  if (setjmp(w->jump)) {
    png_destroy_write_struct(&png, &info);
    return false;
  }
  const PngSpec& s = *req->spec;
  png_set_write_fn(png, w, WriteData, Flush);
  png_set_check_for_invalid_index(png, -1);  // indices past the PLTE are written as given
  png_set_compression_level(png, s.compression_level);
  // Filters only help compression; at level 0 nothing is compressed, and
  // libpng's choice of a filter per row is then its costliest step.
  if (s.compression_level == 0) png_set_filter(png, PNG_FILTER_TYPE_BASE, PNG_FILTER_NONE);
  png_set_IHDR(png, info, static_cast<png_uint_32>(s.width), static_cast<png_uint_32>(s.height),
               s.bit_depth, s.color_type, s.interlaced ? PNG_INTERLACE_ADAM7 : PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  if (s.color_type == PNG_COLOR_TYPE_PALETTE) {
    png_color palette[256];
    const int n = static_cast<int>(s.palette.size() / 3);
    for (int i = 0; i < n && i < 256; ++i) {
      palette[i] = {s.palette[3 * i], s.palette[3 * i + 1], s.palette[3 * i + 2]};
    }
    png_set_PLTE(png, info, palette, n);
  }
  if (!s.trns.empty()) {
    png_color_16 color{};
    const uint8_t* t = s.trns.data();
    if (s.color_type == PNG_COLOR_TYPE_GRAY && s.trns.size() >= 2) color.gray = png_uint_16(t[0] << 8 | t[1]);
    if (s.color_type == PNG_COLOR_TYPE_RGB && s.trns.size() >= 6) {
      color.red = png_uint_16(t[0] << 8 | t[1]);
      color.green = png_uint_16(t[2] << 8 | t[3]);
      color.blue = png_uint_16(t[4] << 8 | t[5]);
    }
    png_set_tRNS(png, info, s.color_type == PNG_COLOR_TYPE_PALETTE ? t : nullptr,
                 static_cast<int>(s.trns.size()), &color);
  }
  png_write_info(png, info);
  if (s.bit_depth < 8) png_set_packing(png);
  const int passes = png_set_interlace_handling(png);
  for (int pass = 0; pass < passes; ++pass) {
    for (int y = 0; y < s.height; ++y) {
      png_write_row(png, const_cast<png_bytep>(req->samples + static_cast<size_t>(y) * req->row_bytes));
    }
  }
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  return true;
}

}  // namespace

namespace {

Result<std::string> Encode(const PngSpec& spec, const uint8_t* samples, size_t size) {
  int channels = 1;
  if (spec.color_type == PNG_COLOR_TYPE_RGB) channels = 3;
  if (spec.color_type == PNG_COLOR_TYPE_GRAY_ALPHA) channels = 2;
  if (spec.color_type == PNG_COLOR_TYPE_RGB_ALPHA) channels = 4;
  if (spec.width <= 0 || spec.height <= 0) return Status::InvalidArgument("PNG size must be positive");
  const size_t row_bytes = static_cast<size_t>(spec.width) * channels * (spec.bit_depth == 16 ? 2 : 1);
  if (size != row_bytes * spec.height) {
    return Status::InvalidArgument("PNG samples: " + std::to_string(size) + " bytes for " +
                                   std::to_string(row_bytes * spec.height));
  }
  std::string out;
  PngWrite w{};
  w.out = &out;
  const WriteRequest req{&spec, samples, row_bytes};
  if (!RunLibpngWrite(&w, &req)) return Status::InvalidArgument(std::string("PNG encode: ") + w.message);
  return out;
}

}  // namespace

Result<std::string> EncodePng(const PngSpec& spec, const std::vector<uint8_t>& samples) {
  return Encode(spec, samples.data(), samples.size());
}

}  // namespace unirecord::image_internal

namespace unirecord {

Result<std::string> EncodePngRgb(const uint8_t* rgb, size_t rgb_size, int width, int height, int compression_level) {
  if (compression_level < 0 || compression_level > 9) {
    return Status::InvalidArgument("PNG compression level " + std::to_string(compression_level) + " is not 0..9");
  }
  image_internal::PngSpec spec;
  spec.width = width;
  spec.height = height;
  spec.compression_level = compression_level;
  return image_internal::Encode(spec, rgb, rgb_size);
}

}  // namespace unirecord
