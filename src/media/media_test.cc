// The media layer against files the ffmpeg command makes at test time.
#include "unirecord/media.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

namespace unirecord::media {
namespace {

class MediaTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    char pattern[] = "/tmp/media_test.XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  static void TearDownTestSuite() { std::system(("rm -rf " + dir_).c_str()); }

  // Makes `name` in the temp dir with ffmpeg `args` (once per suite).
  static std::string Make(const std::string& name, const std::string& args) {
    const std::string path = dir_ + "/" + name;
    if (access(path.c_str(), F_OK) == 0) return path;
    const std::string cmd = "ffmpeg -hide_banner -loglevel error -y " + args + " " + path;
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
    return path;
  }
  static std::string Read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  // 2 s of 320x240 H.264 with B-frames, a keyframe every 12 frames, 24 fps.
  static std::string H264() {
    return Make("h264.mp4", "-f lavfi -i testsrc2=size=320x240:rate=24:duration=2 -c:v libx264 -bf 2 -g 12 "
                            "-keyint_min 12 -sc_threshold 0 -pix_fmt yuv420p");
  }
  static std::string Wav() {
    return Make("tone.wav", "-f lavfi -i sine=frequency=440:sample_rate=16000:duration=2 -c:a pcm_s16le");
  }
  static std::string dir_;
};
std::string MediaTest::dir_;

MediaValueView Parse(const std::string& stored) {
  MediaValueView view;
  const Status s = ParseMediaValue(stored, "test", &view);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return view;
}

TEST_F(MediaTest, DemuxesH264WithBFrames) {
  Result<std::string> value = DemuxFile(H264(), {});
  ASSERT_TRUE(value.ok()) << value.status().ToString();
  const MediaValueView v = Parse(*value);
  EXPECT_EQ(v.params.codec, "h264");
  EXPECT_EQ(v.params.width, 320);
  EXPECT_EQ(v.params.height, 240);
  EXPECT_EQ(v.params.pixel_format, "yuv420p");
  EXPECT_EQ(v.frames(), 48);
  EXPECT_NEAR(v.seconds(), 2.0, 1e-6);
  EXPECT_NEAR(v.average_fps(), 24.0, 1e-6);
  int keyframes = 0;
  bool reordered = false;
  for (size_t i = 0; i < v.packets.size(); ++i) {
    keyframes += v.packets[i].keyframe;
    if (i > 0 && v.packets[i].pts < v.packets[i - 1].pts) reordered = true;
  }
  EXPECT_EQ(keyframes, 4);
  EXPECT_TRUE(reordered) << "B-frames: pts out of decode order";
  // From memory the same as from the file.
  Result<std::string> from_bytes = Demux(Read(H264()), {});
  ASSERT_TRUE(from_bytes.ok());
  EXPECT_EQ(*from_bytes, *value);
}

TEST_F(MediaTest, DecodesOnlyFromTheKeyframeBefore) {
  const std::string stored = *DemuxFile(H264(), {});
  const MediaValueView v = Parse(stored);
  VideoDecoder decoder;
  // Frames 26 and 30: the keyframe before is frame 24; at most 24..30 decode (7 frames).
  Result<VideoFrames> frames = decoder.FramesAt(v, {30, 26}, "h264");
  ASSERT_TRUE(frames.ok()) << frames.status().ToString();
  EXPECT_EQ(frames->count, 2);
  EXPECT_EQ(frames->width, 320);
  EXPECT_EQ(frames->rgb.size(), 2u * 320 * 240 * 3);
  EXPECT_LE(decoder.frames_decoded(), 7);
  EXPECT_GE(decoder.frames_decoded(), 2);
  // Reused: the codec is not opened again, and the same frame decodes the same.
  Result<VideoFrames> again = decoder.FramesAt(v, {26}, "h264");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(decoder.codec_opens(), 1);
  EXPECT_EQ(std::memcmp(again->rgb.data(), frames->rgb.data() + 320 * 240 * 3, 320 * 240 * 3), 0);
  // Frames in [1.0, 1.25) s: 6 frames at 24 fps.
  Result<VideoFrames> in = decoder.FramesIn(v, 1.0, 1.25, "h264");
  ASSERT_TRUE(in.ok());
  EXPECT_EQ(in->count, 6);
  EXPECT_EQ(decoder.FramesAt(v, {48}, "h264").status().code(), StatusCode::kOutOfRange);
}

TEST_F(MediaTest, RemuxKeepsThePacketsByteForByte) {
  const std::string stored = *DemuxFile(H264(), {});
  const MediaValueView v = Parse(stored);
  Result<RemuxedFile> file = Remux(v, "h264");
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  EXPECT_EQ(file->extension, ".mp4");
  Result<std::string> back = Demux(file->bytes, {});
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  const MediaValueView w = Parse(*back);
  ASSERT_EQ(w.packets.size(), v.packets.size());
  EXPECT_EQ(w.packet_area, v.packet_area);
  for (size_t i = 0; i < v.packets.size(); ++i) EXPECT_EQ(w.packets[i].keyframe, v.packets[i].keyframe);
}

TEST_F(MediaTest, AudioWindowIsTheSamples) {
  DemuxOptions audio;
  audio.kind = MediaKind::kAudio;
  const std::string wav = Read(Wav());
  Result<std::string> stored = Demux(wav, audio);
  ASSERT_TRUE(stored.ok()) << stored.status().ToString();
  const MediaValueView v = Parse(*stored);
  EXPECT_EQ(v.params.sample_rate, 16000);
  EXPECT_EQ(v.params.channels, 1);
  AudioDecoder decoder;
  AudioWindowOptions options;
  options.type = SampleType::kInt16;
  Result<AudioSamples> window = decoder.Window(v, 0.5, 0.25, options, "wav");
  ASSERT_TRUE(window.ok()) << window.status().ToString();
  ASSERT_EQ(window->frames, 4000);
  EXPECT_EQ(window->valid_frames, 4000);
  // The wav's samples 8000..12000: its data chunk starts after a 44-byte header here (or later: find it).
  const size_t data = wav.find("data") + 8;
  EXPECT_EQ(std::memcmp(window->data.data(), wav.data() + data + 8000 * 2, 4000 * 2), 0);
  // Past the end: zeros, counted out of valid_frames.
  Result<AudioSamples> tail = decoder.Window(v, 1.9, 0.25, options, "wav");
  ASSERT_TRUE(tail.ok());
  EXPECT_EQ(tail->valid_frames, 1600);
}

TEST_F(MediaTest, RefusesNotMedia) {
  const Status s = Demux(std::string(5000, 'q'), {.kind = MediaKind::kVideo, .stream = -1, .name = "junk.bin"})
                       .status();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("junk.bin: not a media file"), std::string::npos) << s.message();
}

