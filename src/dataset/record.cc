// Reads of records: Dataset::Get (every field) and the reads of some
// fields (field_reads.h), GetBlob and the indexed values, and what a Record
// hands out. Opening a dataset is dataset.cc's.
#include <algorithm>
#include <cstring>
#include <type_traits>

#include "dataset/dataset_impl.h"
#include "dataset/field_reads.h"
#include "format/array_values.h"
#include "format/endian.h"
#include "io/file.h"
#include "shard/shard_reader.h"
#include "unirecord/dataset.h"

namespace unirecord {

using shard::ShardReader;

// What a Record holds (Record::Impl, private to Record, is this): the
// getters' helpers below take it.
struct RecordData {
  // Keeps `dataset` and the mapped files alive: the Dataset, or the
  // FieldReads the record was read with (which holds it).
  std::shared_ptr<const void> owner;
  std::vector<std::shared_ptr<const void>> holds;  // a remote dataset's files read: kept mapped and pinned
  const Dataset::Impl* dataset = nullptr;
  const dataset_internal::FieldReads* reads = nullptr;  // null: every field was read
  uint64_t id = 0;
  // Of each source of the record's segment (its shard, its column files).
  struct Source {
    const uint8_t* entry = nullptr;
    std::vector<Blob> blobs;  // by blob slot
    std::shared_ptr<const shard::DecodedPage> page;
    uint32_t page_row = 0;
  };
  std::vector<Source> sources;
  const Dataset::Impl::SegmentFields* fields = nullptr;  // its segment's

