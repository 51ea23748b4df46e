#include "image/test_images.h"

#include <algorithm>
#include <fstream>
#include <iterator>

#include <cstdio>
#include <cstdlib>

#include <jpeglib.h>

namespace unirecord::testing {

std::vector<uint8_t> SyntheticRgb(int width, int height) {
  std::vector<uint8_t> rgb(static_cast<size_t>(width) * height * 3);
  uint32_t noise = 12345;
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      noise = noise * 1664525u + 1013904223u;
      const int n = static_cast<int>(noise >> 27) - 16;  // +-16
      uint8_t* p = &rgb[(static_cast<size_t>(y) * width + x) * 3];
      p[0] = static_cast<uint8_t>(std::min(255, std::max(0, x * 255 / width + n)));
      p[1] = static_cast<uint8_t>(std::min(255, std::max(0, y * 255 / height - n)));
      p[2] = static_cast<uint8_t>(((x / 7 + y / 5) % 2) * 160 + 40 + n);
    }
  }
  return rgb;
}

std::string EncodeJpeg(const std::vector<uint8_t>& rgb, const EncodeSpec& spec) {
  // libjpeg's default error handler exits: acceptable in a test helper.
  jpeg_compress_struct cinfo;
  jpeg_error_mgr jerr;
  cinfo.err = jpeg_std_error(&jerr);
  jpeg_create_compress(&cinfo);
  unsigned char* buffer = nullptr;
  unsigned long size = 0;
  jpeg_mem_dest(&cinfo, &buffer, &size);
  cinfo.image_width = spec.width;
  cinfo.image_height = spec.height;
  cinfo.input_components = 3;
  cinfo.in_color_space = JCS_RGB;
  jpeg_set_defaults(&cinfo);
  jpeg_set_quality(&cinfo, spec.quality, TRUE);
  int h = 1, v = 1;  // luma sampling factors; chroma is 1x1
  switch (spec.sampling) {
    case Sampling::k444: break;
    case Sampling::k422: h = 2; break;
    case Sampling::k420: h = v = 2; break;
    case Sampling::k440: v = 2; break;
    case Sampling::kGray: jpeg_set_colorspace(&cinfo, JCS_GRAYSCALE); break;
  }
  cinfo.comp_info[0].h_samp_factor = h;
  cinfo.comp_info[0].v_samp_factor = v;
  cinfo.arith_code = spec.arithmetic ? TRUE : FALSE;
  if (spec.progressive) jpeg_simple_progression(&cinfo);
  jpeg_start_compress(&cinfo, TRUE);
  while (cinfo.next_scanline < cinfo.image_height) {
    JSAMPROW row = const_cast<uint8_t*>(&rgb[static_cast<size_t>(cinfo.next_scanline) * spec.width * 3]);
    jpeg_write_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_compress(&cinfo);
  jpeg_destroy_compress(&cinfo);
  std::string out(reinterpret_cast<const char*>(buffer), size);
  std::free(buffer);
  return out;
}

std::string ReadCorpusFile(const std::string& name) {
  std::ifstream in(std::string(UNIRECORD_TEST_DATA_DIR) + "/jpeg-conformance/" + name,
                   std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace unirecord::testing
