// The fast-layout crop path against the scan-order path. Encoding the same
// pixels twice, plainly and with restart markers plus optimized Huffman
// tables, gives the same quantized coefficients, so every decode of the two
// files must agree byte for byte; the plain file always takes the path that
// entropy-decodes the scan in order.
#include "image/jpeg_restart_crop.h"

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "image/jpeg_decoder.h"
#include "image/jpeg_transcode.h"
#include "image/image_testing.h"
#include "unirecord/image.h"

namespace unirecord {
namespace {

using image_internal::FindRestartGrid;
using image_internal::JpegHeaderLayout;
using image_internal::ProbeJpegHeader;
using image_internal::RestartGrid;
using testing::CropOf;
using testing::EdgeWindows;
using testing::EncodeJpeg;
using testing::EncodeSpec;
using testing::Sampling;
using testing::WithOrientation;

struct Coded {
  std::string plain;
  std::string fast;
};

Coded EncodeTwice(EncodeSpec spec, int restart_interval, const std::vector<uint8_t>* pixels = nullptr) {
  std::vector<uint8_t> synthetic;
  if (pixels == nullptr) {
    synthetic = testing::SyntheticRgb(spec.width, spec.height);
    if (spec.cmyk) synthetic = image_internal::RgbToAdobeCmyk(synthetic);
    pixels = &synthetic;
  }
  Coded coded;
  Result<std::string> plain = EncodeJpeg(*pixels, spec);
  spec.restart_interval = restart_interval;
  spec.optimize_coding = true;
  Result<std::string> fast = EncodeJpeg(*pixels, spec);
  EXPECT_TRUE(plain.ok() && fast.ok());
  if (plain.ok()) coded.plain = *plain;
  if (fast.ok()) coded.fast = *fast;
  return coded;
}

int McuWidth(Sampling s) { return s == Sampling::k422 || s == Sampling::k420 ? 16 : 8; }
int McuHeight(Sampling s) { return s == Sampling::k440 || s == Sampling::k420 ? 16 : 8; }

const char* Name(Sampling s) {
  switch (s) {
    case Sampling::k444: return "4:4:4";
    case Sampling::k422: return "4:2:2";
    case Sampling::k420: return "4:2:0";
    case Sampling::k440: return "4:4:0";
    case Sampling::kGray: return "gray";
  }
  return "?";
}

RestartGrid GridOf(const std::string& jpeg, bool* found) {
  JpegHeaderLayout layout;
  Result<JpegInfo> info = ProbeJpegHeader(jpeg, &layout);
  RestartGrid grid;
  *found = info.ok() && FindRestartGrid(*info, layout, &grid);
  return grid;
}

// Decodes `window` of both files; expects equal pixels, and counts the fast
// decodes in *fast_decodes.
void ExpectSameCrop(JpegDecoder& decoder, const Coded& coded, const CropWindow& w,
                    const std::string& what, int* fast_decodes) {
  DecodeStats plain_stats, fast_stats;
  Result<RgbImage> plain = decoder.DecodeCrop(coded.plain, w, &plain_stats);
  Result<RgbImage> fast = decoder.DecodeCrop(coded.fast, w, &fast_stats);
  ASSERT_TRUE(plain.ok() && fast.ok()) << what << ": " << plain.status().ToString() << " / "
                                       << fast.status().ToString();
  EXPECT_EQ(plain_stats.restart_segments, 0);
  EXPECT_FALSE(plain_stats.own_entropy_decoder) << what;
  // Every decode of a clean fast-layout file goes through our entropy decoder.
  EXPECT_TRUE(fast_stats.own_entropy_decoder) << what;
  EXPECT_EQ(fast_stats.warnings, 0) << what;
  if (fast_stats.restart_segments > 0) ++*fast_decodes;
  EXPECT_TRUE(plain->pixels == fast->pixels)
      << what << ": crop " << w.width << "x" << w.height << "+" << w.x << "+" << w.y
      << (w.flip ? " flipped" : "") << " from " << fast_stats.restart_segments
      << " restart segments differs from the scan-order decode";
}

TEST(RestartGrid, FoundOnlyForTheFastLayout) {
  EncodeSpec spec{203, 157, Sampling::k420, 90, false, false};
  Coded coded = EncodeTwice(spec, 13);  // 13 MCUs per row: one segment per row
  bool found = false;
  RestartGrid grid = GridOf(coded.fast, &found);
  ASSERT_TRUE(found);
  EXPECT_EQ(grid.mcu_width, 16);
  EXPECT_EQ(grid.mcu_height, 16);
  EXPECT_EQ(grid.mcus_per_row, 13);
  EXPECT_EQ(grid.mcu_rows, 10);
  EXPECT_EQ(grid.segments_per_row, 1);
  GridOf(coded.plain, &found);
  EXPECT_FALSE(found) << "no restart interval";

  spec.restart_interval = 4;  // does not divide 13: segments straddle rows
  GridOf(*EncodeJpeg(testing::SyntheticRgb(203, 157), spec), &found);
  EXPECT_FALSE(found);
  spec.restart_interval = 13;
  spec.progressive = true;
  GridOf(*EncodeJpeg(testing::SyntheticRgb(203, 157), spec), &found);
  EXPECT_FALSE(found) << "progressive";
  spec.progressive = false;
  spec.arithmetic = true;
  GridOf(*EncodeJpeg(testing::SyntheticRgb(203, 157), spec), &found);
  EXPECT_FALSE(found) << "arithmetic";

  // A single-component scan codes 8x8 blocks whatever the frame declares.
  EncodeSpec gray{203, 157, Sampling::kGray, 90, false, false};
  grid = GridOf(EncodeTwice(gray, 2).fast, &found);
  ASSERT_TRUE(found);
  EXPECT_EQ(grid.mcus_per_row, 26);
  EXPECT_EQ(grid.segments_per_row, 13);
}

// Every sampling, sizes with partial MCUs at the right and bottom edges
// (down to one pixel), every restart interval dividing the row.
TEST(RestartCrop, CropsEqualTheScanOrderDecode) {
  const Sampling samplings[] = {Sampling::k444, Sampling::k422, Sampling::k420, Sampling::k440,
                                Sampling::kGray};
  const int sizes[][2] = {{203, 157}, {193, 97}, {194, 33}, {196, 41}, {197, 18}, {64, 48},
                          {17, 9},    {9, 17},   {1, 1},    {2, 30}};
  JpegDecoder decoder;
  for (Sampling sampling : samplings) {
    for (const auto& size : sizes) {
      const int w = size[0], h = size[1];
      const int mcus = (w + McuWidth(sampling) - 1) / McuWidth(sampling);
      for (int k = 1; k <= mcus; ++k) {
        if (mcus % k != 0) continue;
        EncodeSpec spec{w, h, sampling, 90, false, false};
        Coded coded = EncodeTwice(spec, k);
        const std::string what = std::string(Name(sampling)) + " " + std::to_string(w) + "x" +
                                 std::to_string(h) + " k=" + std::to_string(k);
        int fast_decodes = 0;
        for (const CropWindow& window : EdgeWindows(w, h)) {
          if (window.width <= 0 || window.height <= 0 || window.x < 0 || window.y < 0 ||
              window.x + window.width > w || window.y + window.height > h)
            continue;
          ExpectSameCrop(decoder, coded, window, what, &fast_decodes);
        }
        for (uint64_t id = 0; id < 40; ++id) {
          ExpectSameCrop(decoder, coded, PlanRandomResizedCrop(w, h, {}, 7, k, id), what,
                         &fast_decodes);
        }
        if (w * h >= 64 * 48) EXPECT_GT(fast_decodes, 0) << what;
        ASSERT_FALSE(HasFailure()) << what;
      }
    }
  }
}

TEST(RestartCrop, ThousandsOfRandomResizedCropsPerSampling) {
  JpegDecoder decoder;
  for (Sampling sampling : {Sampling::k444, Sampling::k422, Sampling::k420, Sampling::k440,
                            Sampling::kGray}) {
    EncodeSpec spec{500, 375, sampling, 92, false, false};
    const int mcus = (500 + McuWidth(sampling) - 1) / McuWidth(sampling);
    const int k = mcus % 4 == 0 ? 4 : (mcus % 3 == 0 ? 3 : 1);
    Coded coded = EncodeTwice(spec, k);
    int fast_decodes = 0;
    for (uint64_t id = 0; id < 1000; ++id) {
      ExpectSameCrop(decoder, coded, PlanRandomResizedCrop(500, 375, {}, 1, 0, id),
                     Name(sampling), &fast_decodes);
      ASSERT_FALSE(HasFailure());
    }
    EXPECT_GT(fast_decodes, 900) << Name(sampling);
  }
}

TEST(RestartCrop, CmykAndYcck) {
  JpegDecoder decoder;
  for (Sampling sampling : {Sampling::k444, Sampling::k420}) {
    EncodeSpec spec{203, 157, sampling, 90, false, false};
    spec.cmyk = true;
    const int mcus = (203 + McuWidth(sampling) - 1) / McuWidth(sampling);
    Coded coded = EncodeTwice(spec, mcus);
    int fast_decodes = 0;
    for (const CropWindow& window : EdgeWindows(203, 157)) {
      ExpectSameCrop(decoder, coded, window, "CMYK", &fast_decodes);
    }
    for (uint64_t id = 0; id < 100; ++id) {
      ExpectSameCrop(decoder, coded, PlanRandomResizedCrop(203, 157, {}, 3, 0, id), "CMYK",
                     &fast_decodes);
    }
    EXPECT_GT(fast_decodes, 50);
  }
}

TEST(RestartCrop, DecodesOnlyTheSegmentsUnderTheWindow) {
  EncodeSpec spec{512, 384, Sampling::k420, 90, false, false};
  Coded coded = EncodeTwice(spec, 4);  // 32 MCUs a row: 8 segments of 64x16 pixels
  JpegDecoder decoder;
  DecodeStats stats;
  // Columns 70..129 and rows 40..59, plus the one-pixel margin: segments
  // 1..2 of MCU rows 2..3.
  ASSERT_TRUE(decoder.DecodeCrop(coded.fast, {70, 40, 60, 20, false}, &stats).ok());
  EXPECT_EQ(stats.restart_segments, 4);
  EXPECT_TRUE(stats.own_entropy_decoder);
  // A window starting on a segment boundary needs the segment to its left
  // for the upsampler's margin.
  ASSERT_TRUE(decoder.DecodeCrop(coded.fast, {64, 32, 64, 16, false}, &stats).ok());
  EXPECT_EQ(stats.restart_segments, 3 * 3);
  // The whole image takes the ordinary path, with our entropy decoder
  // unless the options turn it off.
  ASSERT_TRUE(decoder.Decode(coded.fast, &stats).ok());
  EXPECT_EQ(stats.restart_segments, 0);
  EXPECT_TRUE(stats.own_entropy_decoder);
  DecodeOptions libjpeg_only;
  libjpeg_only.own_entropy_decoder = false;
  JpegDecoder libjpeg_decoder(libjpeg_only);
  ASSERT_TRUE(libjpeg_decoder.DecodeCrop(coded.fast, {70, 40, 60, 20, false}, &stats).ok());
  EXPECT_EQ(stats.restart_segments, 4);
  EXPECT_FALSE(stats.own_entropy_decoder);
  ASSERT_TRUE(libjpeg_decoder.Decode(coded.fast, &stats).ok());
  EXPECT_FALSE(stats.own_entropy_decoder);
}

// DCT scaling, the resize and the exact center crop run on the sub-image too.
TEST(RestartCrop, ResizedAndCenterCropsEqualTheScanOrderDecode) {
  EncodeSpec spec{1000, 800, Sampling::k420, 90, false, false};
  Coded coded = EncodeTwice(spec, 3);  // 63 MCUs a row
  JpegDecoder decoder;
  for (int out : {50, 100, 200, 224}) {
    for (uint64_t id = 0; id < 60; ++id) {
      const CropWindow w = PlanRandomResizedCrop(1000, 800, {}, 5, out, id);
      std::vector<uint8_t> a(out * out * 3), b(out * out * 3);
      DecodeStats sa, sb;
      ASSERT_TRUE(decoder.DecodeCropResized(coded.plain, w, out, out, a.data(), a.size(), &sa).ok());
      ASSERT_TRUE(decoder.DecodeCropResized(coded.fast, w, out, out, b.data(), b.size(), &sb).ok());
      EXPECT_EQ(sa.scale_num, sb.scale_num);
      EXPECT_TRUE(sb.own_entropy_decoder);
      EXPECT_TRUE(a == b) << "out " << out << " window " << id << " at scale " << sb.scale_num
                          << "/8 from " << sb.restart_segments << " segments";
    }
  }
  for (int size : {224, 64}) {
    std::vector<uint8_t> a(size * size * 3), b(size * size * 3);
    DecodeStats stats;
    ASSERT_TRUE(decoder.DecodeCenterCrop(coded.plain, size, size * 8 / 7, a.data(), a.size()).ok());
    ASSERT_TRUE(
        decoder.DecodeCenterCrop(coded.fast, size, size * 8 / 7, b.data(), b.size(), &stats).ok());
    EXPECT_GT(stats.restart_segments, 0);
    EXPECT_TRUE(a == b) << "center crop " << size;
  }
}

TEST(RestartCrop, ExifOrientationAndFlips) {
  EncodeSpec spec{203, 157, Sampling::k420, 90, false, false};
  Coded upright = EncodeTwice(spec, 1);
  DecodeOptions options;
  options.apply_exif = true;
  JpegDecoder decoder(options);
  for (int o = 1; o <= 8; ++o) {
    Coded coded{WithOrientation(upright.plain, o), WithOrientation(upright.fast, o)};
    Result<JpegInfo> info = ProbeJpeg(coded.fast);
    ASSERT_TRUE(info.ok());
    ASSERT_EQ(info->exif_orientation, o);
    const int w = info->display_width(), h = info->display_height();
    int fast_decodes = 0;
    for (const CropWindow& window : EdgeWindows(w, h)) {
      if (window.x + window.width > w || window.y + window.height > h) continue;
      ExpectSameCrop(decoder, coded, window, "orientation " + std::to_string(o), &fast_decodes);
    }
    for (uint64_t id = 0; id < 60; ++id) {
      ExpectSameCrop(decoder, coded, PlanRandomResizedCrop(w, h, {}, 9, o, id),
                     "orientation " + std::to_string(o), &fast_decodes);
    }
    EXPECT_GT(fast_decodes, 30);
  }
}

// The converter's output: every conformance file it transcodes gives, crop
// by crop (EXIF orientation applied or not), the pixels of its source.
TEST(RestartCrop, TranscodedCorpusCropsEqualTheSourceCrops) {
  std::vector<std::string> names;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(UNIRECORD_TEST_DATA_DIR) + "/jpeg-conformance")) {
    const std::string name = entry.path().filename().string();
    if (entry.path().extension() == ".jpg") names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  int files = 0, fast_decodes = 0, own_entropy_decodes = 0;
  for (bool apply_exif : {false, true}) {
    DecodeOptions options;
    options.apply_exif = apply_exif;
    JpegDecoder decoder(options);
    for (const std::string& name : names) {
      const std::string source = testing::ReadCorpusFile(name);
      Result<image_internal::TranscodeResult> transcoded = image_internal::TranscodeToFastLayout(source);
      if (!transcoded.ok() || transcoded->layout != image_internal::JpegLayout::kFast) continue;
      Result<JpegInfo> info = ProbeJpeg(source);
      ASSERT_TRUE(info.ok()) << name;
      // The few very large files cost seconds a decode and add no case.
      if (CheckDecodable(*info).code() != StatusCode::kOk ||
          int64_t{info->width} * info->height > 1500000)
        continue;
      if (!apply_exif) ++files;
      const Coded coded{source, transcoded->jpeg};
      const int w = info->window_width(apply_exif);
      const int h = info->window_height(apply_exif);
      std::vector<CropWindow> windows;
      for (const CropWindow& window : EdgeWindows(w, h)) {
        if (window.width > 0 && window.height > 0 && window.x >= 0 && window.y >= 0 &&
            window.x + window.width <= w && window.y + window.height <= h)
          windows.push_back(window);
      }
      for (uint64_t id = 0; id < 30; ++id) windows.push_back(PlanRandomResizedCrop(w, h, {}, 2, 0, id));
      for (const CropWindow& window : windows) {
        DecodeStats source_stats, fast_stats;
        Result<RgbImage> expected = decoder.DecodeCrop(coded.plain, window, &source_stats);
        Result<RgbImage> actual = decoder.DecodeCrop(coded.fast, window, &fast_stats);
        ASSERT_TRUE(expected.ok() && actual.ok()) << name;
        if (fast_stats.restart_segments > 0) ++fast_decodes;
        if (fast_stats.own_entropy_decoder) ++own_entropy_decodes;
        ASSERT_TRUE(expected->pixels == actual->pixels)
            << name << (apply_exif ? " (EXIF applied)" : "") << ": crop " << window.width << "x"
            << window.height << "+" << window.x << "+" << window.y << " differs from the source's";
      }
    }
  }
  EXPECT_GE(files, 40);
  EXPECT_GT(fast_decodes, files * 20);
  EXPECT_GT(own_entropy_decodes, fast_decodes);  // every fast decode, and whole-image ones
}

// ---------------------------------------------------------------- hostile --

// Offset of the n-th RST marker (0-based) in the entropy-coded data.
size_t NthRestartMarker(const std::string& jpeg, int n) {
  JpegHeaderLayout layout;
  EXPECT_TRUE(ProbeJpegHeader(jpeg, &layout).ok());
  for (size_t p = layout.scan_data; p + 1 < jpeg.size(); ++p) {
    const auto c = static_cast<unsigned char>(jpeg[p + 1]);
    if (static_cast<unsigned char>(jpeg[p]) == 0xFF && c >= 0xD0 && c <= 0xD7 && n-- == 0) return p;
  }
  ADD_FAILURE() << "no such marker";
  return 0;
}

// Damaged fast-layout files: every crop either fails cleanly, takes the
// scan-order path, or (when its segments are intact) gives the right pixels.
TEST(RestartCrop, HostileDataNeverGivesWrongPixelsFromTheFastPath) {
  EncodeSpec spec{500, 375, Sampling::k420, 90, false, false};
  Coded coded = EncodeTwice(spec, 4);  // 32 MCUs a row: 8 segments, 24 rows
  bool found = false;
  const RestartGrid grid = GridOf(coded.fast, &found);
  ASSERT_TRUE(found);
  const std::string& good = coded.fast;
  const size_t m = NthRestartMarker(good, 150);
  JpegHeaderLayout layout;
  ASSERT_TRUE(ProbeJpegHeader(good, &layout).ok());
  size_t dri = good.find("\xFF\xDD");
  ASSERT_NE(dri, std::string::npos);

  struct Hostile {
    std::string name;
    std::string bytes;
    int damaged_row = 150 / 8;  // the MCU row of marker 150
  };
  std::vector<Hostile> cases;
  cases.push_back({"marker missing", good.substr(0, m) + good.substr(m + 2)});
  std::string renumbered = good;
  renumbered[m + 1] = static_cast<char>(0xD0 + (151 % 8));
  cases.push_back({"marker out of order", renumbered});
  cases.push_back({"marker duplicated", good.substr(0, m + 2) + good.substr(m)});
  for (int interval : {2, 8, 5, 32, 64}) {
    std::string other = good;
    other[dri + 4] = static_cast<char>(interval >> 8);
    other[dri + 5] = static_cast<char>(interval & 0xFF);
    cases.push_back({"restart interval " + std::to_string(interval), other});
  }
  cases.push_back({"cut mid-segment", good.substr(0, m - 40)});
  cases.push_back({"cut after a marker", good.substr(0, m + 2)});
  std::string foreign = good;
  foreign[m + 1] = static_cast<char>(0xC4);  // a DHT marker inside the scan
  cases.push_back({"foreign marker in the scan", foreign});
  std::string extra = good;
  extra.insert(extra.size() - 2, "\xFF\xD0", 2);  // an RST after the last segment
  cases.push_back({"marker after the last segment", extra, grid.mcu_rows - 1});

  JpegDecoder decoder;
  for (const Hostile& c : cases) {
    int fast_decodes = 0;
    for (uint64_t id = 0; id < 120; ++id) {
      const CropWindow w = PlanRandomResizedCrop(500, 375, {}, 11, 0, id);
      Result<RgbImage> clean = decoder.DecodeCrop(good, w);
      ASSERT_TRUE(clean.ok());
      DecodeStats stats;
      Result<RgbImage> crop = decoder.DecodeCrop(c.bytes, w, &stats);
      if (!crop.ok() || stats.restart_segments == 0) continue;
      ++fast_decodes;
      EXPECT_TRUE(crop->pixels == clean->pixels)
          << c.name << ": the fast path returned wrong pixels for window " << id;
    }
    // Windows above the damage are still served by the fast path.
    const bool above_is_fine = c.name.rfind("restart interval", 0) != 0 &&
                               c.name != "marker after the last segment";
    if (above_is_fine) EXPECT_GT(fast_decodes, 0) << c.name;
    // The window covering the damage never takes the fast path.
    const int row = c.damaged_row;
    DecodeStats stats;
    const int top = row * grid.mcu_height;
    Result<RgbImage> over =
        decoder.DecodeCrop(c.bytes, {0, top, 500, std::min(grid.mcu_height, 375 - top), false},
                           &stats);
    EXPECT_TRUE(!over.ok() || stats.restart_segments == 0) << c.name;
  }
  // The whole damaged file, decoded leniently: our entropy decoder leaves
  // what it does not decode exactly to libjpeg, so the result, pixels and
  // warnings are libjpeg's own.
  DecodeOptions libjpeg_only;
  libjpeg_only.own_entropy_decoder = false;
  JpegDecoder libjpeg_decoder(libjpeg_only);
  for (const Hostile& c : cases) {
    DecodeStats ours, theirs;
    Result<RgbImage> a = decoder.Decode(c.bytes, &ours);
    Result<RgbImage> b = libjpeg_decoder.Decode(c.bytes, &theirs);
    ASSERT_EQ(a.ok(), b.ok()) << c.name;
    EXPECT_EQ(ours.warnings, theirs.warnings) << c.name;
    if (ours.warnings > 0 || !a.ok()) EXPECT_FALSE(ours.own_entropy_decoder) << c.name;
    if (a.ok()) EXPECT_TRUE(a->pixels == b->pixels) << c.name;
  }
  // Strict mode reports the damage rather than hiding it.
  DecodeOptions strict_options;
  strict_options.strict = true;
  JpegDecoder strict(strict_options);
  EXPECT_FALSE(strict.DecodeCrop(cases[0].bytes, {0, 0, 500, 375, false}).ok());
}

}  // namespace
}  // namespace unirecord
