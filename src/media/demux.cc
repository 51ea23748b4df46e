// Demux: one stream of a container into a media value (format/SPEC.md 6.4).
#include <algorithm>
#include <cmath>

#include "format/format_constants.h"
#include "io/file.h"
#include "media/ffmpeg_util.h"
#include "unirecord/media.h"

extern "C" {
#include <libavutil/channel_layout.h>
#include <libavutil/intreadwrite.h>
#include <libavutil/display.h>
#include <libavutil/pixdesc.h>
}

namespace unirecord::media {

namespace {

// The stream's rotation from its display matrix: degrees clockwise to
// turn the decoded frame upright, in [0, 360) (what ffmpeg's autorotate applies).
int32_t RotationOf(const AVStream* st) {
  const uint8_t* matrix = av_stream_get_side_data(st, AV_PKT_DATA_DISPLAYMATRIX, nullptr);
  if (matrix == nullptr) return 0;
  const double theta = -av_display_rotation_get(reinterpret_cast<const int32_t*>(matrix));
  if (std::isnan(theta)) return 0;
  int32_t degrees = static_cast<int32_t>(std::lround(theta)) % 360;
  return degrees < 0 ? degrees + 360 : degrees;
}

// The stream `options` asks for: its index in the container, or an error.
Result<int> ChooseStream(AVFormatContext* fmt, const DemuxOptions& options, const std::string& name) {
  const AVMediaType type = options.kind == MediaKind::kVideo ? AVMEDIA_TYPE_VIDEO : AVMEDIA_TYPE_AUDIO;
  const char* kind = MediaKindName(options.kind);
  if (options.stream < 0) {
    const int best = av_find_best_stream(fmt, type, -1, -1, nullptr, 0);
    if (best >= 0 && (fmt->streams[best]->disposition & AV_DISPOSITION_ATTACHED_PIC) == 0) return best;
    return Status::InvalidArgument(name + ": no " + kind + " stream");
  }
  int seen = 0;
  for (unsigned i = 0; i < fmt->nb_streams; ++i) {
    const AVStream* st = fmt->streams[i];
    if (st->codecpar->codec_type != type || (st->disposition & AV_DISPOSITION_ATTACHED_PIC) != 0) continue;
    if (seen++ == options.stream) return static_cast<int>(i);
  }
  return Status::InvalidArgument(name + ": no " + kind + " stream " + std::to_string(options.stream) + " (it has " +
                                 std::to_string(seen) + ")");
}

Result<MediaParams> ParamsOf(const AVStream* st, MediaKind kind, const std::string& name) {
  const AVCodecParameters* par = st->codecpar;
  MediaParams m;
  m.kind = kind;
  m.codec = avcodec_get_name(par->codec_id);
  if (avcodec_find_decoder(par->codec_id) == nullptr) {
    return Status::NotSupported(name + ": unsupported codec '" + m.codec + "' (this FFmpeg has no decoder for it)");
  }
  m.time_base_num = st->time_base.num;
  m.time_base_den = st->time_base.den;
  if (kind == MediaKind::kVideo) {
    m.width = par->width;
    m.height = par->height;
    m.rotation = RotationOf(st);
    const char* pix = av_get_pix_fmt_name(static_cast<AVPixelFormat>(par->format));
    if (pix == nullptr) return Status::InvalidArgument(name + ": the video stream's pixel format is unknown");
    m.pixel_format = pix;
  } else {
    m.sample_rate = par->sample_rate;
    m.channels = par->ch_layout.nb_channels;
    m.channel_layout = par->ch_layout.order == AV_CHANNEL_ORDER_NATIVE ? par->ch_layout.u.mask : 0;
    const char* fmt = av_get_sample_fmt_name(static_cast<AVSampleFormat>(par->format));
    if (fmt == nullptr) return Status::InvalidArgument(name + ": the audio stream's sample format is unknown");
    m.sample_format = fmt;
  }
  return m;
}

// Reads every packet of stream `index` into the table and the packet area.
Status ReadPackets(AVFormatContext* fmt, int index, const std::string& name, std::vector<MediaPacket>* packets,
                   std::string* area) {
  PacketPtr packet(av_packet_alloc());
  if (packet == nullptr) return Status::Internal(name + ": out of memory");
  while (true) {
    const int got = av_read_frame(fmt, packet.get());
    if (got == AVERROR_EOF) return Status::OK();
    if (got < 0) return Status::InvalidArgument(name + ": truncated or corrupt: " + AvError(got));
    if (packet->stream_index == index) {
      if ((packet->flags & AV_PKT_FLAG_CORRUPT) != 0) {
        return Status::InvalidArgument(name + ": truncated or corrupt: packet " + std::to_string(packets->size()) +
                                       " is damaged");
      }
      MediaPacket p;
      p.pts = packet->pts;
      p.dts = packet->dts;
      p.duration = std::max<int64_t>(packet->duration, 0);
      p.offset = area->size();
      p.size = static_cast<uint32_t>(packet->size);
      p.keyframe = (packet->flags & AV_PKT_FLAG_KEY) != 0;
      size_t skip_size = 0;
      if (const uint8_t* skip = av_packet_get_side_data(packet.get(), AV_PKT_DATA_SKIP_SAMPLES, &skip_size);
          skip != nullptr && skip_size >= 8) {
        p.skip_start = AV_RL32(skip);
        p.skip_end = AV_RL32(skip + 4);
      }
      area->append(reinterpret_cast<const char*>(packet->data), static_cast<size_t>(packet->size));
      packets->push_back(p);
      if (packets->size() > format::kMaxMediaPackets) {
        return Status::InvalidArgument(name + ": more than " + std::to_string(format::kMaxMediaPackets) +
                                       " packets");
      }
    }
    av_packet_unref(packet.get());
  }
}

// Duration and start from the packets: the first presentation time to the
// end of the last; checked against the container's claim.
Status SetTiming(const AVFormatContext* fmt, const AVStream* st, const std::vector<MediaPacket>& packets,
                 const std::string& name, MediaParams* m) {
  int64_t start = INT64_MAX, end = INT64_MIN;
  for (const MediaPacket& p : packets) {
    const int64_t t = p.pts != kNoTimestamp ? p.pts : p.dts;
    if (t == kNoTimestamp) continue;
    start = std::min(start, t);
    end = std::max(end, t + p.duration);
  }
  if (start == INT64_MAX) return Status::InvalidArgument(name + ": no packet has a timestamp");
  // Audio priming samples the decoder drops (AV_PKT_DATA_SKIP_SAMPLES on the
  // first packet) are not presented: the stream starts after them.
  if (m->kind == MediaKind::kAudio && packets.front().skip_start > 0 && packets.front().pts == start) {
    start += av_rescale_q(packets.front().skip_start, AVRational{1, m->sample_rate},
                          AVRational{m->time_base_num, m->time_base_den});
  }
  m->start_pts = start;
  m->duration = end - start;
  const double seconds = static_cast<double>(m->duration) * m->time_base();
  double claimed = st->duration != AV_NOPTS_VALUE ? static_cast<double>(st->duration) * av_q2d(st->time_base) : -1;
  // The container's duration is its longest stream's: it speaks for this one only when it is alone.
  if (claimed < 0 && fmt->duration != AV_NOPTS_VALUE && fmt->nb_streams == 1) {
    claimed = static_cast<double>(fmt->duration) / AV_TIME_BASE;
  }
  // Packets covering well under the container's duration (by more than a
  // second and a tenth of it): the file was cut short.
  if (claimed > 0 && claimed - seconds > std::max(1.0, 0.1 * claimed)) {
    return Status::InvalidArgument(name + ": truncated: the packets cover " + std::to_string(seconds) +
                                   " s of the " + std::to_string(claimed) + " s the container declares");
  }
  return Status::OK();
}

Result<std::string> DemuxOpened(AVFormatContext* fmt, const DemuxOptions& options, const std::string& name) {
  const int found = avformat_find_stream_info(fmt, nullptr);
  if (found < 0) return Status::InvalidArgument(name + ": not a readable media file: " + AvError(found));
  UREC_ASSIGN_OR_RETURN(const int index, ChooseStream(fmt, options, name));
  // Containers that store only dts (avi) get the pts FFmpeg derives, as
  // PyAV and ffmpeg see them, so frames are chosen by presentation time.
  fmt->flags |= AVFMT_FLAG_GENPTS;
  const AVStream* st = fmt->streams[index];
  UREC_ASSIGN_OR_RETURN(MediaParams params, ParamsOf(st, options.kind, name));
  std::vector<MediaPacket> packets;
  std::string area;
  UREC_RETURN_IF_ERROR(ReadPackets(fmt, index, name, &packets, &area));
  if (packets.empty()) return Status::InvalidArgument(name + ": truncated or corrupt: the stream has no packets");
  UREC_RETURN_IF_ERROR(SetTiming(fmt, st, packets, name, &params));
  const std::string_view extradata(reinterpret_cast<const char*>(st->codecpar->extradata),
                                   static_cast<size_t>(std::max(st->codecpar->extradata_size, 0)));
  UREC_ASSIGN_OR_RETURN(std::string value, EncodeMediaValue(params, packets, extradata, area, name));
  // The first packets must decode: a stream FFmpeg can demux but not decode is refused here, not in training.
  MediaValueView view;
  UREC_RETURN_IF_ERROR(ParseMediaValue(value, name, &view));
  UREC_RETURN_IF_ERROR(CheckDecodes(view, name));
  return value;
}

}  // namespace

Result<std::string> Demux(std::string_view container, const DemuxOptions& options) {
  const std::string name = options.name.empty() ? std::string("media") : options.name;
  MemoryReader reader{container, 0};
  UREC_ASSIGN_OR_RETURN(IoPtr io, OpenReader(&reader));
  AVFormatContext* raw = avformat_alloc_context();
  if (raw == nullptr) return Status::Internal(name + ": out of memory");
  raw->pb = io.get();
  raw->flags |= AVFMT_FLAG_CUSTOM_IO;
  const int opened = avformat_open_input(&raw, nullptr, nullptr, nullptr);  // frees `raw` on failure
  if (opened < 0) return Status::InvalidArgument(name + ": not a media file FFmpeg reads: " + AvError(opened));
  InputFormatPtr fmt(raw);
  return DemuxOpened(fmt.get(), options, name);
}

Result<std::string> DemuxFile(const std::string& path, const DemuxOptions& options) {
  DemuxOptions named = options;
  if (named.name.empty()) named.name = path;
  std::string bytes;
  UREC_RETURN_IF_ERROR(io::ReadFile(path, format::kMaxBlobBytes, &bytes));
  return Demux(bytes, named);
}

}  // namespace unirecord::media
