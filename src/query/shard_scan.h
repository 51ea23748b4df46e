// One shard as the query evaluator reads it (ShardScan): each field from
// the file that holds it, its sorted and list indexes, its scalar pages.
#ifndef UNIRECORD_QUERY_SHARD_SCAN_H_
#define UNIRECORD_QUERY_SHARD_SCAN_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "dataset/shard_access.h"
#include "format/array_values.h"
#include "format/endian.h"
#include "format/format_constants.h"
#include "index/record_table.h"
#include "query/parser.h"

namespace unirecord::query {

// A list comparison's keys (order keys of int64, parser.h) as signed
// ranges, so that a row's length or element is tested without a key
// conversion: the mapping is monotonic, the ranges stay ascending.
class IntRanges {
 public:
  explicit IntRanges(const Comparison& c) {
    constexpr uint64_t kSign = uint64_t{1} << 63;
    for (const KeyRange& r : c.keys) ranges_.emplace_back(static_cast<int64_t>(r.lo ^ kSign), static_cast<int64_t>(r.hi ^ kSign));
  }
  bool Contains(int64_t v) const {
    for (const auto& [lo, hi] : ranges_) {
      if (v < lo) return false;
      if (v <= hi) return true;
    }
    return false;
  }

 private:
  std::vector<std::pair<int64_t, int64_t>> ranges_;
};

// One shard, as the evaluator reads it: each field from the file that holds
// it (the shard, files[0], or a column file beside it; SPEC.md 1.4).
class ShardScan {
 public:
  ShardScan(const Dataset& dataset, size_t s, std::vector<ShardPages::Reader> files, bool verify)
      : dataset_(dataset), s_(s), files_(std::move(files)), verify_(verify), records_(files_[0].reader->records()) {}

  uint64_t records() const { return records_; }
  const std::string& index_path() const { return files_[0].reader->index_path(); }

  // The file holding field `field` of the dataset's schema, and its index there.
  struct At {
    const shard::ShardReader& file;
    const index::FieldLayout& layout;
    size_t field;
  };
  At Of(size_t field) const {
    const auto [source, local] = dataset_internal::ShardAccess::SourceOf(dataset_, s_, field);
    const shard::ShardReader& file = *files_[source].reader;
    return At{file, file.layout(), local};
  }

  // Order key of an indexed field's value in row `row`.
  Result<uint64_t> IndexedKey(const Comparison& c, uint64_t row) const {
    const At at = Of(c.field);
    UREC_ASSIGN_OR_RETURN(const uint8_t* entry, at.file.Entry(row, verify_));
    const size_t slot = static_cast<size_t>(at.layout.indexed_slot[at.field]);
    return index::IndexedOrderKey(c.type, format::LoadLE<uint64_t>(entry + at.layout.IndexedValueOffset(slot)));
  }

  // Row at position `pos` of the field's sorted index, checked to exist.
  Result<uint32_t> SortedRow(size_t field, uint64_t pos) const {
    UREC_ASSIGN_OR_RETURN(const uint8_t* index, SortedIndex(field));
    const uint32_t row = format::LoadLE<uint32_t>(index + pos * format::kSortedEntrySize);
    if (row >= records_) return RowOutOfRange(field, row);
    return row;
  }

  // Rows at positions [begin, end) of the field's sorted index, each checked
  // to exist, passed to `take` (SortedRow's check, without a Result per row).
  template <typename Take>
  Status ForEachSortedRow(size_t field, uint64_t begin, uint64_t end, Take take) const {
    UREC_ASSIGN_OR_RETURN(const uint8_t* index, SortedIndex(field));
    for (uint64_t pos = begin; pos < end; ++pos) {
      const uint32_t row = format::LoadLE<uint32_t>(index + pos * format::kSortedEntrySize);
      if (row >= records_) return RowOutOfRange(field, row);
      if (!take(row)) return Status::OK();
    }
    return Status::OK();
  }

  // The field's sorted index, its section checksum checked on first use when
  // verifying (SPEC section 11): a damaged index is an error, never an answer.
  Result<const uint8_t*> SortedIndex(size_t field) const {
    const At at = Of(field);
    return at.file.index().SortedIndex(static_cast<size_t>(at.layout.indexed_slot[at.field]), verify_);
  }

  Status RowOutOfRange(size_t field, uint32_t row) const {
    return Status::Corruption(Of(field).file.index_path() + ": sorted index of field " + std::to_string(field) +
                              " lists row " + std::to_string(row) + " of " + std::to_string(records_));
  }

