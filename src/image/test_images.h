// Test helpers: synthetic photos encoded with libjpeg, corpus files.
#ifndef UNIRECORD_SRC_IMAGE_TEST_IMAGES_H_
#define UNIRECORD_SRC_IMAGE_TEST_IMAGES_H_

#include <cstdint>
#include <string>
#include <vector>

namespace unirecord::testing {

enum class Sampling { k444, k422, k420, k440, kGray };

struct EncodeSpec {
  int width = 203;
  int height = 157;
  Sampling sampling = Sampling::k420;
  int quality = 90;
  bool progressive = false;
  bool arithmetic = false;
};

// Smooth colour gradients plus a deterministic texture, so that chroma
// upsampling and every DCT coefficient matter.
std::vector<uint8_t> SyntheticRgb(int width, int height);

// `rgb` (packed) encoded as a JPEG per `spec`; empty on failure.
std::string EncodeJpeg(const std::vector<uint8_t>& rgb, const EncodeSpec& spec);

// A file from tests/data/jpeg-conformance.
std::string ReadCorpusFile(const std::string& name);

}  // namespace unirecord::testing

#endif  // UNIRECORD_SRC_IMAGE_TEST_IMAGES_H_
