// The list index of a variable-length integer list field (format/SPEC.md
// section 8.4, format 1.2): per distinct element value the rows whose list
// holds it, and every row's list length.
#ifndef UNIRECORD_INDEX_LIST_INDEX_H_
#define UNIRECORD_INDEX_LIST_INDEX_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "format/endian.h"
#include "format/format_constants.h"
#include "unirecord/status.h"

namespace unirecord::index {

// Collects one field's lists while a shard is written.
class ListIndexBuilder {
 public:
  // Row `row`'s list (the rows come in order, each once).
  void AddRow(uint32_t row, const int64_t* values, size_t count);
  // The section's bytes (SPEC.md 8.4) for `records` rows; frees the lists.
  std::string Build(uint64_t records);

 private:
  std::vector<uint32_t> lengths_;
  std::vector<std::pair<int64_t, uint32_t>> pairs_;  // (value, row), each once per row
  std::vector<int64_t> scratch_;
};

// A list index section, its length checked against its counts. Accessors
// read in place and check nothing; LowerBound, Start and Row are what a
// query uses and check their bounds (Start/Row via ok()).
class ListIndexView {
 public:
  // Corruption (naming `where`) when the section is shorter than its fixed
  // part or its length is not exactly the one its counts and `records` give.
  static Result<ListIndexView> Parse(const uint8_t* data, uint64_t length, uint64_t records, const std::string& where);

  uint64_t records() const { return records_; }
  uint64_t value_count() const { return values_count_; }
  uint64_t pair_count() const { return pairs_; }
  uint32_t Length(uint64_t row) const { return format::LoadLE<uint32_t>(lengths_ + row * format::kListLengthSize); }
  int64_t Value(uint64_t i) const {
    return static_cast<int64_t>(format::LoadLE<uint64_t>(values_ + i * format::kListValueSize));
  }
  uint64_t Start(uint64_t i) const { return format::LoadLE<uint64_t>(starts_ + i * format::kListStartSize); }
  uint32_t Row(uint64_t p) const { return format::LoadLE<uint32_t>(rows_ + p * format::kListRowSize); }

  // Index of the first distinct value >= v (binary search of `values`).
  uint64_t LowerBound(int64_t v) const;
  // Pair positions [begin, end) of the i-th value (i < value_count()),
  // Corruption when the starts are out of order or past the pairs.
  Status Span(uint64_t i, uint64_t* begin, uint64_t* end, const std::string& where) const;

  // Every structural rule of SPEC.md 8.4 (ordering, bounds, counts, padding).
  Status CheckStructure(const std::string& where) const;

 private:
  uint64_t records_ = 0, values_count_ = 0, pairs_ = 0;
  const uint8_t* base_ = nullptr;
  const uint8_t* lengths_ = nullptr;
  const uint8_t* values_ = nullptr;
  const uint8_t* starts_ = nullptr;
  const uint8_t* rows_ = nullptr;
};

// Bytes of the lengths part, with its padding: align(4 R, 8).
uint64_t ListLengthsBytes(uint64_t records);

}  // namespace unirecord::index

#endif  // UNIRECORD_INDEX_LIST_INDEX_H_
