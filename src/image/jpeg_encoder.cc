#include "image/jpeg_encoder.h"

#include <algorithm>
#include <csetjmp>
#include <cstdlib>

#include <jpeglib.h>

#include "image/libjpeg_errors.h"

namespace unirecord::image_internal {
namespace {

// setjmp and libjpeg calls only, plain-data locals (see libjpeg_errors.h).
bool RunLibjpegEncode(jpeg_compress_struct* cinfo, LibjpegErrors* err, const uint8_t* pixels,
                      const EncodeSpec* spec, unsigned char** out, unsigned long* size) {
  cinfo->err = InitLibjpegErrors(err, /*strict=*/false);
  if (setjmp(err->jump)) {
    jpeg_destroy_compress(cinfo);
    return false;
  }
  jpeg_create_compress(cinfo);
  jpeg_mem_dest(cinfo, out, size);
  const int channels = spec->cmyk ? 4 : 3;
  cinfo->image_width = spec->width;
  cinfo->image_height = spec->height;
  cinfo->input_components = channels;
  cinfo->in_color_space = spec->cmyk ? JCS_CMYK : JCS_RGB;
  jpeg_set_defaults(cinfo);
  jpeg_set_quality(cinfo, spec->quality, TRUE);
  cinfo->dct_method = spec->fast_dct ? JDCT_IFAST : JDCT_ISLOW;
  // CMYK in: YCCK out (the default would store plain CMYK); either way
  // libjpeg writes an Adobe marker, here with transform 2.
  if (spec->cmyk) jpeg_set_colorspace(cinfo, JCS_YCCK);
  int h = 1, v = 1;  // luma (and K) sampling factors; chroma stays 1x1
  switch (spec->sampling) {
    case Sampling::k444: break;
    case Sampling::k422: h = 2; break;
    case Sampling::k420: h = v = 2; break;
    case Sampling::k440: v = 2; break;
    case Sampling::kGray: jpeg_set_colorspace(cinfo, JCS_GRAYSCALE); break;
  }
  cinfo->comp_info[0].h_samp_factor = h;
  cinfo->comp_info[0].v_samp_factor = v;
  if (cinfo->num_components == 4) {
    cinfo->comp_info[3].h_samp_factor = h;
    cinfo->comp_info[3].v_samp_factor = v;
  }
  cinfo->arith_code = spec->arithmetic ? TRUE : FALSE;
  if (spec->progressive) jpeg_simple_progression(cinfo);
  cinfo->restart_interval = static_cast<unsigned int>(spec->restart_interval);
  cinfo->optimize_coding = spec->optimize_coding ? TRUE : FALSE;
  jpeg_start_compress(cinfo, TRUE);
  const size_t stride = static_cast<size_t>(spec->width) * channels;
  while (cinfo->next_scanline < cinfo->image_height) {
    JSAMPROW row = const_cast<uint8_t*>(pixels + cinfo->next_scanline * stride);
    jpeg_write_scanlines(cinfo, &row, 1);
  }
  jpeg_finish_compress(cinfo);
  jpeg_destroy_compress(cinfo);
  return true;
}

}  // namespace

Result<std::string> EncodeJpeg(const std::vector<uint8_t>& pixels, const EncodeSpec& spec) {
  const std::string size = std::to_string(spec.width) + "x" + std::to_string(spec.height);
  if (spec.width <= 0 || spec.height <= 0 || spec.width > JPEG_MAX_DIMENSION ||
      spec.height > JPEG_MAX_DIMENSION) {
    return Status::InvalidArgument("JPEG encode: size " + size + " is out of range");
  }
  if (spec.quality < 1 || spec.quality > 100) {
    return Status::InvalidArgument("JPEG encode: quality " + std::to_string(spec.quality) +
                                   " is out of range 1..100");
  }
  if (spec.cmyk && spec.sampling == Sampling::kGray) {
    return Status::InvalidArgument("JPEG encode: CMYK input cannot be written as grayscale");
  }
  const size_t needed = static_cast<size_t>(spec.width) * spec.height * (spec.cmyk ? 4 : 3);
  if (pixels.size() < needed) {
    return Status::InvalidArgument("JPEG encode: " + size + (spec.cmyk ? " CMYK" : " RGB") +
                                   " needs " + std::to_string(needed) + " bytes, got " +
                                   std::to_string(pixels.size()));
  }
  jpeg_compress_struct cinfo;
  LibjpegErrors err;
  unsigned char* buffer = nullptr;
  unsigned long length = 0;
  const bool ok = RunLibjpegEncode(&cinfo, &err, pixels.data(), &spec, &buffer, &length);
  std::string jpeg;
  if (ok) jpeg.assign(reinterpret_cast<const char*>(buffer), length);
  std::free(buffer);
  if (!ok) return Status::Internal(std::string("JPEG encode: ") + err.message);
  return jpeg;
}

std::vector<uint8_t> RgbToAdobeCmyk(const std::vector<uint8_t>& rgb) {
  std::vector<uint8_t> cmyk(rgb.size() / 3 * 4);
  for (size_t i = 0, j = 0; i + 2 < rgb.size(); i += 3, j += 4) {
    const int white = std::max({rgb[i], rgb[i + 1], rgb[i + 2]});  // 255 - K ink
    for (int ch = 0; ch < 3; ++ch) {
      const int ink = white == 0 ? 0 : (white - rgb[i + ch]) * 255 / white;
      cmyk[j + ch] = static_cast<uint8_t>(255 - ink);
    }
    cmyk[j + 3] = static_cast<uint8_t>(white);
  }
  return cmyk;
}

}  // namespace unirecord::image_internal
