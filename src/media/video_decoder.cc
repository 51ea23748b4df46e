// VideoDecoder: the frames asked for, decoded from the keyframe before the
// first one, converted to RGB24 as PyAV's to_ndarray(format="rgb24") does.
#include <algorithm>
#include <cstring>

#include "media/ffmpeg_util.h"
#include "unirecord/media.h"

namespace unirecord::media {

// The alignment of a converted row and the room after it.
constexpr size_t kRowSlack = 64;

struct VideoDecoder::Impl {
  VideoDecodeOptions options;
  CodecContextPtr ctx;
  std::string codec;        // what `ctx` was opened for
  std::string extradata;
  SwsContext* sws = nullptr;  // sws_getCachedContext's, freed in the destructor
  PacketPtr packet{av_packet_alloc()};
  FramePtr frame{av_frame_alloc()};
  std::vector<uint8_t> rgb;  // one converted frame, rows kRowSlack-aligned with room after each
  int64_t frames_decoded = 0;
  int64_t opens = 0;

  ~Impl() { sws_freeContext(sws); }

  // A decoder for `value`: the open one, flushed, when codec and extradata match.
  Status Ready(const MediaValueView& value, std::string_view what) {
    if (ctx != nullptr && codec == value.params.codec && extradata == value.extradata) {
      avcodec_flush_buffers(ctx.get());
      return Status::OK();
    }
    ctx.reset();
    UREC_ASSIGN_OR_RETURN(ctx, OpenDecoder(value, options.threads, what));
    codec = value.params.codec;
    extradata.assign(value.extradata);
    ++opens;
    return Status::OK();
  }

  // Frame `frame` as RGB24 into `out`, rotated when asked.
  Status Convert(const MediaValueView& value, uint8_t* out, std::string_view what);
};

namespace {

// Rotates a w x h RGB image (rows `stride` bytes apart) clockwise by
// `degrees` (90, 180, 270) into `out`, packed.
void RotateRgb(const uint8_t* in, size_t stride, int w, int h, int degrees, uint8_t* out) {
  const int ow = degrees == 180 ? w : h;
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      int ox = x, oy = y;
      if (degrees == 90) {
        ox = h - 1 - y;
        oy = x;
      } else if (degrees == 180) {
        ox = w - 1 - x;
        oy = h - 1 - y;
      } else {
        ox = y;
        oy = w - 1 - x;
      }
      std::memcpy(out + (static_cast<size_t>(oy) * ow + ox) * 3, in + static_cast<size_t>(y) * stride + size_t(x) * 3, 3);
    }
  }
}

int AppliedRotation(const VideoDecodeOptions& options, const MediaValueView& value) {
  const int r = value.params.rotation;
  return options.apply_rotation && (r == 90 || r == 180 || r == 270) ? r : 0;
}

}  // namespace

Status VideoDecoder::Impl::Convert(const MediaValueView& value, uint8_t* out, std::string_view what) {
  const AVFrame* f = frame.get();
  if (f->width != value.params.width || f->height != value.params.height) {
    return Status::Corruption(std::string(what) + ": a frame is " + std::to_string(f->width) + "x" +
                              std::to_string(f->height) + ", the stream says " + std::to_string(value.params.width) +
                              "x" + std::to_string(value.params.height));
  }
  sws = sws_getCachedContext(sws, f->width, f->height, static_cast<AVPixelFormat>(f->format), f->width, f->height,
                             AV_PIX_FMT_RGB24, SWS_BILINEAR, nullptr, nullptr, nullptr);
  if (sws == nullptr) {
    return Status::NotSupported(std::string(what) + ": no RGB conversion from pixel format " +
                                std::to_string(f->format));
  }
  // swscale's SIMD writes whole vectors, past a row's end when the width is
  // not a multiple of them (valgrind: 8 bytes past a 456x256 clip's buffer):
  // it converts into `rgb`, whose rows have room, and the rows are copied out.
  const size_t row = static_cast<size_t>(f->width) * 3;
  const size_t stride = (row + kRowSlack + kRowSlack - 1) / kRowSlack * kRowSlack;
  rgb.resize(stride * static_cast<size_t>(f->height) + kRowSlack);
  uint8_t* planes[4] = {rgb.data(), nullptr, nullptr, nullptr};
  int strides[4] = {static_cast<int>(stride), 0, 0, 0};
  const int rows = sws_scale(sws, f->data, f->linesize, 0, f->height, planes, strides);
  if (rows != f->height) return Status::Internal(std::string(what) + ": RGB conversion failed");
  const int rotation = AppliedRotation(options, value);
  if (rotation != 0) {
    RotateRgb(rgb.data(), stride, f->width, f->height, rotation, out);
    return Status::OK();
  }
  for (int y = 0; y < f->height; ++y) std::memcpy(out + size_t(y) * row, rgb.data() + size_t(y) * stride, row);
  return Status::OK();
}

