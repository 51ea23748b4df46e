// AudioDecoder: a window of seconds, decoded from the packet holding its
// start (backed up by a pre-roll), resampled with libswresample.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "format/format_constants.h"
#include "media/ffmpeg_util.h"
#include "unirecord/media.h"

extern "C" {
#include <libavutil/channel_layout.h>
}

namespace unirecord::media {

namespace {

// Decoding starts this long before the window (and at least two packets
// before it): what MDCT codecs need to rebuild their overlap (AAC, MP3: one
// or two frames, after which the samples are exactly a whole-stream
// decode's) and Opus's recommended 80 ms pre-roll. Opus's decoder carries
// state further (its energy prediction): after 80 ms a window differs from
// a whole-stream decode by up to 3e-2, after 0.5 s by under 1e-4.
constexpr double kPreRollSeconds = 0.08;
constexpr double kOpusPreRollSeconds = 0.5;
constexpr size_t kPreRollPackets = 2;

struct ChannelLayout {
  AVChannelLayout layout{};
  ~ChannelLayout() { av_channel_layout_uninit(&layout); }
};

}  // namespace

struct AudioDecoder::Impl {
  CodecContextPtr ctx;
  PacketPtr packet{av_packet_alloc()};
  FramePtr frame{av_frame_alloc()};
  int64_t opens = 0;

  // A decoder opened afresh for each window: FFmpeg's AAC decoder keeps
  // state across avcodec_flush_buffers (a second decode of the same packets
  // differs by up to 3e-3), and a window must not depend on the one before.
  // An open costs far less than the window's decode (docs/video-audio.md).
  Status Ready(const MediaValueView& value, std::string_view what) {
    ctx.reset();
    UREC_ASSIGN_OR_RETURN(ctx, OpenDecoder(value, 1, what));
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
  const double seconds = value.params.codec == "opus" ? kOpusPreRollSeconds : kPreRollSeconds;
  const int64_t preroll = static_cast<int64_t>(seconds / value.params.time_base());
  size_t first = holding >= kPreRollPackets ? holding - kPreRollPackets : 0;
  while (first > 0 && value.packets[first].pts != kNoTimestamp &&
         value.packets[holding].pts - value.packets[first].pts < preroll) {
    --first;
  }
  return first;
}

// Decoded frames resampled onto the output grid of a decode from the
// stream's start: output sample j is input sample s0 + j x in / out, with s0
// a multiple of in / gcd(in, out), so the resampler computes the same
// samples whatever packet decoding started at (its filter is short next to
// the pre-roll).
class Resampled {
 public:
  Resampled(const AudioSamples& out, AVChannelLayout* layout, std::string where)
      : out_(out), layout_(layout), where_(std::move(where)), planes_(static_cast<size_t>(out.channels)) {}

  int64_t produced() const { return produced_; }
  bool started() const { return swr_ != nullptr; }
  // The output sample of stream time `seconds` (from the stream's start).
  int64_t OutputIndex(double seconds) const {
    return std::llround(seconds * out_.rate) - s0_ * out_.rate / in_rate_;
  }
  const uint8_t* plane(size_t c, int64_t sample) const { return planes_[c].data() + sample * Width(); }

  // Feeds frame `f`, whose first sample is input sample `first` of the stream.
  Status Feed(const AVFrame* f, int64_t first) {
    if (swr_ == nullptr) UREC_RETURN_IF_ERROR(Start(f, first));
    const int64_t drop = std::clamp<int64_t>(s0_ - first, 0, f->nb_samples);
    const AVSampleFormat format = static_cast<AVSampleFormat>(f->format);
    const int planar = av_sample_fmt_is_planar(format);
    const size_t step = static_cast<size_t>(av_get_bytes_per_sample(format)) *
                        (planar ? 1 : static_cast<size_t>(f->ch_layout.nb_channels));
    std::vector<const uint8_t*> in(static_cast<size_t>(planar ? f->ch_layout.nb_channels : 1));
    for (size_t c = 0; c < in.size(); ++c) in[c] = f->extended_data[c] + static_cast<size_t>(drop) * step;
    return Convert(in.data(), static_cast<int>(f->nb_samples - drop));
  }
  Status Flush() { return swr_ == nullptr ? Status::OK() : Convert(nullptr, 0); }

 private:
  size_t Width() const { return out_.type == SampleType::kFloat32 ? 4 : 2; }

  Status Start(const AVFrame* f, int64_t first) {
    in_rate_ = f->sample_rate;
    const int64_t grid = in_rate_ / std::gcd<int64_t>(in_rate_, out_.rate);
    s0_ = (first + grid - 1) / grid * grid;
    if (first < 0) s0_ = first / grid * grid;
    if (f->ch_layout.nb_channels == out_.channels) {  // the same channels: no remix, whatever their names
      av_channel_layout_uninit(layout_);
      av_channel_layout_copy(layout_, &f->ch_layout);
    }
    const AVSampleFormat out_format = out_.type == SampleType::kFloat32 ? AV_SAMPLE_FMT_FLTP : AV_SAMPLE_FMT_S16P;
    SwrContext* raw = nullptr;
    int made = swr_alloc_set_opts2(&raw, layout_, out_format, out_.rate, const_cast<AVChannelLayout*>(&f->ch_layout),  // FFmpeg 5.1 takes them non-const
                                   static_cast<AVSampleFormat>(f->format), f->sample_rate, 0, nullptr);
    swr_.reset(raw);
    if (made >= 0) made = swr_init(swr_.get());
    if (made < 0) return Status::Internal(where_ + ": cannot set up the resampler: " + AvError(made));
    return Status::OK();
  }

