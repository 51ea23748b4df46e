#include "image/jpeg_transcode.h"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "image/jpeg_decoder.h"
#include "image/image_testing.h"
#include "unirecord/image.h"

namespace unirecord {
namespace {

using image_internal::FastLayoutMcusPerRow;
using image_internal::FastLayoutRestartInterval;
using image_internal::JpegLayout;
using image_internal::TranscodeResult;
using image_internal::TranscodeToFastLayout;
using testing::EncodeJpeg;
using testing::EncodeSpec;
using testing::ReadCorpusFile;
using testing::Sampling;

// ------------------------------------------------- a test-side JPEG walker --

struct Segment {
  int marker;
  std::string payload;  // without the length bytes
};

// The marker structure of a JPEG, read independently of libjpeg.
struct JpegLayoutFacts {
  std::vector<Segment> app_and_com;  // APPn and COM, in file order
  std::vector<int> sofs;             // every SOFn marker
  std::vector<int> dqt_precisions;   // Pq of every quantisation table
  int restart_interval = 0;          // the last DRI
  int scans = 0;
  std::vector<int> scan_components;  // components in each SOS
  std::vector<int> restarts;         // RST0..7 numbers, in order
  int frame_components = 0;
  int max_h = 0, max_v = 0;          // sampling factors of the frame
  int width = 0, height = 0;
  bool ends_with_eoi = false;
  std::string error;
};

int Be16(const std::string& s, size_t i) {
  return (static_cast<uint8_t>(s[i]) << 8) | static_cast<uint8_t>(s[i + 1]);
}

JpegLayoutFacts Walk(const std::string& jpeg) {
  JpegLayoutFacts f;
  auto byte = [&](size_t i) { return static_cast<uint8_t>(jpeg[i]); };
  if (jpeg.size() < 4 || byte(0) != 0xFF || byte(1) != 0xD8) {
    f.error = "no SOI";
    return f;
  }
  size_t i = 2;
  while (i + 1 < jpeg.size()) {
    if (byte(i) != 0xFF) {
      f.error = "expected a marker at " + std::to_string(i);
      return f;
    }
    const int marker = byte(i + 1);
    if (marker == 0xFF) {  // fill byte
      ++i;
      continue;
    }
    if (marker == 0xD9) {
      f.ends_with_eoi = i + 2 == jpeg.size();
      return f;
    }
    if (i + 4 > jpeg.size()) break;
    const int length = Be16(jpeg, i + 2);
    if (length < 2 || i + 2 + length > jpeg.size()) break;
    const std::string payload = jpeg.substr(i + 4, length - 2);
    if ((marker >= 0xE0 && marker <= 0xEF) || marker == 0xFE) f.app_and_com.push_back({marker, payload});
    if (marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC) {
      f.sofs.push_back(marker);
      f.height = Be16(payload, 1);
      f.width = Be16(payload, 3);
      f.frame_components = static_cast<uint8_t>(payload[5]);
      for (int c = 0; c < f.frame_components; ++c) {
        const int hv = static_cast<uint8_t>(payload[7 + 3 * c]);
        f.max_h = std::max(f.max_h, hv >> 4);
        f.max_v = std::max(f.max_v, hv & 15);
      }
    }
    if (marker == 0xDB) {
      for (size_t t = 0; t < payload.size();) {
        const int pq = static_cast<uint8_t>(payload[t]) >> 4;
        f.dqt_precisions.push_back(pq);
        t += 1 + (pq ? 128 : 64);
      }
    }
    if (marker == 0xDD) f.restart_interval = Be16(payload, 0);
    i += 2 + length;
    if (marker != 0xDA) continue;
    ++f.scans;
    f.scan_components.push_back(static_cast<uint8_t>(payload[0]));
    // Entropy-coded data: up to the next marker that is not a stuffed zero
    // or a restart marker.
    while (i + 1 < jpeg.size()) {
      if (byte(i) != 0xFF) {
        ++i;
      } else if (byte(i + 1) == 0x00 || byte(i + 1) == 0xFF) {
        i += byte(i + 1) == 0x00 ? 2 : 1;
      } else if (byte(i + 1) >= 0xD0 && byte(i + 1) <= 0xD7) {
        f.restarts.push_back(byte(i + 1) - 0xD0);
        i += 2;
      } else {
        break;
      }
    }
  }
  f.error = "ran off the end";
  return f;
}

// -------------------------------------------------------------- checks ----

// The output is the fast layout and decodes to exactly the source's pixels.
void ExpectFastAndExact(const std::string& source, const TranscodeResult& result,
                        const std::string& what) {
  SCOPED_TRACE(what);
  ASSERT_EQ(result.layout, JpegLayout::kFast) << result.reason << ": " << result.detail;
  const std::string& out = result.jpeg;
  const JpegLayoutFacts src = Walk(source);
  const JpegLayoutFacts f = Walk(out);
  ASSERT_TRUE(f.error.empty()) << f.error;
  EXPECT_TRUE(f.ends_with_eoi);
  ASSERT_EQ(f.sofs.size(), 1u);
  const bool wide_tables =
      std::any_of(f.dqt_precisions.begin(), f.dqt_precisions.end(), [](int p) { return p != 0; });
  EXPECT_EQ(f.sofs[0], wide_tables ? 0xC1 : 0xC0);
  ASSERT_EQ(f.scans, 1);
  EXPECT_EQ(f.scan_components[0], f.frame_components);
  // The restart interval: a divisor of the MCUs per row, RST0..7 in turn.
  const int mcus_per_row = f.frame_components == 1 ? (f.width + 7) / 8
                                                   : (f.width + 8 * f.max_h - 1) / (8 * f.max_h);
  const int mcu_rows = f.frame_components == 1 ? (f.height + 7) / 8
                                               : (f.height + 8 * f.max_v - 1) / (8 * f.max_v);
  EXPECT_EQ(mcus_per_row, FastLayoutMcusPerRow(f.width, f.frame_components, f.max_h));
  EXPECT_EQ(f.restart_interval, FastLayoutRestartInterval(mcus_per_row));
  EXPECT_EQ(mcus_per_row % f.restart_interval, 0);
  const int segments = mcus_per_row / f.restart_interval * mcu_rows;
  ASSERT_EQ(f.restarts.size(), static_cast<size_t>(segments - 1));
  for (size_t r = 0; r < f.restarts.size(); ++r) ASSERT_EQ(f.restarts[r], static_cast<int>(r % 8));
  // Every APPn and COM segment of the source, in order, and no other.
  ASSERT_EQ(f.app_and_com.size(), src.app_and_com.size());
  for (size_t s = 0; s < f.app_and_com.size(); ++s) {
    EXPECT_EQ(f.app_and_com[s].marker, src.app_and_com[s].marker) << "segment " << s;
    EXPECT_TRUE(f.app_and_com[s].payload == src.app_and_com[s].payload) << "segment " << s;
  }
  // The probe sees the same image.
  Result<JpegInfo> a = ProbeJpeg(source), b = ProbeJpeg(out);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(b->width, a->width);
  EXPECT_EQ(b->height, a->height);
  EXPECT_EQ(b->color_space, a->color_space);
  EXPECT_EQ(b->subsampling, a->subsampling);
  EXPECT_EQ(b->exif_orientation, a->exif_orientation);
  EXPECT_EQ(b->adobe_transform, a->adobe_transform);
  EXPECT_FALSE(b->progressive);
  EXPECT_FALSE(b->arithmetic);
  // Pixels: the output's strict decode equals the source's decode.
  DecodeOptions strict;
  strict.strict = true;
  JpegDecoder lenient, checker(strict);
  Result<RgbImage> expected = lenient.Decode(source), got = checker.Decode(out);
  ASSERT_TRUE(expected.ok()) << expected.status().ToString();
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->width, expected->width);
  EXPECT_EQ(got->height, expected->height);
  EXPECT_TRUE(got->pixels == expected->pixels);
  // Deterministic, and a fixed point.
  Result<TranscodeResult> again = TranscodeToFastLayout(source);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->jpeg == out);
  Result<TranscodeResult> twice = TranscodeToFastLayout(out);
  ASSERT_TRUE(twice.ok());
  EXPECT_TRUE(twice->jpeg == out);
}

