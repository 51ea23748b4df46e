#include "pipeline/record_reads.h"

#include <utility>

#include "pipeline/batch_stream.h"

namespace unirecord::pipeline {

Result<RecordReads> RecordReads::Create(std::vector<SampleSource> sources, const SampleFields& names,
                                        const BatchFields* fields, const ClipReads& clips) {
  RecordReads reads;
  reads.fields_ = fields;
  reads.clips_ = clips;
  reads.records_ = !fields->empty() || !sources[0].has_image() || !clips.audio_field.empty();
  const Schema& schema = sources[0].dataset().schema();
  // A Record is read by field index: a mixture read so needs one schema.
  for (size_t k = 1; reads.records_ && k < sources.size(); ++k) {
    const Schema& other = sources[k].dataset().schema();
    if (!(other == schema)) {
      return Status::InvalidArgument("loader: batched fields (or image_field=None) over several datasets need one "
                                     "schema: " + DatasetName(0, sources[0].dataset()) + " has " +
                                     schema.ToString() + ", " + DatasetName(k, sources[k].dataset()) +
                                     " has " + other.ToString());
    }
  }
  if (sources[0].has_image()) reads.image_index_ = static_cast<size_t>(schema.FieldIndex(names.image));
  if (sources[0].has_labels()) reads.label_index_ = static_cast<size_t>(schema.FieldIndex(names.label));
  if (!clips.audio_field.empty()) {
    UREC_ASSIGN_OR_RETURN(reads.audio_index_, schema.FindField(clips.audio_field));
    if (schema.field(reads.audio_index_).type != FieldType::kAudio) {
      return Status::InvalidArgument("loader: audio field '" + clips.audio_field + "' is not an audio field");
    }
  }
  // Records are read for the fields the later stages use, no other.
  std::vector<size_t> record_fields;
  if (reads.records_) {
    record_fields = fields->SchemaFields();
    if (sources[0].has_image()) record_fields.push_back(reads.image_index_);
    if (sources[0].has_labels()) record_fields.push_back(reads.label_index_);
    if (!clips.audio_field.empty()) record_fields.push_back(reads.audio_index_);
  }
  UREC_ASSIGN_OR_RETURN(reads.plan_, ReadPlan::Create(std::move(sources), record_fields));
  return reads;
}

Status RecordReads::Read(uint64_t id, uint64_t seed, uint64_t epoch, DecodeStage& decode, AudioDecode* audio,
                         Slot& slot, size_t offset, SampleTimes& times, CropWindow* window) const {
  const auto [k, in_dataset] = plan_.Locate(id);
  const SampleKey key{seed, epoch, in_dataset};  // the crop is keyed with the record's id in its dataset
  Status status = records_ ? ReadRecord(id, key, decode, audio, slot, offset, times, window)
                           : ReadImage(id, key, decode, slot, offset, times, window);
  if (!status.ok()) return status.WithContext(plan_.source(k).Describe(in_dataset));
  return status;
}

void RecordReads::PointAtClipRows(Slot& slot, size_t offset, SampleImage* shown) const {
  if (clips_.frames_per_sample == 0) return;
  shown->frame_pts = slot.frame_pts.data() + offset * clips_.frames_per_sample;
  shown->clip_starts = slot.clip_starts.data() + offset * clips_.clips;
}

Status RecordReads::ReadRecord(uint64_t id, const SampleKey& key, DecodeStage& decode, AudioDecode* audio, Slot& slot,
                               size_t offset, SampleTimes& times, CropWindow* window) const {
  UREC_ASSIGN_OR_RETURN(Record record, plan_.Read(id));
  if (has_labels()) {
    UREC_ASSIGN_OR_RETURN(slot.labels[offset], record.GetInt64(label_index_));
  }
  SampleImage shown;
  PointAtClipRows(slot, offset, &shown);
  const Clock::time_point t0 = Clock::now();
  if (has_image()) {
    UREC_ASSIGN_OR_RETURN(std::string_view image, record.GetBytes(image_index_));
    const Status decoded = decode.Decode(image, key, slot.images + offset * decode.sample_bytes(), &shown);
    times.frames_decoded += shown.frames_decoded;
    UREC_RETURN_IF_ERROR(decoded);
    *window = shown.window;
  }
  if (audio != nullptr) {
    UREC_ASSIGN_OR_RETURN(std::string_view sound, record.GetBytes(audio_index_));
    uint8_t* out = reinterpret_cast<uint8_t*>(slot.audio.data()) + offset * audio->sample_bytes();
    UREC_RETURN_IF_ERROR(audio->Decode(sound, key, clips_.frames_per_sample > 0 ? &shown : nullptr, out,
                                       slot.audio_lengths.data() + offset * clips_.clips));
  }
  if (has_image() || audio != nullptr) times.decode_s += Seconds(Clock::now() - t0);
  UREC_RETURN_IF_ERROR(fields_->ReadSample(record, has_image() ? &shown : nullptr, offset, slot.field_buffers));
  slot.records[offset].emplace(std::move(record));
  return Status::OK();
}

Status RecordReads::ReadImage(uint64_t id, const SampleKey& key, DecodeStage& decode, Slot& slot, size_t offset,
                              SampleTimes& times, CropWindow* window) const {
  const auto [k, in_dataset] = plan_.Locate(id);
  const Clock::time_point t0 = Clock::now();
  Blob image;
  UREC_RETURN_IF_ERROR(plan_.source(k).Read(in_dataset, &image, &slot.labels[offset]));
  const Clock::time_point t1 = Clock::now();
  SampleImage shown;
  PointAtClipRows(slot, offset, &shown);
  const Status decoded = decode.Decode(image.data(), key, slot.images + offset * decode.sample_bytes(), &shown);
  times.read_s += Seconds(t1 - t0);
  times.decode_s += Seconds(Clock::now() - t1);
  times.frames_decoded += shown.frames_decoded;
  *window = shown.window;
  return decoded;
}

}  // namespace unirecord::pipeline
