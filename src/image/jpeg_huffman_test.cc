// Our Huffman decoder against libjpeg-turbo's coefficients
// (jpeg_read_coefficients): whenever ours decodes a file, every coefficient
// of every block must be libjpeg's. Files: the conformance corpus, its
// fast-layout transcodes (what `urec convert` stores) and the sub-images a
// crop decodes from them, generated files of every sampling with and without
// restart markers, and damaged copies. The bench's generated sets are
// checked the same way by image_bench before it times them.
#include "image/jpeg_huffman.h"

#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "image/jpeg_encoder.h"
#include "image/jpeg_header.h"
#include "image/jpeg_restart_crop.h"
#include "image/jpeg_transcode.h"
#include "image/image_testing.h"

namespace unirecord::image_internal {
namespace {

struct Counts {
  int decoded = 0, not_baseline = 0, rejected = 0, header_error = 0;
};

// Decodes `jpeg` both ways; when ours decodes, libjpeg must read it without
// error and give the same coefficients.
OwnHuffmanResult Compare(const std::string& jpeg, const std::string& what, Counts* counts) {
  OwnHuffmanScratch scratch;
  JpegCoefficients ours, theirs;
  const OwnHuffmanResult result = DecodeCoefficientsOwn(jpeg, &scratch, &ours);
  switch (result) {
    case OwnHuffmanResult::kDecoded: ++counts->decoded; break;
    case OwnHuffmanResult::kNotBaseline: ++counts->not_baseline; break;
    case OwnHuffmanResult::kRejected: ++counts->rejected; break;
    case OwnHuffmanResult::kHeaderError: ++counts->header_error; break;
  }
  if (result != OwnHuffmanResult::kDecoded) return result;
  int warnings = 0;
  std::string error;
  const bool ok = ReadLibjpegCoefficients(jpeg, &theirs, &warnings, &error);
  EXPECT_TRUE(ok) << what << ": ours decoded what libjpeg fails on: " << error;
  if (!ok) return result;
  EXPECT_EQ(ours.components.size(), theirs.components.size()) << what;
  for (size_t c = 0; c < ours.components.size() && c < theirs.components.size(); ++c) {
    const auto& a = ours.components[c];
    const auto& b = theirs.components[c];
    EXPECT_EQ(a.blocks_wide, b.blocks_wide) << what;
    EXPECT_EQ(a.blocks_high, b.blocks_high) << what;
    if (a.coef == b.coef) continue;
    for (size_t i = 0; i < a.coef.size() && i < b.coef.size(); ++i) {
      if (a.coef[i] != b.coef[i]) {
        ADD_FAILURE() << what << ": component " << c << " block " << i / 64 << " coefficient "
                      << i % 64 << ": ours " << a.coef[i] << ", libjpeg " << b.coef[i];
        break;
      }
    }
  }
  return result;
}

// The sub-images a crop decodes from: windows across the whole image.
void CompareSubImages(const std::string& fast, const std::string& what, Counts* counts) {
  JpegHeaderLayout layout;
  Result<JpegInfo> info = ProbeJpegHeader(fast, &layout);
  RestartGrid grid;
  ASSERT_TRUE(info.ok() && FindRestartGrid(*info, layout, &grid)) << what;
  RestartCropScratch scratch;
  std::mt19937 rng(7);
  for (int k = 0; k < 12; ++k) {
    const int x0 = std::uniform_int_distribution<int>(0, info->width - 1)(rng);
    const int y0 = std::uniform_int_distribution<int>(0, info->height - 1)(rng);
    const int x1 = std::uniform_int_distribution<int>(x0 + 1, info->width)(rng);
    const int y1 = std::uniform_int_distribution<int>(y0 + 1, info->height)(rng);
    SubImage sub;
    ASSERT_TRUE(AssembleSubImage(fast, layout, grid, x0, y0, x1, y1, &scratch, &sub)) << what;
    if (sub.whole_image) continue;
    EXPECT_EQ(Compare(scratch.jpeg, what + " sub-image", counts), OwnHuffmanResult::kDecoded);
  }
}

std::vector<std::string> CorpusFiles() {
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(std::string(UNIRECORD_TEST_DATA_DIR) +
                                                           "/jpeg-conformance")) {
    const std::string ext = e.path().extension().string();
    if (ext == ".jpg" || ext == ".jpeg") files.push_back(e.path().string());
  }
  return files;
}

TEST(OwnHuffman, ConformanceCorpusItsFastLayoutAndCrops) {
  Counts source, fast;
  int transcoded = 0;
  const std::vector<std::string> files = CorpusFiles();
  ASSERT_GE(files.size(), 70u);
  for (const std::string& path : files) {
    const std::string name = std::filesystem::path(path).filename().string();
    const std::string bytes = testing::ReadCorpusFile(name);
    Compare(bytes, name, &source);
    Result<TranscodeResult> t = TranscodeToFastLayout(bytes);
    if (!t.ok() || t->layout != JpegLayout::kFast) continue;
    ++transcoded;
    EXPECT_EQ(Compare(t->jpeg, name + " (fast layout)", &fast), OwnHuffmanResult::kDecoded);
    CompareSubImages(t->jpeg, name + " (fast layout)", &fast);
  }
  // The corpus has baseline files ours decodes, and others it must leave.
  EXPECT_GT(source.decoded, 10);
  EXPECT_GT(source.not_baseline, 3);
  EXPECT_GT(transcoded, 30);
  EXPECT_EQ(fast.rejected + fast.not_baseline, 0);
}

TEST(OwnHuffman, GeneratedFilesEverySamplingAndInterval) {
  Counts counts;
  const Sampling samplings[] = {Sampling::k444, Sampling::k422, Sampling::k420, Sampling::k440,
                                Sampling::kGray};
  const int sizes[][2] = {{1, 1}, {17, 9}, {203, 157}, {64, 64}};
  for (Sampling s : samplings) {
    for (const auto& size : sizes) {
      for (int quality : {40, 100}) {
        for (int restart : {0, 1, 3}) {
          for (bool cmyk : {false, true}) {
            if (cmyk && s == Sampling::kGray) continue;
            EncodeSpec spec;
            spec.width = size[0];
            spec.height = size[1];
            spec.sampling = s;
            spec.quality = quality;
            spec.restart_interval = restart;
            spec.optimize_coding = restart != 0;
            spec.cmyk = cmyk;
            std::vector<uint8_t> pixels = testing::SyntheticRgb(spec.width, spec.height);
            if (cmyk) pixels = RgbToAdobeCmyk(pixels);
            Result<std::string> jpeg = EncodeJpeg(pixels, spec);
            ASSERT_TRUE(jpeg.ok());
            const std::string what = std::to_string(size[0]) + "x" + std::to_string(size[1]) +
                                     " sampling " + std::to_string(int(s)) + " q" +
                                     std::to_string(quality) + " restart " + std::to_string(restart) +
                                     (cmyk ? " cmyk" : "");
            EXPECT_EQ(Compare(*jpeg, what, &counts), OwnHuffmanResult::kDecoded);
          }
        }
      }
    }
  }
}

TEST(OwnHuffman, ProgressiveAndArithmeticAreLeftToLibjpeg) {
  Counts counts;
  const std::vector<uint8_t> pixels = testing::SyntheticRgb(64, 48);
  EncodeSpec spec;
  spec.width = 64;
  spec.height = 48;
  spec.progressive = true;
  EXPECT_EQ(Compare(EncodeJpeg(pixels, spec).value(), "progressive", &counts),
            OwnHuffmanResult::kNotBaseline);
  spec.progressive = false;
  spec.arithmetic = true;
  EXPECT_EQ(Compare(EncodeJpeg(pixels, spec).value(), "arithmetic", &counts),
            OwnHuffmanResult::kNotBaseline);
}

// Damaged copies: ours must reject them or agree with libjpeg exactly.
TEST(OwnHuffman, DamagedScansAreRejectedOrExact) {
  EncodeSpec spec;
  spec.width = 96;
  spec.height = 64;
  spec.restart_interval = 2;
  spec.optimize_coding = true;
  const std::string jpeg = EncodeJpeg(testing::SyntheticRgb(spec.width, spec.height), spec).value();
  JpegHeaderLayout layout;
  ASSERT_TRUE(ProbeJpegHeader(jpeg, &layout).ok());
  Counts counts;
  std::mt19937 rng(11);
  for (size_t at = layout.scan_data; at < jpeg.size(); ++at) {
    std::string damaged = jpeg;
    damaged[at] = static_cast<char>(damaged[at] ^ (1 + rng() % 255));
    Compare(damaged, "byte " + std::to_string(at) + " changed", &counts);
  }
  for (size_t cut = layout.scan_data; cut < jpeg.size(); cut += 7) {
    Compare(jpeg.substr(0, cut), "cut at " + std::to_string(cut), &counts);
  }
  // Huffman codes resynchronise: much damage still decodes (then exactly
  // as libjpeg does), the rest must be rejected.
  EXPECT_GT(counts.rejected, 100);
  EXPECT_GT(counts.decoded, 100);
}

}  // namespace
}  // namespace unirecord::image_internal
