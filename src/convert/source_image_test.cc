#include "convert/source_image.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/test_files.h"
#include "convert/synthetic_images.h"

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
    EXPECT_EQ(info->width, 64);
    EXPECT_EQ(info->height, 48);
  }
  SyntheticJpegSpec cmyk;
  cmyk.cmyk = true;
  EXPECT_EQ(ReasonFor(Jpeg(cmyk)), "ok");
  EXPECT_EQ(ReasonFor(Jpeg() + "trailing bytes after the image"), "ok");
}

TEST(CheckSourceImage, RejectsWithAReason) {
  EXPECT_EQ(ReasonFor(""), "empty file");
  EXPECT_EQ(ReasonFor(EncodeSyntheticPng(8, 8)), "not a JPEG: PNG image");
  EXPECT_EQ(ReasonFor("GIF89a....."), "not a JPEG: GIF image");
  const std::string jpeg = Jpeg();
  EXPECT_EQ(ReasonFor(jpeg.substr(0, jpeg.size() * 3 / 5)), "truncated: the file ends without an EOI marker");
  EXPECT_EQ(ReasonFor(jpeg.substr(0, 40)).rfind("corrupt: JPEG header", 0), 0u) << ReasonFor(jpeg.substr(0, 40));
  const std::string twelve_bit = testing::ReadBytes(std::string(UNIRECORD_TEST_DATA_DIR) +
                                               "/jpeg-conformance/jpegsuite__progressive_huffman__32x32x12_ycbcr_interleaved.jpg");
  ASSERT_FALSE(twelve_bit.empty());
  EXPECT_EQ(ReasonFor(twelve_bit).rfind("unsupported: 12-bit", 0), 0u) << ReasonFor(twelve_bit);
}

TEST(ReadSourceFile, ReadsFilesAndRefusesOtherKinds) {
  testing::ScratchDir dir;
  dir.Write("a.jpg", "hello");
  std::string bytes = "stale";
  ASSERT_TRUE(ReadSourceFile(dir / "a.jpg", &bytes).ok());
  EXPECT_EQ(bytes, "hello");
  ASSERT_EQ(mkfifo((dir / "fifo.jpg").c_str(), 0600), 0);
  Status fifo = ReadSourceFile(dir / "fifo.jpg", &bytes);  // must not block
  EXPECT_EQ(RejectReason(fifo), "unreadable: not a regular file");
  EXPECT_EQ(RejectReason(ReadSourceFile(dir / "missing.jpg", &bytes)), "unreadable: No such file or directory");
  dir.Write("huge.jpg", "");
  ASSERT_EQ(truncate((dir / "huge.jpg").c_str(), kMaxSourceFileBytes + 1), 0);  // sparse: costs no disk
  EXPECT_EQ(RejectReason(ReadSourceFile(dir / "huge.jpg", &bytes)).rfind("unsupported: a 1073741825-byte file", 0), 0u);
}

}  // namespace
}  // namespace unirecord