// ----------------------------------------------------------------- tests ---

TEST(FastLayoutRestartInterval, IsTheDivisorNearestFourTiesToTheSmaller) {
  const std::map<int, int> expected = {{1, 1},  {2, 2},  {3, 3},  {4, 4},  {5, 5},  {6, 3},
                                       {7, 1},  {8, 4},  {9, 3},  {10, 5}, {11, 1}, {12, 4},
                                       {14, 2}, {15, 3}, {25, 5}, {35, 5}, {49, 1}, {97, 1}};
  for (const auto& [m, k] : expected) EXPECT_EQ(FastLayoutRestartInterval(m), k) << m;
  for (int m = 1; m <= 5000; ++m) {  // the definition, by brute force
    int best = 1;
    for (int d = 1; d <= m; ++d) {
      if (m % d == 0 && std::abs(d - 4) < std::abs(best - 4)) best = d;
    }
    ASSERT_EQ(FastLayoutRestartInterval(m), best) << m;
  }
}

TEST(FastLayoutMcusPerRow, CountsBlocksForOneComponentAndMcusOtherwise) {
  EXPECT_EQ(FastLayoutMcusPerRow(203, 3, 2), 13);
  EXPECT_EQ(FastLayoutMcusPerRow(203, 3, 1), 26);
  EXPECT_EQ(FastLayoutMcusPerRow(160, 4, 2), 10);
  EXPECT_EQ(FastLayoutMcusPerRow(24, 1, 2), 3);  // one block per MCU, declared 2x2 or not
  EXPECT_EQ(FastLayoutMcusPerRow(1, 3, 4), 1);
}

