#include "convert/source_image.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "convert/synthetic_images.h"
#include "io/file.h"
#include "util/files_testing.h"

namespace unirecord {
namespace {

std::string Jpeg(SyntheticJpegSpec spec = {}) {
  spec.width = 64;
  spec.height = 48;
  auto jpeg = EncodeSyntheticJpeg(spec);
  EXPECT_TRUE(jpeg.ok()) << jpeg.status().ToString();
  return jpeg.ok() ? *jpeg : std::string();
}

std::string ReasonFor(std::string_view bytes) {
  auto info = CheckSourceImage(bytes);
  return info.ok() ? "ok" : RejectReason(info.status());
}

TEST(CheckSourceImage, AcceptsDecodableJpegs) {
  for (auto sampling : {SyntheticJpegSpec::Sampling::k420, SyntheticJpegSpec::Sampling::kGray}) {
    SyntheticJpegSpec spec;
    spec.sampling = sampling;
    auto info = CheckSourceImage(Jpeg(spec));
    ASSERT_TRUE(info.ok()) << info.status().ToString();
    EXPECT_EQ(info->format, ImageFormat::kJpeg);
    EXPECT_EQ(info->width(), 64);
    EXPECT_EQ(info->height(), 48);
  }
  SyntheticJpegSpec cmyk;
  cmyk.cmyk = true;
  EXPECT_EQ(ReasonFor(Jpeg(cmyk)), "ok");
  EXPECT_EQ(ReasonFor(Jpeg() + "trailing bytes after the image"), "ok");
}

TEST(CheckSourceImage, AcceptsPngsByTheirMagicBytes) {
  const std::string png = EncodeSyntheticPng(8, 6);
  auto info = CheckSourceImage(png);
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(info->format, ImageFormat::kPng);
  EXPECT_EQ(info->width(), 8);
  EXPECT_EQ(info->height(), 6);
  std::string bytes = png;
  const StoredImage stored = PrepareStoredImage(&bytes, info->format, false);
  EXPECT_EQ(bytes, png);  // stored as it is
  EXPECT_EQ(stored.layout, image_internal::JpegLayout::kOriginal);
  EXPECT_TRUE(stored.kept_reason.empty());
  EXPECT_TRUE(CheckSourceSize(*info, png.size(), DecodeLimits()).ok());
  DecodeLimits small;
  small.max_pixels = 47;
  EXPECT_EQ(RejectReason(CheckSourceSize(*info, png.size(), small)).rfind("unsupported: PNG: ", 0), 0u);
}

TEST(CheckSourceImage, RejectsWithAReason) {
  EXPECT_EQ(ReasonFor(""), "empty file");
  EXPECT_EQ(ReasonFor("GIF89a....."), "not a JPEG or PNG: GIF image");
  const std::string png = EncodeSyntheticPng(8, 8);
  EXPECT_EQ(ReasonFor(png.substr(0, png.size() - 12)), "truncated: the PNG ends without its IEND chunk");
  EXPECT_EQ(ReasonFor(png.substr(0, 20)).rfind("corrupt: PNG header", 0), 0u) << ReasonFor(png.substr(0, 20));
  const std::string jpeg = Jpeg();
  EXPECT_EQ(ReasonFor(jpeg.substr(0, jpeg.size() * 3 / 5)), "truncated: the file ends without an EOI marker");
  EXPECT_EQ(ReasonFor(jpeg.substr(0, 40)).rfind("corrupt: JPEG header", 0), 0u) << ReasonFor(jpeg.substr(0, 40));
  const std::string twelve_bit = testing::ReadBytes(std::string(UNIRECORD_TEST_DATA_DIR) +
                                               "/jpeg-conformance/jpegsuite__progressive_huffman__32x32x12_ycbcr_interleaved.jpg");
  ASSERT_FALSE(twelve_bit.empty());
  EXPECT_EQ(ReasonFor(twelve_bit).rfind("unsupported: 12-bit", 0), 0u) << ReasonFor(twelve_bit);
}

// `jpeg` with the frame header's size replaced: a header that lies.
std::string WithClaimedSize(std::string jpeg, int width, int height) {
  for (size_t i = 2; i + 9 < jpeg.size(); ++i) {
    const uint8_t marker = static_cast<uint8_t>(jpeg[i + 1]);
    if (static_cast<uint8_t>(jpeg[i]) == 0xFF && (marker == 0xC0 || marker == 0xC1 || marker == 0xC2)) {
      jpeg[i + 5] = static_cast<char>(height >> 8);
      jpeg[i + 6] = static_cast<char>(height & 0xFF);
      jpeg[i + 7] = static_cast<char>(width >> 8);
      jpeg[i + 8] = static_cast<char>(width & 0xFF);
      return jpeg;
    }
  }
  ADD_FAILURE() << "no SOF marker";
  return jpeg;
}

TEST(CheckSourceSize, RefusesAHeaderClaimingMoreBlocksThanTheFileCodes) {
  SyntheticJpegSpec spec;
  spec.width = 640;
  spec.height = 480;
  auto jpeg = EncodeSyntheticJpeg(spec);
  ASSERT_TRUE(jpeg.ok());
  const std::string bomb = WithClaimedSize(*jpeg, 11584, 11584);  // 134 Mpx: within the default limits
  Result<SourceImageInfo> info = CheckSourceImage(bomb);
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  ASSERT_EQ(info->width(), 11584);
  const Status status = CheckSourceSize(*info, bomb.size(), DecodeLimits());
  EXPECT_EQ(status.code(), StatusCode::kCorruption);
  EXPECT_EQ(RejectReason(status).rfind("corrupt: JPEG header claims 11584x11584 pixels (2096704 blocks of 8x8), "
                                       "more than a " + std::to_string(bomb.size()) + "-byte file can code", 0),
            0u)
      << RejectReason(status);
  // The honest file passes; so does the same header over a file big enough to code it.
  EXPECT_TRUE(CheckSourceSize(*CheckSourceImage(*jpeg), jpeg->size(), DecodeLimits()).ok());
  EXPECT_TRUE(CheckSourceSize(*info, 2096704 / 8, DecodeLimits()).ok());
}

TEST(CheckSourceSize, AppliesTheCallersLimits) {
  Result<SourceImageInfo> info = CheckSourceImage(Jpeg());  // 64x48
  ASSERT_TRUE(info.ok());
  DecodeLimits limits;
  limits.max_pixels = 64 * 48 - 1;
  EXPECT_EQ(RejectReason(CheckSourceSize(*info, 100000, limits)),
            "unsupported: JPEG is 64x48, over the limit of 3071 pixels");
  limits.max_pixels = 64 * 48;
  limits.max_dimension = 63;
  EXPECT_EQ(RejectReason(CheckSourceSize(*info, 100000, limits)),
            "unsupported: JPEG is 64x48, over the limit of 63 pixels a side");
  limits.max_dimension = 64;
  EXPECT_TRUE(CheckSourceSize(*info, 100000, limits).ok());
}

// Files from other projects' test suites that libjpeg decodes without a
// warning are real JPEGs: the plausibility check must pass every one.
TEST(CheckSourceSize, PassesEveryCleanConformanceFile) {
  const std::string dir = std::string(UNIRECORD_TEST_DATA_DIR) + "/jpeg-conformance";
  auto names = io::ListDirectory(dir);
  ASSERT_TRUE(names.ok());
  DecodeOptions strict;
  strict.strict = true;
  ImageDecoder decoder(strict);
  int checked = 0;
  for (const std::string& name : *names) {
    const std::string bytes = testing::ReadBytes(dir + "/" + name);
    Result<SourceImageInfo> info = CheckSourceImage(bytes);
    if (!info.ok() || !decoder.Decode(bytes).ok()) continue;
    EXPECT_TRUE(CheckSourceSize(*info, bytes.size(), DecodeLimits()).ok()) << name;
    ++checked;
  }
  EXPECT_GE(checked, 30);
}

TEST(ReadSourceFile, ReadsFilesAndRefusesOtherKinds) {
  testing::ScratchDir dir;
  dir.Write("a.jpg", "hello");
  std::string bytes = "stale";
  ASSERT_TRUE(ReadSourceFile(dir / "a.jpg", &bytes).ok());
  EXPECT_EQ(bytes, "hello");
  ASSERT_EQ(mkfifo((dir / "fifo.jpg").c_str(), 0600), 0);
  Status fifo = ReadSourceFile(dir / "fifo.jpg", &bytes);  // must not block
  EXPECT_EQ(RejectReason(fifo), "unreadable: not a regular file (a FIFO)");
  EXPECT_EQ(RejectReason(ReadSourceFile(dir / "missing.jpg", &bytes)), "unreadable: open: No such file or directory");
  dir.Write("huge.jpg", "");
  ASSERT_EQ(truncate((dir / "huge.jpg").c_str(), kMaxSourceFileBytes + 1), 0);  // sparse: costs no disk
  EXPECT_EQ(RejectReason(ReadSourceFile(dir / "huge.jpg", &bytes)).rfind("unsupported: a 1073741825-byte file", 0), 0u);
}

}  // namespace
}  // namespace unirecord
