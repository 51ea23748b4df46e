// ImageDecoder on PNGs: PIL's conversions (literal values checked against
// Pillow 9.4; python/tests/test_png.py compares with PIL itself), windows
// equal to full decode then crop, the stage shared with JPEG, and one test
// per kind of damage.
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "image/png_decoder.h"
#include "image/png_encoder.h"
#include "image/resample.h"
#include "image/resize_rgb.h"
#include "image/image_testing.h"
#include "unirecord/image.h"

namespace unirecord {
namespace {

using image_internal::EncodePng;
using image_internal::PngSpec;

std::string Png(PngSpec spec, const std::vector<uint8_t>& samples) {
  Result<std::string> png = EncodePng(spec, samples);
  EXPECT_TRUE(png.ok()) << png.status().ToString();
  return png.ok() ? *png : std::string();
}

// One row of the given samples.
std::string Row(int width, int depth, int color_type, const std::vector<uint8_t>& samples,
                std::vector<uint8_t> palette = {}, std::vector<uint8_t> trns = {}) {
  PngSpec spec;
  spec.width = width;
  spec.height = 1;
  spec.bit_depth = depth;
  spec.color_type = color_type;
  spec.palette = std::move(palette);
  spec.trns = std::move(trns);
  return Png(spec, samples);
}

std::vector<uint8_t> Decoded(const std::string& png) {
  ImageDecoder decoder;
  Result<RgbImage> image = decoder.Decode(png);
  EXPECT_TRUE(image.ok()) << image.status().ToString();
  return image.ok() ? image->pixels : std::vector<uint8_t>();
}

std::vector<uint8_t> Gray(std::vector<uint8_t> values) {
  std::vector<uint8_t> rgb;
  for (uint8_t v : values) rgb.insert(rgb.end(), {v, v, v});
  return rgb;
}

TEST(PngDecoder, LowBitGrayIsScaledTo255) {
  EXPECT_EQ(Decoded(Row(4, 1, 0, {1, 0, 1, 0})), Gray({255, 0, 255, 0}));
  EXPECT_EQ(Decoded(Row(4, 2, 0, {0, 1, 2, 3})), Gray({0, 85, 170, 255}));
  EXPECT_EQ(Decoded(Row(4, 4, 0, {0, 15, 7, 10})), Gray({0, 255, 119, 170}));
  EXPECT_EQ(Decoded(Row(3, 8, 0, {0, 77, 255})), Gray({0, 77, 255}));
}

TEST(PngDecoder, SixteenBitGrayIsClippedAsPilModeI) {
  // 0, 100, 255, 256, 1000, 65535 big-endian.
  EXPECT_EQ(Decoded(Row(6, 16, 0, {0, 0, 0, 100, 0, 255, 1, 0, 3, 232, 255, 255})),
            Gray({0, 100, 255, 255, 255, 255}));
}

TEST(PngDecoder, SixteenBitColourKeepsTheHighByteAndAlphaIsDropped) {
  EXPECT_EQ(Decoded(Row(2, 16, 2, {0x12, 0x34, 0x80, 0xff, 0xff, 0x00, 0x00, 0xff, 0x01, 0x00, 0xff, 0xfe})),
            (std::vector<uint8_t>{0x12, 0x80, 0xff, 0x00, 0x01, 0xff}));
  EXPECT_EQ(Decoded(Row(1, 16, 6, {0x12, 0x34, 0x80, 0xff, 0xff, 0x00, 0x00, 0x05})),
            (std::vector<uint8_t>{0x12, 0x80, 0xff}));
  EXPECT_EQ(Decoded(Row(2, 16, 4, {0x12, 0x34, 0x80, 0xff, 0x00, 0xff, 0xff, 0xff})), Gray({0x12, 0x00}));
  EXPECT_EQ(Decoded(Row(2, 8, 4, {9, 0, 200, 255})), Gray({9, 200}));
  EXPECT_EQ(Decoded(Row(2, 8, 6, {1, 2, 3, 0, 4, 5, 6, 128})), (std::vector<uint8_t>{1, 2, 3, 4, 5, 6}));
}

TEST(PngDecoder, PaletteIndicesPastThePlteAreGrayAsInPillow) {
  const std::vector<uint8_t> plte = {10, 20, 30, 40, 50, 60};
  EXPECT_EQ(Decoded(Row(4, 8, 3, {0, 1, 5, 200}, plte)),
            (std::vector<uint8_t>{10, 20, 30, 40, 50, 60, 5, 5, 5, 200, 200, 200}));
  EXPECT_EQ(Decoded(Row(4, 2, 3, {3, 2, 1, 0}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11})),
            (std::vector<uint8_t>{9, 10, 11, 6, 7, 8, 3, 4, 5, 0, 1, 2}));
}

TEST(PngDecoder, TransparencyIsIgnoredAsByConvertRgb) {
  EXPECT_EQ(Decoded(Row(2, 8, 3, {0, 1}, {1, 2, 3, 4, 5, 6}, {0})), (std::vector<uint8_t>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(Decoded(Row(2, 8, 0, {2, 3}, {}, {0, 2})), Gray({2, 3}));
  EXPECT_EQ(Decoded(Row(2, 8, 2, {0, 1, 2, 3, 4, 5}, {}, {0, 0, 0, 1, 0, 2})),
            (std::vector<uint8_t>{0, 1, 2, 3, 4, 5}));
}

// Masks hold labels: palette indices (any depth, past the PLTE too) and
// 8-bit gray values come as they are; interlacing changes nothing.
TEST(PngMask, PaletteIndicesAndGrayValuesAsStored) {
  auto mask = [](const std::string& png) {
    std::vector<uint8_t> plane;
    int width = 0, height = 0;
    const Status status = image_internal::DecodePngMask(png, DecodeLimits{}, &plane, &width, &height);
    EXPECT_TRUE(status.ok()) << status.ToString();
    EXPECT_EQ(size_t(width) * size_t(height), plane.size());
    return plane;
  };
  EXPECT_EQ(mask(Row(4, 8, 3, {0, 1, 5, 200}, {10, 20, 30, 40, 50, 60})), (std::vector<uint8_t>{0, 1, 5, 200}));
  EXPECT_EQ(mask(Row(4, 2, 3, {3, 2, 1, 0}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11})),
            (std::vector<uint8_t>{3, 2, 1, 0}));
  EXPECT_EQ(mask(Row(3, 8, 0, {0, 77, 255})), (std::vector<uint8_t>{0, 77, 255}));
  PngSpec spec;
  spec.width = 9;
  spec.height = 7;
  spec.color_type = 0;
  std::vector<uint8_t> labels(63);
  for (size_t i = 0; i < labels.size(); ++i) labels[i] = uint8_t(i * 3);
  EXPECT_EQ(mask(Png(spec, labels)), labels);
  spec.interlaced = true;
  EXPECT_EQ(mask(Png(spec, labels)), labels);
}

TEST(PngMask, ColourAndLowBitGrayAreNotLabelsAndDamageIsCorruption) {
  std::vector<uint8_t> plane;
  int width = 0, height = 0;
  for (const std::string& png : {Row(2, 8, 2, {0, 1, 2, 3, 4, 5}), Row(4, 2, 0, {0, 1, 2, 3}),
                                 Row(2, 16, 0, {0, 1, 0, 2}), Row(2, 8, 4, {9, 0, 200, 255})}) {
    const Status status = image_internal::DecodePngMask(png, DecodeLimits{}, &plane, &width, &height);
    EXPECT_EQ(status.code(), StatusCode::kNotSupported) << status.ToString();
    EXPECT_NE(status.message().find("a mask PNG must be a palette or an 8-bit gray image"), std::string::npos);
  }
  // A cut file fails, unless only checksums and IEND after the last row are
  // gone: then every label is there and exact (the image decoder's lenient
  // mode).
  PngSpec spec;
  spec.width = 37;
  spec.height = 23;
  spec.color_type = 0;
  std::vector<uint8_t> labels(37 * 23);
  for (size_t i = 0; i < labels.size(); ++i) labels[i] = uint8_t(i * 7 + i / 37);
  const std::string png = Png(spec, labels);
  size_t failed = 0;
  for (size_t cut = 0; cut < png.size(); ++cut) {
    const Status status = image_internal::DecodePngMask(png.substr(0, cut), DecodeLimits{}, &plane, &width, &height);
    if (status.ok()) {
      EXPECT_EQ(plane, labels) << "cut at " << cut;
    } else {
      ++failed;
    }
  }
  EXPECT_GE(failed, png.size() - 20);
}

// A 37x23 RGB test pattern (odd sizes: the filters and interlace passes
// end mid-byte and mid-block).
std::vector<uint8_t> Pattern(int w, int h) {
  std::vector<uint8_t> rgb(size_t(w) * h * 3);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      uint8_t* p = &rgb[(size_t(y) * w + x) * 3];
      p[0] = uint8_t(x * 255 / (w - 1));
      p[1] = uint8_t(y * 255 / (h - 1));
      p[2] = uint8_t((x * 7 + y * 13) % 256);
    }
  }
  return rgb;
}

