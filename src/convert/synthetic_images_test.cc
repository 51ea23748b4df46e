#include "convert/synthetic_images.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <vector>

#include "util/files_testing.h"
#include "unirecord/image.h"

namespace unirecord {
namespace {

namespace fs = std::filesystem;

// Relative path -> content of every file below root.
std::map<std::string, std::string> Snapshot(const std::string& root) {
  std::map<std::string, std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    if (e.is_regular_file()) files[fs::relative(e.path(), root).string()] = testing::ReadBytes(e.path().string());
  }
  return files;
}

TEST(SyntheticImageFolder, SameOptionsGiveIdenticalFilesWhateverTheThreads) {
  testing::ScratchDir dir;
  SyntheticFolderOptions options;
  options.classes = 3;
  options.per_class = 4;
  options.width = 96;
  options.height = 72;
  options.mix = true;
  options.threads = 1;
  ASSERT_TRUE(WriteSyntheticImageFolder(dir / "a", options).ok());
  options.threads = 4;
  ASSERT_TRUE(WriteSyntheticImageFolder(dir / "b", options).ok());
  EXPECT_EQ(Snapshot(dir / "a"), Snapshot(dir / "b"));
  options.seed = 1;
  ASSERT_TRUE(WriteSyntheticImageFolder(dir / "c", options).ok());
  EXPECT_NE(Snapshot(dir / "a"), Snapshot(dir / "c"));
}

TEST(SyntheticImageFolder, ImageNetLikeVariety) {
  testing::ScratchDir dir;
  SyntheticFolderOptions options;
  options.classes = 2;
  options.per_class = 20;
  options.mix = true;
  auto report = WriteSyntheticImageFolder(dir / "f", options);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->jpegs, 41);  // 40 + the CMYK one
  EXPECT_EQ(report->pngs, 1);
  EXPECT_EQ(report->extras, 3);

  std::set<std::string> kinds;
  int portrait = 0, jpegs = 0;
  int64_t jpeg_bytes = 0;
  for (const auto& [path, bytes] : Snapshot(dir / "f")) {
    auto info = ProbeJpeg(bytes);
    if (!info.ok()) continue;
    ++jpegs;
    jpeg_bytes += static_cast<int64_t>(bytes.size());
    portrait += info->height > info->width;
    kinds.insert(JpegSubsamplingName(info->subsampling));
    kinds.insert(JpegColorSpaceName(info->color_space));
    if (info->progressive) kinds.insert("progressive");
  }
  EXPECT_EQ(jpegs, 41 + 1);  // the truncated one still has a valid header
  EXPECT_GT(portrait, 0);
  for (const char* kind : {"4:2:0", "4:4:4", "4:2:2", "grayscale", "YCCK", "progressive"}) {
    EXPECT_TRUE(kinds.count(kind)) << "no " << kind << " image";
  }
  // Photo-like content: about 100 KB at 500x375 (quality 85-95).
  EXPECT_GT(jpeg_bytes / jpegs, 50'000);
  EXPECT_LT(jpeg_bytes / jpegs, 250'000);
}

double MeanAbsDiff(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
  double total = 0;
  for (size_t i = 0; i < a.size(); ++i) total += std::abs(int{a[i]} - int{b[i]});
  return total / static_cast<double>(a.size());
}

TEST(SyntheticJpeg, CmykDecodesToThePictureTheRgbOneShows) {
  SyntheticJpegSpec spec;  // as the --mix folder's cmyk.JPEG: 500x375 4:2:0, quality 90
  spec.seed = 12345;
  ImageDecoder decoder;
  // Quality 100 4:4:4 is within a step or two of the painted pixels.
  SyntheticJpegSpec reference_spec = spec;
  reference_spec.quality = 100;
  reference_spec.sampling = SyntheticJpegSpec::Sampling::k444;
  auto reference_jpeg = EncodeSyntheticJpeg(reference_spec);
  ASSERT_TRUE(reference_jpeg.ok()) << reference_jpeg.status().ToString();
  auto reference = decoder.Decode(*reference_jpeg);
  ASSERT_TRUE(reference.ok());

  auto rgb_jpeg = EncodeSyntheticJpeg(spec);
  spec.cmyk = true;
  auto cmyk_jpeg = EncodeSyntheticJpeg(spec);
  ASSERT_TRUE(rgb_jpeg.ok() && cmyk_jpeg.ok()) << cmyk_jpeg.status().ToString();
  auto info = ProbeJpeg(*cmyk_jpeg);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->color_space, JpegColorSpace::kYCCK);
  EXPECT_TRUE(info->has_adobe_marker);
  auto rgb = decoder.Decode(*rgb_jpeg);
  auto cmyk = decoder.Decode(*cmyk_jpeg);
  ASSERT_TRUE(rgb.ok() && cmyk.ok()) << cmyk.status().ToString();
  ASSERT_EQ(cmyk->width, 500);
  ASSERT_EQ(cmyk->height, 375);
  const double cmyk_error = MeanAbsDiff(cmyk->pixels, reference->pixels);
  const double rgb_error = MeanAbsDiff(rgb->pixels, reference->pixels);
  EXPECT_LT(cmyk_error, rgb_error + 1.0) << "RGB file: " << rgb_error;  // about 5.4 and 5.1

  spec.sampling = SyntheticJpegSpec::Sampling::kGray;
  EXPECT_EQ(EncodeSyntheticJpeg(spec).status().code(), StatusCode::kInvalidArgument);
}

TEST(SyntheticImageFolder, RefusesANonEmptyFolder) {
  testing::ScratchDir dir;
  dir.Write("f/x", "x");
  EXPECT_EQ(WriteSyntheticImageFolder(dir / "f", {}).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace unirecord
