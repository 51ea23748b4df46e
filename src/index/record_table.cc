#include "index/record_table.h"

#include <cstring>

#include "format/array_values.h"

namespace unirecord::index {

FieldLayout FieldLayout::For(const Schema& schema, bool record_table) {
  FieldLayout layout;
  const size_t n = schema.num_fields();
  layout.blob_slot.assign(n, -1);
  layout.indexed_slot.assign(n, -1);
  layout.column_slot.assign(n, -1);
  layout.list_slot.assign(n, -1);
  for (size_t i = 0; i < n; ++i) {
    const Field& f = schema.field(i);
    const int index = static_cast<int>(i);
    const StorageClass storage = f.storage();
    if (storage == StorageClass::kBlob) {
      layout.blob_slot[i] = static_cast<int>(layout.blob_fields.size());
      layout.blob_fields.push_back(index);
      if (f.has_list_index()) {
        layout.list_slot[i] = static_cast<int>(layout.list_fields.size());
        layout.list_fields.push_back(index);
      }
    } else if (storage == StorageClass::kIndexed) {
      layout.indexed_slot[i] = static_cast<int>(layout.indexed_fields.size());
      layout.indexed_fields.push_back(index);
    } else {
      layout.column_slot[i] = static_cast<int>(layout.column_fields.size());
      layout.column_fields.push_back(index);
    }
  }
  layout.record_table = record_table || !layout.blob_fields.empty() || !layout.indexed_fields.empty() ||
                        layout.column_fields.empty();
  if (!layout.record_table) return layout;
  layout.entry_stride = static_cast<uint32_t>(
      format::kEntryScalarLocatorSize + format::kBlobLocatorSize * layout.blob_fields.size() +
      format::kIndexedValueSize * layout.indexed_fields.size() + format::kEntryChecksumSize);
  return layout;
}

uint64_t IndexedBitsFromInt(int64_t value) { return static_cast<uint64_t>(value); }

uint64_t IndexedBitsFromFloat(double value) {
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

uint64_t IndexedOrderKey(FieldType type, uint64_t bits) {
  constexpr uint64_t kSign = uint64_t{1} << 63;
  if (IsIntegral(type)) return bits ^ kSign;
  // IEEE-754 total order: flip all bits of negatives, the sign bit of positives.
  return (bits & kSign) != 0 ? ~bits : bits | kSign;
}

}  // namespace unirecord::index
