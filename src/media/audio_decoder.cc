// AudioDecoder: a window of seconds, decoded from the packet holding its
// start (backed up by a pre-roll), resampled with libswresample.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "media/ffmpeg_util.h"
#include "unirecord/media.h"

extern "C" {
#include <libavutil/channel_layout.h>
}

namespace unirecord::media {

namespace {

// Decoding starts this long before the window (and at least two packets):
// what MDCT codecs need to rebuild their overlap (AAC, MP3: one or two
// frames) and Opus's recommended 80 ms pre-roll.
constexpr double kPreRollSeconds = 0.08;
constexpr size_t kPreRollPackets = 2;

struct ChannelLayout {
  AVChannelLayout layout{};
  ~ChannelLayout() { av_channel_layout_uninit(&layout); }
};

}  // namespace

struct AudioDecoder::Impl {
  CodecContextPtr ctx;
  std::string codec;
  std::string extradata;
  PacketPtr packet{av_packet_alloc()};
  FramePtr frame{av_frame_alloc()};
  int64_t opens = 0;

  Status Ready(const MediaValueView& value, std::string_view what) {
    if (ctx != nullptr && codec == value.params.codec && extradata == value.extradata) {
      avcodec_flush_buffers(ctx.get());
      return Status::OK();
    }
    ctx.reset();
    UREC_ASSIGN_OR_RETURN(ctx, OpenDecoder(value, 1, what));
    codec = value.params.codec;
    extradata.assign(value.extradata);
    ++opens;
    return Status::OK();
  }
};

AudioDecoder::AudioDecoder() : impl_(std::make_unique<Impl>()) {}
AudioDecoder::~AudioDecoder() = default;
AudioDecoder::AudioDecoder(AudioDecoder&&) noexcept = default;
AudioDecoder& AudioDecoder::operator=(AudioDecoder&&) noexcept = default;
int64_t AudioDecoder::codec_opens() const { return impl_->opens; }

namespace {

// The first packet to decode for a window starting at stream time `start`
// (time-base units): the one holding it, backed up by the pre-roll.
size_t FirstPacket(const MediaValueView& value, int64_t start) {
  size_t holding = 0;
  for (size_t i = 0; i < value.packets.size(); ++i) {
    const int64_t t = value.packets[i].pts != kNoTimestamp ? value.packets[i].pts : value.packets[i].dts;
    if (t != kNoTimestamp && t <= start) holding = i;
  }
  const int64_t preroll = static_cast<int64_t>(kPreRollSeconds / value.params.time_base());
  size_t first = holding >= kPreRollPackets ? holding - kPreRollPackets : 0;
  while (first > 0 && value.packets[first].pts != kNoTimestamp &&
         value.packets[holding].pts - value.packets[first].pts < preroll) {
    --first;
  }
  return first;
}

}  // namespace

Result<AudioSamples> AudioDecoder::Window(const MediaValueView& value, double start_s, double seconds,
                                          const AudioWindowOptions& options, std::string_view what) {
  const std::string where(what);
  const MediaParams& m = value.params;
  if (m.kind != MediaKind::kAudio) return Status::InvalidArgument(where + ": not an audio stream");
  if (!(start_s >= 0) || !(seconds >= 0) || seconds > 86400.0) {
    return Status::InvalidArgument(where + ": window start " + std::to_string(start_s) + " s, length " +
                                   std::to_string(seconds) + " s: both must be >= 0 (and the length a day at most)");
  }
  if (options.rate < 0 || options.rate > 768000 || options.channels < 0 || options.channels > 64) {
    return Status::InvalidArgument(where + ": output rate or channels out of range");
  }
  AudioSamples out;
  out.rate = options.rate > 0 ? options.rate : m.sample_rate;
  out.channels = options.channels > 0 ? options.channels : m.channels;
  out.type = options.type;
  out.frames = std::llround(seconds * out.rate);
  const size_t width = options.type == SampleType::kFloat32 ? 4 : 2;
  out.data.assign(static_cast<size_t>(out.frames) * out.channels * width, 0);
  UREC_RETURN_IF_ERROR(impl_->Ready(value, what));
  AVCodecContext* ctx = impl_->ctx.get();

  // Output sample j of the resampled stream is at time t0 + j / rate, t0
  // the first decoded frame's time; the window starts at sample `offset`.
  const int64_t start_tb = m.start_pts + static_cast<int64_t>(std::floor(start_s / m.time_base()));
  const size_t first = FirstPacket(value, start_tb);
  ChannelLayout out_layout;
  av_channel_layout_default(&out_layout.layout, out.channels);
  SwrPtr swr;
  int64_t offset = -1, produced = 0;
  std::vector<std::vector<uint8_t>> planes(static_cast<size_t>(out.channels));
  const AVSampleFormat out_format = options.type == SampleType::kFloat32 ? AV_SAMPLE_FMT_FLTP : AV_SAMPLE_FMT_S16P;
  auto take = [&](const uint8_t** in, int in_count) -> Status {
    const int room = swr_get_out_samples(swr.get(), in_count);
    if (room < 0) return Status::Internal(where + ": resampler: " + AvError(room));
    std::vector<uint8_t*> dst(planes.size());
    for (size_t c = 0; c < planes.size(); ++c) {
      planes[c].resize(static_cast<size_t>(produced + room) * width);
      dst[c] = planes[c].data() + produced * width;
    }
    const int n = swr_convert(swr.get(), dst.data(), room, in, in_count);
    if (n < 0) return Status::Internal(where + ": resampler: " + AvError(n));
    produced += n;
    return Status::OK();
  };
  for (size_t i = first; i <= value.packets.size(); ++i) {
    if (offset >= 0 && produced >= offset + out.frames) break;
    int sent;
    if (i < value.packets.size()) {
      UREC_RETURN_IF_ERROR(FillPacket(value, i, impl_->packet.get()));
      sent = avcodec_send_packet(ctx, impl_->packet.get());
    } else {
      sent = avcodec_send_packet(ctx, nullptr);
    }
    if (sent < 0 && sent != AVERROR_EOF) {
      return Status::Corruption(where + ": the decoder refuses packet " + std::to_string(i) + ": " + AvError(sent));
    }
    while (true) {
      const int got = avcodec_receive_frame(ctx, impl_->frame.get());
      if (got == AVERROR(EAGAIN) || got == AVERROR_EOF) break;
      if (got < 0) return Status::Corruption(where + ": decoding failed: " + AvError(got));
      AVFrame* f = impl_->frame.get();
      if (swr == nullptr) {
        if (f->ch_layout.nb_channels == out.channels) {  // the same channels: no remix, whatever their names
          av_channel_layout_uninit(&out_layout.layout);
          av_channel_layout_copy(&out_layout.layout, &f->ch_layout);
        }
        SwrContext* raw = nullptr;
        int made = swr_alloc_set_opts2(&raw, &out_layout.layout, out_format, out.rate, &f->ch_layout,
                                       static_cast<AVSampleFormat>(f->format), f->sample_rate, 0, nullptr);
        swr.reset(raw);
        if (made >= 0) made = swr_init(swr.get());
        if (made < 0) return Status::Internal(where + ": cannot set up the resampler: " + AvError(made));
        const int64_t t0 = f->pts != AV_NOPTS_VALUE ? f->pts : start_tb;
        const double t0_s = static_cast<double>(t0 - m.start_pts) * m.time_base();
        offset = std::llround((start_s - t0_s) * out.rate);
        offset = std::max<int64_t>(offset, 0);
      }
      UREC_RETURN_IF_ERROR(take(const_cast<const uint8_t**>(f->extended_data), f->nb_samples));
    }
  }
  if (swr != nullptr && (produced < offset + out.frames)) UREC_RETURN_IF_ERROR(take(nullptr, 0));  // the tail
  out.valid_frames = std::clamp<int64_t>(produced - std::max<int64_t>(offset, 0), 0, out.frames);
  for (size_t c = 0; c < planes.size(); ++c) {
    if (out.valid_frames > 0) {
      std::memcpy(out.data.data() + c * static_cast<size_t>(out.frames) * width,
                  planes[c].data() + static_cast<size_t>(offset) * width,
                  static_cast<size_t>(out.valid_frames) * width);
    }
  }
  return out;
}

}  // namespace unirecord::media
