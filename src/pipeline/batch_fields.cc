#include "pipeline/batch_fields.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>

#include "image/png_decoder.h"

namespace unirecord::pipeline {

namespace {

// --- reading one sample --------------------------------------------------

// Scalars are read widened (indexed ones live in the record table) and
// stored back at the field's width: integers by their low bytes
// (little-endian), floats as float or double.
Status ReadScalar(const FieldSpec& spec, const Record& record, size_t offset, FieldBuffer& buffer) {
  uint8_t* out = buffer.out.data() + offset * spec.row_bytes;
  const TypeInfo& type = *FindType(spec.field.type);
  if (type.kind == 'f') {
    UREC_ASSIGN_OR_RETURN(double value, record.GetFloat64(spec.index));
    if (spec.width == sizeof(float)) {
      const float narrow = static_cast<float>(value);
      std::memcpy(out, &narrow, sizeof narrow);
    } else {
      std::memcpy(out, &value, sizeof value);
    }
    return Status::OK();
  }
  UREC_ASSIGN_OR_RETURN(int64_t value, record.GetInt64(spec.index));
  std::memcpy(out, &value, spec.width);
  return Status::OK();
}

Status ReadFixedArray(const FieldSpec& spec, const Record& record, size_t offset, FieldBuffer& buffer) {
  UREC_ASSIGN_OR_RETURN(ArrayView view, record.GetArray(spec.index));
  std::memcpy(buffer.out.data() + offset * spec.row_bytes, view.data, spec.row_bytes);
  return Status::OK();
}

Status ReadVarArray(const FieldSpec& spec, const Record& record, size_t offset, FieldBuffer& buffer) {
  UREC_ASSIGN_OR_RETURN(ArrayView view, record.GetArray(spec.index));
  const auto* bytes = static_cast<const uint8_t*>(view.data);
  buffer.shapes[offset] = view.shape;
  if (spec.boxes || spec.box_aligned) {  // changed in place: a copy
    buffer.staged[offset].assign(bytes, bytes + view.bytes());
    bytes = buffer.staged[offset].data();
  }
  buffer.values[offset] = bytes;
  return Status::OK();
}

size_t ElementCount(const ArrayShape& shape) {
  size_t count = 1;
  for (int64_t extent : shape) count *= static_cast<size_t>(extent);
  return count;
}


Status ReadString(const FieldSpec& spec, const Record& record, size_t offset, FieldBuffer& buffer) {
  UREC_ASSIGN_OR_RETURN(std::string_view value, record.GetString(spec.index));
  buffer.strings[offset].assign(value);
  return Status::OK();
}

// A mask stored as a PNG (a bytes field): its label plane decoded into the
// staged copy, read from there like a uint8 (height, width) array.
Status ReadPngMask(const FieldSpec& spec, const Record& record, size_t offset, FieldBuffer& buffer) {
  UREC_ASSIGN_OR_RETURN(std::string_view png, record.GetBytes(spec.index));
  int width = 0, height = 0;
  Status decoded = image_internal::DecodePngMask(png, spec.mask_limits, &buffer.staged[offset], &width, &height);
  if (!decoded.ok()) return decoded.WithContext("mask field '" + spec.name + "'");
  ArrayShape& shape = buffer.shapes[offset];
  shape.ndim = 2;
  shape.dims[0] = height;
  shape.dims[1] = width;
  buffer.values[offset] = buffer.staged[offset].data();
  return Status::OK();
}

Status ReadBytes(const FieldSpec& spec, const Record& record, size_t offset, FieldBuffer& buffer) {
  UREC_ASSIGN_OR_RETURN(std::string_view value, record.GetBytes(spec.index));
  buffer.strings[offset].assign(value);
  return Status::OK();
}

// --- assembling the batch --------------------------------------------------

void AssembleFixed(const FieldSpec& spec, RaggedLayout, size_t count, FieldBuffer& buffer, BatchField& field) {
  field.data = buffer.out.data();
  field.shape.assign(1, static_cast<int64_t>(count));
  field.shape.insert(field.shape.end(), spec.sample_shape.begin(), spec.sample_shape.end());
}

// A mask's window resized to size x size as torch's interpolate(mode=
// "nearest") does it (torchvision's resized_crop with NEAREST on a tensor):
// source index floor(i * (in / out)) in float, clamped; then mirrored with
// the window's flip.
void CropResizeNearest(const uint8_t* mask, int64_t mask_width, const CropWindow& window, int size, uint8_t* out) {
  const float sx = float(window.width) / float(size), sy = float(window.height) / float(size);
  std::vector<int> columns(size_t(size), 0);
  for (int i = 0; i < size; ++i) {
    columns[size_t(i)] = window.x + std::min(int(std::floor(float(i) * sx)), window.width - 1);
  }
  if (window.flip) std::reverse(columns.begin(), columns.end());
  for (int r = 0; r < size; ++r) {
    const int row = window.y + std::min(int(std::floor(float(r) * sy)), window.height - 1);
    const uint8_t* src = mask + int64_t(row) * mask_width;
    for (int c = 0; c < size; ++c) out[size_t(r) * size + c] = src[columns[size_t(c)]];
  }
}

// Copies a row-major array of `shape` into one of extents `padded` (every
// extent at least shape's), recursively over the leading dimensions.
void CopyPadded(const uint8_t* src, const ArrayShape& shape, const int64_t* padded, size_t dim, size_t width,
                uint8_t* dst) {
  if (dim + 1 == shape.ndim) {
    std::memcpy(dst, src, static_cast<size_t>(shape[dim]) * width);
    return;
  }
  size_t src_stride = width, dst_stride = width;
  for (size_t d = dim + 1; d < shape.ndim; ++d) {
    src_stride *= static_cast<size_t>(shape[d]);
    dst_stride *= static_cast<size_t>(padded[d]);
  }
  for (int64_t i = 0; i < shape[dim]; ++i) {
    CopyPadded(src + i * src_stride, shape, padded, dim + 1, width, dst + i * dst_stride);
  }
}

// The dimensions of the field that vary per record.
std::vector<size_t> VariableDims(const Field& field) {
  std::vector<size_t> dims;
  for (size_t d = 0; d < field.shape.size(); ++d) {
    if (field.shape[d] == kVariableDim) dims.push_back(d);
  }
  return dims;
}

void AssembleVar(const FieldSpec& spec, RaggedLayout ragged, size_t count, FieldBuffer& buffer, BatchField& field) {
  const size_t ndim = spec.field.shape.size();
  const std::vector<size_t> variable = VariableDims(spec.field);
  const bool first_only = variable.size() == 1 && variable[0] == 0;
  field.offsets = nullptr;
  field.lengths = nullptr;
  field.lengths_shape.clear();
  // The shapes: [B] of the one varying extent, or [B, ndim].
  buffer.lengths.clear();
  if (variable.size() == 1) {
    for (size_t i = 0; i < count; ++i) buffer.lengths.push_back(buffer.shapes[i][variable[0]]);
    field.lengths_shape = {static_cast<int64_t>(count)};
  } else {
    for (size_t i = 0; i < count; ++i) {
      buffer.lengths.insert(buffer.lengths.end(), buffer.shapes[i].begin(), buffer.shapes[i].end());
    }
    field.lengths_shape = {static_cast<int64_t>(count), static_cast<int64_t>(ndim)};
  }
  if (ragged == RaggedLayout::kJagged) {
    // Offsets in rows when only the first dimension varies (torch's jagged
    // layout), else in elements over the flattened values.
    size_t row_elements = 1;
    if (first_only) {
      for (size_t d = 1; d < ndim; ++d) row_elements *= static_cast<size_t>(spec.field.shape[d]);
    }
    buffer.offsets.assign(1, 0);
    size_t total = 0;
    for (size_t i = 0; i < count; ++i) total += ElementCount(buffer.shapes[i]) * spec.width;
    buffer.out.resize(std::max<size_t>(total, 1));
    uint8_t* dst = buffer.out.data();
    for (size_t i = 0; i < count; ++i) {
      const size_t elements = ElementCount(buffer.shapes[i]);
      if (elements > 0) std::memcpy(dst, buffer.values[i], elements * spec.width);
      dst += elements * spec.width;
      buffer.offsets.push_back(buffer.offsets.back() + static_cast<int64_t>(elements / row_elements));
    }
    field.data = buffer.out.data();
    field.offsets = buffer.offsets.data();
    if (first_only) {
      field.shape.assign(1, buffer.offsets.back());
      field.shape.insert(field.shape.end(), spec.field.shape.begin() + 1, spec.field.shape.end());
    } else {
      field.shape.assign(1, static_cast<int64_t>(total / spec.width));
      field.lengths = buffer.lengths.data();
    }
    return;
  }
  // kPad: [B, max extents...] filled with the pad value.
  int64_t padded[8] = {};
  for (size_t d = 0; d < ndim; ++d) padded[d] = spec.field.shape[d] == kVariableDim ? 0 : spec.field.shape[d];
  for (size_t i = 0; i < count; ++i) {
    for (size_t d : variable) padded[d] = std::max(padded[d], buffer.shapes[i][d]);
  }
  size_t sample_elements = 1;
  for (size_t d = 0; d < ndim; ++d) sample_elements *= static_cast<size_t>(padded[d]);
  const size_t sample_bytes = sample_elements * spec.width;
  buffer.out.resize(std::max<size_t>(count * sample_bytes, 1));
  uint8_t* out = buffer.out.data();
  for (size_t i = 0; i < count; ++i) {
    uint8_t* sample = out + i * sample_bytes;
    const size_t elements = ElementCount(buffer.shapes[i]);
    if (variable.size() == 1 && variable[0] == 0) {
      // Rows are whole: the values, then the padding rows after them.
      if (elements > 0) std::memcpy(sample, buffer.values[i], elements * spec.width);
      FillElements(sample + elements * spec.width, sample_elements - elements, spec.pad, spec.width);
    } else {
      FillElements(sample, sample_elements, spec.pad, spec.width);
      if (elements > 0) CopyPadded(buffer.values[i], buffer.shapes[i], padded, 0, spec.width, sample);
    }
  }
  field.data = out;
  field.shape.assign(1, static_cast<int64_t>(count));
  field.shape.insert(field.shape.end(), padded, padded + ndim);
  field.lengths = buffer.lengths.data();
}

void AssembleStrings(const FieldSpec&, RaggedLayout, size_t count, FieldBuffer& buffer, BatchField& field) {
  field.values.clear();
  for (size_t i = 0; i < count; ++i) field.values.emplace_back(buffer.strings[i]);
  field.data = nullptr;
  field.shape.assign(1, static_cast<int64_t>(count));
}

// How each kind of field is read into a batch and assembled: the one place
// a new kind plugs into the Loader (docs/DEVELOPING.md).
struct BatchKind {
  FieldKind kind;
  Status (*read)(const FieldSpec&, const Record&, size_t offset, FieldBuffer&);
  void (*assemble)(const FieldSpec&, RaggedLayout, size_t count, FieldBuffer&, BatchField&);
  bool staged;   // per-sample values (views or copies), assembled when the batch is complete
  bool strings;  // per-sample std::string
  // Why the kind cannot be batched as raw values (BatchFields::Create
  // refuses it, naming the field); nullptr when it can.
  const char* refusal = nullptr;
};

// A mask (LoaderOptions::masks) is a 2-D uint8 array read like any
// variable-shape one, then cropped and resized with the image into a fixed
// [size, size] slot (BatchFields::ReadSample).
constexpr BatchKind kMaskKind = {FieldKind::kVarArray, ReadVarArray, AssembleFixed, true, false};
constexpr BatchKind kPngMaskKind = {FieldKind::kBytes, ReadPngMask, AssembleFixed, true, false};

constexpr BatchKind kBatchKinds[] = {
    {FieldKind::kScalar, ReadScalar, AssembleFixed, false, false},
    {FieldKind::kFixedArray, ReadFixedArray, AssembleFixed, false, false},
    {FieldKind::kVarArray, ReadVarArray, AssembleVar, true, false},
    {FieldKind::kString, ReadString, AssembleStrings, false, true},
    {FieldKind::kBytes, ReadBytes, AssembleStrings, false, true},
    // Media values are batched as decoded clips, not as their packets.
    {FieldKind::kVideo, ReadBytes, AssembleStrings, false, true,
     "is video: the loader batches decoded clips of it, not its stored packets"},
    {FieldKind::kAudio, ReadBytes, AssembleStrings, false, true,
     "is audio: the loader batches decoded windows of it, not its stored packets"},
};

const BatchKind& BatchKindOf(const FieldSpec& spec) {
  if (spec.mask) return spec.field.kind() == FieldKind::kBytes ? kPngMaskKind : kMaskKind;
  for (const BatchKind& k : kBatchKinds) {
    if (k.kind == spec.field.kind()) return k;
  }
  return kBatchKinds[0];  // unreachable: every FieldKind has a row
}


}  // namespace

void FillElements(uint8_t* out, size_t count, const uint8_t* value, size_t width) {
  if (count == 0) return;
  std::memcpy(out, value, width);
  size_t done = 1;  // doubling copies: O(log count) calls
  while (done < count) {
    const size_t step = std::min(done, count - done);
    std::memcpy(out + done * width, out, step * width);
    done += step;
  }
}

Status EncodeElement(const Field& field, double value, std::string_view option, uint8_t* out) {
  const TypeInfo& type = *FindType(field.type);
  const std::string what = "loader: " + std::string(option) + " " + std::to_string(value) + " for field '" + field.name + "' (" +
                           type.name + ")";
  if (type.kind == 'f') {
    if (type.width == 8) {
      std::memcpy(out, &value, 8);
    } else if (type.width == 4) {
      const float narrow = static_cast<float>(value);
      std::memcpy(out, &narrow, 4);
    } else {
      // float16: the half whose value is value (HalfToFloat is exact).
      for (uint32_t bits = 0; bits <= 0xFFFF; ++bits) {
        if (HalfToFloat(static_cast<uint16_t>(bits)) == value) {
          const uint16_t half = static_cast<uint16_t>(bits);
          std::memcpy(out, &half, 2);
          return Status::OK();
        }
      }
      return Status::InvalidArgument(what + " is not a float16 value");
    }
    return Status::OK();
  }
  if (!(std::trunc(value) == value) || std::fabs(value) > 9.0e18 ||
      !FitsIntegral(field.type, static_cast<int64_t>(value))) {
    return Status::InvalidArgument(what + " is not a value of the type");
  }
  const int64_t integer = static_cast<int64_t>(value);
  std::memcpy(out, &integer, type.width);
  return Status::OK();
}

BatchFieldOptions BatchFieldOptionsOf(const LoaderOptions& o) {
  BatchFieldOptions options;
  options.fields = o.fields;
  options.ragged = o.ragged;
  options.pad_value = o.pad_value;
  options.boxes_field = o.boxes_field;
  options.box_format = o.box_format;
  options.box_aligned = o.box_aligned;
  options.masks = o.masks;
  options.image_field = o.image_field;
  options.image_size = o.image_size;
  options.mask_limits = o.decode.limits;
  return options;
}

Result<BatchFields> BatchFields::Create(const Schema& schema, const BatchFieldOptions& options) {
  BatchFields fields;
  fields.ragged_ = options.ragged;
  fields.box_format_ = options.box_format;
  std::vector<std::string> names = options.fields;
  auto listed = [&](const std::string& name) { return std::find(names.begin(), names.end(), name) != names.end(); };
  if (!options.boxes_field.empty() && !listed(options.boxes_field)) names.push_back(options.boxes_field);
  for (const std::string& name : options.box_aligned) {
    if (!listed(name)) names.push_back(name);
  }
  for (const std::string& name : options.masks) {
    if (!listed(name)) names.push_back(name);
  }
  if (!options.box_aligned.empty() && options.boxes_field.empty()) {
    return Status::InvalidArgument("loader: box_aligned is given without a boxes field");
  }
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string& name = names[i];
    if (std::find(names.begin(), names.begin() + i, name) != names.begin() + i) {
      return Status::InvalidArgument("loader: field '" + name + "' is named twice in fields");
    }
    // The image field is batched as the images (decoded): naming it in
    // `fields` asks for nothing more.
    if (!options.image_field.empty() && name == options.image_field) continue;
    Result<size_t> index = schema.FindField(name);
    if (!index.ok()) return index.status().WithContext("loader: fields");
    FieldSpec spec;
    spec.name = name;
    spec.index = *index;
    spec.field = schema.field(*index);
    spec.width = NumericWidth(spec.field.type);
    const FieldKind kind = spec.field.kind();
    if (kind == FieldKind::kScalar && spec.field.type == FieldType::kFloat16) {
      return Status::NotSupported("loader: field '" + name + "': float16 scalars cannot be batched (use a (1,) array)");
    }
    if (kind == FieldKind::kScalar || kind == FieldKind::kFixedArray) {
      spec.row_bytes = spec.width * static_cast<size_t>(spec.field.num_elements());
      spec.sample_shape = spec.field.shape;
    }
    spec.mask = std::find(options.masks.begin(), options.masks.end(), name) != options.masks.end();
    if (const char* refusal = BatchKindOf(spec).refusal; refusal != nullptr && !spec.mask) {
      return Status::NotSupported("loader: field '" + name + "' " + refusal);
    }
    if (spec.mask) {
      if (options.image_field.empty()) {
        return Status::InvalidArgument("loader: mask field '" + name + "' needs an image field to follow");
      }
      const bool png = kind == FieldKind::kBytes;
      if (!png && (spec.field.type != FieldType::kUint8 || spec.field.shape.size() != 2)) {
        return Status::InvalidArgument("loader: mask field '" + name + "' is " + FieldTypeName(spec.field.type) +
                                       " of " + std::to_string(spec.field.shape.size()) +
                                       " dimensions; a mask is a uint8 (height, width) array or PNG bytes");
      }
      spec.mask_limits = options.mask_limits;
      spec.row_bytes = size_t(options.image_size) * size_t(options.image_size);
      spec.sample_shape = {options.image_size, options.image_size};
      fields.has_masks_ = true;
    }
    if (kind == FieldKind::kVarArray) UREC_RETURN_IF_ERROR(EncodeElement(spec.field, options.pad_value, "pad_value", spec.pad));
    spec.boxes = name == options.boxes_field;
    spec.box_aligned = std::find(options.box_aligned.begin(), options.box_aligned.end(), name) !=
                       options.box_aligned.end();
    if (spec.boxes) {
      if (options.image_field.empty()) {
        return Status::InvalidArgument("loader: boxes field '" + name + "' needs an image field to map onto");
      }
      if (spec.field.type != FieldType::kFloat32 || spec.field.shape != std::vector<int64_t>{kVariableDim, 4}) {
        return Status::InvalidArgument("loader: boxes field '" + name + "' is " + FieldTypeName(spec.field.type) +
                                       " of another shape; boxes must be float32 (-1, 4)");
      }
      fields.boxes_spec_ = static_cast<int>(fields.specs_.size());
    }
    if (spec.box_aligned && (kind != FieldKind::kVarArray || spec.field.shape[0] != kVariableDim)) {
      return Status::InvalidArgument("loader: box_aligned field '" + name +
                                     "' must be a variable-shape array along its first dimension (one row per box)");
    }
    fields.specs_.push_back(std::move(spec));
  }
  return fields;
}

