// CutMediaValue: a media value cut to a time range, on values built by hand
// (EncodeMediaValue): which packets stay, their offsets, the new start and
// duration, and the ranges refused.
#include "convert/media_cut.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "unirecord/media_value.h"

namespace unirecord::convert_internal {
namespace {

// 20 packets of 1 unit (0.1 s), pts 0..19 in decode order, a keyframe every
// 5; packet i holds 3 bytes of value i.
std::string Value(MediaKind kind) {
  MediaParams params;
  params.kind = kind;
  params.codec = kind == MediaKind::kVideo ? "h264" : "flac";
  params.time_base_num = 1;
  params.time_base_den = 10;
  if (kind == MediaKind::kVideo) {
    params.width = 16;
    params.height = 8;
    params.pixel_format = "yuv420p";
  } else {
    params.sample_rate = 16000;
    params.channels = 1;
    params.sample_format = "s16";
  }
  params.duration = 20;
  std::vector<MediaPacket> packets;
  std::string area;
  for (int i = 0; i < 20; ++i) {
    MediaPacket p;
    p.pts = p.dts = i;
    p.duration = 1;
    p.offset = area.size();
    p.size = 3;
    p.keyframe = kind == MediaKind::kAudio || i % 5 == 0;
    packets.push_back(p);
    area += std::string(3, static_cast<char>(i));
  }
  return EncodeMediaValue(params, packets, "", area, "test").value();
}

MediaValueView Parse(const std::string& stored) {
  MediaValueView view;
  EXPECT_TRUE(ParseMediaValue(stored, "cut", &view).ok());
  return view;
}

TEST(MediaCutTest, AVideoKeepsTheKeyframeBeforeStartToTheLastFrameBeforeEnd) {
  const std::string cut = CutMediaValue(Value(MediaKind::kVideo), 0.7, 1.2, "v").value();
  const MediaValueView v = Parse(cut);
  ASSERT_EQ(v.packets.size(), 8u);  // 5 .. 12
  EXPECT_EQ(v.packets.front().pts, 5);
  EXPECT_TRUE(v.packets.front().keyframe);
  EXPECT_EQ(v.packets.back().pts, 12);
  EXPECT_EQ(v.params.start_pts, 5);
  EXPECT_EQ(v.params.duration, 8);
  for (size_t i = 0; i < v.packets.size(); ++i) {
    EXPECT_EQ(v.packet_bytes(i), std::string(3, static_cast<char>(5 + i)));
  }
}

TEST(MediaCutTest, NoEndKeepsTheRest) {
  const MediaValueView v = Parse(CutMediaValue(Value(MediaKind::kVideo), 1.5, -1, "v").value());
  EXPECT_EQ(v.packets.size(), 5u);
  EXPECT_EQ(v.packets.front().pts, 15);
}

TEST(MediaCutTest, AudioKeepsThePreRoll) {
  const MediaValueView v = Parse(CutMediaValue(Value(MediaKind::kAudio), 1.0, 1.25, "a").value());
  // From the packet holding 1.0 - 0.2 s to the last starting at or before 1.25 s.
  EXPECT_EQ(v.packets.front().pts, 8);
  EXPECT_EQ(v.packets.back().pts, 12);
}

TEST(MediaCutTest, RangesTheStreamLacksAreRefused) {
  const std::string video = Value(MediaKind::kVideo);
  EXPECT_NE(CutMediaValue(video, 2.5, 3.0, "line 4").status().message().find("line 4: no packet"),
            std::string::npos);
  EXPECT_EQ(CutMediaValue(video, 1.0, 0.5, "v").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(CutMediaValue(video, -1.0, 0.5, "v").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(CutMediaValue("not a value", 0, 1, "v").status().code(), StatusCode::kCorruption);
}

}  // namespace
}  // namespace unirecord::convert_internal
