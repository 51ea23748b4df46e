// CompactDataset (unirecord/versions.h): the latest version's records
// rewritten as one segment.
#include <cstring>

#include "dataset/commit.h"
#include "dataset/shard_access.h"
#include "io/file.h"
#include "unirecord/dataset.h"
#include "unirecord/schema.h"
#include "unirecord/versions.h"
#include "unirecord/writer.h"

namespace unirecord {
namespace {

// Field `i` of `record` into `builder`, value for value: numbers keep their
// type (a scalar goes through its widened read and back, exact but for a
// float16 NaN's payload), arrays their shape.
Status CopyField(const Record& record, const Field& field, size_t i, RecordBuilder* builder) {
  if (field.type == FieldType::kBytes) {
    UREC_ASSIGN_OR_RETURN(const std::string_view bytes, record.GetBytes(i));
    return builder->SetBytes(i, bytes);
  }
  if (field.type == FieldType::kString) {
    UREC_ASSIGN_OR_RETURN(const std::string_view text, record.GetString(i));
    return builder->SetString(i, text);
  }
  if (field.is_array()) {
    UREC_ASSIGN_OR_RETURN(const ArrayView view, record.GetArray(i));
    return builder->SetValues(i, view.type, view.data, std::vector<int64_t>(view.shape.dims, view.shape.dims + view.shape.ndim));
  }
  // A scalar: its value in the field's own element type, little-endian as
  // SetValues reads it (this library runs on little-endian hosts only).
  alignas(8) uint8_t element[8] = {};
  if (IsIntegral(field.type)) {
    UREC_ASSIGN_OR_RETURN(const int64_t v, record.GetInt64(i));
    std::memcpy(element, &v, NumericWidth(field.type));  // the low bytes: the value, as it fit its type
  } else if (field.type == FieldType::kFloat16) {
    UREC_ASSIGN_OR_RETURN(const double v, record.GetFloat64(i));
    const uint16_t half = FloatToHalf(static_cast<float>(v));
    std::memcpy(element, &half, sizeof half);
  } else if (field.type == FieldType::kFloat32) {
    UREC_ASSIGN_OR_RETURN(const float v, record.GetFloat32(i));
    std::memcpy(element, &v, sizeof v);
  } else {
    UREC_ASSIGN_OR_RETURN(const double v, record.GetFloat64(i));
    std::memcpy(element, &v, sizeof v);
  }
  return builder->SetValues(i, field.type, element, {});
}

}  // namespace

Result<WriterSummary> CompactDataset(const std::string& path, const CompactOptions& options) {
  if (options.num_shards != 0 && options.target_shard_bytes != 0) {
    return Status::InvalidArgument("compact: give a shard count or a shard size, not both");
  }
  Result<dataset::DatasetPath> resolved = dataset::ResolveDatasetPath(path, "only those are compacted");
  if (!resolved.ok()) return Status(resolved.status().code(), "compact: " + resolved.status().message());
  const std::string& out_dir = resolved->dir;
  const std::string& name = resolved->name;
  Result<std::shared_ptr<Dataset>> opened = Dataset::Open(io::JoinPath(out_dir, name));
  if (!opened.ok()) return Status(opened.status().code(), "compact: " + opened.status().message());
  const Dataset& dataset = **opened;
  const shard::ShardReader& first = dataset_internal::ShardAccess::Frame(dataset, 0);
  WriterOptions w;
  w.num_shards = options.num_shards;
  w.expected_records = options.num_shards != 0 ? dataset.size() : 0;  // contiguous: ids stay
  w.target_shard_bytes = options.num_shards != 0 ? 0 : options.target_shard_bytes != 0 ? options.target_shard_bytes
                                                                                        : uint64_t{1} << 30;
  w.blob_page_bytes = first.header().values.blob_page_bytes;
  w.scalar_page_bytes = first.header().values.scalar_page_bytes;
  w.zstd_level = first.header().values.zstd_level;
  w.threads = options.threads;
  w.sync = options.sync;
  UREC_ASSIGN_OR_RETURN(std::unique_ptr<Writer> writer, Writer::Create(out_dir, name, dataset.schema(), w));
  // The version read was opened before the writer took the lock: a commit in
  // between would be lost under the rewrite of the older one (AddFields
  // checks the same).
  Result<std::shared_ptr<Dataset>> locked = Dataset::Open(io::JoinPath(out_dir, name));
  if (!locked.ok()) return Status(locked.status().code(), "compact: " + locked.status().message());
  if ((*locked)->version() != dataset.version()) {
    return Status::FailedPrecondition("compact " + path + ": another writer committed version " +
                                      std::to_string((*locked)->version()) + " meanwhile; try again");
  }
  for (const auto& [key, value] : dataset.metadata()) UREC_RETURN_IF_ERROR(writer->SetMetadata(key, value));
  const Schema& schema = dataset.schema();
  RecordBuilder builder(schema);
  for (uint64_t id = 0; id < dataset.size(); ++id) {
    UREC_ASSIGN_OR_RETURN(const Record record, dataset.Get(id));
    for (size_t i = 0; i < schema.num_fields(); ++i) {
      UREC_RETURN_IF_ERROR(CopyField(record, schema.field(i), i, &builder));
    }
    UREC_RETURN_IF_ERROR(writer->Write(builder));
  }
  UREC_RETURN_IF_ERROR(writer->Finish());
  return writer->summary();
}

}  // namespace unirecord
