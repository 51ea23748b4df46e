// The decode stage: a sample's media decoded and transformed into its place
// in the batch buffer. The seam where a decoder plugs in: images today
// (ImageDecode: a JPEG or PNG through SampleDecoder, cropped and resized as
// SampleDecoderOptions say); video and audio clips plug in here as decoders
// of their own (a clip's frames or samples into a fixed-size place), the
// stages before (record reads) and after (batch assembly, the device)
// unchanged: clip_decode_stage.h. One per worker thread: not thread-safe. Not public API.
#ifndef UNIRECORD_SRC_PIPELINE_DECODE_STAGE_H_
#define UNIRECORD_SRC_PIPELINE_DECODE_STAGE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "unirecord/image.h"
#include "unirecord/sample_decoder.h"
#include "unirecord/status.h"

namespace unirecord::pipeline {

// Which sample is decoded: what keys its random transform.
struct SampleKey {
  uint64_t seed = 0;
  uint64_t epoch = 0;
  uint64_t record = 0;  // the record's id in its dataset
};

// What a sample's image became: the window of its pixels (width x height,
// the frame the window was planned in) resized to output_size squared. The
// fields that follow the image (boxes, masks) are mapped with it.
struct SampleImage {
  CropWindow window;
  int width = 0;
  int height = 0;
  int output_size = 0;
  // A clip stage's (clip_decode_stage.h), into the caller's rows for this
  // sample: each sampled frame's pts (K * T) and each clip's start in
  // seconds (K); null for images. It adds the frames it decoded to
  // frames_decoded.
  int64_t* frame_pts = nullptr;
  double* clip_starts = nullptr;
  uint64_t frames_decoded = 0;
};

class DecodeStage {
 public:
  virtual ~DecodeStage() = default;
  // Bytes one sample takes in the batch buffer.
  virtual size_t sample_bytes() const = 0;
  // Decodes `media` as sample `key` into `out` (sample_bytes() bytes);
  // *shown: what the fields that follow the media need.
  virtual Status Decode(std::string_view media, const SampleKey& key, uint8_t* out, SampleImage* shown) = 0;
};

// Images decoded as `options` say. `frame_size`: *shown also gets the size
// of the frame the window was planned in (masks must be that size).
Result<std::unique_ptr<DecodeStage>> CreateImageDecode(const SampleDecoderOptions& options, bool frame_size);

}  // namespace unirecord::pipeline

#endif  // UNIRECORD_SRC_PIPELINE_DECODE_STAGE_H_