PngSpec RgbSpec(int w, int h, bool interlaced = false) {
  PngSpec spec;
  spec.width = w;
  spec.height = h;
  spec.interlaced = interlaced;
  return spec;
}

TEST(PngDecoder, InterlacedAndPlainGiveThePixels) {
  const std::vector<uint8_t> rgb = Pattern(37, 23);
  EXPECT_EQ(Decoded(Png(RgbSpec(37, 23), rgb)), rgb);
  EXPECT_EQ(Decoded(Png(RgbSpec(37, 23, true), rgb)), rgb);
}

TEST(PngDecoder, WindowsEqualFullDecodeThenCrop) {
  const std::vector<uint8_t> rgb = Pattern(37, 23);
  RgbImage full{37, 23, rgb};
  ImageDecoder decoder;
  for (bool interlaced : {false, true}) {
    const std::string png = Png(RgbSpec(37, 23, interlaced), rgb);
    for (const CropWindow& w : testing::EdgeWindows(37, 23)) {
      if (w.width <= 0 || w.height <= 0 || w.x + w.width > 37 || w.y + w.height > 23) continue;
      Result<RgbImage> crop = decoder.DecodeCrop(png, w);
      ASSERT_TRUE(crop.ok()) << crop.status().ToString();
      EXPECT_EQ(crop->pixels, testing::CropOf(full, w).pixels)
          << w.width << "x" << w.height << "+" << w.x << "+" << w.y << (w.flip ? " flipped" : "");
    }
  }
}

