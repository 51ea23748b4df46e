// Test helpers: synthetic photos and corpus files.
#ifndef UNIRECORD_SRC_IMAGE_TEST_IMAGES_H_
#define UNIRECORD_SRC_IMAGE_TEST_IMAGES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "image/jpeg_encoder.h"

namespace unirecord::testing {

using image_internal::EncodeJpeg;
using image_internal::EncodeSpec;
using image_internal::Sampling;

// Smooth colour gradients plus a deterministic texture, so that chroma
// upsampling and every DCT coefficient matter.
std::vector<uint8_t> SyntheticRgb(int width, int height);

// A file from tests/data/jpeg-conformance.
std::string ReadCorpusFile(const std::string& name);

}  // namespace unirecord::testing

#endif  // UNIRECORD_SRC_IMAGE_TEST_IMAGES_H_
