// The stored value of a `video` or `audio` field (format 1.3): one stream's
// parameters, its packet table and its packets, as format/SPEC.md section
// 6.4 ("Media values") lays them out. This header reads and writes that
// value without FFmpeg; unirecord/media.h demuxes containers into it and
// decodes it.
#ifndef UNIRECORD_MEDIA_VALUE_H_
#define UNIRECORD_MEDIA_VALUE_H_

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "unirecord/schema.h"
#include "unirecord/status.h"

namespace unirecord {

// Frozen in the format (the stream kind byte of a media value).
enum class MediaKind : uint8_t {
  kVideo = 1,
  kAudio = 2,
};
const char* MediaKindName(MediaKind kind);  // "video" | "audio"

// A pts or dts the container did not give (FFmpeg's AV_NOPTS_VALUE).
inline constexpr int64_t kNoTimestamp = std::numeric_limits<int64_t>::min();

// The stream's parameters (the value's header). Names are FFmpeg's
// (avcodec_get_name, av_get_pix_fmt_name, av_get_sample_fmt_name): names,
// unlike FFmpeg's enum numbers, stay the same across FFmpeg versions.
struct MediaParams {
  MediaKind kind = MediaKind::kVideo;
  std::string codec;             // "h264", "hevc", "vp9", "av1", "mpeg4", "aac", "opus", "flac", ...
  int32_t time_base_num = 0;     // seconds per time-base unit: num / den, both > 0
  int32_t time_base_den = 0;
  // Video (0 / empty for audio).
  int32_t width = 0;
  int32_t height = 0;
  int32_t rotation = 0;          // degrees counter-clockwise to display upright, [0, 360)
  std::string pixel_format;      // "yuv420p", "yuv420p10le", ...
  // Audio (0 / empty for video).
  int32_t sample_rate = 0;
  int32_t channels = 0;
  uint64_t channel_layout = 0;   // FFmpeg's channel mask; 0 when the container gave none
  std::string sample_format;     // "fltp", "s16", ...
  int64_t duration = 0;          // time-base units
  int64_t start_pts = 0;         // time-base units; the stream's first presentation time

  double time_base() const { return static_cast<double>(time_base_num) / time_base_den; }
};

// One entry of the packet table, in decode order.
struct MediaPacket {
  int64_t pts = kNoTimestamp;
  int64_t dts = kNoTimestamp;
  int64_t duration = 0;          // time-base units
  uint64_t offset = 0;           // in the packet area
  uint32_t size = 0;
  bool keyframe = false;         // a decoder may start here
  uint32_t skip_start = 0;       // samples the decoder drops at this packet's start (priming) ...
  uint32_t skip_end = 0;         // ... and end (padding): FFmpeg's AV_PKT_DATA_SKIP_SAMPLES
  uint64_t checksum = 0;         // XXH3-64 of its bytes (EncodeMediaValue computes it)
};

// A parsed, checked media value: views into the stored bytes (which must
// outlive it) but for the packet table, which is decoded.
struct MediaValueView {
  MediaParams params;
  std::vector<MediaPacket> packets;
  std::string_view extradata;
  std::string_view packet_area;

  std::string_view packet_bytes(size_t i) const { return packet_area.substr(packets[i].offset, packets[i].size); }
  // Corruption naming `what` and packet i when its bytes do not match its
  // checksum. A read of a video or audio field checks the header, table and
  // extradata as it parses them, and each packet with this before a decoder
  // or muxer gets it: a clip of a long video hashes its own packets only.
  Status CheckPacket(size_t i, std::string_view what) const;
  // Seconds of the stream (duration x time base).
  double seconds() const { return static_cast<double>(params.duration) * params.time_base(); }
  // The video's frame count (its packet count) and average frame rate
  // (frames / seconds; 0 when the duration is 0).
  int64_t frames() const { return static_cast<int64_t>(packets.size()); }
  double average_fps() const;
  // The packets' presentation timestamps in presentation order (ascending;
  // a packet without a pts counts with its dts), so frame i of a video is
  // the one whose pts is PresentationTimestamps()[i].
  std::vector<int64_t> PresentationTimestamps() const;
};

// Parses and checks a stored media value (SPEC.md 6.4): Corruption naming
// `what` (e.g. "field 'video'") and the problem when the magic, version or
// stream kind is wrong, a name is not NUL-terminated printable ASCII, a
// parameter is outside SPEC.md section 12's limits, the packet table or
// the extradata run past the value, a packet's bytes lie outside the packet
// area or do not follow the previous packet's, a flag bit is unknown, dts
// go backwards, or the header, table and extradata do not match their
// checksum. Allocates the packet table only; packets are checked as they
// are used (CheckPacket).
Status ParseMediaValue(std::string_view stored, std::string_view what, MediaValueView* out);

// True when `bytes` start as a media value does (its magic): what tells a
// media value from a container file's bytes (no container starts so).
bool IsMediaValue(std::string_view bytes);

// The stored bytes of a value (SPEC.md 6.4). `packet_area` holds the
// packets' bytes; each packet's offset must be where the previous one
// ended. InvalidArgument (naming `what`) when the value would not parse.
Result<std::string> EncodeMediaValue(const MediaParams& params, const std::vector<MediaPacket>& packets,
                                     std::string_view extradata, std::string_view packet_area,
                                     std::string_view what);

// The queryable parameter fields a media field brings into its schema
// (Schema::Make adds them after it, named "FIELD.NAME"), filled by the
// record builder from the value; a user never sets them.
struct MediaParameterField {
  const char* name;  // "width", "height", "duration", "frames", "fps", "rotation", "codec", ...
  FieldType type;
  bool indexed;
};
// The parameter fields of a media field of `kind`, in schema order.
const std::vector<MediaParameterField>& MediaParameterFields(MediaKind kind);
// The media kind of a field type (kVideo / kAudio); false for another type.
bool MediaKindOf(FieldType type, MediaKind* kind);

}  // namespace unirecord

#endif  // UNIRECORD_MEDIA_VALUE_H_
