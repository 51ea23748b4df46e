#include "image/jpeg_encoder.h"

#include <csetjmp>
#include <cstdio>
#include <cstdlib>

#include <jpeglib.h>

namespace unirecord::image_internal {
namespace {

struct EncodeError {
  jpeg_error_mgr pub;  // first member
  jmp_buf jump;
};

void OnEncodeError(j_common_ptr cinfo) {
  longjmp(reinterpret_cast<EncodeError*>(cinfo->err)->jump, 1);
}

// setjmp and libjpeg calls only, plain-data locals (see jpeg_decoder.cc).
bool RunLibjpegEncode(jpeg_compress_struct* cinfo, EncodeError* err, const uint8_t* rgb,
                      const EncodeSpec* spec, unsigned char** out, unsigned long* size) {
  cinfo->err = jpeg_std_error(&err->pub);
  err->pub.error_exit = OnEncodeError;
  if (setjmp(err->jump)) {
    jpeg_destroy_compress(cinfo);
    return false;
  }
  jpeg_create_compress(cinfo);
  jpeg_mem_dest(cinfo, out, size);
  cinfo->image_width = spec->width;
  cinfo->image_height = spec->height;
  cinfo->input_components = 3;
  cinfo->in_color_space = JCS_RGB;
  jpeg_set_defaults(cinfo);
  jpeg_set_quality(cinfo, spec->quality, TRUE);
  int h = 1, v = 1;  // luma sampling factors; chroma stays 1x1
  switch (spec->sampling) {
    case Sampling::k444: break;
    case Sampling::k422: h = 2; break;
    case Sampling::k420: h = v = 2; break;
    case Sampling::k440: v = 2; break;
    case Sampling::kGray: jpeg_set_colorspace(cinfo, JCS_GRAYSCALE); break;
  }
  cinfo->comp_info[0].h_samp_factor = h;
  cinfo->comp_info[0].v_samp_factor = v;
  cinfo->arith_code = spec->arithmetic ? TRUE : FALSE;
  if (spec->progressive) jpeg_simple_progression(cinfo);
  jpeg_start_compress(cinfo, TRUE);
  while (cinfo->next_scanline < cinfo->image_height) {
    JSAMPROW row = const_cast<uint8_t*>(rgb + static_cast<size_t>(cinfo->next_scanline) *
                                                  spec->width * 3);
    jpeg_write_scanlines(cinfo, &row, 1);
  }
  jpeg_finish_compress(cinfo);
  jpeg_destroy_compress(cinfo);
  return true;
}

}  // namespace

std::string EncodeJpeg(const std::vector<uint8_t>& rgb, const EncodeSpec& spec) {
  if (spec.width <= 0 || spec.height <= 0 ||
      rgb.size() < static_cast<size_t>(spec.width) * spec.height * 3) {
    return {};
  }
  jpeg_compress_struct cinfo;
  EncodeError err;
  unsigned char* buffer = nullptr;
  unsigned long size = 0;
  std::string jpeg;
  if (RunLibjpegEncode(&cinfo, &err, rgb.data(), &spec, &buffer, &size)) {
    jpeg.assign(reinterpret_cast<const char*>(buffer), size);
  }
  std::free(buffer);
  return jpeg;
}

}  // namespace unirecord::image_internal
