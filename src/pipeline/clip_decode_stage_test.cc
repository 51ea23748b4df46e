// The clip and audio decode stages (clip_decode_stage.h) on the golden media
// values (tests/data/golden/v1_3-media: a 32x32, 8-frame H.264 with B-frames
// and a 0.5 s 8 kHz FLAC): an identity crop gives the media layer's frames of
// the planned pts, the frames decoded stay within the keyframe-to-last-frame
// bound, a key gives the same clip every time, NCHW holds NHWC's planes, an
// audio window is the media layer's window, and a wrong or damaged value is
// an error naming the field.
#include "pipeline/clip_decode_stage.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "unirecord/media.h"
#include "unirecord/media_value.h"

namespace unirecord::pipeline {
namespace {

const std::string kDir = std::string(UNIRECORD_TEST_DATA_DIR) + "/golden/v1_3-media";
constexpr int kSize = 32;  // the golden clip's width and height
constexpr int kFrames = 3;

std::string Read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

ClipOptions ThreeFrames() {
  ClipOptions clip;
  clip.field = "clip";
  clip.frames = kFrames;
  clip.stride = 2;
  return clip;
}

// The whole frame, unflipped, at its own size: the frames pass unchanged.
SampleDecoderOptions Identity(ImageLayout layout = ImageLayout::kNHWC) {
  SampleDecoderOptions image;
  image.image_size = kSize;
  image.crop.scale_min = image.crop.scale_max = 1.0;
  image.crop.ratio_min = image.crop.ratio_max = 1.0;
  image.crop.flip_probability = 0;
  image.decode.layout = layout;
  return image;
}

struct Decoded {
  Status status;
  std::vector<uint8_t> pixels;
  std::vector<int64_t> pts = std::vector<int64_t>(kFrames);
  double start = -1;
  uint64_t frames_decoded = 0;
};

Decoded DecodeClip(std::string_view media, const SampleKey& key, ImageLayout layout = ImageLayout::kNHWC) {
  Decoded d;
  Result<std::unique_ptr<DecodeStage>> stage = CreateClipDecode(ThreeFrames(), Identity(layout));
  if (!stage.ok()) {
    d.status = stage.status();
    return d;
  }
  d.pixels.resize((*stage)->sample_bytes());
  SampleImage shown;
  shown.frame_pts = d.pts.data();
  shown.clip_starts = &d.start;
  d.status = (*stage)->Decode(media, key, d.pixels.data(), &shown);
  d.frames_decoded = shown.frames_decoded;
  return d;
}

TEST(ClipDecodeStageTest, IdentityCropGivesTheDecodersFramesWithinTheBound) {
  const std::string clip = Read(kDir + "/clip.urmv");
  MediaValueView value;
  ASSERT_TRUE(ParseMediaValue(clip, "clip", &value).ok());
  for (uint64_t record = 0; record < 6; ++record) {
    SCOPED_TRACE(record);
    const Decoded d = DecodeClip(clip, SampleKey{7, 1, record});
    ASSERT_TRUE(d.status.ok()) << d.status.ToString();
    ASSERT_EQ(d.pixels.size(), size_t(kFrames) * kSize * kSize * 3);
    // Stride 2 in presentation order, starting at a frame the clip fits after.
    const std::vector<int64_t> all = value.PresentationTimestamps();
    const auto first = std::find(all.begin(), all.end(), d.pts[0]);
    ASSERT_NE(first, all.end());
    for (int t = 1; t < kFrames; ++t) {
      ASSERT_LT(first + 2 * t, all.end());
      EXPECT_EQ(d.pts[t], first[2 * t]) << t;
    }
    EXPECT_DOUBLE_EQ(d.start, double(d.pts[0] - value.params.start_pts) * value.params.time_base());
    // The media layer's frames of those pts, byte for byte.
    media::VideoDecoder decoder;
    std::vector<uint8_t> want(d.pixels.size());
    ASSERT_TRUE(decoder.DecodeAtPts(value, d.pts, want.data(), want.size(), "clip").ok());
    EXPECT_TRUE(d.pixels == want);
    // At most the frames from the keyframe at or before the first to the last.
    int64_t key = all.front();
    for (const MediaPacket& p : value.packets) {
      if (p.keyframe && p.pts <= d.pts[0]) key = std::max(key, p.pts);
    }
    const auto bound = std::count_if(all.begin(), all.end(), [&](int64_t t) { return t >= key && t <= d.pts.back(); });
    EXPECT_GE(d.frames_decoded, uint64_t(kFrames));
    EXPECT_LE(d.frames_decoded, uint64_t(bound));
  }
}

TEST(ClipDecodeStageTest, AKeyGivesTheSameClip) {
  const std::string clip = Read(kDir + "/clip.urmv");
  const Decoded a = DecodeClip(clip, SampleKey{3, 2, 5});
  const Decoded b = DecodeClip(clip, SampleKey{3, 2, 5});
  ASSERT_TRUE(a.status.ok() && b.status.ok());
  EXPECT_EQ(a.pts, b.pts);
  EXPECT_TRUE(a.pixels == b.pixels);
}

TEST(ClipDecodeStageTest, NchwHoldsTheNhwcPlanes) {
  const std::string clip = Read(kDir + "/clip.urmv");
  const Decoded packed = DecodeClip(clip, SampleKey{1, 0, 2});
  const Decoded planar = DecodeClip(clip, SampleKey{1, 0, 2}, ImageLayout::kNCHW);
  ASSERT_TRUE(packed.status.ok() && planar.status.ok());
  ASSERT_EQ(packed.pixels.size(), planar.pixels.size());
  const size_t plane = size_t(kSize) * kSize;
  for (int c = 0; c < 3; ++c) {
    for (int t = 0; t < kFrames; ++t) {
      for (size_t p = 0; p < plane; ++p) {
        ASSERT_EQ(planar.pixels[(size_t(c) * kFrames + t) * plane + p], packed.pixels[(t * plane + p) * 3 + c])
            << c << " " << t << " " << p;
      }
    }
  }
}

TEST(ClipDecodeStageTest, WrongOrDamagedValuesNameTheField) {
  const Decoded audio = DecodeClip(Read(kDir + "/tone.urmv"), SampleKey{});
  EXPECT_EQ(audio.status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(audio.status.message(), "video field 'clip' holds audio, not video");
  const Decoded garbage = DecodeClip("not a media value", SampleKey{});
  EXPECT_EQ(garbage.status.code(), StatusCode::kCorruption);
  EXPECT_NE(garbage.status.message().find("video field 'clip'"), std::string::npos) << garbage.status.ToString();
  // Every packet damaged in turn: whichever the clip decodes is refused.
  const std::string clip = Read(kDir + "/clip.urmv");
  MediaValueView value;
  ASSERT_TRUE(ParseMediaValue(clip, "clip", &value).ok());
  const size_t area = clip.size() - value.packet_area.size();
  const Decoded sound = DecodeClip(clip, SampleKey{4, 0, 0});
  ASSERT_TRUE(sound.status.ok());
  std::string damaged = clip;
  for (const MediaPacket& p : value.packets) damaged[area + p.offset + p.size / 2] ^= 0x01;
  const Decoded bad = DecodeClip(damaged, SampleKey{4, 0, 0});
  EXPECT_EQ(bad.status.code(), StatusCode::kCorruption);
  EXPECT_NE(bad.status.message().find("video field 'clip': media value: packet "), std::string::npos)
      << bad.status.ToString();
  EXPECT_NE(bad.status.message().find("checksum mismatch"), std::string::npos) << bad.status.ToString();
}

TEST(AudioDecodeStageTest, ACentredWindowIsTheMediaLayersWindow) {
  const std::string tone = Read(kDir + "/tone.urmv");
  MediaValueView value;
  ASSERT_TRUE(ParseMediaValue(tone, "tone", &value).ok());
  AudioClipOptions options;
  options.field = "tone";
  options.seconds = 0.25;
  options.rate = 8000;
  options.channels = 1;
  options.dtype = media::SampleType::kInt16;
  options.centre = true;
  std::unique_ptr<AudioDecode> stage = CreateAudioDecode(options, 1);
  std::vector<uint8_t> out(stage->sample_bytes());
  ASSERT_EQ(out.size(), size_t(2000) * 2);
  int64_t length = -1;
  ASSERT_TRUE(stage->Decode(tone, SampleKey{}, nullptr, out.data(), &length).ok());
  EXPECT_EQ(length, 2000);
  media::AudioDecoder decoder;
  media::AudioWindowOptions window;
  window.rate = 8000;
  window.channels = 1;
  window.type = media::SampleType::kInt16;
  Result<media::AudioSamples> want = decoder.Window(value, (value.seconds() - 0.25) / 2, 0.25, window, "tone");
  ASSERT_TRUE(want.ok()) << want.status().ToString();
  EXPECT_TRUE(want->data == out);
  // A video value in an audio stage is refused, naming the field.
  const Status wrong = stage->Decode(Read(kDir + "/clip.urmv"), SampleKey{}, nullptr, out.data(), &length);
  EXPECT_EQ(wrong.message(), "audio field 'tone' holds video, not audio");
}

}  // namespace
}  // namespace unirecord::pipeline