TEST(TranscodeToFastLayout, EverySamplingAndCodingRoundTripsExactly) {
  struct Size {
    int width, height;
  } sizes[] = {{203, 157}, {160, 90}, {7, 5}};
  const std::pair<Sampling, const char*> samplings[] = {{Sampling::k444, "4:4:4"},
                                                        {Sampling::k422, "4:2:2"},
                                                        {Sampling::k420, "4:2:0"},
                                                        {Sampling::k440, "4:4:0"},
                                                        {Sampling::kGray, "gray"}};
  for (const Size& size : sizes) {
    const std::vector<uint8_t> rgb = testing::SyntheticRgb(size.width, size.height);
    const std::vector<uint8_t> cmyk = image_internal::RgbToAdobeCmyk(rgb);
    for (const auto& [sampling, name] : samplings) {
      for (bool cmyk_input : {false, true}) {
        if (cmyk_input && sampling == Sampling::kGray) continue;
        for (int coding = 0; coding < 4; ++coding) {
          EncodeSpec spec;
          spec.width = size.width;
          spec.height = size.height;
          spec.sampling = sampling;
          spec.cmyk = cmyk_input;
          spec.progressive = coding & 1;
          spec.arithmetic = coding & 2;
          Result<std::string> source = EncodeJpeg(cmyk_input ? cmyk : rgb, spec);
          ASSERT_TRUE(source.ok()) << source.status().ToString();
          Result<TranscodeResult> result = TranscodeToFastLayout(*source);
          ASSERT_TRUE(result.ok()) << result.status().ToString();
          ExpectFastAndExact(*source, *result,
                             std::string(name) + (cmyk_input ? " YCCK" : "") +
                                 (spec.progressive ? " progressive" : " sequential") +
                                 (spec.arithmetic ? " arithmetic " : " huffman ") +
                                 std::to_string(size.width) + "x" + std::to_string(size.height));
        }
      }
    }
  }
}

