// The index record table (format/SPEC.md section 8.2): which schema fields go
// where in a fixed-stride entry, and reading/writing one entry.
#ifndef UNIRECORD_INDEX_RECORD_TABLE_H_
#define UNIRECORD_INDEX_RECORD_TABLE_H_

#include <cstdint>
#include <vector>

#include "format/checksum.h"
#include "format/endian.h"
#include "format/format_constants.h"
#include "unirecord/schema.h"

namespace unirecord::index {

// Storage class of every field (SPEC.md section 5) and the entry layout.
struct FieldLayout {
  std::vector<int> blob_fields;     // schema indexes of blob-class fields (bytes, variable-shape arrays)
  std::vector<int> indexed_fields;  // schema indexes of indexed fields
  std::vector<int> column_fields;   // schema indexes of scalar-page fields
  // Schema indexes of the blob fields with a list index (Field::has_list_index,
  // SPEC.md section 8.4), in schema order; list_slot: position in it, or -1.
  std::vector<int> list_fields;
  std::vector<int> list_slot;
  // Per schema field: its position in the list of its class, or -1.
  std::vector<int> blob_slot;
  std::vector<int> indexed_slot;
  std::vector<int> column_slot;
  // false: the shard has no record table (SPEC.md 8.5) and entry_stride is 0.
  bool record_table = true;
  uint32_t entry_stride = 0;

  // `record_table` false: none when the schema allows it (scalar-page
  // columns only, SPEC.md 8.5), else a record table all the same.
  static FieldLayout For(const Schema& schema, bool record_table = true);

  size_t BlobLocatorOffset(size_t slot) const {
    return format::kEntryScalarLocatorSize + format::kBlobLocatorSize * slot;
  }
  size_t IndexedValueOffset(size_t slot) const {
    return format::kEntryScalarLocatorSize + format::kBlobLocatorSize * blob_fields.size() +
           format::kIndexedValueSize * slot;
  }
  size_t ChecksumOffset() const { return entry_stride - format::kEntryChecksumSize; }
};

struct BlobLocator {
  uint64_t offset = 0;
  uint32_t stored_length = 0;
  uint32_t raw_length = 0;
  uint64_t checksum = 0;
};

inline BlobLocator LoadBlobLocator(const FieldLayout& layout, const uint8_t* entry, size_t slot) {
  using format::LoadLE;
  const uint8_t* p = entry + layout.BlobLocatorOffset(slot);
  BlobLocator b;
  b.offset = LoadLE<uint64_t>(p + format::kBlobLocatorOffsetOffset);
  b.stored_length = LoadLE<uint32_t>(p + format::kBlobLocatorStoredOffset);
  b.raw_length = LoadLE<uint32_t>(p + format::kBlobLocatorRawOffset);
  b.checksum = LoadLE<uint64_t>(p + format::kBlobLocatorChecksumOffset);
  return b;
}

inline void StoreBlobLocator(const FieldLayout& layout, uint8_t* entry, size_t slot,
                             const BlobLocator& b) {
  using format::StoreLE;
  uint8_t* p = entry + layout.BlobLocatorOffset(slot);
  StoreLE<uint64_t>(p + format::kBlobLocatorOffsetOffset, b.offset);
  StoreLE<uint32_t>(p + format::kBlobLocatorStoredOffset, b.stored_length);
  StoreLE<uint32_t>(p + format::kBlobLocatorRawOffset, b.raw_length);
  StoreLE<uint64_t>(p + format::kBlobLocatorChecksumOffset, b.checksum);
}

inline uint64_t EntryChecksum(const FieldLayout& layout, const uint8_t* entry, uint64_t row) {
  // XXH3 with seed 0 equals the unseeded XXH3, so row 0 needs no special case.
  return XXH3_64bits_withSeed(entry, layout.ChecksumOffset(), row);
}

inline void SealEntry(const FieldLayout& layout, uint8_t* entry, uint64_t row) {
  format::StoreLE<uint64_t>(entry + layout.ChecksumOffset(), EntryChecksum(layout, entry, row));
}

inline bool EntryChecksumMatches(const FieldLayout& layout, const uint8_t* entry, uint64_t row) {
  return format::LoadLE<uint64_t>(entry + layout.ChecksumOffset()) == EntryChecksum(layout, entry, row);
}

// The 8-byte inline representation of an indexed value (SPEC.md 8.2).
uint64_t IndexedBitsFromInt(int64_t value);
uint64_t IndexedBitsFromFloat(double value);
// The indexed value as an unsigned key whose plain order is the field's order
// (signed ints, or IEEE-754 total order for floats, SPEC.md 8.3).
uint64_t IndexedOrderKey(FieldType type, uint64_t bits);
// Orders indexed values of one field (signed ints, or IEEE total order).
inline bool IndexedLess(FieldType type, uint64_t a, uint64_t b) {
  return IndexedOrderKey(type, a) < IndexedOrderKey(type, b);
}

}  // namespace unirecord::index

#endif  // UNIRECORD_INDEX_RECORD_TABLE_H_
