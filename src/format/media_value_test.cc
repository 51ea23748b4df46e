#include "unirecord/media_value.h"

#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <limits>

#include "format/checksum.h"
#include "format/endian.h"
#include "format/format_constants.h"
#include "format/media_value_testing.h"

namespace unirecord {
namespace {

using format::StoreLE;

MediaParams VideoParams() {
  MediaParams m;
  m.kind = MediaKind::kVideo;
  m.codec = "h264";
  m.time_base_num = 1;
  m.time_base_den = 12800;
  m.width = 320;
  m.height = 240;
  m.rotation = 90;
  m.pixel_format = "yuv420p";
  m.duration = 1536;
  m.start_pts = 0;
  return m;
}

// Three packets, B-frame style: decode order I P B, pts 0 1024 512.
std::string ValidValue() {
  std::vector<MediaPacket> packets(3);
  const int64_t pts[] = {0, 1024, 512};
  uint64_t offset = 0;
  for (size_t i = 0; i < 3; ++i) {
    packets[i].pts = pts[i];
    packets[i].dts = static_cast<int64_t>(i) * 512 - 512;
    packets[i].duration = 512;
    packets[i].offset = offset;
    packets[i].size = static_cast<uint32_t>(10 + i);
    packets[i].keyframe = i == 0;
    offset += packets[i].size;
  }
  packets[2].pts = kNoTimestamp;  // a missing pts is kept as the sentinel
  const std::string area(offset, 'x');
  Result<std::string> value = EncodeMediaValue(VideoParams(), packets, "avcC", area, "test");
  EXPECT_TRUE(value.ok()) << value.status().ToString();
  return value.ok() ? *value : std::string();
}

uint8_t* At(std::string& s, size_t offset) { return reinterpret_cast<uint8_t*>(s.data()) + offset; }
size_t Entry(size_t i, size_t field) { return format::kMediaHeaderSize + i * format::kMediaPacketEntrySize + field; }

// Parses `stored` after `damage` (resealed unless `reseal` is false) and
// expects Corruption mentioning `words`.
void ExpectCorrupt(const std::function<void(std::string&)>& damage, const std::string& words, bool reseal = true) {
  std::string stored = ValidValue();
  damage(stored);
  if (reseal) format::testing::ResealMediaValue(stored);  // each case reaches the check it is named for
  MediaValueView view;
  const Status s = ParseMediaValue(stored, "field 'video'", &view);
  EXPECT_EQ(s.code(), StatusCode::kCorruption) << s.ToString();
  EXPECT_NE(s.message().find("field 'video'"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find(words), std::string::npos) << s.message();
}

TEST(MediaValueTest, RoundTrip) {
  const std::string stored = ValidValue();
  MediaValueView view;
  ASSERT_TRUE(ParseMediaValue(stored, "v", &view).ok());
  EXPECT_EQ(view.params.codec, "h264");
  EXPECT_EQ(view.params.width, 320);
  EXPECT_EQ(view.params.rotation, 90);
  EXPECT_EQ(view.params.pixel_format, "yuv420p");
  EXPECT_EQ(view.extradata, "avcC");
  ASSERT_EQ(view.packets.size(), 3u);
  EXPECT_TRUE(view.packets[0].keyframe);
  EXPECT_FALSE(view.packets[1].keyframe);
  EXPECT_EQ(view.packets[2].pts, kNoTimestamp);
  EXPECT_EQ(view.packet_bytes(1), std::string(11, 'x'));
  EXPECT_EQ(view.packets[1].checksum, format::Checksum(view.packet_bytes(1).data(), 11));
  EXPECT_DOUBLE_EQ(view.seconds(), 1536.0 / 12800);
  EXPECT_EQ(view.frames(), 3);
  // Presentation order; the packet without pts counts with its dts (512).
  EXPECT_EQ(view.PresentationTimestamps(), (std::vector<int64_t>{0, 512, 1024}));
  EXPECT_EQ(stored.size(), format::kMediaHeaderSize + 3 * format::kMediaPacketEntrySize + 4 + 33);
}

TEST(MediaValueTest, ShortHeader) {
  ExpectCorrupt([](std::string& s) { s.resize(format::kMediaHeaderSize - 1); }, "shorter than its");
}
TEST(MediaValueTest, BadMagic) {
  ExpectCorrupt([](std::string& s) { s[0] = 'X'; }, "bad magic");
}
TEST(MediaValueTest, LayoutVersion) {
  ExpectCorrupt([](std::string& s) { StoreLE<uint16_t>(At(s, format::kMediaVersionOffset), 2); }, "layout version 2");
}
TEST(MediaValueTest, UnknownStreamKind) {
  ExpectCorrupt([](std::string& s) { s[format::kMediaStreamKindOffset] = 3; }, "unknown stream kind 3");
}
TEST(MediaValueTest, ReservedByte) {
  ExpectCorrupt([](std::string& s) { s[format::kMediaStreamKindOffset + 1] = 1; }, "reserved byte");
}
TEST(MediaValueTest, NameWithoutNul) {
  ExpectCorrupt([](std::string& s) { std::memset(At(s, format::kMediaCodecOffset), 'a', format::kMediaNameSize); },
                "printable ASCII");
}
TEST(MediaValueTest, NameNotPrintable) {
  ExpectCorrupt([](std::string& s) { s[format::kMediaPixelFormatOffset] = '\x01'; }, "printable ASCII");
}
TEST(MediaValueTest, TimeBaseZero) {
  ExpectCorrupt([](std::string& s) { StoreLE<int32_t>(At(s, format::kMediaTimeBaseDenOffset), 0); },
                "time base is not positive");
}
TEST(MediaValueTest, AbsurdDimensions) {
  ExpectCorrupt([](std::string& s) { StoreLE<int32_t>(At(s, format::kMediaWidthOffset), 100000); },
                "dimensions 100000x240");
}
TEST(MediaValueTest, RotationOutOfRange) {
  ExpectCorrupt([](std::string& s) { StoreLE<int32_t>(At(s, format::kMediaRotationOffset), 360); }, "rotation 360");
}
TEST(MediaValueTest, AbsurdDuration) {
  ExpectCorrupt([](std::string& s) { StoreLE<int64_t>(At(s, format::kMediaDurationOffset), int64_t{1} << 50); },
                "duration is longer than");
}
TEST(MediaValueTest, VideoWithAudioParameters) {
  ExpectCorrupt([](std::string& s) { StoreLE<int32_t>(At(s, format::kMediaSampleRateOffset), 48000); },
                "audio parameters");
}
TEST(MediaValueTest, AbsurdPacketCount) {
  ExpectCorrupt([](std::string& s) { StoreLE<uint64_t>(At(s, format::kMediaPacketCountOffset), uint64_t{1} << 40); },
                "packets, more than");
}
TEST(MediaValueTest, TablePastEnd) {
  ExpectCorrupt([](std::string& s) { StoreLE<uint64_t>(At(s, format::kMediaPacketCountOffset), 1000); },
                "packet table of 1000 packets runs past");
}
TEST(MediaValueTest, TruncatedExtradata) {
  ExpectCorrupt([](std::string& s) { StoreLE<uint32_t>(At(s, format::kMediaExtradataSizeOffset), 5000); },
                "extradata of 5000 bytes runs past");
}
TEST(MediaValueTest, AbsurdExtradata) {
  ExpectCorrupt([](std::string& s) { StoreLE<uint32_t>(At(s, format::kMediaExtradataSizeOffset), 0xFFFFFFFFu); },
                "more than 1048576");
}
TEST(MediaValueTest, PacketOutsideArea) {
  ExpectCorrupt([](std::string& s) { StoreLE<uint32_t>(At(s, Entry(2, format::kMediaPacketSizeOffset)), 1000); },
                "outside the packet area");
}
TEST(MediaValueTest, PacketOffsetHuge) {
  ExpectCorrupt([](std::string& s) { StoreLE<uint64_t>(At(s, Entry(1, format::kMediaPacketDataOffset)), ~uint64_t{0}); },
                "outside the packet area");
}
TEST(MediaValueTest, PacketsOverlap) {
  ExpectCorrupt([](std::string& s) { StoreLE<uint64_t>(At(s, Entry(1, format::kMediaPacketDataOffset)), 5); },
                "overlapping or a gap");
}
TEST(MediaValueTest, BytesAfterLastPacket) {
  ExpectCorrupt([](std::string& s) { s += "zz"; }, "2 bytes after the last packet");
}
TEST(MediaValueTest, UnknownFlag) {
  ExpectCorrupt([](std::string& s) { StoreLE<uint32_t>(At(s, Entry(0, format::kMediaPacketFlagsOffset)), 3); },
                "unknown flag bits");
}
TEST(MediaValueTest, NegativePacketDuration) {
  ExpectCorrupt([](std::string& s) { StoreLE<int64_t>(At(s, Entry(0, format::kMediaPacketDurationOffset)), -1); },
                "negative duration");
}
TEST(MediaValueTest, DtsBackwards) {
  ExpectCorrupt([](std::string& s) { StoreLE<int64_t>(At(s, Entry(2, format::kMediaPacketDtsOffset)), -9000); },
                "dts goes backwards");
}

TEST(MediaValueTest, EncodeRefusesLongNames) {
  MediaParams m = VideoParams();
  m.codec = std::string(40, 'c');
  EXPECT_EQ(EncodeMediaValue(m, {}, "", "", "v").status().code(), StatusCode::kInvalidArgument);
}

TEST(MediaValueTest, AudioParametersChecked) {
  MediaParams m;
  m.kind = MediaKind::kAudio;
  m.codec = "flac";
  m.time_base_num = 1;
  m.time_base_den = 44100;
  m.sample_rate = 44100;
  m.channels = 100;
  m.sample_format = "s16";
  const Status s = EncodeMediaValue(m, {}, "", "", "a").status();
  EXPECT_NE(s.message().find("100 channels"), std::string::npos) << s.ToString();
  m.channels = 2;
  EXPECT_TRUE(EncodeMediaValue(m, {}, "", "", "a").ok());
}

TEST(MediaValueTest, SchemaAddsParameterFields) {
  Result<Schema> schema = Schema::Make({Field::Video("clip"), Field::Int64("label", true), Field::Audio("sound")});
  ASSERT_TRUE(schema.ok()) << schema.status().ToString();
  EXPECT_EQ(schema->FieldNames(),
            "clip, clip.width, clip.height, clip.duration, clip.frames, clip.fps, clip.rotation, clip.codec, label, "
            "sound, sound.sample_rate, sound.channels, sound.duration, sound.codec");
  EXPECT_EQ(schema->MediaSourceOf(1), 0);
  EXPECT_EQ(schema->MediaSourceOf(8), -1);
  EXPECT_EQ(schema->MediaSourceOf(13), 9);
  EXPECT_TRUE(schema->field(1).indexed);
  EXPECT_EQ(schema->RequiredMinorVersion(), format::kFormatMinorMedia);
  // Made again from its own fields (as a reader does from the header): the same schema.
  Result<Schema> again = Schema::Make(schema->fields());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *schema);
  EXPECT_EQ(again->MediaSourceOf(13), 9);
}

TEST(MediaValueTest, SchemaRefusesParameterClash) {
  const Status s = Schema::Make({Field::Video("clip"), Field::String("clip.width")}).status();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("'clip.width' clashes with the video field 'clip'"), std::string::npos) << s.message();
}

TEST(MediaValueTest, StartPtsOutOfRange) {
  ExpectCorrupt([](std::string& s) { StoreLE<int64_t>(At(s, format::kMediaStartPtsOffset), (int64_t{1} << 53) + 1); },
                "start pts 9007199254740993 outside +-2^53");
}
TEST(MediaValueTest, TimestampFarFromStart) {
  // 1e13 units of 1/12800 s: 24 years after the stream's start.
  ExpectCorrupt([](std::string& s) { StoreLE<int64_t>(At(s, Entry(1, format::kMediaPacketPtsOffset)), 10000000000000); },
                "packet 1: a timestamp lies more than 172800 s from the stream's start");
  ExpectCorrupt([](std::string& s) { StoreLE<int64_t>(At(s, Entry(2, format::kMediaPacketDtsOffset)), std::numeric_limits<int64_t>::max()); },
                "packet 2: a timestamp lies more than");
}
TEST(MediaValueTest, TableChecksum) {
  ExpectCorrupt([](std::string& s) { s[Entry(1, format::kMediaPacketPtsOffset)] ^= 1; },
                "header, packet table or extradata checksum mismatch", /*reseal=*/false);
}
TEST(MediaValueTest, HeaderChecksum) {
  ExpectCorrupt([](std::string& s) { s[format::kMediaRotationOffset] ^= 1; },
                "header, packet table or extradata checksum mismatch", /*reseal=*/false);
}
TEST(MediaValueTest, ExtradataChecksum) {
  ExpectCorrupt([](std::string& s) { s[Entry(3, 0)] ^= 1; },  // the extradata's first byte
                "header, packet table or extradata checksum mismatch", /*reseal=*/false);
}
// A damaged packet parses (the table is sound) and is refused when used.
TEST(MediaValueTest, PacketChecksum) {
  std::string stored = ValidValue();
  MediaValueView view;
  ASSERT_TRUE(ParseMediaValue(stored, "field 'video'", &view).ok());
  for (size_t i = 0; i < 3; ++i) EXPECT_TRUE(view.CheckPacket(i, "field 'video'").ok()) << i;
  stored[stored.size() - 12] ^= 0x20;  // in packet 2 (the last, 12 bytes)
  ASSERT_TRUE(ParseMediaValue(stored, "field 'video'", &view).ok());
  EXPECT_TRUE(view.CheckPacket(1, "field 'video'").ok());
  const Status s = view.CheckPacket(2, "field 'video'");
  EXPECT_EQ(s.code(), StatusCode::kCorruption);
  EXPECT_EQ(s.message(), "field 'video': media value: packet 2 (12 bytes) checksum mismatch");
}

// Presentation order from a table in reverse (a hostile value): sorted,
// by the fallback after the insertion sort's linear budget of moves (which
// B-frame reordering, a few places deep, never exhausts).
TEST(MediaValueTest, PresentationOrderOfAReversedTable) {
  constexpr size_t kCount = 200000;
  std::vector<MediaPacket> packets(kCount);
  for (size_t i = 0; i < kCount; ++i) {
    packets[i].pts = static_cast<int64_t>(kCount - i);
    packets[i].dts = static_cast<int64_t>(i);
    packets[i].offset = i;
    packets[i].size = 1;
  }
  packets[0].keyframe = true;
  MediaParams params = VideoParams();
  params.duration = static_cast<int64_t>(kCount) + 1;
  Result<std::string> value = EncodeMediaValue(params, packets, "", std::string(kCount, 'p'), "reversed");
  ASSERT_TRUE(value.ok()) << value.status().ToString();
  MediaValueView view;
  ASSERT_TRUE(ParseMediaValue(*value, "reversed", &view).ok());
  const std::vector<int64_t> pts = view.PresentationTimestamps();
  ASSERT_EQ(pts.size(), kCount);
  for (size_t i = 0; i < kCount; ++i) ASSERT_EQ(pts[i], static_cast<int64_t>(i + 1)) << i;
}

}  // namespace
}  // namespace unirecord