std::vector<size_t> BatchFields::SchemaFields() const {
  std::vector<size_t> indexes;
  for (const FieldSpec& spec : specs_) indexes.push_back(spec.index);
  return indexes;
}

void BatchFields::Allocate(size_t batch_size, std::vector<FieldBuffer>* buffers,
                           std::vector<BatchField>* fields) const {
  buffers->resize(specs_.size());
  fields->resize(specs_.size());
  for (size_t i = 0; i < specs_.size(); ++i) {
    const FieldSpec& spec = specs_[i];
    const BatchKind& kind = BatchKindOf(spec);
    FieldBuffer& buffer = (*buffers)[i];
    buffer.out.resize(std::max<size_t>(batch_size * spec.row_bytes, 1));
    if (kind.staged) {
      buffer.values.resize(batch_size);
      buffer.staged.resize(batch_size);
      buffer.shapes.resize(batch_size);
      if (spec.boxes) buffer.keep.resize(batch_size);
    }
    if (kind.strings) buffer.strings.resize(batch_size);
    BatchField& field = (*fields)[i];
    field.name = spec.name;
    // A mask is a uint8 [B, size, size] tensor, whether stored as an array or a PNG.
    field.type = spec.mask ? FieldType::kUint8 : spec.field.type;
    field.kind = spec.mask ? FieldKind::kFixedArray : spec.field.kind();
  }
}

