#include "pipeline/clip_decode_stage.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "image/crop_resize.h"
#include "pipeline/clip_sampling.h"
#include "unirecord/media.h"
#include "unirecord/media_value.h"
#include "util/splitmix64.h"

namespace unirecord::pipeline {
namespace {

using image_internal::RegionDecoder;
using image_internal::RgbView;

// A decoded RGB frame as the crop/resize stage's source: every region is
// already there, at full scale.
class FrameRegion final : public RegionDecoder {
 public:
  FrameRegion(const uint8_t* rgb, int width, int height) : rgb_(rgb), width_(width), height_(height) {}
  Status Open() override { return Status::OK(); }
  int width() const override { return width_; }
  int height() const override { return height_; }
  int ChooseScale(const CropWindow&, int, int) const override { return 8; }
  Status DecodeRegion(int, const image_internal::Rect& region, RgbView* view) override {
    view->data = rgb_ + (static_cast<size_t>(region.y) * width_ + region.x) * 3;
    view->width = region.width;
    view->height = region.height;
    view->stride = static_cast<size_t>(width_) * 3;
    return Status::OK();
  }

 private:
  const uint8_t* rgb_;
  int width_, height_;
};

// Parses a stored media value, checking it is of `kind`.
Status ParseValue(std::string_view stored, MediaKind kind, const std::string& what, MediaValueView* value) {
  UREC_RETURN_IF_ERROR(ParseMediaValue(stored, what, value));
  if (value->params.kind != kind) {
    return Status::InvalidArgument(what + " holds " + MediaKindName(value->params.kind) + ", not " +
                                   MediaKindName(kind));
  }
  if (value->packets.empty()) return Status::InvalidArgument(what + " has no packets");
  return Status::OK();
}

class ClipDecode final : public DecodeStage {
 public:
  ClipDecode(const ClipOptions& clip, std::unique_ptr<SampleDecoder> planner)
      : clip_(clip), planner_(std::move(planner)), decoder_(VideoOptions(clip)),
        what_("video field '" + clip.field + "'") {}

  size_t sample_bytes() const override { return clip_.sample_frames() * frame_bytes(); }

  Status Decode(std::string_view media, const SampleKey& key, uint8_t* out, SampleImage* shown) override {
    MediaValueView value;
    UREC_RETURN_IF_ERROR(ParseValue(media, MediaKind::kVideo, what_, &value));
    PlanClips(value.PresentationTimestamps(), value.params.time_base(), value.params.start_pts, clip_, key.seed,
              key.epoch, key.record, &plan_);
    int32_t width = 0, height = 0;
    decoder_.OutputSize(value, &width, &height);
    UREC_RETURN_IF_ERROR(CheckOutputSize(width, height, planner_->options().decode.limits).WithContext(what_));
    // One window and flip for the sample, planned on the upright frame.
    ImageInfo frame;
    frame.width = width;
    frame.height = height;
    shown->window = planner_->Plan(frame, key.seed, key.epoch, key.record);
    shown->width = width;
    shown->height = height;
    shown->output_size = planner_->options().image_size;
    for (int k = 0; k < clip_.clips_per_video; ++k) {
      UREC_RETURN_IF_ERROR(DecodeClip(value, k, width, height, shown, out));
    }
    if (shown->frame_pts != nullptr) std::copy(plan_.pts.begin(), plan_.pts.end(), shown->frame_pts);
    if (shown->clip_starts != nullptr) std::copy(plan_.starts.begin(), plan_.starts.end(), shown->clip_starts);
    return Status::OK();
  }

 private:
  static media::VideoDecodeOptions VideoOptions(const ClipOptions& clip) {
    media::VideoDecodeOptions options;
    options.apply_rotation = clip.apply_rotation;
    options.threads = 1;  // the loader's worker is the decoder's thread
    return options;
  }
  size_t frame_bytes() const { return planner_->options().output_bytes(); }