VideoDecoder::VideoDecoder(VideoDecodeOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->options = options;
}
VideoDecoder::~VideoDecoder() = default;
VideoDecoder::VideoDecoder(VideoDecoder&&) noexcept = default;
VideoDecoder& VideoDecoder::operator=(VideoDecoder&&) noexcept = default;

int64_t VideoDecoder::frames_decoded() const { return impl_->frames_decoded; }
int64_t VideoDecoder::codec_opens() const { return impl_->opens; }

void VideoDecoder::OutputSize(const MediaValueView& value, int32_t* width, int32_t* height) const {
  const int rotation = AppliedRotation(impl_->options, value);
  const bool swap = rotation == 90 || rotation == 270;
  *width = swap ? value.params.height : value.params.width;
  *height = swap ? value.params.width : value.params.height;
}

Status VideoDecoder::DecodeAtPts(const MediaValueView& value, const std::vector<int64_t>& pts, uint8_t* out,
                                 size_t out_size, std::string_view what) {
  if (value.params.kind != MediaKind::kVideo) {
    return Status::InvalidArgument(std::string(what) + ": not a video stream");
  }
  const size_t frame_bytes = static_cast<size_t>(value.params.width) * value.params.height * 3;
  if (out_size < frame_bytes * pts.size()) {
    return Status::InvalidArgument(std::string(what) + ": output of " + std::to_string(out_size) +
                                   " bytes is too small for " + std::to_string(pts.size()) + " frames");
  }
  if (pts.empty()) return Status::OK();
  // Each wanted pts must be a frame's; decoding starts at the last keyframe,
  // in decode order up to the first wanted frame's packet, presented no later than it.
  const std::vector<int64_t> all = value.PresentationTimestamps();
  for (int64_t t : pts) {
    if (!std::binary_search(all.begin(), all.end(), t)) {
      return Status::InvalidArgument(std::string(what) + ": no frame has pts " + std::to_string(t));
    }
  }
  const int64_t first = *std::min_element(pts.begin(), pts.end());
  size_t start = 0;
  for (size_t i = 0; i < value.packets.size(); ++i) {
    const MediaPacket& p = value.packets[i];
    const int64_t t = p.pts != kNoTimestamp ? p.pts : p.dts;
    if (p.keyframe && t <= first) start = i;
    if (t == first) break;
  }
  UREC_RETURN_IF_ERROR(impl_->Ready(value, what));
  std::vector<bool> done(pts.size(), false);
  size_t remaining = pts.size();
  AVCodecContext* ctx = impl_->ctx.get();
  const std::vector<int64_t> wanted = [&] {
    std::vector<int64_t> sorted = pts;
    std::sort(sorted.begin(), sorted.end());
    sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
    return sorted;
  }();
  // The last packet (decode order) of a wanted frame, when every wanted
  // frame's packet has a pts: past it the decoder is drained, not fed, since
  // each frame depends only on the packets before it.
  const size_t n = value.packets.size();
  size_t last_needed = n;
  {
    size_t found = 0;
    for (size_t i = start; i < n && found < wanted.size(); ++i) {
      const int64_t t = value.packets[i].pts;
      if (t != kNoTimestamp && std::binary_search(wanted.begin(), wanted.end(), t)) {
        ++found;
        last_needed = i;
      }
    }
    if (found < wanted.size()) last_needed = n;
  }
  for (size_t i = start; i <= n && remaining > 0; ++i) {
    if (i > last_needed) i = n;
    // A frame no later frame predicts from (a non-reference B-frame) that is
    // not wanted is skipped by the decoder: exact, the frames after it do not
    // depend on it. Decoders without the notion decode it as before. A packet
    // without a pts (its frame unknown) is decoded.
    if (i < n) {
      const int64_t t = value.packets[i].pts;
      const bool unwanted = t != kNoTimestamp && !std::binary_search(wanted.begin(), wanted.end(), t);
      ctx->skip_frame = unwanted ? AVDISCARD_NONREF : AVDISCARD_DEFAULT;
    }
    UREC_RETURN_IF_ERROR(SendPacket(ctx, value, i, impl_->packet.get(), what));
    while (remaining > 0) {
      const int got = avcodec_receive_frame(ctx, impl_->frame.get());
      if (got == AVERROR(EAGAIN) || got == AVERROR_EOF) break;
      if (got < 0) return Status::Corruption(std::string(what) + ": decoding failed: " + AvError(got));
      ++impl_->frames_decoded;
      const AVFrame* f = impl_->frame.get();
      const int64_t t = f->pts != AV_NOPTS_VALUE ? f->pts : f->best_effort_timestamp;
      for (size_t k = 0; k < pts.size(); ++k) {
        if (done[k] || pts[k] != t) continue;
        UREC_RETURN_IF_ERROR(impl_->Convert(value, out + k * frame_bytes, what));
        done[k] = true;
        --remaining;
      }
    }
  }
  if (remaining > 0) {
    const size_t k = static_cast<size_t>(std::find(done.begin(), done.end(), false) - done.begin());
    return Status::Corruption(std::string(what) + ": the frame with pts " + std::to_string(pts[k]) +
                              " never came out of the decoder");
  }
  return Status::OK();
}

