// Test helpers: synthetic photos and corpus files (in unirecord_testing).
#ifndef UNIRECORD_SRC_IMAGE_IMAGE_TESTING_H_
#define UNIRECORD_SRC_IMAGE_IMAGE_TESTING_H_

#include <cstdint>
#include <string>
#include <vector>

#include "image/jpeg_encoder.h"
#include "unirecord/image.h"

namespace unirecord::testing {

using image_internal::EncodeJpeg;
using image_internal::EncodeSpec;
using image_internal::Sampling;

// Smooth colour gradients plus a deterministic texture, so that chroma
// upsampling and every DCT coefficient matter.
std::vector<uint8_t> SyntheticRgb(int width, int height);

// A file from tests/data/jpeg-conformance.
std::string ReadCorpusFile(const std::string& name);

// `jpeg` with an APP1 EXIF segment holding only the orientation tag
// (1..8) inserted after SOI.
std::string WithOrientation(const std::string& jpeg, int orientation);

// The window `w` of `full`, mirrored when w.flip.
RgbImage CropOf(const RgbImage& full, const CropWindow& w);

// Windows touching every edge, 1x1 corners, odd offsets and the whole image
// of a w x h image (some may not fit a small image: callers skip those).
std::vector<CropWindow> EdgeWindows(int w, int h);

}  // namespace unirecord::testing

#endif  // UNIRECORD_SRC_IMAGE_IMAGE_TESTING_H_
