// Remux: a media value's packets, byte for byte, in a playable container.
#include <cstring>

#include "media/ffmpeg_util.h"
#include "unirecord/media.h"

extern "C" {
#include <libavutil/channel_layout.h>
#include <libavutil/display.h>
#include <libavutil/pixdesc.h>
}

namespace unirecord::media {

namespace {

struct Container {
  const char* format;     // FFmpeg's muxer name
  const char* extension;
};

Container ContainerFor(const std::string& codec) {
  for (const char* c : {"h264", "hevc", "av1", "mpeg4", "aac", "mp3"}) {
    if (codec == c) return {"mp4", ".mp4"};
  }
  for (const char* c : {"vp8", "vp9", "opus", "vorbis"}) {
    if (codec == c) return {"webm", ".webm"};
  }
  if (codec == "flac") return {"flac", ".flac"};
  if (codec.rfind("pcm_", 0) == 0) return {"wav", ".wav"};
  return {"matroska", ".mkv"};
}

// The output stream's parameters from the value's.
Status SetParameters(const MediaValueView& value, AVStream* st, const std::string& where) {
  const MediaParams& m = value.params;
  AVCodecParameters* par = st->codecpar;
  const AVCodecDescriptor* descriptor = avcodec_descriptor_get_by_name(m.codec.c_str());
  if (descriptor == nullptr) return Status::NotSupported(where + ": unknown codec '" + MessageText(m.codec) + "'");
  par->codec_id = descriptor->id;
  par->codec_type = m.kind == MediaKind::kVideo ? AVMEDIA_TYPE_VIDEO : AVMEDIA_TYPE_AUDIO;
  if (m.kind == MediaKind::kVideo) {
    par->width = m.width;
    par->height = m.height;
    par->format = av_get_pix_fmt(m.pixel_format.c_str());
    if (m.rotation != 0) {
      auto* matrix = reinterpret_cast<int32_t*>(av_stream_new_side_data(st, AV_PKT_DATA_DISPLAYMATRIX, 9 * 4));
      if (matrix == nullptr) return Status::Internal(where + ": out of memory");
      av_display_rotation_set(matrix, -m.rotation);
    }
  } else {
    par->sample_rate = m.sample_rate;
    par->format = av_get_sample_fmt(m.sample_format.c_str());
    if (m.channel_layout != 0) av_channel_layout_from_mask(&par->ch_layout, m.channel_layout);
    if (par->ch_layout.nb_channels != m.channels) {
      av_channel_layout_uninit(&par->ch_layout);
      av_channel_layout_default(&par->ch_layout, m.channels);
    }
  }
  if (!value.extradata.empty()) {
    par->extradata = static_cast<uint8_t*>(av_mallocz(value.extradata.size() + AV_INPUT_BUFFER_PADDING_SIZE));
    if (par->extradata == nullptr) return Status::Internal(where + ": out of memory");
    std::memcpy(par->extradata, value.extradata.data(), value.extradata.size());
    par->extradata_size = static_cast<int>(value.extradata.size());
  }
  st->time_base = AVRational{m.time_base_num, m.time_base_den};
  return Status::OK();
}

}  // namespace

Result<RemuxedFile> Remux(const MediaValueView& value, std::string_view what) {
  const std::string where(what);
  const Container container = ContainerFor(value.params.codec);
  AVFormatContext* raw = nullptr;
  const int made = avformat_alloc_output_context2(&raw, nullptr, container.format, nullptr);
  if (made < 0) return Status::NotSupported(where + ": no " + container.format + " muxer: " + AvError(made));
  OutputFormatPtr fmt(raw);
  MemoryWriter writer;
  UREC_ASSIGN_OR_RETURN(IoPtr io, OpenWriter(&writer));
  fmt->pb = io.get();
  fmt->flags |= AVFMT_FLAG_CUSTOM_IO;
  AVStream* st = avformat_new_stream(fmt.get(), nullptr);
  if (st == nullptr) return Status::Internal(where + ": out of memory");
  UREC_RETURN_IF_ERROR(SetParameters(value, st, where));
  const AVRational source{value.params.time_base_num, value.params.time_base_den};
  int rc = avformat_write_header(fmt.get(), nullptr);
  if (rc < 0) {
    return Status::NotSupported(where + ": cannot write " + value.params.codec + " into " + container.format + ": " +
                                AvError(rc));
  }
  PacketPtr packet(av_packet_alloc());
  if (packet == nullptr) return Status::Internal(where + ": out of memory");
  for (size_t i = 0; i < value.packets.size(); ++i) {
    UREC_RETURN_IF_ERROR(FillPacket(value, i, packet.get(), where));
    packet->stream_index = 0;
    av_packet_rescale_ts(packet.get(), source, st->time_base);
    rc = av_write_frame(fmt.get(), packet.get());
    if (rc < 0) return Status::InvalidArgument(where + ": cannot mux packet " + std::to_string(i) + ": " + AvError(rc));
  }
  rc = av_write_trailer(fmt.get());
  if (rc < 0) return Status::InvalidArgument(where + ": cannot finish the file: " + AvError(rc));
  avio_flush(io.get());
  return RemuxedFile{std::move(writer.bytes), container.extension};
}

}  // namespace unirecord::media