Status BatchFields::ReadSample(const Record& record, const SampleImage* image, size_t offset,
                               std::vector<FieldBuffer>& buffers) const {
  for (size_t i = 0; i < specs_.size(); ++i) {
    const FieldSpec& spec = specs_[i];
    UREC_RETURN_IF_ERROR(BatchKindOf(spec).read(spec, record, offset, buffers[i]));
  }
  if (image == nullptr) return Status::OK();
  for (size_t i = 0; i < specs_.size() && has_masks_; ++i) {
    const FieldSpec& spec = specs_[i];
    if (!spec.mask) continue;
    FieldBuffer& mask = buffers[i];
    const ArrayShape& shape = mask.shapes[offset];
    if (shape[0] != image->height || shape[1] != image->width) {
      return Status::InvalidArgument("mask field '" + spec.name + "' is " + std::to_string(shape[0]) + "x" +
                                     std::to_string(shape[1]) + " (height x width) but the image is " +
                                     std::to_string(image->height) + "x" + std::to_string(image->width));
    }
    CropResizeNearest(mask.values[offset], shape[1], image->window, image->output_size,
                      mask.out.data() + offset * spec.row_bytes);
  }
  if (boxes_spec_ < 0) return Status::OK();
  const CropWindow* window = &image->window;
  const int output_size = image->output_size;
  FieldBuffer& boxes = buffers[static_cast<size_t>(boxes_spec_)];
  const size_t count = static_cast<size_t>(boxes.shapes[offset][0]);
  std::vector<uint8_t>& keep = boxes.keep[offset];
  keep.resize(count);
  // The staged copy is malloc'ed: aligned for float.
  auto* values = reinterpret_cast<float*>(boxes.staged[offset].data());
  const size_t kept = MapBoxes(*window, output_size, output_size, box_format_, values, count, values, keep.data());
  boxes.staged[offset].resize(kept * 4 * sizeof(float));
  boxes.shapes[offset].dims[0] = static_cast<int64_t>(kept);
  for (size_t i = 0; i < specs_.size(); ++i) {
    const FieldSpec& spec = specs_[i];
    if (!spec.box_aligned) continue;
    FieldBuffer& aligned = buffers[i];
    ArrayShape& shape = aligned.shapes[offset];
    if (static_cast<size_t>(shape[0]) != count) {
      return Status::InvalidArgument("field '" + spec.name + "' has " + std::to_string(shape[0]) +
                                     " rows but boxes field '" + specs_[static_cast<size_t>(boxes_spec_)].name +
                                     "' has " + std::to_string(count) + " boxes (box_aligned)");
    }
    const size_t row = count == 0 ? 0 : aligned.staged[offset].size() / count;
    uint8_t* data = aligned.staged[offset].data();
    size_t out_row = 0;
    for (size_t r = 0; r < count; ++r) {
      if (!keep[r]) continue;
      if (out_row != r) std::memmove(data + out_row * row, data + r * row, row);
      ++out_row;
    }
    aligned.staged[offset].resize(out_row * row);
    shape.dims[0] = static_cast<int64_t>(out_row);
  }
  return Status::OK();
}

void BatchFields::Assemble(size_t count, std::vector<FieldBuffer>& buffers, std::vector<BatchField>& fields) const {
  for (size_t i = 0; i < specs_.size(); ++i) {
    const FieldSpec& spec = specs_[i];
    BatchKindOf(spec).assemble(spec, ragged_, count, buffers[i], fields[i]);
  }
}

}  // namespace unirecord::pipeline
