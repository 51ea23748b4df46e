#include "pipeline/record_reads.h"

#include <utility>

#include "pipeline/batch_stream.h"

namespace unirecord::pipeline {

Result<RecordReads> RecordReads::Create(std::vector<SampleSource> sources, const SampleFields& names,
                                        const BatchFields* fields) {
  RecordReads reads;
  reads.fields_ = fields;
  reads.records_ = !fields->empty() || !sources[0].has_image();
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
  // Records are read for the fields the later stages use, no other.
  std::vector<size_t> record_fields;
  if (reads.records_) {
    record_fields = fields->SchemaFields();
    if (sources[0].has_image()) record_fields.push_back(reads.image_index_);
    if (sources[0].has_labels()) record_fields.push_back(reads.label_index_);
  }
  UREC_ASSIGN_OR_RETURN(reads.plan_, ReadPlan::Create(std::move(sources), record_fields));
  return reads;
}

Status RecordReads::Read(uint64_t id, uint64_t seed, uint64_t epoch, DecodeStage& decode, Slot& slot, size_t offset,
                         SampleTimes& times, CropWindow* window) const {
  const auto [k, in_dataset] = plan_.Locate(id);
  const SampleKey key{seed, epoch, in_dataset};  // the crop is keyed with the record's id in its dataset
  Status status = records_ ? ReadRecord(id, key, decode, slot, offset, times, window)
                           : ReadImage(id, key, decode, slot, offset, times, window);
  if (!status.ok()) return status.WithContext(plan_.source(k).Describe(in_dataset));
  return status;
}

Status RecordReads::ReadRecord(uint64_t id, const SampleKey& key, DecodeStage& decode, Slot& slot, size_t offset,
                               SampleTimes& times, CropWindow* window) const {
  UREC_ASSIGN_OR_RETURN(Record record, plan_.Read(id));
  if (has_labels()) {
    UREC_ASSIGN_OR_RETURN(slot.labels[offset], record.GetInt64(label_index_));
  }
  SampleImage shown;
  if (has_image()) {
    UREC_ASSIGN_OR_RETURN(std::string_view image, record.GetBytes(image_index_));
    const Clock::time_point t0 = Clock::now();
    UREC_RETURN_IF_ERROR(decode.Decode(image, key, slot.images + offset * decode.sample_bytes(), &shown));
    times.decode_s += Seconds(Clock::now() - t0);
    *window = shown.window;
  }
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
  const Status decoded = decode.Decode(image.data(), key, slot.images + offset * decode.sample_bytes(), &shown);
  times.read_s += Seconds(t1 - t0);
  times.decode_s += Seconds(Clock::now() - t1);
  *window = shown.window;
  return decoded;
}

}  // namespace unirecord::pipeline
