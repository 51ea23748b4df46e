// FFmpeg resources as RAII handles, its error codes as text, and the
// in-memory I/O the media layer reads containers from and writes them to.
#ifndef UNIRECORD_MEDIA_FFMPEG_UTIL_H_
#define UNIRECORD_MEDIA_FFMPEG_UTIL_H_

#include <memory>
#include <string>
#include <string_view>

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libswresample/swresample.h>
#include <libswscale/swscale.h>
}

#include "unirecord/media_value.h"
#include "unirecord/status.h"

namespace unirecord::media {

struct InputFormatFree {
  void operator()(AVFormatContext* c) const { avformat_close_input(&c); }
};
struct OutputFormatFree {
  void operator()(AVFormatContext* c) const { avformat_free_context(c); }
};
struct CodecContextFree {
  void operator()(AVCodecContext* c) const { avcodec_free_context(&c); }
};
struct FrameFree {
  void operator()(AVFrame* f) const { av_frame_free(&f); }
};
struct PacketFree {
  void operator()(AVPacket* p) const { av_packet_free(&p); }
};
struct SwsFree {
  void operator()(SwsContext* s) const { sws_freeContext(s); }
};
struct SwrFree {
  void operator()(SwrContext* s) const { swr_free(&s); }
};
// An AVIOContext and the buffer FFmpeg may have replaced.
struct IoFree {
  void operator()(AVIOContext* io) const {
    if (io != nullptr) av_freep(&io->buffer);
    avio_context_free(&io);
  }
};
using InputFormatPtr = std::unique_ptr<AVFormatContext, InputFormatFree>;
using OutputFormatPtr = std::unique_ptr<AVFormatContext, OutputFormatFree>;
using CodecContextPtr = std::unique_ptr<AVCodecContext, CodecContextFree>;
using FramePtr = std::unique_ptr<AVFrame, FrameFree>;
using PacketPtr = std::unique_ptr<AVPacket, PacketFree>;
using SwsPtr = std::unique_ptr<SwsContext, SwsFree>;
using SwrPtr = std::unique_ptr<SwrContext, SwrFree>;
using IoPtr = std::unique_ptr<AVIOContext, IoFree>;

// "Invalid data found when processing input" for an FFmpeg error code.
std::string AvError(int code);

// Reads `bytes` (which must outlive it) as a seekable file.
struct MemoryReader {
  std::string_view bytes;
  int64_t pos = 0;
};
// Writes into `bytes`, seekable (the mp4 muxer seeks back to finish).
struct MemoryWriter {
  std::string bytes;
  int64_t pos = 0;
};
Result<IoPtr> OpenReader(MemoryReader* reader);
Result<IoPtr> OpenWriter(MemoryWriter* writer);

// A codec context for `value`'s stream, opened with its parameters and
// extradata: NotSupported naming `what` when this FFmpeg has no decoder.
Result<CodecContextPtr> OpenDecoder(const MediaValueView& value, int threads, std::string_view what);

// An AVPacket holding packet `i` of `value` (copied, padded as decoders
// want), with its timestamps, key flag and skip-samples side data; checked
// against its checksum first (Corruption naming `what`).
Status FillPacket(const MediaValueView& value, size_t i, AVPacket* packet, std::string_view what);

// Sends packet `i` of `value` to the decoder (i == packets.size(): the
// drain that asks for the frames it still holds). Corruption naming `what`
// when the decoder refuses it.
Status SendPacket(AVCodecContext* ctx, const MediaValueView& value, size_t i, AVPacket* packet,
                  std::string_view what);

// Decodes `value` from its first packet until a first frame comes out:
// InvalidArgument naming `what` when the decoder refuses the packets (a
// corrupt stream) or none comes (NotSupported when there is no decoder).
Status CheckDecodes(const MediaValueView& value, std::string_view what);

}  // namespace unirecord::media

#endif  // UNIRECORD_MEDIA_FFMPEG_UTIL_H_