// The resize after the decoder is the one JPEG uses: the same window of the
// same pixels resized by ResizeRgb (the resampler alone) gives the same bytes.
TEST(PngDecoder, CropResizeIsTheSharedStage) {
  const std::vector<uint8_t> rgb = Pattern(37, 23);
  const std::string png = Png(RgbSpec(37, 23), rgb);
  ImageDecoder decoder;
  const CropWindow window{5, 3, 20, 15, true};
  std::vector<uint8_t> out(11 * 9 * 3), expected(out.size());
  ASSERT_TRUE(decoder.DecodeCropResized(png, window, 11, 9, out.data(), out.size()).ok());
  const uint8_t* origin = rgb.data() + (size_t(3) * 37 + 5) * 3;
  ASSERT_TRUE(image_internal::ResizeRgb(origin, 20, 15, 37 * 3, expected.data(), 11, 9, true).ok());
  EXPECT_EQ(out, expected);

  // Planar output is the same pixels split into planes.
  DecodeOptions planar;
  planar.layout = ImageLayout::kNCHW;
  ImageDecoder chw(planar);
  std::vector<uint8_t> planes(out.size());
  ASSERT_TRUE(chw.DecodeCropResized(png, window, 11, 9, planes.data(), planes.size()).ok());
  for (size_t i = 0; i < 11 * 9; ++i) {
    for (int c = 0; c < 3; ++c) ASSERT_EQ(planes[c * 99 + i], out[i * 3 + c]) << i;
  }
}