TEST_F(MediaTest, RefusesMissingStream) {
  const Status s = DemuxFile(Wav(), {}).status();  // video from a wav
  EXPECT_NE(s.message().find("no video stream"), std::string::npos) << s.ToString();
  const Status second = DemuxFile(Wav(), {.kind = MediaKind::kAudio, .stream = 1, .name = ""}).status();
  EXPECT_NE(second.message().find("no audio stream 1 (it has 1)"), std::string::npos) << second.ToString();
}

TEST_F(MediaTest, RefusesTruncatedFile) {
  const std::string mkv = Make("cut.mkv", "-f lavfi -i testsrc2=size=160x120:rate=24:duration=4 -c:v libx264 -g 24");
  const std::string bytes = Read(mkv);
  const Status s = Demux(bytes.substr(0, bytes.size() / 3), {.kind = MediaKind::kVideo, .stream = -1, .name = "cut"})
                       .status();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("truncated"), std::string::npos) << s.message();
}

TEST_F(MediaTest, RefusesCorruptStream) {
  // An mp4 whose sample data is overwritten: the container reads, the decoder finds no picture.
  std::string bytes = Read(H264());
  const size_t mdat = bytes.find("mdat");
  ASSERT_NE(mdat, std::string::npos);
  for (size_t i = mdat + 4; i < bytes.size() && i < mdat + 200000; ++i) bytes[i] = static_cast<char>(0xff);
  const Status s = Demux(bytes, {.kind = MediaKind::kVideo, .stream = -1, .name = "bad.mp4"}).status();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  EXPECT_NE(s.message().find("bad.mp4"), std::string::npos) << s.message();
}

TEST_F(MediaTest, RefusesAbsurdDimensions) {
  const std::string nut = Make("wide.nut", "-f lavfi -i color=size=16400x16:rate=1:duration=1 -c:v rawvideo "
                                           "-pix_fmt gray");
  const Status s = DemuxFile(nut, {}).status();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("dimensions 16400x16 outside"), std::string::npos) << s.message();
}

TEST_F(MediaTest, RefusesUnsupportedCodec) {
  MediaValueView v = Parse(*DemuxFile(H264(), {}));
  v.params.codec = "no_such_codec";
  VideoDecoder decoder;
  const Status s = decoder.FramesAt(v, {0}, "field 'video'").status();
  EXPECT_EQ(s.code(), StatusCode::kNotSupported);
  EXPECT_NE(s.message().find("unsupported codec 'no_such_codec'"), std::string::npos) << s.message();
}

// swscale's SIMD stores run past a row's end for widths that are not a
// multiple of its vectors; converted frames must still land exactly in the
// caller's buffer and not a byte after it (a 456x256 clip overran its
// buffer by 8 bytes and corrupted the heap: valgrind, bench/clip_bench.py).
TEST_F(MediaTest, FramesOfAnyWidthStayInTheirBuffer) {
  for (const char* size : {"456x256", "98x64", "322x240", "64x48"}) {
    SCOPED_TRACE(size);
    const std::string path = Make(std::string("w") + size + ".mp4", std::string("-f lavfi -i testsrc2=size=") + size +
                                                                        ":rate=24:duration=0.25 -c:v libx264 -bf 2 -pix_fmt yuv420p");
    Result<std::string> value = DemuxFile(path, {});
    ASSERT_TRUE(value.ok()) << value.status().ToString();
    const MediaValueView v = Parse(*value);
    const std::vector<int64_t> pts = v.PresentationTimestamps();
    const size_t frame = size_t(v.params.width) * size_t(v.params.height) * 3;
    constexpr size_t kCanary = 256;
    std::vector<uint8_t> out(frame * pts.size() + kCanary, 0xA5);
    VideoDecoder decoder;
    // In reverse: each frame's overrun would land on the one after it,
    // converted already.
    std::vector<int64_t> backwards(pts.rbegin(), pts.rend());
    ASSERT_TRUE(decoder.DecodeAtPts(v, backwards, out.data(), frame * pts.size(), "test").ok());
    for (size_t i = frame * pts.size(); i < out.size(); ++i) ASSERT_EQ(out[i], 0xA5) << "byte " << i << " after the frames";
    // The same frames decoded one at a time, each into a buffer of its own size.
    for (size_t k = 0; k < pts.size(); ++k) {
      std::vector<uint8_t> one(frame);
      ASSERT_TRUE(decoder.DecodeAtPts(v, {backwards[k]}, one.data(), one.size(), "test").ok());
      ASSERT_TRUE(std::equal(one.begin(), one.end(), out.begin() + std::ptrdiff_t(k * frame))) << "frame " << k;
    }
  }
}

}  // namespace
}  // namespace unirecord::media
