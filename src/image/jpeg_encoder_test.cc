#include "image/jpeg_encoder.h"

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "image/jpeg_decoder.h"
#include "image/image_testing.h"
#include "unirecord/image.h"

namespace unirecord {
namespace {

using testing::EncodeJpeg;
using testing::EncodeSpec;
using testing::Sampling;

double MeanAbsDiff(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
  double total = 0;
  for (size_t i = 0; i < a.size(); ++i) total += std::abs(int{a[i]} - int{b[i]});
  return total / static_cast<double>(a.size());
}

TEST(JpegEncoder, CmykIsYcckWithAnAdobeMarkerAndDecodesToTheSourceColours) {
  struct Case {
    const char* name;
    Sampling sampling;
    JpegSubsampling expected;
    bool progressive;
  } cases[] = {
      {"4:4:4", Sampling::k444, JpegSubsampling::k444, false},
      {"4:2:0", Sampling::k420, JpegSubsampling::k420, false},
      {"progressive 4:2:2", Sampling::k422, JpegSubsampling::k422, true},
  };
  for (const Case& c : cases) {
    EncodeSpec spec;
    spec.sampling = c.sampling;
    spec.progressive = c.progressive;
    const std::vector<uint8_t> rgb = testing::SyntheticRgb(spec.width, spec.height);
    Result<std::string> rgb_jpeg = EncodeJpeg(rgb, spec);
    ASSERT_TRUE(rgb_jpeg.ok()) << c.name << ": " << rgb_jpeg.status().ToString();
    spec.cmyk = true;
    Result<std::string> cmyk_jpeg = EncodeJpeg(image_internal::RgbToAdobeCmyk(rgb), spec);
    ASSERT_TRUE(cmyk_jpeg.ok()) << c.name << ": " << cmyk_jpeg.status().ToString();

    Result<JpegInfo> info = ProbeJpeg(*cmyk_jpeg);
    ASSERT_TRUE(info.ok()) << c.name;
    EXPECT_EQ(info->components, 4) << c.name;
    EXPECT_EQ(info->color_space, JpegColorSpace::kYCCK) << c.name;
    EXPECT_TRUE(info->has_adobe_marker) << c.name;
    EXPECT_EQ(info->adobe_transform, 2) << c.name;
    EXPECT_EQ(info->subsampling, c.expected) << c.name;  // K sampled like Y
    EXPECT_EQ(info->progressive, c.progressive) << c.name;

    JpegDecoder decoder;
    Result<RgbImage> from_cmyk = decoder.Decode(*cmyk_jpeg);
    Result<RgbImage> from_rgb = decoder.Decode(*rgb_jpeg);
    ASSERT_TRUE(from_cmyk.ok()) << c.name << ": " << from_cmyk.status().ToString();
    ASSERT_TRUE(from_rgb.ok()) << c.name;
    ASSERT_EQ(from_cmyk->width, spec.width);
    ASSERT_EQ(from_cmyk->height, spec.height);
    // Lossy both ways (SyntheticRgb's blue checkerboard suffers from chroma
    // subsampling: mean errors near 16 at 4:2:0): the CMYK file comes back
    // about as close to the source as the RGB one (K, a fourth channel at
    // luma resolution, often makes it closer). Samples read as not inverted
    // would be off by ~100.
    const double cmyk_error = MeanAbsDiff(from_cmyk->pixels, rgb);
    const double rgb_error = MeanAbsDiff(from_rgb->pixels, rgb);
    EXPECT_LT(cmyk_error, rgb_error + 1.0) << c.name << " (RGB file: " << rgb_error << ")";
    if (c.sampling == Sampling::k444) EXPECT_LT(cmyk_error, 6.0) << c.name;
  }
}

TEST(JpegEncoder, FastDctGivesAnotherValidFile) {
  EncodeSpec spec;
  const std::vector<uint8_t> rgb = testing::SyntheticRgb(spec.width, spec.height);
  Result<std::string> accurate = EncodeJpeg(rgb, spec);
  spec.fast_dct = true;
  Result<std::string> fast = EncodeJpeg(rgb, spec);
  ASSERT_TRUE(accurate.ok() && fast.ok());
  EXPECT_NE(*accurate, *fast);
  JpegDecoder decoder;
  Result<RgbImage> a = decoder.Decode(*accurate);
  Result<RgbImage> b = decoder.Decode(*fast);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_LT(MeanAbsDiff(a->pixels, b->pixels), 2.0);
}

TEST(JpegEncoder, RejectsBadSpecsWithAMessage) {
  EncodeSpec spec;
  const std::vector<uint8_t> rgb = testing::SyntheticRgb(spec.width, spec.height);
  Result<std::string> r = EncodeJpeg(std::vector<uint8_t>(rgb.begin(), rgb.end() - 1), spec);
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("203x157 RGB needs 95613 bytes"), std::string::npos)
      << r.status().ToString();
  spec.cmyk = true;  // the RGB buffer is too short for CMYK
  EXPECT_EQ(EncodeJpeg(rgb, spec).status().code(), StatusCode::kInvalidArgument);
  spec.sampling = Sampling::kGray;
  r = EncodeJpeg(std::vector<uint8_t>(rgb.size() / 3 * 4), spec);
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("grayscale"), std::string::npos);
  spec = EncodeSpec{};
  spec.width = 0;
  EXPECT_EQ(EncodeJpeg(rgb, spec).status().code(), StatusCode::kInvalidArgument);
  spec = EncodeSpec{};
  spec.quality = 0;
  EXPECT_EQ(EncodeJpeg(rgb, spec).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace unirecord
