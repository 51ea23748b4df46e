#include "image/test_images.h"

#include <algorithm>
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
  std::ifstream in(std::string(UNIRECORD_TEST_DATA_DIR) + "/jpeg-conformance/" + name,
                   std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace unirecord::testing
