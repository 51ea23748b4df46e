// The record-reads stage: one sample of a batch read and put in its place.
// Its record is read for the fields the read plan names (read_plan.h): a
// Record when fields are batched or there is no image, then the label, the
// image (through the decode stage, decode_stage.h) and the batched fields
// (batch_fields.h: boxes and masks following the image's window) come from
// it; else the image and label alone (SampleSource::Read). Errors name the
// record and its path. Thread-safe: the workers share one. Not public API.
#ifndef UNIRECORD_SRC_PIPELINE_RECORD_READS_H_
#define UNIRECORD_SRC_PIPELINE_RECORD_READS_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "pipeline/batch_fields.h"
#include "pipeline/batch_slots.h"
#include "pipeline/clip_decode_stage.h"
#include "pipeline/decode_stage.h"
#include "pipeline/read_plan.h"
#include "unirecord/sample_decoder.h"
#include "unirecord/status.h"

namespace unirecord::pipeline {

// What a clip loader reads beside the image field's (LoaderOptions::clip,
// audio).
struct ClipReads {
  size_t frames_per_sample = 0;  // K * T; 0: no clips
  size_t clips = 1;              // K
  std::string audio_field;       // "" : no audio windows
};

class RecordReads {
 public:
  // Reads of the samples of `sources`, made with the field names `names`
  // (one schema when read as Records: InvalidArgument otherwise), whose
  // batched fields `fields` (which must outlive this) assembles.
  static Result<RecordReads> Create(std::vector<SampleSource> sources, const SampleFields& names,
                                    const BatchFields* fields, const ClipReads& clips = {});

  const ReadPlan& plan() const { return plan_; }
  bool has_image() const { return plan_.source(0).has_image(); }
  bool has_labels() const { return plan_.source(0).has_labels(); }
  // Samples are read as Records (which `slot.records` keeps until the batch
  // is assembled).
  bool records() const { return records_; }

  // Sample `offset` of `slot` from mixture id `id`: its label, its image
  // decoded by `decode` (the window into *window) and its batched fields.
  // Adds the decode's time to times.decode_s, and without Records the
  // read's to times.read_s (with Records the caller counts the rest of its
  // claim as read time: two clock reads per sample would be a tenth of a
  // token sample's cost).
  // `audio`: the thread's audio stage when there is an audio field.
  Status Read(uint64_t id, uint64_t seed, uint64_t epoch, DecodeStage& decode, AudioDecode* audio, Slot& slot,
              size_t offset, SampleTimes& times, CropWindow* window) const;

 private:
  Status ReadRecord(uint64_t id, const SampleKey& key, DecodeStage& decode, AudioDecode* audio, Slot& slot,
                    size_t offset, SampleTimes& times, CropWindow* window) const;
  // The slot's rows for sample `offset`'s clips, in `shown`.
  void PointAtClipRows(Slot& slot, size_t offset, SampleImage* shown) const;
  Status ReadImage(uint64_t id, const SampleKey& key, DecodeStage& decode, Slot& slot, size_t offset,
                   SampleTimes& times, CropWindow* window) const;

  ReadPlan plan_;
  const BatchFields* fields_ = nullptr;
  bool records_ = false;
  size_t image_index_ = 0;
  size_t label_index_ = 0;
  ClipReads clips_;
  size_t audio_index_ = 0;
};

}  // namespace unirecord::pipeline

#endif  // UNIRECORD_SRC_PIPELINE_RECORD_READS_H_
