#include "image/image_testing.h"

#include "util/files_testing.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>

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

std::string ReadCorpusFile(const std::string& name) {
  std::ifstream in(testing::TestDataDir() + "/jpeg-conformance/" + name, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string WithOrientation(const std::string& jpeg, int orientation) {
  const unsigned char tiff[] = {'M', 'M', 0, 42, 0, 0, 0, 8,  // header, IFD0 at 8
                                0, 1,                         // one entry
                                0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, static_cast<unsigned char>(orientation), 0, 0,
                                0, 0, 0, 0};  // no next IFD
  std::string payload = std::string("Exif\0\0", 6) + std::string(reinterpret_cast<const char*>(tiff), sizeof tiff);
  const size_t length = payload.size() + 2;
  std::string segment = "\xFF\xE1";
  segment += static_cast<char>(length >> 8);
  segment += static_cast<char>(length & 0xFF);
  return jpeg.substr(0, 2) + segment + payload + jpeg.substr(2);
}

RgbImage CropOf(const RgbImage& full, const CropWindow& w) {
  RgbImage out;
  out.width = w.width;
  out.height = w.height;
  out.pixels.resize(static_cast<size_t>(w.width) * w.height * 3);
  for (int y = 0; y < w.height; ++y) {
    for (int x = 0; x < w.width; ++x) {
      int sx = w.flip ? w.x + w.width - 1 - x : w.x + x;
      std::memcpy(&out.pixels[(static_cast<size_t>(y) * w.width + x) * 3],
                  &full.pixels[(static_cast<size_t>(w.y + y) * full.width + sx) * 3], 3);
    }
  }
  return out;
}

std::vector<CropWindow> EdgeWindows(int w, int h) {
  std::vector<CropWindow> windows = {
      {0, 0, w, h, false},
      {0, 0, 1, 1, false},
      {w - 1, h - 1, 1, 1, false},
      {w - 1, 0, 1, 1, false},
      {0, h - 1, 1, 1, false},
      {w / 2, h / 2, 1, 1, false},
      {0, 0, w / 2 + 1, h / 3, false},            // top-left
      {w / 3, 0, w - w / 3, h / 2, false},        // top-right
      {0, h / 2, w / 3 + 5, h - h / 2, false},    // bottom-left
      {w - 17, h - 9, 17, 9, false},              // bottom-right
      {17, 9, w - 34, h - 18, false},             // interior
      {1, 1, w - 2, h - 2, true},                 // flipped
      {15, 7, 33, 21, false},                     // just before iMCU boundaries
      {16, 8, 16, 16, false},                     // aligned
      {31, 3, 2, h - 6, false},                   // narrow column
      {3, 31, w - 6, 2, true},                    // thin row
  };
  return windows;
}

}  // namespace unirecord::testing