// Every conformance file that decodes cleanly is transcoded, exactly; the
// others are refused with a reason, never transcoded into something else.
TEST(TranscodeToFastLayout, ConformanceCorpus) {
  const std::string dir = std::string(UNIRECORD_TEST_DATA_DIR) + "/jpeg-conformance";
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.size() > 4 && (name.substr(name.size() - 4) == ".jpg" || name.substr(name.size() - 5) == ".jpeg")) {
      files.push_back(name);
    }
  }
  std::sort(files.begin(), files.end());
  ASSERT_GE(files.size(), 70u);
  DecodeOptions strict_options;
  strict_options.strict = true;
  JpegDecoder lenient, strict(strict_options);
  int transcoded = 0, kept = 0;
  uint64_t source_bytes = 0, output_bytes = 0;
  for (const std::string& name : files) {
    SCOPED_TRACE(name);
    const std::string bytes = ReadCorpusFile(name);
    Result<TranscodeResult> result = TranscodeToFastLayout(bytes);
    if (!result.ok()) {  // not a JPEG header: nothing any decoder can use
      EXPECT_FALSE(lenient.Decode(bytes).ok());
      continue;
    }
    const bool clean = strict.Decode(bytes).ok();
    if (result->layout == JpegLayout::kFast) {
      ++transcoded;
      source_bytes += bytes.size();
      output_bytes += result->jpeg.size();
      ExpectFastAndExact(bytes, *result, name);
      continue;
    }
    ++kept;
    EXPECT_FALSE(result->reason.empty());
    EXPECT_TRUE(result->jpeg.empty());
    std::cout << "kept " << name << ": " << result->reason << " (" << result->detail << ")\n";
    // A clean file is refused only for what follows its EOI or its SOF.
    if (clean) {
      EXPECT_TRUE(result->reason == "data after EOI" || result->reason == "metadata after SOF")
          << result->reason;
    }
  }
  std::cout << transcoded << " transcoded (" << source_bytes << " -> " << output_bytes << " bytes), "
            << kept << " kept\n";
  EXPECT_GE(transcoded, 40);
}

TEST(TranscodeToFastLayout, SixteenBitTablesGiveExtendedSequential) {
  const std::string source = ReadCorpusFile("pillow__hopper_16bit_qtables.jpg");
  Result<TranscodeResult> result = TranscodeToFastLayout(source);
  ASSERT_TRUE(result.ok());
  ExpectFastAndExact(source, *result, "16-bit tables");
}

TEST(TranscodeToFastLayout, RefusesWhatItCannotRewriteExactly) {
  Result<TranscodeResult> twelve = TranscodeToFastLayout(ReadCorpusFile("libjpeg-turbo__testorig12.jpg"));
  ASSERT_TRUE(twelve.ok());
  EXPECT_EQ(twelve->layout, JpegLayout::kOriginal);
  EXPECT_EQ(twelve->reason, "not 8-bit");

  Result<std::string> jpeg = EncodeJpeg(testing::SyntheticRgb(96, 64), EncodeSpec{96, 64});
  ASSERT_TRUE(jpeg.ok());
  const std::string cut = jpeg->substr(0, jpeg->size() * 2 / 3);
  for (const std::string& damaged : {cut, cut + "\xFF\xD9", *jpeg + "trailer"}) {
    Result<TranscodeResult> result = TranscodeToFastLayout(damaged);
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    EXPECT_EQ(result->layout, JpegLayout::kOriginal);
    EXPECT_TRUE(result->jpeg.empty());
    EXPECT_EQ(result->reason, damaged.size() > jpeg->size() ? "data after EOI" : "libjpeg warning")
        << result->detail;
    EXPECT_FALSE(result->detail.empty());
  }
  Result<TranscodeResult> late_icc = TranscodeToFastLayout(ReadCorpusFile("pillow__icc-after-SOF.jpg"));
  ASSERT_TRUE(late_icc.ok());
  EXPECT_EQ(late_icc->reason, "metadata after SOF");
  EXPECT_FALSE(TranscodeToFastLayout("\x89PNG\r\n\x1a\n").ok());
  EXPECT_FALSE(TranscodeToFastLayout("").ok());
}

}  // namespace
}  // namespace unirecord
