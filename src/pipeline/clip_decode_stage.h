// The decode stages of video clips and audio windows, on the DecodeStage
// seam (decode_stage.h):
//  - ClipDecode: a video field's media value (SPEC.md 6.4) in, the
//    sample's clips out: frames planned by clip_sampling.h, decoded by
//    media::VideoDecoder from the keyframe before each clip's first frame to
//    its last, each frame cropped, resized and flipped by the image layer's
//    crop/resize stage (image/crop_resize.h: one window and flip per sample,
//    the frames' common one) into [K, T, S, S, 3] or [K, 3, T, S, S].
//  - AudioDecode: an audio field's media value in, a window of it resampled
//    (media::AudioDecoder) into [K, channels, N] of the dtype, the valid
//    frames per window into *lengths; with a clip, the window starts at the
//    clip's first frame (SampleImage::clip_starts).
// One per worker thread: not thread-safe. Not public API.
#ifndef UNIRECORD_SRC_PIPELINE_CLIP_DECODE_STAGE_H_
#define UNIRECORD_SRC_PIPELINE_CLIP_DECODE_STAGE_H_

#include <cstdint>
#include <memory>
#include <string_view>

#include "pipeline/decode_stage.h"
#include "unirecord/loader.h"
#include "unirecord/sample_decoder.h"

namespace unirecord::pipeline {

// `image`: the transform, size and layout of each frame (SampleOptionsOf).
Result<std::unique_ptr<DecodeStage>> CreateClipDecode(const ClipOptions& clip, const SampleDecoderOptions& image);

class AudioDecode {
 public:
  virtual ~AudioDecode() = default;
  // Bytes of one sample's windows (K of them: one per clip, else one).
  virtual size_t sample_bytes() const = 0;
  // Decodes the windows of sample `key` from `media` into `out`, their
  // valid frames into lengths[0 .. K-1]. `clip`: the sample's video clips
  // (their starts), or nullptr without video.
  virtual Status Decode(std::string_view media, const SampleKey& key, const SampleImage* clip, uint8_t* out,
                        int64_t* lengths) = 0;
};

// `clips`: windows per sample (the clip loader's clips_per_video, else 1).
std::unique_ptr<AudioDecode> CreateAudioDecode(const AudioClipOptions& options, int clips);

}  // namespace unirecord::pipeline

#endif  // UNIRECORD_SRC_PIPELINE_CLIP_DECODE_STAGE_H_