  // Field `field` of the dataset's schema: the source holding it, the
  // field's index there and that source's layout.
  const Source& SourceOf(size_t field, size_t* local, const index::FieldLayout** layout) const {
    const Dataset::Impl::FieldSource& at = fields->fields[field];
    *local = at.field;
    *layout = &fields->layouts[at.source];
    return sources[at.source];
  }
};

struct Record::Impl : RecordData {};

namespace {

Blob ToBlob(shard::BlobBytes bytes) {
  return bytes.inflated ? Blob(std::move(*bytes.inflated)) : Blob(bytes.mapped);
}

Status FieldCheck(const Schema& schema, size_t field) {
  if (field >= schema.num_fields()) {
    return Status::OutOfRange("field index " + std::to_string(field) + " out of range (" +
                              std::to_string(schema.num_fields()) + " fields)");
  }
  return Status::OK();
}

}  // namespace

Result<Record> Dataset::Get(uint64_t id) const { return Read(id, nullptr); }

Result<Record> Dataset::Read(uint64_t id, const std::shared_ptr<const dataset_internal::FieldReads>& reads) const {
  const bool verify = impl_->options.verify_checksums;
  const shard::BlobCheck blob_check = verify ? shard::BlobCheck::kRead : shard::BlobCheck::kNone;
  io::TruncationCheckScope check_the_shard_once;  // not once per blob of the record
  UREC_ASSIGN_OR_RETURN(auto located, impl_->Locate(id));
  const size_t s = impl_->ShardOf(id);
  const uint64_t row = located.second;
  Record record;
  Record::Impl& r = *record.impl_;
  if (reads != nullptr) {
    r.owner = reads;
  } else {
    r.owner = shared_from_this();
  }
  r.dataset = impl_.get();
  r.reads = reads.get();
  r.id = id;
  r.fields = &impl_->segment_fields[impl_->segment_of[s]];
  r.sources.resize(r.fields->layouts.size());
  const std::vector<dataset_internal::SourceReads>* wanted =
      reads != nullptr ? &reads->Sources(impl_->segment_of[s]) : nullptr;
  for (uint32_t k = 0; k < r.sources.size(); ++k) {
    const dataset_internal::SourceReads* want = wanted != nullptr ? &(*wanted)[k] : nullptr;
    if (want != nullptr && !want->entry) continue;  // no field read is in this file
    RecordData::Source& source = r.sources[k];
    if (want != nullptr && want->blob_slots.empty() && !want->page) {
      // Indexed values alone: the index holds them (a remote shard is not downloaded).
      UREC_ASSIGN_OR_RETURN(source.entry, impl_->SourceFrame(s, k).Entry(row, verify));
      continue;
    }
    UREC_ASSIGN_OR_RETURN(ShardPages::Reader pages, impl_->pages->Pages(s, k));
    const ShardReader* shard = pages.reader;
    if (pages.hold != nullptr) r.holds.push_back(std::move(pages.hold));
    UREC_ASSIGN_OR_RETURN(source.entry, shard->Entry(row, verify));
    const index::FieldLayout& layout = r.fields->layouts[k];
    if (want != nullptr) {
      source.blobs.resize(layout.blob_fields.size());  // those not wanted stay empty, never handed out
      for (uint32_t slot : want->blob_slots) {
        UREC_ASSIGN_OR_RETURN(shard::BlobBytes bytes, shard->ReadBlob(source.entry, row, slot, blob_check));
        source.blobs[slot] = ToBlob(std::move(bytes));
      }
    } else {
      source.blobs.reserve(layout.blob_fields.size());
      for (size_t slot = 0; slot < layout.blob_fields.size(); ++slot) {
        UREC_ASSIGN_OR_RETURN(shard::BlobBytes bytes, shard->ReadBlob(source.entry, row, slot, blob_check));
        source.blobs.push_back(ToBlob(std::move(bytes)));
      }
    }
    if (want != nullptr ? want->page : !layout.column_fields.empty()) {
      UREC_ASSIGN_OR_RETURN(source.page, shard->ScalarPage(source.entry, row, verify, &source.page_row));
    }
  }
  return record;
}

Result<Blob> Dataset::GetBlob(uint64_t id, size_t field) const {
  UREC_RETURN_IF_ERROR(FieldCheck(impl_->schema, field));
  UREC_ASSIGN_OR_RETURN(auto located, impl_->Locate(id));
  const size_t s = impl_->ShardOf(id);
  const Impl::FieldSource& at = impl_->SourceOf(s, field);
  const int slot = impl_->LayoutOf(s, at.source).blob_slot[at.field];
  if (slot < 0) {
    const Field& f = impl_->schema.field(field);
    return Status::InvalidArgument("field '" + f.name + "' is " + FieldTypeName(f.type) + ", not bytes");
  }
  const bool verify = impl_->options.verify_checksums;
  UREC_ASSIGN_OR_RETURN(ShardPages::Reader pages, impl_->pages->Pages(s, at.source));
  UREC_ASSIGN_OR_RETURN(const uint8_t* entry, pages.reader->Entry(located.second, verify));
  UREC_ASSIGN_OR_RETURN(shard::BlobBytes bytes,
                        pages.reader->ReadBlob(entry, located.second, static_cast<size_t>(slot),
                                                       verify ? shard::BlobCheck::kRead : shard::BlobCheck::kNone));
  Blob blob = ToBlob(std::move(bytes));
  if (blob.zero_copy()) {
    if (pages.hold == nullptr) {
      blob.owner_ = shared_from_this();
    } else {
      // Both: the Dataset and the remote shard's mapping and pin.
      using Owners = std::pair<std::shared_ptr<const Dataset>, std::shared_ptr<const void>>;
      blob.owner_ = std::make_shared<const Owners>(shared_from_this(), std::move(pages.hold));
    }
  }
  return blob;
}

namespace {

Result<uint64_t> IndexedBits(const Dataset::Impl& d, uint64_t id, size_t field, bool want_int) {
  UREC_RETURN_IF_ERROR(FieldCheck(d.schema, field));
  const Field& f = d.schema.field(field);
  UREC_ASSIGN_OR_RETURN(auto located, d.Locate(id));
  const size_t s = d.ShardOf(id);
  const Dataset::Impl::FieldSource& at = d.SourceOf(s, field);
  const index::FieldLayout& layout = d.LayoutOf(s, at.source);
  const int slot = layout.indexed_slot[at.field];
  const bool is_int = IsIntegral(f.type);
  if (slot < 0 || is_int != want_int) {
    return Status::InvalidArgument("field '" + f.name + "' is not an indexed " + (want_int ? "integer" : "float") +
                                   " field");
  }
  UREC_ASSIGN_OR_RETURN(const uint8_t* entry, d.SourceFrame(s, at.source).Entry(located.second, d.options.verify_checksums));
  return format::LoadLE<uint64_t>(entry + layout.IndexedValueOffset(static_cast<size_t>(slot)));
}

// Indexed integers are stored widened to 64 bits: one outside its type's
// range is damage that only the checksums (which may be off) would catch.
Status CheckWidenedInt(const Field& f, int64_t value, uint64_t id) {
  if (FitsIntegral(f.type, value)) return Status::OK();
  const std::string type = FieldTypeName(f.type);
  return Status::Corruption("record " + std::to_string(id) + ": " + type + " field '" + f.name + "' holds " +
                            std::to_string(value) + " in the index, outside " + type + " (a damaged index)");
}

}  // namespace

Result<int64_t> Dataset::GetIndexedInt64(uint64_t id, size_t field) const {
  UREC_ASSIGN_OR_RETURN(uint64_t bits, IndexedBits(*impl_, id, field, true));
  UREC_RETURN_IF_ERROR(CheckWidenedInt(impl_->schema.field(field), static_cast<int64_t>(bits), id));
  return static_cast<int64_t>(bits);
}

Result<double> Dataset::GetIndexedFloat64(uint64_t id, size_t field) const {
  UREC_ASSIGN_OR_RETURN(uint64_t bits, IndexedBits(*impl_, id, field, false));
  double value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

Record::Record() : impl_(std::make_unique<Impl>()) {}
Record::~Record() = default;
Record::Record(Record&&) noexcept = default;
Record& Record::operator=(Record&&) noexcept = default;

uint64_t Record::id() const { return impl_->id; }
const Schema& Record::schema() const { return impl_->dataset->schema; }

namespace {

// The field, checked to be `wanted`: the kinds of numbers `accepts`, scalar
// unless `array`.
Result<const Field*> TypedField(const RecordData& r, size_t field, bool (*accepts)(FieldType), bool array,
                                const char* wanted) {
  const Schema& schema = r.dataset->schema;
  UREC_RETURN_IF_ERROR(FieldCheck(schema, field));
  const Field& f = schema.field(field);
  if (r.reads != nullptr && !r.reads->Reads(field)) {
    return Status::FailedPrecondition("record " + std::to_string(r.id) + ": field '" + f.name +
                                      "' was not read (the record was read for " + r.reads->Names() + ")");
  }
  if (!accepts(f.type) || f.is_array() != array) {
    return Status::InvalidArgument("record " + std::to_string(r.id) + ": field '" + f.name + "' is " +
                                   FieldTypeName(f.type) + (f.is_array() ? " array" : "") + ", not " + wanted);
  }
  return &f;
}

template <FieldType T>
bool Is(FieldType type) { return type == T; }
// A blob field read as bytes: `bytes`, or a media field's stored value.
bool IsBlobBytes(FieldType type) {
  return type == FieldType::kBytes || type == FieldType::kVideo || type == FieldType::kAudio;
}
bool IsMedia(FieldType type) { return type == FieldType::kVideo || type == FieldType::kAudio; }
bool IsFloating(FieldType type) { return IsNumeric(type) && !IsIntegral(type); }

// A scalar numeric's value, widened: from the record table (indexed, stored
// widened already) or its scalar page.
template <typename Wide>
Wide NumericValue(const RecordData& r, size_t field, const Field& f) {
  size_t local = 0;
  const index::FieldLayout* layout = nullptr;
  const RecordData::Source& source = r.SourceOf(field, &local, &layout);
  if (layout->indexed_slot[local] >= 0) {
    return format::LoadLE<Wide>(source.entry +
                                layout->IndexedValueOffset(static_cast<size_t>(layout->indexed_slot[local])));
  }
  const auto* p = reinterpret_cast<const uint8_t*>(
      source.page->view.Value(static_cast<size_t>(layout->column_slot[local]), source.page_row).data());
  if constexpr (std::is_integral_v<Wide>) {
    return ElementToInt64(f.type, p);
  } else {
    return ElementToDouble(f.type, p);
  }
}

}  // namespace

Result<std::string_view> Record::GetBytes(size_t field) const {
  UREC_RETURN_IF_ERROR(TypedField(*impl_, field, IsBlobBytes, false, "bytes").status());
  size_t local = 0;
  const index::FieldLayout* layout = nullptr;
  const RecordData::Source& source = impl_->SourceOf(field, &local, &layout);
  return source.blobs[static_cast<size_t>(layout->blob_slot[local])].data();
}

Result<int64_t> Record::GetInt64(size_t field) const {
  UREC_ASSIGN_OR_RETURN(const Field* f, TypedField(*impl_, field, IsIntegral, false, "an integer"));
  const int64_t value = NumericValue<int64_t>(*impl_, field, *f);
  UREC_RETURN_IF_ERROR(CheckWidenedInt(*f, value, impl_->id));
  return value;
}

Result<int32_t> Record::GetInt32(size_t field) const {
  UREC_ASSIGN_OR_RETURN(const Field* f, TypedField(*impl_, field, Is<FieldType::kInt32>, false, "int32"));
  const int64_t value = NumericValue<int64_t>(*impl_, field, *f);
  UREC_RETURN_IF_ERROR(CheckWidenedInt(*f, value, impl_->id));
  return static_cast<int32_t>(value);
}

Result<double> Record::GetFloat64(size_t field) const {
  UREC_ASSIGN_OR_RETURN(const Field* f, TypedField(*impl_, field, IsFloating, false, "a float"));
  return NumericValue<double>(*impl_, field, *f);
}

Result<float> Record::GetFloat32(size_t field) const {
  UREC_ASSIGN_OR_RETURN(const Field* f, TypedField(*impl_, field, Is<FieldType::kFloat32>, false, "float32"));
  return static_cast<float>(NumericValue<double>(*impl_, field, *f));
}

Result<std::string_view> Record::GetString(size_t field) const {
  UREC_RETURN_IF_ERROR(TypedField(*impl_, field, Is<FieldType::kString>, false, "string").status());
  size_t local = 0;
  const index::FieldLayout* layout = nullptr;
  const RecordData::Source& source = impl_->SourceOf(field, &local, &layout);
  return source.page->view.Value(static_cast<size_t>(layout->column_slot[local]), source.page_row);
}

Result<ArrayView> Record::GetArray(size_t field) const {
  UREC_ASSIGN_OR_RETURN(const Field* f, TypedField(*impl_, field, IsNumeric, true, "a numeric array"));
  size_t local = 0;
  const index::FieldLayout* layout = nullptr;
  const RecordData::Source& source = impl_->SourceOf(field, &local, &layout);
  ArrayView view;
  view.type = f->type;
  view.shape.ndim = f->shape.size();
  if (KindInfoOf(f->kind()).per_record_shape) {  // SPEC.md 6.3: a blob with a shape prefix
    const std::string_view stored = source.blobs[static_cast<size_t>(layout->blob_slot[local])].data();
    format::ParsedArray parsed;
    const Status parsed_ok = format::ParseVarArray(*f, stored, &parsed);
    if (!parsed_ok.ok()) {  // named by the file holding the field: the shard or a column file
      const Dataset::Impl& d = *impl_->dataset;
      const size_t s = d.ShardOf(impl_->id);
      const shard::ShardReader& file = d.SourceFrame(s, impl_->fields->fields[field].source);
      return Status::Corruption(file.RowContext(impl_->id - d.first_ids[s]) + ": " + parsed_ok.message());
    }
    std::copy(parsed.dims, parsed.dims + view.shape.ndim, view.shape.dims);
    view.data = parsed.data;
    view.count = parsed.count;
    return view;
  }
  std::copy(f->shape.begin(), f->shape.end(), view.shape.dims);
  view.data = source.page->view.Value(static_cast<size_t>(layout->column_slot[local]), source.page_row).data();
  view.count = static_cast<size_t>(f->num_elements());
  return view;
}

Result<MediaValueView> Record::GetMedia(size_t field) const {
  UREC_RETURN_IF_ERROR(TypedField(*impl_, field, IsMedia, false, "video or audio").status());
  size_t local = 0;
  const index::FieldLayout* layout = nullptr;
  const RecordData::Source& source = impl_->SourceOf(field, &local, &layout);
  const std::string_view stored = source.blobs[static_cast<size_t>(layout->blob_slot[local])].data();
  MediaValueView view;
  const Status parsed = ParseMediaValue(stored, "field '" + schema().field(field).name + "'", &view);
  if (!parsed.ok()) {  // named by the file holding the field: the shard or a column file
    const Dataset::Impl& d = *impl_->dataset;
    const size_t s = d.ShardOf(impl_->id);
    const shard::ShardReader& file = d.SourceFrame(s, impl_->fields->fields[field].source);
    return Status::Corruption(file.RowContext(impl_->id - d.first_ids[s]) + ": " + parsed.message());
  }
  return view;
}

#define UREC_RECORD_BY_NAME(Type, Method)                                      \
  Result<Type> Record::Method(std::string_view field) const {                  \
    UREC_ASSIGN_OR_RETURN(size_t index, impl_->dataset->schema.FindField(field)); \
    return Method(index);                                                      \
  }
UREC_RECORD_BY_NAME(std::string_view, GetBytes)
UREC_RECORD_BY_NAME(int32_t, GetInt32)
UREC_RECORD_BY_NAME(int64_t, GetInt64)
UREC_RECORD_BY_NAME(float, GetFloat32)
UREC_RECORD_BY_NAME(double, GetFloat64)
UREC_RECORD_BY_NAME(std::string_view, GetString)
UREC_RECORD_BY_NAME(ArrayView, GetArray)
UREC_RECORD_BY_NAME(MediaValueView, GetMedia)
#undef UREC_RECORD_BY_NAME

}  // namespace unirecord
