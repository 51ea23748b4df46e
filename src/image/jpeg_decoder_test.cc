#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "image/jpeg_decoder.h"
#include "image/resample.h"
#include "image/resize_rgb.h"
#include "image/image_testing.h"
#include "unirecord/image.h"

namespace unirecord {
namespace {

using testing::EncodeJpeg;
using testing::EncodeSpec;
using testing::CropOf;
using testing::EdgeWindows;
using testing::ReadCorpusFile;
using testing::Sampling;

void ExpectCropsExact(const std::string& jpeg, const std::string& what) {
  JpegDecoder decoder;
  Result<RgbImage> full = decoder.Decode(jpeg);
  ASSERT_TRUE(full.ok()) << what << ": " << full.status().ToString();
  for (const CropWindow& w : EdgeWindows(full->width, full->height)) {
    if (w.width <= 0 || w.height <= 0 || w.x + w.width > full->width ||
        w.y + w.height > full->height)
      continue;
    Result<RgbImage> crop = decoder.DecodeCrop(jpeg, w);
    ASSERT_TRUE(crop.ok()) << what << ": " << crop.status().ToString();
    RgbImage expected = CropOf(*full, w);
    ASSERT_EQ(crop->width, w.width);
    ASSERT_EQ(crop->height, w.height);
    EXPECT_TRUE(crop->pixels == expected.pixels)
        << what << ": crop " << w.width << "x" << w.height << "+" << w.x << "+" << w.y
        << (w.flip ? " flipped" : "") << " differs from full decode then crop";
  }
}

struct ExactCase {
  const char* name;
  EncodeSpec spec;
};

TEST(JpegDecoder, CropEqualsFullDecodeThenCropOnEncodedImages) {
  const ExactCase cases[] = {
      {"4:2:0", {203, 157, Sampling::k420, 90, false, false}},
      {"4:2:2", {203, 157, Sampling::k422, 90, false, false}},
      {"4:4:4", {203, 157, Sampling::k444, 90, false, false}},
      {"4:4:0", {203, 157, Sampling::k440, 90, false, false}},
      {"gray", {203, 157, Sampling::kGray, 90, false, false}},
      {"progressive 4:2:0", {203, 157, Sampling::k420, 85, true, false}},
      {"arithmetic 4:2:0", {203, 157, Sampling::k420, 95, false, true}},
      {"progressive arithmetic 4:2:2", {203, 157, Sampling::k422, 90, true, true}},
      {"aligned 4:2:0", {256, 128, Sampling::k420, 90, false, false}},
  };
  for (const ExactCase& c : cases) {
    Result<std::string> jpeg = EncodeJpeg(testing::SyntheticRgb(c.spec.width, c.spec.height), c.spec);
    ASSERT_TRUE(jpeg.ok()) << c.name << ": " << jpeg.status().ToString();
    ExpectCropsExact(*jpeg, c.name);
  }
}

TEST(JpegDecoder, CropEqualsFullDecodeThenCropOnCorpus) {
  for (const char* name :
       {"libjpeg-turbo__testorig.jpg", "libjpeg-turbo__testimgp.jpg",
        "libjpeg-turbo__testimgari.jpg", "pillow__iptc.jpg", "pillow__hopper_gray.jpg",
        "zune-image__non_interleaved_440_64x64.jpg", "zune-image__non_interleaved_422_64x64.jpg",
        "zune-image__fox410.jpg", "zune-image__sampling_factors.jpg",
        "jpeg-decoder__mozilla__jpg-cmyk-2.jpg", "pillow__pil_sample_cmyk.jpg",
        "jpegsuite__baseline__32x32x8_ycbcr_2x2_2x1_1x2_interleaved.jpg",
        "jpeg-decoder__restarts.jpg", "pillow__icc_profile_big.jpg"}) {
    ExpectCropsExact(ReadCorpusFile(name), name);
  }
}

TEST(JpegDecoder, ResizedCropWithoutScalingEqualsCropThenResize) {
  EncodeSpec spec{500, 375, Sampling::k420, 90, false, false};
  Result<std::string> encoded = EncodeJpeg(testing::SyntheticRgb(spec.width, spec.height), spec);
  ASSERT_TRUE(encoded.ok()) << encoded.status().ToString();
  const std::string& jpeg = *encoded;
  DecodeOptions options;
  options.dct_scaling = false;
  JpegDecoder decoder(options);
  for (CropWindow w : {CropWindow{10, 20, 300, 200, false}, CropWindow{0, 0, 500, 375, true},
                       CropWindow{400, 300, 100, 75, true}, CropWindow{123, 45, 67, 89, false}}) {
    Result<RgbImage> crop = decoder.DecodeCrop(jpeg, w);
    ASSERT_TRUE(crop.ok());
    std::vector<uint8_t> expected(224 * 224 * 3), actual(224 * 224 * 3);
    ASSERT_TRUE(image_internal::ResizeRgb(crop->pixels.data(), crop->width, crop->height,
                          static_cast<size_t>(crop->width) * 3, expected.data(), 224, 224, false)
                    .ok());
    DecodeStats stats;
    ASSERT_TRUE(
        decoder.DecodeCropResized(jpeg, w, 224, 224, actual.data(), actual.size(), &stats).ok());
    EXPECT_EQ(stats.scale_num, 8);
    EXPECT_TRUE(expected == actual) << "window " << w.x << "," << w.y;
  }
}

TEST(JpegDecoder, DctScalingStaysAtLeastTwiceTheTarget) {
  EncodeSpec spec{1000, 800, Sampling::k420, 90, false, false};
  std::vector<uint8_t> rgb = testing::SyntheticRgb(spec.width, spec.height);
  Result<std::string> encoded = EncodeJpeg(rgb, spec);
  ASSERT_TRUE(encoded.ok()) << encoded.status().ToString();
  const std::string& jpeg = *encoded;
  JpegDecoder scaled;
  DecodeOptions exact_options;
  exact_options.dct_scaling = false;
  JpegDecoder exact(exact_options);
  struct Case {
    CropWindow window;
    int out, expected_scale;
  } cases[] = {
      {{0, 0, 1000, 800, false}, 200, 4},    // 500x400 >= 400
      {{0, 0, 1000, 800, false}, 224, 8},    // 500x400: 400 < 448, 1/2 is too small
      {{0, 0, 1000, 800, false}, 100, 2},    // 250x200 >= 200
      {{0, 0, 1000, 800, false}, 50, 1},     // 125x100 >= 100
      {{100, 50, 447, 700, false}, 224, 8},  // 447 < 2 * 224: no scaling
      {{333, 111, 600, 500, true}, 64, 4},   // 300x250 >= 128, 150x125 < 128
  };
  for (const Case& c : cases) {
    std::vector<uint8_t> a(c.out * c.out * 3), b(c.out * c.out * 3);
    DecodeStats stats;
    Status s = scaled.DecodeCropResized(jpeg, c.window, c.out, c.out, a.data(), a.size(), &stats);
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(stats.scale_num, c.expected_scale);
    ASSERT_TRUE(exact.DecodeCropResized(jpeg, c.window, c.out, c.out, b.data(), b.size()).ok());
    double total = 0;
    for (size_t i = 0; i < a.size(); ++i) total += std::abs(int{a[i]} - int{b[i]});
    EXPECT_LT(total / a.size(), 3.0) << "scaled decode drifts from the exact one";
  }
}

TEST(JpegDecoder, ExifOrientationMapsTheWindow) {
  DecodeOptions options;
  options.apply_exif = true;
  JpegDecoder decoder(options);
  JpegDecoder plain;
  Result<RgbImage> reference = plain.Decode(ReadCorpusFile("pillow__hopper.jpg"));
  ASSERT_TRUE(reference.ok());
  for (int o = 2; o <= 8; ++o) {
    std::string jpeg = ReadCorpusFile("pillow__hopper_orientation_" + std::to_string(o) + ".jpg");
    Result<RgbImage> full = decoder.Decode(jpeg);
    ASSERT_TRUE(full.ok());
    // Re-encoded files: close to the upright original, not identical.
    double total = 0;
    for (size_t i = 0; i < full->pixels.size(); ++i) {
      total += std::abs(int{full->pixels[i]} - int{reference->pixels[i]});
    }
    EXPECT_LT(total / full->pixels.size(), 6.0) << "orientation " << o;
    for (const CropWindow& w : EdgeWindows(full->width, full->height)) {
      Result<RgbImage> crop = decoder.DecodeCrop(jpeg, w);
      ASSERT_TRUE(crop.ok());
      EXPECT_TRUE(crop->pixels == CropOf(*full, w).pixels) << "orientation " << o;
    }
  }
  // The resized path maps the window the same way.
  DecodeOptions exact_options = options;
  exact_options.dct_scaling = false;
  JpegDecoder exact(exact_options);
  for (int o = 2; o <= 8; ++o) {
    std::string jpeg = ReadCorpusFile("pillow__hopper_orientation_" + std::to_string(o) + ".jpg");
    const CropWindow w{7, 30, 90, 61, o % 2 == 0};
    Result<RgbImage> crop = exact.DecodeCrop(jpeg, w);
    ASSERT_TRUE(crop.ok());
    std::vector<uint8_t> expected(50 * 40 * 3), actual(50 * 40 * 3);
    ASSERT_TRUE(image_internal::ResizeRgb(crop->pixels.data(), crop->width, crop->height,
                          static_cast<size_t>(crop->width) * 3, expected.data(), 50, 40, false)
                    .ok());
    ASSERT_TRUE(exact.DecodeCropResized(jpeg, w, 50, 40, actual.data(), actual.size()).ok());
    EXPECT_TRUE(expected == actual) << "orientation " << o;
  }
  Result<RgbImage> rect = decoder.Decode(ReadCorpusFile("pillow__orientation_rectangle.jpg"));
  ASSERT_TRUE(rect.ok());
  EXPECT_EQ(rect->width, 1);
  EXPECT_EQ(rect->height, 2);
}

TEST(JpegDecoder, CenterCropEqualsResizeWholeImageThenCrop) {
  DecodeOptions options;
  options.dct_scaling = false;
  JpegDecoder decoder(options);
  for (const char* name : {"pillow__flower.jpg", "zune-image__fox410.jpg", "pillow__iptc.jpg"}) {
    std::string jpeg = ReadCorpusFile(name);
    Result<RgbImage> full = decoder.Decode(jpeg);
    ASSERT_TRUE(full.ok());
    // torchvision Resize(256): shorter side 256, longer truncated.
    const bool portrait = full->width <= full->height;
    const int rw = portrait ? 256 : int(256.0 * full->width / full->height);
    const int rh = portrait ? int(256.0 * full->height / full->width) : 256;
    std::vector<uint8_t> resized(size_t(rw) * rh * 3), actual(224 * 224 * 3);
    ASSERT_TRUE(image_internal::ResizeRgb(full->pixels.data(), full->width, full->height,
                          size_t(full->width) * 3, resized.data(), rw, rh, false)
                    .ok());
    ASSERT_TRUE(decoder.DecodeCenterCrop(jpeg, 224, 256, actual.data(), actual.size()).ok());
    const int top = int(std::nearbyint((rh - 224) / 2.0)), left = int(std::nearbyint((rw - 224) / 2.0));
    for (int y = 0; y < 224; ++y) {
      ASSERT_EQ(0, std::memcmp(&actual[size_t(y) * 224 * 3],
                               &resized[(size_t(top + y) * rw + left) * 3], 224 * 3))
          << name << " row " << y;
    }
  }
}

// Packed RGB of `pixels` pixels as three planes R, G, B: the reference for the
// resizer's planar output.
void HwcToChw(const uint8_t* hwc, size_t pixels, uint8_t* chw) {
  for (size_t p = 0; p < pixels; ++p) {
    for (size_t c = 0; c < 3; ++c) chw[c * pixels + p] = hwc[p * 3 + c];
  }
}

TEST(JpegDecoder, ChwLayoutIsTheHwcOutputSplitIntoPlanes) {
  EncodeSpec spec{500, 375, Sampling::k420, 90, false, false};
  Result<std::string> jpeg = EncodeJpeg(testing::SyntheticRgb(spec.width, spec.height), spec);
  ASSERT_TRUE(jpeg.ok());
  DecodeOptions chw_options;
  chw_options.layout = ImageLayout::kNCHW;
  JpegDecoder hwc_decoder, chw_decoder(chw_options);
  std::vector<uint8_t> hwc(224 * 224 * 3), expected(hwc.size()), chw(hwc.size());
  for (const CropWindow& w : {CropWindow{10, 20, 300, 200, false}, CropWindow{0, 0, 500, 375, true},
                              CropWindow{123, 45, 224, 224, false}}) {
    ASSERT_TRUE(hwc_decoder.DecodeCropResized(*jpeg, w, 224, 224, hwc.data(), hwc.size()).ok());
    ASSERT_TRUE(chw_decoder.DecodeCropResized(*jpeg, w, 224, 224, chw.data(), chw.size()).ok());
    HwcToChw(hwc.data(), 224 * 224, expected.data());
    EXPECT_TRUE(chw == expected) << "window " << w.x << "," << w.y;
  }
  // The exact center crop (its own resampling path) and an identity resize.
  for (int shorter : {256, 375}) {
    const int size = shorter == 375 ? 375 : 224;
    hwc.resize(size_t(size) * size * 3);
    chw.resize(hwc.size());
    expected.resize(hwc.size());
    ASSERT_TRUE(hwc_decoder.DecodeCenterCrop(*jpeg, size, shorter, hwc.data(), hwc.size()).ok());
    ASSERT_TRUE(chw_decoder.DecodeCenterCrop(*jpeg, size, shorter, chw.data(), chw.size()).ok());
    HwcToChw(hwc.data(), size_t(size) * size, expected.data());
    EXPECT_TRUE(chw == expected) << "center crop " << size << " of " << shorter;
  }
}

TEST(JpegDecoder, RejectsBadWindowsAndBuffers) {
  std::string jpeg = ReadCorpusFile("libjpeg-turbo__testorig.jpg");
  JpegDecoder decoder;
  for (CropWindow w : {CropWindow{-1, 0, 10, 10, false}, CropWindow{0, 0, 0, 10, false},
                       CropWindow{220, 0, 8, 10, false}, CropWindow{0, 140, 10, 10, false},
                       CropWindow{2147483600, 0, 100, 10, false},
                       CropWindow{1, 1, 2147483647, 2147483647, false}}) {
    Result<RgbImage> crop = decoder.DecodeCrop(jpeg, w);
    EXPECT_EQ(crop.status().code(), StatusCode::kInvalidArgument);
  }
  std::vector<uint8_t> out(10);
  EXPECT_EQ(decoder.DecodeCropResized(jpeg, {0, 0, 10, 10, false}, 224, 224, out.data(),
                                      out.size())
                .code(),
            StatusCode::kInvalidArgument);
  // Still usable after errors.
  EXPECT_TRUE(decoder.Decode(jpeg).ok());
}

TEST(JpegDecoder, StrictModeFailsWhereLenientCountsWarnings) {
  std::string truncated = ReadCorpusFile("pillow__truncated_jpeg.jpg");
  JpegDecoder lenient;
  DecodeStats stats;
  Result<RgbImage> image = lenient.Decode(truncated, &stats);
  ASSERT_TRUE(image.ok());
  EXPECT_GT(stats.warnings, 0);
  EXPECT_NE(stats.first_warning.find("Premature end"), std::string::npos) << stats.first_warning;

  DecodeOptions options;
  options.strict = true;
  JpegDecoder strict(options);
  EXPECT_EQ(strict.Decode(truncated).status().code(), StatusCode::kCorruption);
  Result<RgbImage> junk = strict.Decode(ReadCorpusFile("pillow__junk_jpeg_header.jpg"));
  ASSERT_FALSE(junk.ok());
  EXPECT_NE(junk.status().message().find("extraneous bytes"), std::string::npos)
      << junk.status().message();
  EXPECT_TRUE(strict.Decode(ReadCorpusFile("libjpeg-turbo__testorig.jpg")).ok());
}

TEST(JpegDecoder, ReusesOneDecompressorAcrossManyImages) {
  JpegDecoder decoder;
  std::string good = ReadCorpusFile("libjpeg-turbo__testorig.jpg");
  std::string bad = ReadCorpusFile("jpeg-decoder__crashtest__derive-huffman-codes-overflow.jpg");
  Result<RgbImage> first = decoder.Decode(good);
  ASSERT_TRUE(first.ok());
  for (int i = 0; i < 50; ++i) {
    EXPECT_FALSE(decoder.Decode(bad).ok());
    Result<RgbImage> again = decoder.Decode(good);
    ASSERT_TRUE(again.ok());
    EXPECT_TRUE(again->pixels == first->pixels);
  }
}

}  // namespace
}  // namespace unirecord
