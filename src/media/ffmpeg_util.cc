#include "media/ffmpeg_util.h"

#include <cstring>

extern "C" {
#include <libavutil/channel_layout.h>
#include <libavutil/intreadwrite.h>
#include <libavutil/pixdesc.h>
}

namespace unirecord::media {

namespace {

constexpr int kIoBufferBytes = 1 << 16;

int ReadPacket(void* opaque, uint8_t* buf, int size) {
  auto* r = static_cast<MemoryReader*>(opaque);
  const int64_t left = static_cast<int64_t>(r->bytes.size()) - r->pos;
  if (left <= 0) return AVERROR_EOF;
  const int n = static_cast<int>(std::min<int64_t>(left, size));
  std::memcpy(buf, r->bytes.data() + r->pos, static_cast<size_t>(n));
  r->pos += n;
  return n;
}

// Resolves a seek of `whence` from `pos` in a stream of `size` bytes; -1 when out of range.
int64_t SeekTarget(int64_t pos, int64_t size, int64_t offset, int whence) {
  switch (whence & ~AVSEEK_FORCE) {
    case AVSEEK_SIZE: return size;
    case SEEK_SET: return offset >= 0 ? offset : -1;
    case SEEK_CUR: return pos + offset >= 0 ? pos + offset : -1;
    case SEEK_END: return size + offset >= 0 ? size + offset : -1;
    default: return -1;
  }
}

int64_t SeekReader(void* opaque, int64_t offset, int whence) {
  auto* r = static_cast<MemoryReader*>(opaque);
  const int64_t target = SeekTarget(r->pos, static_cast<int64_t>(r->bytes.size()), offset, whence);
  if (target < 0) return AVERROR(EINVAL);
  if ((whence & ~AVSEEK_FORCE) != AVSEEK_SIZE) r->pos = target;
  return target;
}

int WritePacket(void* opaque, uint8_t* buf, int size) {
  auto* w = static_cast<MemoryWriter*>(opaque);
  const size_t end = static_cast<size_t>(w->pos) + static_cast<size_t>(size);
  if (w->bytes.size() < end) w->bytes.resize(end);
  std::memcpy(w->bytes.data() + w->pos, buf, static_cast<size_t>(size));
  w->pos = static_cast<int64_t>(end);
  return size;
}

int64_t SeekWriter(void* opaque, int64_t offset, int whence) {
  auto* w = static_cast<MemoryWriter*>(opaque);
  const int64_t target = SeekTarget(w->pos, static_cast<int64_t>(w->bytes.size()), offset, whence);
  if (target < 0) return AVERROR(EINVAL);
  if ((whence & ~AVSEEK_FORCE) != AVSEEK_SIZE) w->pos = target;
  return target;
}

Result<IoPtr> OpenIo(void* opaque, bool write) {
  auto* buffer = static_cast<unsigned char*>(av_malloc(kIoBufferBytes));
  if (buffer == nullptr) return Status::Internal("media: out of memory for an I/O buffer");
  AVIOContext* io = write ? avio_alloc_context(buffer, kIoBufferBytes, 1, opaque, nullptr, WritePacket, SeekWriter)
                          : avio_alloc_context(buffer, kIoBufferBytes, 0, opaque, ReadPacket, nullptr, SeekReader);
  if (io == nullptr) {
    av_free(buffer);
    return Status::Internal("media: out of memory for an I/O context");
  }
  return IoPtr(io);
}

}  // namespace

std::string AvError(int code) {
  char text[AV_ERROR_MAX_STRING_SIZE] = {};
  av_strerror(code, text, sizeof text);
  return text;
}

Result<IoPtr> OpenReader(MemoryReader* reader) { return OpenIo(reader, false); }
Result<IoPtr> OpenWriter(MemoryWriter* writer) { return OpenIo(writer, true); }

Result<CodecContextPtr> OpenDecoder(const MediaValueView& value, int threads, std::string_view what) {
  const MediaParams& m = value.params;
  const AVCodecDescriptor* descriptor = avcodec_descriptor_get_by_name(m.codec.c_str());
  const AVCodec* codec = descriptor != nullptr ? avcodec_find_decoder(descriptor->id) : nullptr;
  if (codec == nullptr) {
    return Status::NotSupported(std::string(what) + ": unsupported codec '" + MessageText(m.codec) +
                                "' (this FFmpeg has no decoder for it)");
  }
  CodecContextPtr ctx(avcodec_alloc_context3(codec));
  if (ctx == nullptr) return Status::Internal(std::string(what) + ": out of memory for a decoder");
  ctx->pkt_timebase = AVRational{m.time_base_num, m.time_base_den};
  if (m.kind == MediaKind::kVideo) {
    ctx->width = m.width;
    ctx->height = m.height;
    ctx->pix_fmt = av_get_pix_fmt(m.pixel_format.c_str());
  } else {
    ctx->sample_rate = m.sample_rate;
    ctx->sample_fmt = av_get_sample_fmt(m.sample_format.c_str());
    if (m.channel_layout != 0) {
      av_channel_layout_from_mask(&ctx->ch_layout, m.channel_layout);
    }
    if (ctx->ch_layout.nb_channels != m.channels) {
      av_channel_layout_uninit(&ctx->ch_layout);
      av_channel_layout_default(&ctx->ch_layout, m.channels);
    }
  }
  if (!value.extradata.empty()) {
    ctx->extradata = static_cast<uint8_t*>(av_mallocz(value.extradata.size() + AV_INPUT_BUFFER_PADDING_SIZE));
    if (ctx->extradata == nullptr) return Status::Internal(std::string(what) + ": out of memory");
    std::memcpy(ctx->extradata, value.extradata.data(), value.extradata.size());
    ctx->extradata_size = static_cast<int>(value.extradata.size());
  }
  ctx->thread_count = threads;
  const int opened = avcodec_open2(ctx.get(), codec, nullptr);
  if (opened < 0) {
    return Status::InvalidArgument(std::string(what) + ": cannot open the " + MessageText(m.codec) +
                                   " decoder: " + AvError(opened));
  }
  return ctx;
}

Status FillPacket(const MediaValueView& value, size_t i, AVPacket* packet, std::string_view what) {
  av_packet_unref(packet);
  UREC_RETURN_IF_ERROR(value.CheckPacket(i, what));
  const MediaPacket& p = value.packets[i];
  if (av_new_packet(packet, static_cast<int>(p.size)) < 0) return Status::Internal("media: out of memory");
  if (p.size > 0) std::memcpy(packet->data, value.packet_area.data() + p.offset, p.size);
  packet->pts = p.pts;
  packet->dts = p.dts;
  packet->duration = p.duration;
  packet->flags = p.keyframe ? AV_PKT_FLAG_KEY : 0;
  if (p.skip_start != 0 || p.skip_end != 0) {
    uint8_t* side = av_packet_new_side_data(packet, AV_PKT_DATA_SKIP_SAMPLES, 10);
    if (side == nullptr) return Status::Internal("media: out of memory");
    AV_WL32(side, p.skip_start);
    AV_WL32(side + 4, p.skip_end);
  }
  return Status::OK();
}

Status SendPacket(AVCodecContext* ctx, const MediaValueView& value, size_t i, AVPacket* packet,
                  std::string_view what) {
  int sent;
  if (i < value.packets.size()) {
    UREC_RETURN_IF_ERROR(FillPacket(value, i, packet, what));
    sent = avcodec_send_packet(ctx, packet);
  } else {
    sent = avcodec_send_packet(ctx, nullptr);
  }
  if (sent < 0 && sent != AVERROR_EOF) {
    return Status::Corruption(std::string(what) + ": the decoder refuses packet " + std::to_string(i) + ": " +
                              AvError(sent));
  }
  return Status::OK();
}

Status CheckDecodes(const MediaValueView& value, std::string_view what) {
  UREC_ASSIGN_OR_RETURN(CodecContextPtr ctx, OpenDecoder(value, 1, what));
  PacketPtr packet(av_packet_alloc());
  FramePtr frame(av_frame_alloc());
  if (packet == nullptr || frame == nullptr) return Status::Internal(std::string(what) + ": out of memory");
  for (size_t i = 0; i <= value.packets.size(); ++i) {
    const Status sent = SendPacket(ctx.get(), value, i, packet.get(), what);
    if (!sent.ok()) return Status::InvalidArgument(sent.message() + " (a corrupt stream)");
    const int got = avcodec_receive_frame(ctx.get(), frame.get());
    if (got == 0) return Status::OK();
    if (got != AVERROR(EAGAIN) && got != AVERROR_EOF) {
      return Status::InvalidArgument(std::string(what) + ": corrupt stream: decoding failed at packet " +
                                     std::to_string(i) + ": " + AvError(got));
    }
  }
  return Status::InvalidArgument(std::string(what) + ": corrupt stream: no frame decodes from its packets");
}

}  // namespace unirecord::media
