// Golden files of format 1.3 (tests/data/golden/README.md): media values
// and a dataset with a video and an audio field that must keep decoding as
// below, and damaged values that must keep failing, naming the problem. A
// 1.2 reader refuses the dataset at open: "field 'clip' has type 14, which
// this reader does not know" (format/SPEC.md section 14).
//
// Made by python/tests/test_media.py's tools (unirecord.demux of a 32x32,
// 8-frame H.264 with B-frames and a 0.5 s 8 kHz FLAC); never regenerated
// unless the format changes.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "unirecord/dataset.h"
#include "unirecord/media.h"

namespace unirecord {
namespace {

// The tone's window as int16 (FLAC is lossless: the same on every machine),
// FNV-1a; the clip's frames 5 and 0 as RGB24, their mean byte (swscale's
// SIMD paths may round differently from one CPU to another: a mean, not a hash).
constexpr uint64_t kToneWindowHash = 18212545157690614275ull;
constexpr double kClipFramesMean = 51.842;

const std::string kDir = std::string(UNIRECORD_TEST_DATA_DIR) + "/golden/v1_3-media";

std::string Read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

uint64_t Fnv(const uint8_t* p, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

void CheckClip(const MediaValueView& v) {
  EXPECT_EQ(v.params.codec, "h264");
  EXPECT_EQ(v.params.width, 32);
  EXPECT_EQ(v.params.height, 32);
  EXPECT_EQ(v.params.pixel_format, "yuv420p");
  ASSERT_EQ(v.frames(), 8);
  media::VideoDecoder decoder;
  Result<media::VideoFrames> frames = decoder.FramesAt(v, {5, 0}, "golden clip");
  ASSERT_TRUE(frames.ok()) << frames.status().ToString();
  double sum = 0;
  for (uint8_t b : frames->rgb) sum += b;
  EXPECT_NEAR(sum / static_cast<double>(frames->rgb.size()), kClipFramesMean, 0.5);
}

void CheckTone(const MediaValueView& v) {
  EXPECT_EQ(v.params.codec, "flac");
  EXPECT_EQ(v.params.sample_rate, 8000);
  EXPECT_EQ(v.params.channels, 1);
  media::AudioDecoder decoder;
  media::AudioWindowOptions options;
  options.type = media::SampleType::kInt16;
  Result<media::AudioSamples> window = decoder.Window(v, 0.125, 0.25, options, "golden tone");
  ASSERT_TRUE(window.ok()) << window.status().ToString();
  EXPECT_EQ(window->valid_frames, 2000);
  EXPECT_EQ(Fnv(window->data.data(), window->data.size()), kToneWindowHash) << Fnv(window->data.data(), window->data.size());
}

TEST(GoldenMediaTest, ValuesDecode) {
  const std::string clip = Read(kDir + "/clip.urmv");
  MediaValueView v;
  ASSERT_TRUE(ParseMediaValue(clip, "clip.urmv", &v).ok());
  CheckClip(v);
  const std::string tone = Read(kDir + "/tone.urmv");
  ASSERT_TRUE(ParseMediaValue(tone, "tone.urmv", &v).ok());
  CheckTone(v);
}

TEST(GoldenMediaTest, DatasetReads) {
  Result<std::shared_ptr<Dataset>> ds = Dataset::Open(kDir + "/media");
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  Result<Record> r = (*ds)->Get(0);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r->GetInt32("clip.width"), 32);
  EXPECT_EQ(*r->GetInt64("clip.frames"), 8);
  EXPECT_EQ(*r->GetString("clip.codec"), "h264");
  EXPECT_EQ(*r->GetInt32("tone.sample_rate"), 8000);
  EXPECT_EQ(*r->GetInt64("label"), 3);
  Result<MediaValueView> clip = r->GetMedia("clip");
  ASSERT_TRUE(clip.ok()) << clip.status().ToString();
  CheckClip(*clip);
  Result<MediaValueView> tone = r->GetMedia("tone");
  ASSERT_TRUE(tone.ok());
  CheckTone(*tone);
  EXPECT_EQ(r->GetMedia("label").status().code(), StatusCode::kInvalidArgument);
}

TEST(GoldenMediaTest, DamagedValuesFail) {
  const std::pair<const char*, const char*> cases[] = {
      {"bad-magic.urmv", "bad magic"},
      {"table-past-end.urmv", "packet table of 1000 packets runs past"},
      {"packets-overlap.urmv", "overlapping or a gap"},
      {"cut-short.urmv", "outside the packet area"},
      {"table-checksum.urmv", "header, packet table or extradata checksum mismatch"},
  };
  for (const auto& [file, words] : cases) {
    const std::string bytes = Read(kDir + "/bad/" + file);
    ASSERT_FALSE(bytes.empty()) << file;
    MediaValueView v;
    const Status s = ParseMediaValue(bytes, file, &v);
    EXPECT_EQ(s.code(), StatusCode::kCorruption) << file;
    EXPECT_NE(s.message().find(words), std::string::npos) << file << ": " << s.message();
  }
}

// The table is sound, the last packet is not: it parses, and the decoder
// never gets the damaged packet.
TEST(GoldenMediaTest, DamagedPacketFailsWhenUsed) {
  const std::string bytes = Read(kDir + "/bad/packet-damaged.urmv");
  MediaValueView v;
  ASSERT_TRUE(ParseMediaValue(bytes, "packet-damaged.urmv", &v).ok());
  const Status last = v.CheckPacket(v.packets.size() - 1, "packet-damaged.urmv");
  EXPECT_EQ(last.code(), StatusCode::kCorruption);
  EXPECT_NE(last.message().find("packet 7 ("), std::string::npos) << last.message();
  // The frame of that packet (a B-frame: presented before others).
  const std::vector<int64_t> all = v.PresentationTimestamps();
  const auto frame = std::find(all.begin(), all.end(), v.packets.back().pts) - all.begin();
  media::VideoDecoder decoder;
  Result<media::VideoFrames> frames = decoder.FramesAt(v, {frame}, "packet-damaged.urmv");
  ASSERT_FALSE(frames.ok());
  EXPECT_NE(frames.status().message().find("checksum mismatch"), std::string::npos) << frames.status().ToString();
  // The frames before it in decode order do not need it.
  EXPECT_TRUE(decoder.FramesAt(v, {0}, "packet-damaged.urmv").ok());
}

}  // namespace
}  // namespace unirecord
