// Every file of the conformance corpus decodes or fails cleanly, as its
// MANIFEST.tsv says. Also run under AddressSanitizer (scripts/test-asan.sh).
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "image/jpeg_decoder.h"
#include "unirecord/image.h"

namespace unirecord {
namespace {

struct Entry {
  std::string file, expected, sof_process;
};

std::string CorpusDir() { return std::string(UNIRECORD_TEST_DATA_DIR) + "/jpeg-conformance/"; }

std::vector<Entry> ReadManifest() {
  std::ifstream in(CorpusDir() + "MANIFEST.tsv");
  std::vector<Entry> entries;
  std::string line;
  std::vector<std::string> header;
  while (std::getline(in, line)) {
    std::vector<std::string> cols;
    std::stringstream ss(line);
    std::string col;
    while (std::getline(ss, col, '\t')) cols.push_back(col);
    if (header.empty()) {
      header = cols;
      continue;
    }
    auto get = [&](const char* name) {
      for (size_t i = 0; i < header.size() && i < cols.size(); ++i) {
        if (header[i] == name) return cols[i];
      }
      return std::string();
    };
    entries.push_back({get("file"), get("expected_behaviour"), get("sof_process")});
  }
  return entries;
}

std::string Read(const std::string& file) {
  std::ifstream in(CorpusDir() + file, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

bool StartsWith(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

// Exercises the crop and resize paths too (most useful under ASan).
void DecodeCropsToo(JpegDecoder& decoder, const std::string& bytes, const RgbImage& full) {
  CropWindow w{full.width / 4, full.height / 3, std::max(1, full.width / 2),
               std::max(1, full.height / 2), true};
  Result<RgbImage> crop = decoder.DecodeCrop(bytes, w);
  EXPECT_TRUE(crop.ok()) << crop.status().ToString();
  std::vector<uint8_t> out(64 * 48 * 3);
  Status s = decoder.DecodeCropResized(bytes, w, 64, 48, out.data(), out.size());
  EXPECT_TRUE(s.ok()) << s.ToString();
}

TEST(JpegCorpus, EveryFileDecodesOrFailsAsTheManifestSays) {
  std::vector<Entry> entries = ReadManifest();
  ASSERT_GE(entries.size(), 70u);
  JpegDecoder lenient;
  DecodeOptions strict_options;
  strict_options.strict = true;
  JpegDecoder strict(strict_options);
  for (const Entry& e : entries) {
    SCOPED_TRACE(e.file + " (" + e.expected + ")");
    const std::string bytes = Read(e.file);
    DecodeStats stats;
    Result<RgbImage> image = lenient.Decode(bytes, &stats);
    Result<RgbImage> strict_image = strict.Decode(bytes);
    if (e.expected == "decodes") {
      ASSERT_TRUE(image.ok()) << image.status().ToString();
      EXPECT_EQ(stats.warnings, 0) << stats.first_warning;
      EXPECT_TRUE(strict_image.ok()) << strict_image.status().ToString();
      EXPECT_EQ(image->pixels.size(), static_cast<size_t>(image->width) * image->height * 3);
      DecodeCropsToo(lenient, bytes, *image);
    } else if (StartsWith(e.expected, "decodes with warning")) {
      ASSERT_TRUE(image.ok()) << image.status().ToString();
      EXPECT_GT(stats.warnings, 0);
      EXPECT_FALSE(strict_image.ok());
      EXPECT_FALSE(strict_image.status().message().empty());
      DecodeCropsToo(lenient, bytes, *image);
    } else if (e.expected == "must fail with clear error") {
      ASSERT_FALSE(image.ok());
      EXPECT_FALSE(image.status().message().empty());
      EXPECT_FALSE(strict_image.ok());
      EXPECT_FALSE(lenient.DecodeCrop(bytes, {0, 0, 1, 1, false}).ok());
    } else if (StartsWith(e.expected, "decodes or must fail with clear error")) {
      if (e.expected.find("arithmetic coding") != std::string::npos) {
        ASSERT_TRUE(image.ok()) << image.status().ToString();  // 2.1.5 has arithmetic decoding
        DecodeCropsToo(lenient, bytes, *image);
      } else {
        ASSERT_FALSE(image.ok());
        EXPECT_EQ(image.status().code(), StatusCode::kNotSupported) << image.status().ToString();
        const std::string& m = image.status().message();
        bool names_feature = m.find("12-bit") != std::string::npos ||
                             m.find("lossless") != std::string::npos ||
                             m.find("DNL") != std::string::npos;
        EXPECT_TRUE(names_feature) << m;
      }
    } else {
      ADD_FAILURE() << "unknown expectation";
    }
  }
}

}  // namespace
}  // namespace unirecord
