// The Loader's batching of any field (LoaderOptions::fields, boxes_field,
// box_aligned): the fields resolved against the schema once, each sample's
// values read by the decode thread that loads it, and the batch assembled
// (padded or jagged) by the thread that completes it. Internal to the
// pipeline layer; docs/loader.md "Batching any field" has the semantics.
#ifndef UNIRECORD_SRC_PIPELINE_BATCH_FIELDS_H_
#define UNIRECORD_SRC_PIPELINE_BATCH_FIELDS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "pipeline/decode_stage.h"
#include "unirecord/dataset.h"
#include "unirecord/loader.h"
#include "unirecord/status.h"

namespace unirecord::pipeline {

// One batched field, resolved once.
struct FieldSpec {
  std::string name;
  size_t index = 0;        // in the schema
  Field field;
  size_t width = 0;        // bytes per element; 0 for string and bytes
  size_t row_bytes = 0;    // scalar and fixed-shape array: bytes per sample
  uint8_t pad[8] = {};     // pad_value as one element of the field's type
  bool boxes = false;      // LoaderOptions::boxes_field
  bool box_aligned = false;
  bool mask = false;       // LoaderOptions::masks: cropped and resized with the image
  DecodeLimits mask_limits;  // a PNG mask's (LoaderOptions::decode's)
  std::vector<int64_t> sample_shape;  // scalar, fixed-shape array, mask: one sample's shape in the batch
};

// One field's buffers in one batch buffer of the pool. Sample i is written
// only by the thread loading it; the vectors are sized at creation, so no
// two threads ever resize one.
struct FieldBuffer {
  std::vector<uint8_t> out;                  // the batch's values
  // Variable-shape: sample i's values, a view into its Record (kept in the
  // batch buffer until the batch is assembled), or for boxes and the
  // values aligned with them, which are changed, a copy in staged[i].
  std::vector<const uint8_t*> values;
  std::vector<std::vector<uint8_t>> staged;
  std::vector<ArrayShape> shapes;            // variable-shape: sample i's shape
  std::vector<std::vector<uint8_t>> keep;    // boxes: which of sample i's boxes stay
  std::vector<int64_t> lengths;
  std::vector<int64_t> offsets;
  std::vector<std::string> strings;          // string and bytes: sample i's value
};

// Writes `count` copies of the element `value` (`width` bytes) at `out`.
void FillElements(uint8_t* out, size_t count, const uint8_t* value, size_t width);

// `value` as one element of the numeric field's type at `out`, exactly, or
// InvalidArgument naming `option` (pad_value, eos), the value and the field.
Status EncodeElement(const Field& field, double value, std::string_view option, uint8_t* out);

// The batch-assembly stage's options: LoaderOptions' of the same names.
struct BatchFieldOptions {
  std::vector<std::string> fields;
  RaggedLayout ragged = RaggedLayout::kPad;
  double pad_value = 0;
  std::string boxes_field;
  BoxFormat box_format = BoxFormat::kXYWH;
  std::vector<std::string> box_aligned;
  std::vector<std::string> masks;
  std::string image_field;  // batched as the images; boxes and masks follow it
  int image_size = 0;       // the images', and so the masks' size in the batch
  DecodeLimits mask_limits;  // a PNG mask's (LoaderOptions::decode's)
};
BatchFieldOptions BatchFieldOptionsOf(const LoaderOptions& options);

class BatchFields {
 public:
  // Resolves options.fields, boxes_field and box_aligned against `schema`:
  // KeyNotFound for a missing field; InvalidArgument for a field named twice
  // or the image field, boxes not float32 (-1, 4) or without an image, an
  // aligned field that is not variable-shape along its first dimension, a
  // mask that is neither a 2-D uint8 array nor bytes (a PNG) or without an
  // image, a pad_value the type cannot hold; NotSupported for a float16
  // scalar.
  static Result<BatchFields> Create(const Schema& schema, const BatchFieldOptions& options);

  bool empty() const { return specs_.empty(); }
  bool has_masks() const { return has_masks_; }
  // The fields read, as indexes into the schema.
  std::vector<size_t> SchemaFields() const;

  // Buffers for one batch of up to `batch_size` samples, and its fields.
  void Allocate(size_t batch_size, std::vector<FieldBuffer>* buffers, std::vector<BatchField>* fields) const;

  // Reads sample `offset`'s values from `record`; with `image`, maps the
  // boxes onto the output image and drops the empty ones with their aligned
  // values, and crops and resizes the masks as the image was (the width and
  // height are needed only with masks). Variable-shape values may stay
  // views into `record`: keep it until Assemble.
  Status ReadSample(const Record& record, const SampleImage* image, size_t offset,
                    std::vector<FieldBuffer>& buffers) const;

  // Makes the batch of the first `count` samples: pads or concatenates the
  // variable-shape arrays and points `fields` at the buffers.
  void Assemble(size_t count, std::vector<FieldBuffer>& buffers, std::vector<BatchField>& fields) const;

 private:
  std::vector<FieldSpec> specs_;
  RaggedLayout ragged_ = RaggedLayout::kPad;
  BoxFormat box_format_ = BoxFormat::kXYWH;
  int boxes_spec_ = -1;
  bool has_masks_ = false;
};

}  // namespace unirecord::pipeline

#endif  // UNIRECORD_SRC_PIPELINE_BATCH_FIELDS_H_
