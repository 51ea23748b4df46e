#include "dataset/record_builder_impl.h"

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <utility>

#include "format/array_values.h"
#include "format/endian.h"
#include "format/format_constants.h"
#include "unirecord/media.h"

namespace unirecord {

namespace {

using Slot = format::RecordValues::Slot;

template <typename T>
constexpr FieldType TypeOf() {
  if constexpr (std::is_same_v<T, int32_t>) return FieldType::kInt32;
  if constexpr (std::is_same_v<T, int64_t>) return FieldType::kInt64;
  if constexpr (std::is_same_v<T, float>) return FieldType::kFloat32;
  return FieldType::kFloat64;
}

Result<Slot*> CheckedSlot(format::RecordValues& impl, size_t field, FieldType type, bool array) {
  if (field >= impl.schema.num_fields()) {
    // OutOfRange, as Dataset's getters say it: an index past the end.
    return Status::OutOfRange("record: field index " + std::to_string(field) + " out of range (" +
                              std::to_string(impl.schema.num_fields()) + " fields)");
  }
  const Field& f = impl.schema.field(field);
  if (impl.schema.MediaSourceOf(field) >= 0) {
    return Status::InvalidArgument("record: field '" + f.name + "' is a parameter of the " +
                                   FieldTypeName(impl.schema.field(static_cast<size_t>(impl.schema.MediaSourceOf(field))).type) +
                                   " field '" + impl.schema.field(static_cast<size_t>(impl.schema.MediaSourceOf(field))).name +
                                   "': it is set from the media value, not by hand");
  }
  if (f.type != type || f.is_array() != array) {
    return Status::InvalidArgument("record: field '" + f.name + "' is " + FieldTypeName(f.type) +
                                   (f.is_array() ? " array" : "") + ", not " + FieldTypeName(type) +
                                   (array ? " array" : ""));
  }
  return &impl.slots[field];
}

// Stores a numeric value in the field's slot as its kind says (SPEC.md 6.1
// and 6.3), its shape checked against the field's pattern.
Status StoreNumericValues(format::RecordValues& impl, size_t field, const void* data,
                          const std::vector<int64_t>& shape) {
  Slot* slot = &impl.slots[field];
  const Field& f = impl.schema.field(field);
  if (!IsNumeric(f.type)) {
    return Status::InvalidArgument("record: field '" + f.name + "' is " + FieldTypeName(f.type) + ", not numeric");
  }
  UREC_RETURN_IF_ERROR(format::CheckShape(f, shape));
  size_t count = 1;
  for (int64_t d : shape) count *= static_cast<size_t>(d);
  const std::string_view bytes(static_cast<const char*>(data), count * NumericWidth(f.type));  // host is little-endian
  if (f.type == FieldType::kBool && format::FirstBadBoolByte(bytes) != bytes.size()) {
    return Status::InvalidArgument("record: bool field '" + f.name + "' holds a byte other than 0 or 1");
  }
  if (shape.empty()) {
    std::memcpy(slot->scalar, bytes.data(), bytes.size());
    slot->indexed_bits = format::IndexedBitsOf(f.type, slot->scalar);
    slot->value = std::string_view(reinterpret_cast<const char*>(slot->scalar), bytes.size());
  } else if (KindInfoOf(f.kind()).per_record_shape) {
    format::EncodeVarArray(f, shape, bytes, &slot->owned);
    slot->value = slot->owned;
  } else {
    slot->owned.assign(bytes.data(), bytes.size());
    slot->value = slot->owned;
  }
  slot->set = true;
  return Status::OK();
}

// Every numeric setter ends here: the field is checked to take `type`.
Status SetNumericValues(format::RecordValues& impl, size_t field, FieldType type, const void* data,
                        const std::vector<int64_t>& shape) {
  UREC_RETURN_IF_ERROR(CheckedSlot(impl, field, type, !shape.empty()).status());
  return StoreNumericValues(impl, field, data, shape);
}

// A media field's parameter fields, from its parsed value (Schema::Make put
// them in the schema; MediaParameterFields names them).
void StoreMediaParameters(format::RecordValues& impl, size_t media, const MediaValueView& v) {
  const Schema& schema = impl.schema;
  for (size_t i = 0; i < schema.num_fields(); ++i) {
    if (schema.MediaSourceOf(i) != static_cast<int>(media)) continue;
    const Field& f = schema.field(i);
    const std::string_view param = std::string_view(f.name).substr(schema.field(media).name.size() + 1);
    if (f.type == FieldType::kString) {  // the codec
      impl.slots[i].owned = v.params.codec;
      impl.slots[i].value = impl.slots[i].owned;
      impl.slots[i].set = true;
      continue;
    }
    const int64_t integer = param == "width"         ? v.params.width
                            : param == "height"      ? v.params.height
                            : param == "rotation"    ? v.params.rotation
                            : param == "sample_rate" ? v.params.sample_rate
                            : param == "channels"    ? v.params.channels
                                                     : v.frames();
    const double real = param == "fps" ? v.average_fps() : v.seconds();
    const int32_t narrow = static_cast<int32_t>(integer);
    const void* data = f.type == FieldType::kInt32 ? static_cast<const void*>(&narrow)
                       : f.type == FieldType::kInt64 ? static_cast<const void*>(&integer)
                                                     : static_cast<const void*>(&real);
    (void)StoreNumericValues(impl, i, data, {});  // a scalar of the field's own type: cannot fail
  }
}

Status MediaFieldCheck(const format::RecordValues& impl, size_t field) {
  if (field >= impl.schema.num_fields()) {
    return Status::OutOfRange("record: field index " + std::to_string(field) + " out of range (" +
                              std::to_string(impl.schema.num_fields()) + " fields)");
  }
  const Field& f = impl.schema.field(field);
  MediaKind kind;
  if (!MediaKindOf(f.type, &kind)) {
    return Status::InvalidArgument("record: field '" + f.name + "' is " + FieldTypeName(f.type) +
                                   ", not video or audio");
  }
  return Status::OK();
}

template <typename T>
Status SetArrayValues(format::RecordValues& impl, size_t field, const T* values, size_t count) {
  UREC_RETURN_IF_ERROR(CheckedSlot(impl, field, TypeOf<T>(), true).status());
  const Field& f = impl.schema.field(field);
  // The one -1 dimension of a variable-shape field follows from the count.
  std::vector<int64_t> shape = f.shape;
  const int64_t fixed = f.num_elements();
  const auto variable = std::count(shape.begin(), shape.end(), kVariableDim);
  if (variable == 1 && count % static_cast<size_t>(fixed) == 0) {
    *std::find(shape.begin(), shape.end(), kVariableDim) = static_cast<int64_t>(count) / fixed;
  } else if (variable > 0 || count != static_cast<size_t>(fixed)) {
    return Status::InvalidArgument("record: field '" + f.name + "' of shape " + format::ShapeToString(f.shape) +
                                   " takes " + (variable > 0 ? "a multiple of " : "") + std::to_string(fixed) +
                                   " elements" + (variable > 1 ? " and a shape (SetValues)" : "") + ", got " +
                                   std::to_string(count));
  }
  return SetNumericValues(impl, field, TypeOf<T>(), values, shape);
}

}  // namespace

RecordBuilder::RecordBuilder(const Schema& schema) : impl_(std::make_unique<Impl>(schema)) {}
RecordBuilder::~RecordBuilder() = default;
RecordBuilder::RecordBuilder(RecordBuilder&&) noexcept = default;
RecordBuilder& RecordBuilder::operator=(RecordBuilder&&) noexcept = default;

const Schema& RecordBuilder::schema() const { return impl_->schema; }

Status RecordBuilder::SetInt32(size_t field, int32_t value) { return SetValues(field, FieldType::kInt32, &value, {}); }
Status RecordBuilder::SetInt64(size_t field, int64_t value) { return SetValues(field, FieldType::kInt64, &value, {}); }
Status RecordBuilder::SetFloat32(size_t field, float value) { return SetValues(field, FieldType::kFloat32, &value, {}); }
Status RecordBuilder::SetFloat64(size_t field, double value) { return SetValues(field, FieldType::kFloat64, &value, {}); }

Status RecordBuilder::SetString(size_t field, std::string_view value) {
  UREC_ASSIGN_OR_RETURN(Slot * slot, CheckedSlot(*impl_, field, FieldType::kString, false));
  if (value.size() > format::kMaxBlobBytes) {
    return Status::InvalidArgument("record: string for field '" + impl_->schema.field(field).name +
                                   "' exceeds 4 GiB - 1 bytes");
  }
  slot->owned.assign(value.data(), value.size());
  slot->value = slot->owned;
  slot->set = true;
  return Status::OK();
}

Status RecordBuilder::SetBytes(size_t field, std::string_view value) {
  UREC_ASSIGN_OR_RETURN(Slot * slot, CheckedSlot(*impl_, field, FieldType::kBytes, false));
  if (value.size() > format::kMaxBlobBytes) {
    return Status::InvalidArgument("record: blob for field '" + impl_->schema.field(field).name +
                                   "' exceeds 4 GiB - 1 bytes");
  }
  slot->value = value;
  slot->set = true;
  return Status::OK();
}

Status RecordBuilder::SetBytesOwned(size_t field, std::string value) {
  UREC_ASSIGN_OR_RETURN(Slot * slot, CheckedSlot(*impl_, field, FieldType::kBytes, false));
  slot->owned = std::move(value);
  return SetBytes(field, slot->owned);
}

Status RecordBuilder::SetValues(size_t field, FieldType type, const void* data, const std::vector<int64_t>& shape) {
  return SetNumericValues(*impl_, field, type, data, shape);
}
Status RecordBuilder::SetArray(size_t field, const int32_t* v, size_t n) { return SetArrayValues(*impl_, field, v, n); }
Status RecordBuilder::SetArray(size_t field, const int64_t* v, size_t n) { return SetArrayValues(*impl_, field, v, n); }
Status RecordBuilder::SetArray(size_t field, const float* v, size_t n) { return SetArrayValues(*impl_, field, v, n); }
Status RecordBuilder::SetArray(size_t field, const double* v, size_t n) { return SetArrayValues(*impl_, field, v, n); }

#define UREC_BY_NAME(call)                                           \
  UREC_ASSIGN_OR_RETURN(size_t index, impl_->schema.FindField(field)); \
  return call

Status RecordBuilder::SetInt32(std::string_view field, int32_t value) { UREC_BY_NAME(SetInt32(index, value)); }
Status RecordBuilder::SetInt64(std::string_view field, int64_t value) { UREC_BY_NAME(SetInt64(index, value)); }
Status RecordBuilder::SetFloat32(std::string_view field, float value) { UREC_BY_NAME(SetFloat32(index, value)); }
Status RecordBuilder::SetFloat64(std::string_view field, double value) { UREC_BY_NAME(SetFloat64(index, value)); }
Status RecordBuilder::SetString(std::string_view field, std::string_view value) { UREC_BY_NAME(SetString(index, value)); }
Status RecordBuilder::SetBytes(std::string_view field, std::string_view value) { UREC_BY_NAME(SetBytes(index, value)); }
Status RecordBuilder::SetBytesOwned(std::string_view field, std::string value) {
  UREC_BY_NAME(SetBytesOwned(index, std::move(value)));
}
Status RecordBuilder::SetValues(std::string_view field, FieldType type, const void* data,
                                const std::vector<int64_t>& shape) {
  UREC_BY_NAME(SetValues(index, type, data, shape));
}
Status RecordBuilder::SetArray(std::string_view field, const int32_t* v, size_t n) { UREC_BY_NAME(SetArray(index, v, n)); }
Status RecordBuilder::SetArray(std::string_view field, const int64_t* v, size_t n) { UREC_BY_NAME(SetArray(index, v, n)); }
Status RecordBuilder::SetArray(std::string_view field, const float* v, size_t n) { UREC_BY_NAME(SetArray(index, v, n)); }
Status RecordBuilder::SetArray(std::string_view field, const double* v, size_t n) { UREC_BY_NAME(SetArray(index, v, n)); }

#undef UREC_BY_NAME

Status RecordBuilder::SetMediaValue(size_t field, std::string_view media_value) {
  UREC_RETURN_IF_ERROR(MediaFieldCheck(*impl_, field));
  const Field& f = impl_->schema.field(field);
  Slot& slot = impl_->slots[field];
  if (media_value.size() > format::kMaxBlobBytes) {
    return Status::InvalidArgument("record: media value for field '" + f.name + "' exceeds 4 GiB - 1 bytes");
  }
  if (media_value.data() != slot.owned.data()) slot.owned.assign(media_value.data(), media_value.size());
  MediaValueView view;
  const Status parsed = ParseMediaValue(slot.owned, "record: field '" + f.name + "'", &view);
  MediaKind kind;
  MediaKindOf(f.type, &kind);
  if (!parsed.ok() || view.params.kind != kind) {
    slot.set = false;
    return Status::InvalidArgument(parsed.ok() ? "record: field '" + f.name + "' is " + FieldTypeName(f.type) +
                                                     ", the media value holds " + MediaKindName(view.params.kind)
                                               : parsed.message());
  }
  slot.value = slot.owned;
  slot.set = true;
  StoreMediaParameters(*impl_, field, view);
  return Status::OK();
}

Status RecordBuilder::SetMedia(size_t field, std::string_view container) {
  UREC_RETURN_IF_ERROR(MediaFieldCheck(*impl_, field));
  const Field& f = impl_->schema.field(field);
  media::DemuxOptions options;
  MediaKindOf(f.type, &options.kind);
  options.name = "record: field '" + f.name + "'";
  UREC_ASSIGN_OR_RETURN(impl_->slots[field].owned, media::Demux(container, options));
  return SetMediaValue(field, impl_->slots[field].owned);
}

Status RecordBuilder::SetMedia(std::string_view field, std::string_view container) {
  UREC_ASSIGN_OR_RETURN(size_t index, impl_->schema.FindField(field));
  return SetMedia(index, container);
}

Status RecordBuilder::SetMediaValue(std::string_view field, std::string_view media_value) {
  UREC_ASSIGN_OR_RETURN(size_t index, impl_->schema.FindField(field));
  return SetMediaValue(index, media_value);
}

void RecordBuilder::Clear() {
  for (Slot& slot : impl_->slots) {
    slot.set = false;
    slot.value = {};
  }
}

}  // namespace unirecord