  // First position of the sorted index whose key is >= `key`.
  Result<uint64_t> LowerBound(const Comparison& c, uint64_t key) const {
    uint64_t lo = 0, hi = records_;
    while (lo < hi) {
      const uint64_t mid = lo + (hi - lo) / 2;
      UREC_ASSIGN_OR_RETURN(uint32_t row, SortedRow(c.field, mid));
      UREC_ASSIGN_OR_RETURN(uint64_t k, IndexedKey(c, row));
      if (k < key) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo;
  }

  // A scalar-page value of a non-indexed field.
  Result<std::string_view> ColumnValue(size_t field, uint64_t row) const {
    const At at = Of(field);
    UREC_ASSIGN_OR_RETURN(const uint8_t* entry, at.file.Entry(row, verify_));
    uint32_t in_page = 0;
    UREC_ASSIGN_OR_RETURN(page_, at.file.ScalarPage(entry, row, verify_, &in_page));
    return page_->view.Value(static_cast<size_t>(at.layout.column_slot[at.field]), in_page);
  }

  // Order key of any numeric scalar field's value in `row`.
  Result<uint64_t> NumericKey(const Comparison& c, uint64_t row) const {
    if (c.indexed) return IndexedKey(c, row);
    UREC_ASSIGN_OR_RETURN(std::string_view v, ColumnValue(c.field, row));
    const uint8_t* p = reinterpret_cast<const uint8_t*>(v.data());
    return index::IndexedOrderKey(c.type, format::IndexedBitsOf(c.type, p));
  }

  // The list index of a list field (format/SPEC.md 8.4), its checksum and
  // structure checked on first use when verifying.
  Result<const index::ListIndexView*> ListIndex(size_t field) const {
    const At at = Of(field);
    return at.file.index().ListIndex(static_cast<size_t>(at.layout.list_slot[at.field]), verify_);
  }

  std::string ListWhere(size_t field) const {
    return Of(field).file.index_path() + ": list index of field " + std::to_string(field);
  }

  // A list comparison (`contains`, `any`, `len`) on one row: from the list
  // index's lengths for an indexed `len`, else from the row's blob.
  Result<bool> ListMatches(const Comparison& c, uint64_t row) const {
    const IntRanges accepted(c);
    if (c.indexed && c.test == Comparison::Test::kLength) {
      UREC_ASSIGN_OR_RETURN(const index::ListIndexView* list, ListIndex(c.field));
      return accepted.Contains(list->Length(row));
    }
    const At at = Of(c.field);
    const Field& field = at.file.header().schema.field(at.field);
    UREC_ASSIGN_OR_RETURN(const uint8_t* entry, at.file.Entry(row, verify_));
    UREC_ASSIGN_OR_RETURN(const shard::BlobBytes blob,
                          at.file.ReadBlob(entry, row, static_cast<size_t>(at.layout.blob_slot[at.field]),
                                                       verify_ ? shard::BlobCheck::kWhole : shard::BlobCheck::kNone));
    format::ParsedArray parsed;
    const Status shape = format::ParseVarArray(field, blob.mapped, &parsed);  // arrays are never compressed
    if (!shape.ok()) return Status::Corruption(at.file.RowContext(row) + ": " + shape.message());
    if (c.test == Comparison::Test::kLength) return accepted.Contains(parsed.dims[0]);
    const size_t width = FindType(field.type)->width;
    for (size_t i = 0; i < parsed.count; ++i) {
      if (accepted.Contains(ElementToInt64(field.type, parsed.data + i * width))) return true;
    }
    return false;
  }

  Result<bool> Matches(const Comparison& c, uint64_t row) const {
    if (c.is_list()) return ListMatches(c, row);
    if (c.is_string()) {
      UREC_ASSIGN_OR_RETURN(std::string_view v, ColumnValue(c.field, row));
      return c.Matches(v);
    }
    UREC_ASSIGN_OR_RETURN(uint64_t key, NumericKey(c, row));
    return c.Matches(key);
  }

 private:
  const Dataset& dataset_;
  const size_t s_;
  const std::vector<ShardPages::Reader> files_;  // by source; remote: held while scanned
  const bool verify_;
  const uint64_t records_;
  mutable std::shared_ptr<const shard::DecodedPage> page_;  // keeps the last page alive
};

}  // namespace unirecord::query

#endif  // UNIRECORD_QUERY_SHARD_SCAN_H_
