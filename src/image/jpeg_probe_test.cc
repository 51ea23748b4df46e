#include <fstream>
#include <iterator>
#include <string>

#include <gtest/gtest.h>

#include "image/jpeg_decoder.h"
#include "unirecord/image.h"

namespace unirecord {
namespace {

std::string ReadCorpus(const std::string& name) {
  std::ifstream in(std::string(UNIRECORD_TEST_DATA_DIR) + "/jpeg-conformance/" + name,
                   std::ios::binary);
  EXPECT_TRUE(in.good()) << name;
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(ProbeJpeg, BaselineFrameFacts) {
  Result<JpegInfo> info = ProbeJpeg(ReadCorpus("libjpeg-turbo__testorig.jpg"));
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(info->width, 227);
  EXPECT_EQ(info->height, 149);
  EXPECT_EQ(info->components, 3);
  EXPECT_EQ(info->precision, 8);
  EXPECT_EQ(info->color_space, JpegColorSpace::kYCbCr);
  EXPECT_EQ(info->subsampling, JpegSubsampling::k420);
  EXPECT_EQ(info->process, JpegProcess::kBaseline);
  EXPECT_FALSE(info->progressive);
  EXPECT_FALSE(info->arithmetic);
  EXPECT_TRUE(info->has_eoi);
  EXPECT_EQ(info->exif_orientation, 1);
  EXPECT_TRUE(CheckDecodable(*info).ok());
}

TEST(ProbeJpeg, CodingProcesses) {
  Result<JpegInfo> prog = ProbeJpeg(ReadCorpus("libjpeg-turbo__testimgp.jpg"));
  ASSERT_TRUE(prog.ok());
  EXPECT_TRUE(prog->progressive);
  Result<JpegInfo> ari = ProbeJpeg(ReadCorpus("libjpeg-turbo__testimgari.jpg"));
  ASSERT_TRUE(ari.ok());
  EXPECT_TRUE(ari->arithmetic);
  EXPECT_EQ(ari->process, JpegProcess::kExtendedSequential);

  Result<JpegInfo> twelve = ProbeJpeg(ReadCorpus("libjpeg-turbo__testorig12.jpg"));
  ASSERT_TRUE(twelve.ok());
  EXPECT_EQ(twelve->precision, 12);
  Status s = CheckDecodable(*twelve);
  EXPECT_EQ(s.code(), StatusCode::kNotSupported);
  EXPECT_NE(s.message().find("12-bit"), std::string::npos) << s.message();

  Result<JpegInfo> lossless = ProbeJpeg(ReadCorpus("jpeg-decoder__lossless__jpeg_lossless_sel1.jpg"));
  ASSERT_TRUE(lossless.ok());
  EXPECT_EQ(lossless->process, JpegProcess::kLossless);
  EXPECT_NE(CheckDecodable(*lossless).message().find("lossless"), std::string::npos);
}

TEST(ProbeJpeg, ColorSpacesAndSubsampling) {
  EXPECT_EQ(ProbeJpeg(ReadCorpus("pillow__hopper_gray.jpg"))->color_space, JpegColorSpace::kGrayscale);
  EXPECT_EQ(ProbeJpeg(ReadCorpus("jpeg-decoder__mozilla__jpg-cmyk-1.jpg"))->color_space,
            JpegColorSpace::kCMYK);
  EXPECT_EQ(ProbeJpeg(ReadCorpus("pillow__iptc.jpg"))->subsampling, JpegSubsampling::k422);
  EXPECT_EQ(ProbeJpeg(ReadCorpus("zune-image__non_interleaved_440_64x64.jpg"))->subsampling,
            JpegSubsampling::k440);
  EXPECT_EQ(ProbeJpeg(ReadCorpus("zune-image__fox410.jpg"))->subsampling, JpegSubsampling::k410);
  // Photoshop wrote three APP14 segments; libjpeg keeps the last (transform 2).
  Result<JpegInfo> ycck = ProbeJpeg(ReadCorpus("pillow__pil_sample_cmyk.jpg"));
  EXPECT_TRUE(ycck->has_adobe_marker);
  EXPECT_EQ(ycck->adobe_transform, 2);
  EXPECT_EQ(ycck->color_space, JpegColorSpace::kYCCK);
}

TEST(ProbeJpeg, ExifOrientation) {
  for (int o = 2; o <= 8; ++o) {
    Result<JpegInfo> info =
        ProbeJpeg(ReadCorpus("pillow__hopper_orientation_" + std::to_string(o) + ".jpg"));
    ASSERT_TRUE(info.ok());
    EXPECT_EQ(info->exif_orientation, o);
  }
  Result<JpegInfo> rect = ProbeJpeg(ReadCorpus("pillow__orientation_rectangle.jpg"));
  ASSERT_TRUE(rect.ok());
  EXPECT_EQ(rect->exif_orientation, 8);
  EXPECT_EQ(rect->display_width(), 1);
  EXPECT_EQ(rect->display_height(), 2);
}

TEST(ProbeJpeg, NamesOtherFormats) {
  struct Case {
    std::string bytes, name;
  } cases[] = {
      {"", "empty input"},
      {"\x89PNG\r\n\x1a\n0000", "PNG"},
      {"GIF89a....", "GIF"},
      {std::string("RIFF\x10\0\0\0WEBPVP8 ", 16), "WebP"},
      {"BM\0\0\0\0", "BMP"},
      {std::string("II*\0\x08\0\0\0", 8), "TIFF"},
      {"hello world", "68 65 6c 6c"},
  };
  for (const Case& c : cases) {
    Result<JpegInfo> info = ProbeJpeg(c.bytes);
    ASSERT_FALSE(info.ok());
    EXPECT_EQ(info.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(info.status().message().find(c.name), std::string::npos) << info.status().message();
  }
  Result<JpegInfo> png = ProbeJpeg(ReadCorpus("jpeg-decoder__mozilla__jpg-size-6x6.jpg"));
  EXPECT_NE(png.status().message().find("PNG"), std::string::npos);
}

TEST(ProbeJpeg, TruncationAndDamage) {
  std::string good = ReadCorpus("libjpeg-turbo__testorig.jpg");
  Result<JpegInfo> cut = ProbeJpeg(good.substr(0, good.size() / 2));
  ASSERT_TRUE(cut.ok());
  EXPECT_FALSE(cut->has_eoi);
  EXPECT_FALSE(ProbeJpeg(ReadCorpus("zune-image__incomplete_image.jpg"))->has_eoi);
  EXPECT_FALSE(ProbeJpeg(ReadCorpus("pillow__truncated_jpeg.jpg"))->has_eoi);
  // Cut inside the header.
  for (size_t n : {2, 3, 20, 100}) {
    Result<JpegInfo> info = ProbeJpeg(good.substr(0, n));
    EXPECT_EQ(info.status().code(), StatusCode::kCorruption) << n;
  }
  EXPECT_EQ(ProbeJpeg(ReadCorpus("jpeg-decoder__crashtest__missing-sof.jpg")).status().code(),
            StatusCode::kCorruption);
  // "hello" between the COM and the first DQT; libjpeg's djpeg reports
  // "Corrupt JPEG data: 5 extraneous bytes before marker 0xdb".
  EXPECT_EQ(ProbeJpeg(ReadCorpus("pillow__junk_jpeg_header.jpg"))->header_junk_bytes, 5);
  Result<JpegInfo> huge = ProbeJpeg(ReadCorpus("jpeg-decoder__crashtest__max_size.jpg"));
  ASSERT_TRUE(huge.ok());
  EXPECT_EQ(CheckDecodable(*huge).code(), StatusCode::kInvalidArgument);
}

TEST(CheckOutputSize, BoundsOutputsLikeImages) {
  EXPECT_TRUE(CheckOutputSize(224, 224).ok());
  EXPECT_TRUE(CheckOutputSize(65500, 2049).ok());  // 134.2 Mpx: just inside 2^27
  EXPECT_EQ(CheckOutputSize(60000, 60000).message(), "output size 60000x60000 is over the limit of 134217728 pixels");
  EXPECT_EQ(CheckOutputSize(65501, 1).message(), "output size 65501x1 is over the limit of 65500 pixels a side");
  EXPECT_EQ(CheckOutputSize(0, 5).code(), StatusCode::kInvalidArgument);
  DecodeLimits limits;
  limits.max_pixels = 100;
  EXPECT_EQ(CheckOutputSize(11, 10, limits).code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(CheckOutputSize(10, 10, limits).ok());
  // The decoder checks before touching its output buffer.
  DecodeOptions options;
  options.limits = limits;
  JpegDecoder decoder(options);
  uint8_t out[3 * 11 * 10];
  const Status s = decoder.DecodeCropResized("not even a JPEG", {0, 0, 1, 1, false}, 11, 10, out, sizeof(out));
  EXPECT_EQ(s.message(), "output size 11x10 is over the limit of 100 pixels");
  EXPECT_EQ(decoder.DecodeCenterCrop("x", 11, 12, out, sizeof(out)).code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace unirecord