  // Clip k's frames: each distinct pts decoded once (from the keyframe
  // before the first), then each frame cropped and resized into its place.
  Status DecodeClip(const MediaValueView& value, int k, int width, int height, SampleImage* shown, uint8_t* out) {
    const auto first = plan_.pts.begin() + static_cast<std::ptrdiff_t>(size_t(k) * size_t(clip_.frames));
    distinct_.assign(first, first + clip_.frames);
    std::sort(distinct_.begin(), distinct_.end());
    distinct_.erase(std::unique(distinct_.begin(), distinct_.end()), distinct_.end());
    const size_t source_bytes = size_t(width) * size_t(height) * 3;
    frames_.resize(distinct_.size() * source_bytes);
    const int64_t before = decoder_.frames_decoded();
    const Status decoded = decoder_.DecodeAtPts(value, distinct_, frames_.data(), frames_.size(), what_);
    shown->frames_decoded += static_cast<uint64_t>(decoder_.frames_decoded() - before);
    UREC_RETURN_IF_ERROR(decoded);

    const SampleDecoderOptions& o = planner_->options();
    const int size = o.image_size;
    const size_t plane = size_t(size) * size_t(size);
    const bool planar = o.decode.layout == ImageLayout::kNCHW;
    if (planar) packed_.resize(frame_bytes());
    uint8_t* clip_out = out + size_t(k) * size_t(clip_.frames) * frame_bytes();
    for (int i = 0; i < clip_.frames; ++i) {
      const size_t j = static_cast<size_t>(std::lower_bound(distinct_.begin(), distinct_.end(), first[i]) -
                                           distinct_.begin());
      FrameRegion region(frames_.data() + j * source_bytes, width, height);
      uint8_t* target = planar ? packed_.data() : clip_out + size_t(i) * frame_bytes();
      if (o.transform == SampleTransform::kCenterCrop && o.resize_shorter > 0) {
        UREC_RETURN_IF_ERROR(image_internal::DecodeCenterCropResized(&region, size, o.resize_shorter,
                                                                     ImageLayout::kNHWC, o.decode.limits, &scratch_,
                                                                     target, frame_bytes()));
      } else {
        UREC_RETURN_IF_ERROR(image_internal::DecodeWindowResized(&region, shown->window, size, size,
                                                                 ImageLayout::kNHWC, o.decode.limits, &scratch_,
                                                                 target, frame_bytes()));
      }
      if (!planar) continue;
      // [3, T, S, S]: frame i of each channel's plane of frames.
      for (int c = 0; c < 3; ++c) {
        uint8_t* dst = clip_out + (size_t(c) * size_t(clip_.frames) + size_t(i)) * plane;
        for (size_t p = 0; p < plane; ++p) dst[p] = packed_[3 * p + size_t(c)];
      }
    }
    return Status::OK();
  }

  const ClipOptions clip_;
  std::unique_ptr<SampleDecoder> planner_;  // the crop planning of images
  media::VideoDecoder decoder_;
  const std::string what_;
  ClipPlan plan_;
  std::vector<int64_t> distinct_;  // a clip's distinct pts, ascending
  std::vector<uint8_t> frames_;    // their decoded frames (one clip's at most)
  std::vector<uint8_t> packed_;    // one output frame before its planes are split (NCHW)
  image_internal::ResampleScratch scratch_;
};

// Draw number of an audio window's start in the sample's keyed stream (the
// crop's are 0..22, the clips' from 64).
constexpr uint64_t kDrawAudioStart = 128;

class AudioWindows final : public AudioDecode {
 public:
  AudioWindows(const AudioClipOptions& options, int clips)
      : options_(options), clips_(clips), what_("audio field '" + options.field + "'") {}

  size_t sample_bytes() const override { return size_t(clips_) * options_.sample_bytes(); }

  Status Decode(std::string_view media, const SampleKey& key, const SampleImage* clip, uint8_t* out,
                int64_t* lengths) override {
    MediaValueView value;
    UREC_RETURN_IF_ERROR(ParseValue(media, MediaKind::kAudio, what_, &value));
    media::AudioWindowOptions window;
    window.rate = options_.rate;
    window.channels = options_.channels;
    window.type = options_.dtype;
    const double room = std::max(0.0, value.seconds() - options_.seconds);
    for (int k = 0; k < clips_; ++k) {
      double start = options_.centre ? room / 2 : KeyedRandom(key.seed, key.epoch, key.record).Uniform(kDrawAudioStart) * room;
      if (clip != nullptr && clip->clip_starts != nullptr) start = clip->clip_starts[k];
      // A decoder per window: no state of one window may reach the next (the
      // media layer's AudioDecoder opens its codec per window for the same
      // reason; an earlier one carried its resampler's history over).
      media::AudioDecoder decoder;
      UREC_ASSIGN_OR_RETURN(media::AudioSamples samples, decoder.Window(value, start, options_.seconds, window, what_));
      if (samples.data.size() != options_.sample_bytes()) {
        return Status::Internal(what_ + ": the window has " + std::to_string(samples.data.size()) +
                                " bytes, not the " + std::to_string(options_.sample_bytes()) + " planned");
      }
      std::memcpy(out + size_t(k) * options_.sample_bytes(), samples.data.data(), samples.data.size());
      lengths[k] = samples.valid_frames;
    }
    return Status::OK();
  }

 private:
  const AudioClipOptions options_;
  const int clips_;
  const std::string what_;
};

}  // namespace

Result<std::unique_ptr<DecodeStage>> CreateClipDecode(const ClipOptions& clip, const SampleDecoderOptions& image) {
  UREC_RETURN_IF_ERROR(clip.Check().WithContext("loader: clip"));
  UREC_ASSIGN_OR_RETURN(std::unique_ptr<SampleDecoder> planner, SampleDecoder::Create(image));
  return std::unique_ptr<DecodeStage>(new ClipDecode(clip, std::move(planner)));
}

std::unique_ptr<AudioDecode> CreateAudioDecode(const AudioClipOptions& options, int clips) {
  return std::make_unique<AudioWindows>(options, clips);
}

}  // namespace unirecord::pipeline
