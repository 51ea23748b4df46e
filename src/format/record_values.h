// The values of one record as the shard writer stores them, field by field:
// what a RecordBuilder (include/unirecord/writer.h) fills in and
// Writer::Write hands to the shard it goes to.
#ifndef UNIRECORD_FORMAT_RECORD_VALUES_H_
#define UNIRECORD_FORMAT_RECORD_VALUES_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "unirecord/schema.h"

namespace unirecord::format {

struct RecordValues {
  struct Slot {
    bool set = false;
    // Numeric scalars: little-endian bytes of the value (4 or 8 of them).
    uint8_t scalar[8] = {};
    // Indexed fields: the 8-byte inline representation (SPEC.md 8.2).
    uint64_t indexed_bits = 0;
    // Strings, arrays (little-endian elements) and owned bytes.
    std::string owned;
    // What is written: a view of `scalar`, `owned`, or caller memory.
    std::string_view value;
  };

  explicit RecordValues(const Schema& s) : schema(s), slots(s.num_fields()) {}

  Schema schema;
  std::vector<Slot> slots;
};

// The first of a bool field's element bytes that is neither 0 nor 1 (the
// two a stored bool may hold), or bytes.size() when there is none.
inline size_t FirstBadBoolByte(std::string_view bytes) {
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (bytes[i] != 0 && bytes[i] != 1) return i;
  }
  return bytes.size();
}

}  // namespace unirecord::format

#endif  // UNIRECORD_FORMAT_RECORD_VALUES_H_