Result<VideoFrames> VideoDecoder::FramesAt(const MediaValueView& value, const std::vector<int64_t>& indices,
                                           std::string_view what) {
  const std::vector<int64_t> all = value.PresentationTimestamps();
  VideoFrames frames;
  for (int64_t i : indices) {
    if (i < 0 || i >= static_cast<int64_t>(all.size())) {
      return Status::OutOfRange(std::string(what) + ": frame " + std::to_string(i) + " of " +
                                std::to_string(all.size()));
    }
    frames.pts.push_back(all[static_cast<size_t>(i)]);
  }
  frames.count = static_cast<int64_t>(frames.pts.size());
  OutputSize(value, &frames.width, &frames.height);
  frames.rgb.resize(static_cast<size_t>(frames.count) * frames.width * frames.height * 3);
  UREC_RETURN_IF_ERROR(DecodeAtPts(value, frames.pts, frames.rgb.data(), frames.rgb.size(), what));
  return frames;
}

Result<VideoFrames> VideoDecoder::FramesIn(const MediaValueView& value, double start_s, double end_s,
                                           std::string_view what) {
  const std::vector<int64_t> all = value.PresentationTimestamps();
  std::vector<int64_t> indices;
  for (size_t i = 0; i < all.size(); ++i) {
    const double t = static_cast<double>(all[i] - value.params.start_pts) * value.params.time_base();
    if (t >= start_s && t < end_s) indices.push_back(static_cast<int64_t>(i));
  }
  return FramesAt(value, indices, what);
}

}  // namespace unirecord::media
