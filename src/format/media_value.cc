// The media value codec (format/SPEC.md section 6.4, "Media values").
#include "unirecord/media_value.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "format/checksum.h"
#include "format/endian.h"
#include "format/format_constants.h"

namespace unirecord {

static_assert(kNoTimestamp == format::kMediaNoTimestamp, "the public sentinel is the format's");
static_assert(static_cast<uint8_t>(MediaKind::kVideo) == format::kMediaStreamVideo, "frozen stream kinds");
static_assert(static_cast<uint8_t>(MediaKind::kAudio) == format::kMediaStreamAudio, "frozen stream kinds");

const char* MediaKindName(MediaKind kind) { return kind == MediaKind::kAudio ? "audio" : "video"; }

bool MediaKindOf(FieldType type, MediaKind* kind) {
  if (type != FieldType::kVideo && type != FieldType::kAudio) return false;
  *kind = type == FieldType::kVideo ? MediaKind::kVideo : MediaKind::kAudio;
  return true;
}

const std::vector<MediaParameterField>& MediaParameterFields(MediaKind kind) {
  static const std::vector<MediaParameterField> video = {
      {"width", FieldType::kInt32, true},     {"height", FieldType::kInt32, true},
      {"duration", FieldType::kFloat64, false}, {"frames", FieldType::kInt64, false},
      {"fps", FieldType::kFloat64, false},    {"rotation", FieldType::kInt32, false},
      {"codec", FieldType::kString, false},
  };
  static const std::vector<MediaParameterField> audio = {
      {"sample_rate", FieldType::kInt32, true}, {"channels", FieldType::kInt32, false},
      {"duration", FieldType::kFloat64, false}, {"codec", FieldType::kString, false},
  };
  return kind == MediaKind::kAudio ? audio : video;
}

double MediaValueView::average_fps() const {
  const double s = seconds();
  return s > 0 ? static_cast<double>(packets.size()) / s : 0.0;
}

std::vector<int64_t> MediaValueView::PresentationTimestamps() const {
  std::vector<int64_t> pts;
  pts.reserve(packets.size());
  for (const MediaPacket& p : packets) pts.push_back(p.pts != kNoTimestamp ? p.pts : p.dts);
  // Decode order is presentation order but for B-frame reordering, a few
  // places deep: an insertion sort moves each value a few slots. A table
  // far from sorted (damage, or a hostile value) falls back to std::sort
  // after a linear budget of moves, so the sort is never quadratic.
  uint64_t budget = 64 * static_cast<uint64_t>(pts.size());
  for (size_t i = 1; i < pts.size() && budget > 0; ++i) {
    const int64_t v = pts[i];
    size_t j = i;
    for (; j > 0 && pts[j - 1] > v && budget > 0; --j, --budget) pts[j] = pts[j - 1];
    pts[j] = v;
  }
  if (budget == 0) std::sort(pts.begin(), pts.end());
  return pts;
}

Status MediaValueView::CheckPacket(size_t i, std::string_view what) const {
  const std::string_view bytes = packet_bytes(i);
  if (format::Checksum(bytes.data(), bytes.size()) != packets[i].checksum) {
    return Status::Corruption(std::string(what) + ": media value: packet " + std::to_string(i) + " (" +
                              std::to_string(bytes.size()) + " bytes) checksum mismatch");
  }
  return Status::OK();
}

namespace {

using format::LoadLE;
using format::StoreLE;

// A NUL-padded name field: printable ASCII, then NULs only, at least one.
bool ReadName(const uint8_t* p, std::string* out) {
  size_t n = 0;
  while (n < format::kMediaNameSize && p[n] != 0) {
    if (p[n] < 0x21 || p[n] > 0x7e) return false;
    ++n;
  }
  if (n == format::kMediaNameSize) return false;
  for (size_t i = n; i < format::kMediaNameSize; ++i) {
    if (p[i] != 0) return false;
  }
  out->assign(reinterpret_cast<const char*>(p), n);
  return true;
}

// SPEC.md section 12's limits and the kind's parameters; "" when they hold.
std::string ParamsProblem(const MediaParams& m) {
  if (m.time_base_num <= 0 || m.time_base_den <= 0) return "time base is not positive";
  if (m.codec.empty()) return "codec name is empty";
  if (m.duration < 0) return "duration is negative";
  if (m.start_pts < -format::kMaxMediaStartPts || m.start_pts > format::kMaxMediaStartPts) {
    return "start pts " + std::to_string(m.start_pts) + " outside +-2^53";
  }
  if (static_cast<double>(m.duration) * m.time_base() > format::kMaxMediaSeconds) {
    return "duration is longer than " + std::to_string(static_cast<int64_t>(format::kMaxMediaSeconds)) + " s";
  }
  if (m.kind == MediaKind::kVideo) {
    if (m.width < 1 || m.height < 1 || m.width > format::kMaxMediaDimension ||
        m.height > format::kMaxMediaDimension) {
      return "dimensions " + std::to_string(m.width) + "x" + std::to_string(m.height) + " outside 1.." +
             std::to_string(format::kMaxMediaDimension);
    }
    if (m.rotation < 0 || m.rotation >= 360) return "rotation " + std::to_string(m.rotation) + " outside [0, 360)";
    if (m.pixel_format.empty()) return "pixel format is empty";
    if (m.sample_rate != 0 || m.channels != 0 || m.channel_layout != 0 || !m.sample_format.empty()) {
      return "a video stream has audio parameters";
    }
  } else {
    if (m.sample_rate < 1 || m.sample_rate > format::kMaxMediaSampleRate) {
      return "sample rate " + std::to_string(m.sample_rate) + " outside 1.." +
             std::to_string(format::kMaxMediaSampleRate);
    }
    if (m.channels < 1 || m.channels > format::kMaxMediaChannels) {
      return std::to_string(m.channels) + " channels, outside 1.." + std::to_string(format::kMaxMediaChannels);
    }
    if (m.sample_format.empty()) return "sample format is empty";
    if (m.width != 0 || m.height != 0 || m.rotation != 0 || !m.pixel_format.empty()) {
      return "an audio stream has video parameters";
    }
  }
  return "";
}

Status Bad(std::string_view what, const std::string& problem) {
  return Status::Corruption(std::string(what) + ": media value: " + problem);
}

Status ParseHeader(const uint8_t* p, std::string_view what, MediaParams* m, uint64_t* count, uint32_t* extra) {
  if (std::memcmp(p, format::kMediaMagic, format::kMediaMagicSize) != 0) return Bad(what, "bad magic");
  const uint16_t version = LoadLE<uint16_t>(p + format::kMediaVersionOffset);
  if (version != format::kMediaLayoutVersion) {
    return Bad(what, "layout version " + std::to_string(version) + " (this library reads " +
                         std::to_string(format::kMediaLayoutVersion) + ")");
  }
  const uint8_t kind = p[format::kMediaStreamKindOffset];
  if (kind != format::kMediaStreamVideo && kind != format::kMediaStreamAudio) {
    return Bad(what, "unknown stream kind " + std::to_string(kind));
  }
  if (p[format::kMediaStreamKindOffset + 1] != 0) return Bad(what, "reserved byte is not zero");
  m->kind = static_cast<MediaKind>(kind);
  m->time_base_num = LoadLE<int32_t>(p + format::kMediaTimeBaseNumOffset);
  m->time_base_den = LoadLE<int32_t>(p + format::kMediaTimeBaseDenOffset);
  m->width = LoadLE<int32_t>(p + format::kMediaWidthOffset);
  m->height = LoadLE<int32_t>(p + format::kMediaHeightOffset);
  m->rotation = LoadLE<int32_t>(p + format::kMediaRotationOffset);
  m->sample_rate = LoadLE<int32_t>(p + format::kMediaSampleRateOffset);
  m->channels = LoadLE<int32_t>(p + format::kMediaChannelsOffset);
  *extra = LoadLE<uint32_t>(p + format::kMediaExtradataSizeOffset);
  m->channel_layout = LoadLE<uint64_t>(p + format::kMediaChannelLayoutOffset);
  *count = LoadLE<uint64_t>(p + format::kMediaPacketCountOffset);
  m->duration = LoadLE<int64_t>(p + format::kMediaDurationOffset);
  m->start_pts = LoadLE<int64_t>(p + format::kMediaStartPtsOffset);
  if (!ReadName(p + format::kMediaCodecOffset, &m->codec) ||
      !ReadName(p + format::kMediaPixelFormatOffset, &m->pixel_format) ||
      !ReadName(p + format::kMediaSampleFormatOffset, &m->sample_format)) {
    return Bad(what, "a name (codec, pixel or sample format) is not printable ASCII padded with NULs");
  }
  const std::string problem = ParamsProblem(*m);
  if (!problem.empty()) return Bad(what, problem);
  if (*count > format::kMaxMediaPackets) {
    return Bad(what, std::to_string(*count) + " packets, more than " + std::to_string(format::kMaxMediaPackets));
  }
  if (*extra > format::kMaxMediaExtradataBytes) {
    return Bad(what, "extradata of " + std::to_string(*extra) + " bytes, more than " +
                         std::to_string(format::kMaxMediaExtradataBytes));
  }
  return Status::OK();
}

// The packet table: each packet's bytes follow the previous one's in the
// area, flags hold only the keyframe bit, dts never go backwards.
// A given timestamp within kMaxMediaSeconds and a second of the stream's
// start (in doubles: the difference itself may not fit).
bool NearStart(int64_t t, const MediaParams& m) {
  if (t == kNoTimestamp) return true;
  const double apart = std::fabs(static_cast<double>(t) - static_cast<double>(m.start_pts)) * m.time_base();
  return apart <= format::kMaxMediaSeconds + 1.0;
}

Status ParsePackets(const uint8_t* table, uint64_t count, uint64_t area_size, const MediaParams& m,
                    std::string_view what, std::vector<MediaPacket>* out) {
  out->resize(count);
  uint64_t next = 0;
  int64_t last_dts = kNoTimestamp;
  for (uint64_t i = 0; i < count; ++i) {
    const uint8_t* e = table + i * format::kMediaPacketEntrySize;
    MediaPacket& p = (*out)[i];
    p.pts = LoadLE<int64_t>(e + format::kMediaPacketPtsOffset);
    p.dts = LoadLE<int64_t>(e + format::kMediaPacketDtsOffset);
    p.duration = LoadLE<int64_t>(e + format::kMediaPacketDurationOffset);
    p.offset = LoadLE<uint64_t>(e + format::kMediaPacketDataOffset);
    p.size = LoadLE<uint32_t>(e + format::kMediaPacketSizeOffset);
    const uint32_t flags = LoadLE<uint32_t>(e + format::kMediaPacketFlagsOffset);
    p.skip_start = LoadLE<uint32_t>(e + format::kMediaPacketSkipStartOffset);
    p.skip_end = LoadLE<uint32_t>(e + format::kMediaPacketSkipEndOffset);
    p.checksum = LoadLE<uint64_t>(e + format::kMediaPacketChecksumOffset);
    auto where = [i] { return "packet " + std::to_string(i) + ": "; };  // built only for a message
    if ((flags & ~format::kMediaPacketKeyframe) != 0) return Bad(what, where() + "unknown flag bits");
    p.keyframe = (flags & format::kMediaPacketKeyframe) != 0;
    if (p.duration < 0) return Bad(what, where() + "negative duration");
    if (!NearStart(p.pts, m) || !NearStart(p.dts, m)) {
      return Bad(what, where() + "a timestamp lies more than " +
                           std::to_string(static_cast<int64_t>(format::kMaxMediaSeconds)) +
                           " s from the stream's start");
    }
    if (!format::RangeWithin(p.offset, p.size, area_size)) {
      return Bad(what, where() + "bytes [" + std::to_string(p.offset) + ", +" + std::to_string(p.size) +
                           ") outside the packet area of " + std::to_string(area_size) + " bytes");
    }
    if (p.offset != next) {
      return Bad(what, where() + "starts at " + std::to_string(p.offset) + ", not where packet " +
                           std::to_string(i) + " - 1 ended (" + std::to_string(next) + "): overlapping or a gap");
    }
    next = p.offset + p.size;
    if (p.dts != kNoTimestamp) {
      if (last_dts != kNoTimestamp && p.dts < last_dts) return Bad(what, where() + "dts goes backwards");
      last_dts = p.dts;
    }
  }
  if (next != area_size) {
    return Bad(what, std::to_string(area_size - next) + " bytes after the last packet");
  }
  return Status::OK();
}

// The header's checksum of itself (but for the checksum) and of what
// follows it up to the packets: the table and the extradata.
uint64_t TableChecksum(const uint8_t* value, size_t extradata_end) {
  format::StreamingChecksum hasher;
  hasher.Update(value, format::kMediaTableChecksumOffset);
  hasher.Update(value + format::kMediaHeaderSize, extradata_end - format::kMediaHeaderSize);
  return hasher.Digest();
}

}  // namespace

bool IsMediaValue(std::string_view bytes) {
  return bytes.size() >= format::kMediaMagicSize &&
         std::memcmp(bytes.data(), format::kMediaMagic, format::kMediaMagicSize) == 0;
}

Status ParseMediaValue(std::string_view stored, std::string_view what, MediaValueView* out) {
  const auto* p = reinterpret_cast<const uint8_t*>(stored.data());
  if (stored.size() < format::kMediaHeaderSize) {
    return Bad(what, std::to_string(stored.size()) + " bytes, shorter than its " +
                         std::to_string(format::kMediaHeaderSize) + "-byte header");
  }
  uint64_t count = 0;
  uint32_t extra = 0;
  UREC_RETURN_IF_ERROR(ParseHeader(p, what, &out->params, &count, &extra));
  const uint64_t table_end = format::kMediaHeaderSize + count * format::kMediaPacketEntrySize;
  if (table_end > stored.size()) {
    return Bad(what, "packet table of " + std::to_string(count) + " packets runs past the value's " +
                         std::to_string(stored.size()) + " bytes");
  }
  if (table_end + extra > stored.size()) {
    return Bad(what, "extradata of " + std::to_string(extra) + " bytes runs past the value's end");
  }
  // Before anything in the table is used: a damaged entry is reported as
  // damage, not as whatever its bytes now say.
  if (LoadLE<uint64_t>(p + format::kMediaTableChecksumOffset) != TableChecksum(p, table_end + extra)) {
    return Bad(what, "header, packet table or extradata checksum mismatch");
  }
  out->extradata = stored.substr(table_end, extra);
  out->packet_area = stored.substr(table_end + extra);
  return ParsePackets(p + format::kMediaHeaderSize, count, out->packet_area.size(), out->params, what,
                      &out->packets);
}

Result<std::string> EncodeMediaValue(const MediaParams& m, const std::vector<MediaPacket>& packets,
                                     std::string_view extradata, std::string_view packet_area,
                                     std::string_view what) {
  for (const std::string* name : {&m.codec, &m.pixel_format, &m.sample_format}) {
    if (name->size() >= format::kMediaNameSize) {
      return Status::InvalidArgument(std::string(what) + ": name '" + MessageText(*name) + "' is longer than " +
                                     std::to_string(format::kMediaNameSize - 1) + " bytes");
    }
  }
  std::string out(format::kMediaHeaderSize + packets.size() * format::kMediaPacketEntrySize, '\0');
  auto* p = reinterpret_cast<uint8_t*>(out.data());
  std::memcpy(p, format::kMediaMagic, format::kMediaMagicSize);
  StoreLE<uint16_t>(p + format::kMediaVersionOffset, format::kMediaLayoutVersion);
  p[format::kMediaStreamKindOffset] = static_cast<uint8_t>(m.kind);
  StoreLE<int32_t>(p + format::kMediaTimeBaseNumOffset, m.time_base_num);
  StoreLE<int32_t>(p + format::kMediaTimeBaseDenOffset, m.time_base_den);
  StoreLE<int32_t>(p + format::kMediaWidthOffset, m.width);
  StoreLE<int32_t>(p + format::kMediaHeightOffset, m.height);
  StoreLE<int32_t>(p + format::kMediaRotationOffset, m.rotation);
  StoreLE<int32_t>(p + format::kMediaSampleRateOffset, m.sample_rate);
  StoreLE<int32_t>(p + format::kMediaChannelsOffset, m.channels);
  StoreLE<uint32_t>(p + format::kMediaExtradataSizeOffset, static_cast<uint32_t>(extradata.size()));
  StoreLE<uint64_t>(p + format::kMediaChannelLayoutOffset, m.channel_layout);
  StoreLE<uint64_t>(p + format::kMediaPacketCountOffset, packets.size());
  StoreLE<int64_t>(p + format::kMediaDurationOffset, m.duration);
  StoreLE<int64_t>(p + format::kMediaStartPtsOffset, m.start_pts);
  std::memcpy(p + format::kMediaCodecOffset, m.codec.data(), m.codec.size());
  std::memcpy(p + format::kMediaPixelFormatOffset, m.pixel_format.data(), m.pixel_format.size());
  std::memcpy(p + format::kMediaSampleFormatOffset, m.sample_format.data(), m.sample_format.size());
  for (size_t i = 0; i < packets.size(); ++i) {
    uint8_t* e = p + format::kMediaHeaderSize + i * format::kMediaPacketEntrySize;
    const MediaPacket& k = packets[i];
    StoreLE<int64_t>(e + format::kMediaPacketPtsOffset, k.pts);
    StoreLE<int64_t>(e + format::kMediaPacketDtsOffset, k.dts);
    StoreLE<int64_t>(e + format::kMediaPacketDurationOffset, k.duration);
    StoreLE<uint64_t>(e + format::kMediaPacketDataOffset, k.offset);
    StoreLE<uint32_t>(e + format::kMediaPacketSizeOffset, k.size);
    StoreLE<uint32_t>(e + format::kMediaPacketFlagsOffset, k.keyframe ? format::kMediaPacketKeyframe : 0);
    StoreLE<uint32_t>(e + format::kMediaPacketSkipStartOffset, k.skip_start);
    StoreLE<uint32_t>(e + format::kMediaPacketSkipEndOffset, k.skip_end);
    // Out of the area only if the table is wrong, which the parse below refuses.
    if (format::RangeWithin(k.offset, k.size, packet_area.size())) {
      StoreLE<uint64_t>(e + format::kMediaPacketChecksumOffset,
                        format::Checksum(packet_area.data() + k.offset, k.size));
    }
  }
  out.append(extradata);
  p = reinterpret_cast<uint8_t*>(out.data());
  StoreLE<uint64_t>(p + format::kMediaTableChecksumOffset, TableChecksum(p, out.size()));
  out.append(packet_area);
  MediaValueView check;
  const Status parsed = ParseMediaValue(out, what, &check);
  if (!parsed.ok()) return Status::InvalidArgument(parsed.message());
  return out;
}

}  // namespace unirecord