  Status Convert(const uint8_t** in, int count) {
    const int room = swr_get_out_samples(swr_.get(), count);
    if (room < 0) return Status::Internal(where_ + ": resampler: " + AvError(room));
    std::vector<uint8_t*> dst(planes_.size());
    for (size_t c = 0; c < planes_.size(); ++c) {
      planes_[c].resize(static_cast<size_t>(produced_ + room) * Width());
      dst[c] = planes_[c].data() + produced_ * Width();
    }
    const int n = swr_convert(swr_.get(), dst.data(), room, in, count);
    if (n < 0) return Status::Internal(where_ + ": resampler: " + AvError(n));
    produced_ += n;
    return Status::OK();
  }

  const AudioSamples& out_;
  AVChannelLayout* layout_;
  std::string where_;
  SwrPtr swr_;
  int64_t in_rate_ = 1;
  int64_t s0_ = 0;
  int64_t produced_ = 0;
  std::vector<std::vector<uint8_t>> planes_;
};

}  // namespace

Result<AudioSamples> AudioDecoder::Window(const MediaValueView& value, double start_s, double seconds,
                                          const AudioWindowOptions& options, std::string_view what) {
  const std::string where(what);
  const MediaParams& m = value.params;
  if (m.kind != MediaKind::kAudio) return Status::InvalidArgument(where + ": not an audio stream");
  if (!(start_s >= 0 && start_s <= format::kMaxMediaSeconds) || !(seconds >= 0) ||
      seconds > format::kMaxMediaSeconds) {
    return Status::InvalidArgument(where + ": window start " + std::to_string(start_s) + " s, length " +
                                   std::to_string(seconds) + " s: both must be >= 0 and at most the "
                                   "longest stream's length");
  }
  if (options.rate < 0 || options.rate > format::kMaxMediaSampleRate || options.channels < 0 ||
      options.channels > format::kMaxMediaChannels) {
    return Status::InvalidArgument(where + ": output rate " + std::to_string(options.rate) + " or channels " +
                                   std::to_string(options.channels) + " outside 0.." +
                                   std::to_string(format::kMaxMediaSampleRate) + " and 0.." +
                                   std::to_string(format::kMaxMediaChannels));
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

  const int64_t start_tb = m.start_pts + static_cast<int64_t>(std::floor(start_s / m.time_base()));
  ChannelLayout layout;
  av_channel_layout_default(&layout.layout, out.channels);
  Resampled resampled(out, &layout.layout, where);
  auto enough = [&] { return resampled.started() && resampled.produced() >= resampled.OutputIndex(start_s) + out.frames; };
  for (size_t i = FirstPacket(value, start_tb); i <= value.packets.size() && !enough(); ++i) {
    UREC_RETURN_IF_ERROR(SendPacket(ctx, value, i, impl_->packet.get(), what));
    while (true) {
      const int got = avcodec_receive_frame(ctx, impl_->frame.get());
      if (got == AVERROR(EAGAIN) || got == AVERROR_EOF) break;
      if (got < 0) return Status::Corruption(where + ": decoding failed: " + AvError(got));
      const AVFrame* f = impl_->frame.get();
      const int64_t pts = f->pts != AV_NOPTS_VALUE ? f->pts : start_tb;  // the frame's first sample, as the stream's sample
      // In doubles and checked: a decoder's own timestamps are not the table's, which parsing bounded.
      const double at = (static_cast<double>(pts) - static_cast<double>(m.start_pts)) * m.time_base();
      if (!(std::fabs(at) <= format::kMaxMediaSeconds) || f->sample_rate < 1 ||
          f->sample_rate > format::kMaxMediaSampleRate) {
        return Status::Corruption(where + ": the decoder gave a frame at " + std::to_string(at) + " s, " +
                                  std::to_string(f->sample_rate) + " Hz: outside the stream");
      }
      const int64_t first = std::llround(at * f->sample_rate);
      UREC_RETURN_IF_ERROR(resampled.Feed(f, first));
    }
  }
  if (!enough()) UREC_RETURN_IF_ERROR(resampled.Flush());  // the resampler's tail
  const int64_t offset = resampled.started() ? resampled.OutputIndex(start_s) : 0;
  out.valid_frames = std::clamp<int64_t>(resampled.produced() - std::max<int64_t>(offset, 0), 0, out.frames);
  const int64_t lead = std::max<int64_t>(-offset, 0);  // output before the first decoded sample: zeros
  for (size_t c = 0; c < static_cast<size_t>(out.channels) && out.valid_frames > lead; ++c) {
    std::memcpy(out.data.data() + (c * static_cast<size_t>(out.frames) + static_cast<size_t>(lead)) * width,
                resampled.plane(c, std::max<int64_t>(offset, 0)),
                static_cast<size_t>(out.valid_frames - lead) * width);
  }
  return out;
}

}  // namespace unirecord::media