TEST(PngDecoder, ProbeAndSniffUseTheMagicBytes) {
  const std::string png = Png(RgbSpec(37, 23, true), Pattern(37, 23));
  EXPECT_EQ(SniffImageFormat(png), ImageFormat::kPng);
  Result<PngInfo> info = ProbePng(png);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->width, 37);
  EXPECT_EQ(info->height, 23);
  EXPECT_EQ(info->color_type, 2);
  EXPECT_TRUE(info->interlaced);
  EXPECT_TRUE(info->has_iend);
  Result<ImageInfo> any = ProbeImage(png);
  ASSERT_TRUE(any.ok());
  EXPECT_EQ(any->format, ImageFormat::kPng);
  EXPECT_EQ(ProbeImage("GIF89a....").status().message(), "not a JPEG or PNG: GIF image");
  EXPECT_EQ(ProbePng("\xff\xd8\xff\xe0").status().code(), StatusCode::kInvalidArgument);
}

// ----------------------------------------------------------- corruption --

TEST(PngCorruption, EveryTruncationIsAnErrorNeverACrash) {
  const std::string png = Png(RgbSpec(37, 23), Pattern(37, 23));
  ImageDecoder decoder;
  for (size_t n = 0; n < png.size() - 12; ++n) {  // the last 12 bytes are IEND
    Result<RgbImage> image = decoder.Decode(png.substr(0, n));
    EXPECT_FALSE(image.ok()) << "cut at " << n << " of " << png.size();
  }
  // Cut inside IEND: the pixels are all there; strict mode refuses.
  EXPECT_TRUE(decoder.Decode(png.substr(0, png.size() - 4)).ok());
  DecodeOptions strict;
  strict.strict = true;
  EXPECT_FALSE(ImageDecoder(strict).Decode(png.substr(0, png.size() - 4)).ok());
  EXPECT_FALSE(ProbePng(png.substr(0, png.size() - 4))->has_iend);
}

TEST(PngCorruption, ADamagedIdatIsCorruption) {
  std::string png = Png(RgbSpec(37, 23), Pattern(37, 23));
  const size_t idat = png.find("IDAT");
  ASSERT_NE(idat, std::string::npos);
  png[idat + 20] = static_cast<char>(png[idat + 20] ^ 0x40);  // CRC no longer matches
  Result<RgbImage> image = ImageDecoder().Decode(png);
  ASSERT_FALSE(image.ok());
  EXPECT_EQ(image.status().code(), StatusCode::kCorruption);
  EXPECT_NE(image.status().message().find("PNG decode: "), std::string::npos) << image.status().ToString();
}

TEST(PngCorruption, ABadHeaderIsCorruption) {
  std::string png = Row(2, 8, 0, {1, 2});
  std::string bad_depth = png;
  bad_depth[24] = 3;  // bit depth 3
  EXPECT_EQ(ProbePng(bad_depth).status().code(), StatusCode::kCorruption);
  std::string zero = png;
  std::memset(&zero[16], 0, 4);  // width 0
  EXPECT_EQ(ImageDecoder().Decode(zero).status().code(), StatusCode::kCorruption);
}

TEST(PngCorruption, AHeaderClaimingMorePixelsThanTheFileCodesIsRefusedBeforeAllocating) {
  std::string png = Row(2, 8, 0, {1, 2});
  const unsigned char huge[8] = {0, 0, 0x1f, 0xff, 0, 0, 0x1f, 0xff};  // 8191 x 8191
  std::memcpy(&png[16], huge, 8);
  Result<RgbImage> image = ImageDecoder().Decode(png);
  ASSERT_FALSE(image.ok());
  EXPECT_NE(image.status().message().find("more than a"), std::string::npos) << image.status().ToString();
  DecodeOptions small;
  small.limits.max_pixels = 800;  // of 37 x 23 = 851
  EXPECT_EQ(ImageDecoder(small).Decode(Png(RgbSpec(37, 23), Pattern(37, 23))).status().code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace unirecord
