// Running a parsed query shard by shard: comparisons on indexed fields are
// binary searches over the shard's sorted index, others scan scalar pages;
// `and`/`or`/`not` are merges of sorted row lists (docs/query.md, "Plans").
#include "unirecord/query.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iterator>

#include "dataset/shard_access.h"
#include "format/array_values.h"
#include "format/endian.h"
#include "format/format_constants.h"
#include "index/record_table.h"
#include "query/parser.h"

namespace unirecord {

// A parsed query (Query::Impl, private to Query, is this): the helpers
// below take it.
struct ParsedQuery {
  std::string expression;
  Schema schema;
  query::Node root;
};

struct Query::Impl : ParsedQuery {};

namespace {

using query::Comparison;
using query::KeyRange;
using query::Node;
using Rows = std::vector<uint32_t>;  // ascending rows of one shard

// A range of a comparison is materialised through a bitmap of the shard
// rather than sorted when it holds more than 1/kDenseRatio of the rows.
constexpr uint64_t kDenseRatio = 32;
// An indexed comparison filters the rows kept so far (reading each one's
// record-table entry) instead of searching the index when they are fewer
// than 1/kFilterRatio of the rows its ranges hold.
constexpr uint64_t kFilterRatio = 8;

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
                          at.file.ReadBlob(entry, row, static_cast<size_t>(at.layout.blob_slot[at.field]), verify_));
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

Rows AllRows(uint64_t n) {
  Rows rows(n);
  for (uint64_t i = 0; i < n; ++i) rows[i] = static_cast<uint32_t>(i);
  return rows;
}

Rows Intersect(const Rows& a, const Rows& b) {
  Rows out;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

Rows Unite(const Rows& a, const Rows& b) {
  Rows out;
  out.reserve(std::max(a.size(), b.size()));
  std::set_union(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

Rows Subtract(const Rows& a, const Rows& b) {
  Rows out;
  std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

// Appends the rows whose bits are set, ascending.
void AppendBitmapRows(const std::vector<uint64_t>& bits, Rows* rows) {
  for (size_t w = 0; w < bits.size(); ++w) {
    for (uint64_t word = bits[w]; word != 0; word &= word - 1) {
      rows->push_back(static_cast<uint32_t>(w * 64 + static_cast<unsigned>(__builtin_ctzll(word))));
    }
  }
}

// Positions [begin, end) of the sorted index per key range of `c`.
Result<std::vector<std::pair<uint64_t, uint64_t>>> IndexSpans(const ShardScan& shard, const Comparison& c,
                                                              uint64_t* total) {
  std::vector<std::pair<uint64_t, uint64_t>> spans;
  *total = 0;
  for (const KeyRange& r : c.keys) {
    UREC_ASSIGN_OR_RETURN(uint64_t begin, shard.LowerBound(c, r.lo));
    uint64_t end = shard.records();
    if (r.hi != UINT64_MAX) {
      UREC_ASSIGN_OR_RETURN(end, shard.LowerBound(c, r.hi + 1));
    }
    if (end > begin) {
      spans.emplace_back(begin, end);
      *total += end - begin;
    }
  }
  return spans;
}

// The rows of the index spans, ascending. A row listed twice means a damaged index.
Result<Rows> RowsOfSpans(const ShardScan& shard, const Comparison& c,
                         const std::vector<std::pair<uint64_t, uint64_t>>& spans, uint64_t total) {
  const Status duplicate = Status::Corruption(shard.index_path() + ": sorted index of field " + std::to_string(c.field) +
                                              " lists a row twice (run `urec inspect --verify`)");
  Rows rows;
  rows.reserve(total);
  if (total * kDenseRatio > shard.records()) {
    std::vector<uint64_t> bits((shard.records() + 63) / 64, 0);
    bool twice = false;
    for (const auto& [begin, end] : spans) {
      UREC_RETURN_IF_ERROR(shard.ForEachSortedRow(c.field, begin, end, [&](uint32_t row) {
        const uint64_t mask = uint64_t{1} << (row % 64);
        twice = (bits[row / 64] & mask) != 0;
        bits[row / 64] |= mask;
        return !twice;
      }));
      if (twice) return duplicate;
    }
    AppendBitmapRows(bits, &rows);
    return rows;
  }
  for (const auto& [begin, end] : spans) {
    UREC_RETURN_IF_ERROR(shard.ForEachSortedRow(c.field, begin, end, [&](uint32_t row) {
      rows.push_back(row);
      return true;
    }));
  }
  // One key's rows are already ascending (SPEC 8.3 orders ties by row): an
  // equality needs no sort.
  if (!std::is_sorted(rows.begin(), rows.end())) std::sort(rows.begin(), rows.end());
  if (std::adjacent_find(rows.begin(), rows.end()) != rows.end()) return duplicate;
  return rows;
}

// The rows whose list holds one of `c`'s keys (points), from the list
// index: a binary search of the distinct values per key, then the value's
// rows, which the index lists ascending. Each start and row is checked.
Result<Rows> ListContains(const ShardScan& shard, const Comparison& c, uint64_t* total_only) {
  UREC_ASSIGN_OR_RETURN(const index::ListIndexView* list, shard.ListIndex(c.field));
  const std::string where = shard.ListWhere(c.field);
  Rows rows;
  uint64_t total = 0;
  size_t runs = 0;
  for (const KeyRange& r : c.keys) {
    // Keys are points here (the parser makes them so), as order keys of int64.
    const int64_t value = static_cast<int64_t>(r.lo ^ (uint64_t{1} << 63));
    const uint64_t i = list->LowerBound(value);
    if (i >= list->value_count() || list->Value(i) != value) continue;
    uint64_t begin = 0, end = 0;
    UREC_RETURN_IF_ERROR(list->Span(i, &begin, &end, where));
    total += end - begin;
    if (total_only != nullptr) continue;
    ++runs;
    for (uint64_t p = begin; p < end; ++p) {
      const uint32_t row = list->Row(p);
      if (row >= shard.records()) {
        return Status::Corruption(where + " lists row " + std::to_string(row) + " of " + std::to_string(shard.records()));
      }
      rows.push_back(row);
    }
  }
  if (total_only != nullptr) {
    *total_only = total;
    return rows;
  }
  // One value's rows are ascending (SPEC 8.4); several values may share
  // rows: merged through a bitmap of the shard when they are many.
  if (runs > 1 && total * kDenseRatio > shard.records()) {
    std::vector<uint64_t> bits((shard.records() + 63) / 64, 0);
    for (uint32_t row : rows) bits[row / 64] |= uint64_t{1} << (row % 64);
    rows.clear();
    AppendBitmapRows(bits, &rows);
  } else if (runs > 1 || !std::is_sorted(rows.begin(), rows.end())) {
    std::sort(rows.begin(), rows.end());
    rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  }
  return rows;
}

// An indexed `len(f) op n`: the list index's lengths of `candidates` (or of
// every row), no blob read.
Result<Rows> ListLengths(const ShardScan& shard, const Comparison& c, const Rows* candidates) {
  UREC_ASSIGN_OR_RETURN(const index::ListIndexView* list, shard.ListIndex(c.field));
  const IntRanges accepted(c);
  Rows rows;
  auto test = [&](uint32_t row) {
    if (accepted.Contains(list->Length(row))) rows.push_back(row);
  };
  if (candidates != nullptr) {
    for (uint32_t row : *candidates) test(row);
  } else {
    for (uint64_t row = 0; row < shard.records(); ++row) test(static_cast<uint32_t>(row));
  }
  return rows;
}

Result<Rows> Filter(const ShardScan& shard, const Comparison& c, const Rows& candidates) {
  Rows out;
  for (uint32_t row : candidates) {
    UREC_ASSIGN_OR_RETURN(bool match, shard.Matches(c, row));
    if (match) out.push_back(row);
  }
  return out;
}

// The order in which an `and` runs its clauses in this shard: indexed
// comparisons first, fewest rows in their index ranges first, then other
// clauses answered from the indexes, then those that scan (ties keep the
// written order). Each clause after the first tests only the rows kept.
Result<std::vector<const Node*>> AndOrder(const ShardScan& shard, const Node& node) {
  std::vector<std::pair<uint64_t, const Node*>> keyed;
  for (const Node& child : node.children) {
    uint64_t rows = child.scans ? UINT64_MAX : UINT64_MAX - 1;
    if (child.kind == Node::Kind::kComparison && child.comparison.indexed) {
      const Comparison& c = child.comparison;
      if (c.test == Comparison::Test::kValue) {
        UREC_RETURN_IF_ERROR(IndexSpans(shard, c, &rows).status());
      } else if (c.test == Comparison::Test::kContains) {
        UREC_RETURN_IF_ERROR(ListContains(shard, c, &rows).status());
      }
    }
    keyed.emplace_back(rows, &child);
  }
  std::stable_sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<const Node*> order;
  for (const auto& k : keyed) order.push_back(k.second);
  return order;
}

// The rows of the shard matching `node`; with `candidates`, only those of
// them (the result is then a subset of *candidates).
Result<Rows> Evaluate(const ShardScan& shard, const Node& node, const Rows* candidates) {
  switch (node.kind) {
    case Node::Kind::kComparison: {
      const Comparison& c = node.comparison;
      if (c.indexed && c.test == Comparison::Test::kLength) return ListLengths(shard, c, candidates);
      if (!c.indexed) {
        // A scan (scalar pages or blobs).
        if (candidates != nullptr) return Filter(shard, c, *candidates);
        return Filter(shard, c, AllRows(shard.records()));
      }
      if (c.test == Comparison::Test::kContains) {
        UREC_ASSIGN_OR_RETURN(Rows rows, ListContains(shard, c, nullptr));
        return candidates != nullptr ? Intersect(rows, *candidates) : rows;
      }
      uint64_t total = 0;
      UREC_ASSIGN_OR_RETURN(auto spans, IndexSpans(shard, c, &total));
      if (candidates != nullptr && candidates->size() * kFilterRatio < total) return Filter(shard, c, *candidates);
      UREC_ASSIGN_OR_RETURN(Rows rows, RowsOfSpans(shard, c, spans, total));
      return candidates != nullptr ? Intersect(rows, *candidates) : rows;
    }
    case Node::Kind::kAnd: {
      UREC_ASSIGN_OR_RETURN(std::vector<const Node*> order, AndOrder(shard, node));
      Rows rows;
      const Rows* kept = candidates;
      for (const Node* child : order) {
        UREC_ASSIGN_OR_RETURN(rows, Evaluate(shard, *child, kept));
        kept = &rows;
        if (rows.empty()) break;
      }
      return rows;
    }
    case Node::Kind::kOr: {
      Rows rows;
      for (const Node& child : node.children) {
        UREC_ASSIGN_OR_RETURN(Rows more, Evaluate(shard, child, candidates));
        rows = rows.empty() ? std::move(more) : Unite(rows, more);
      }
      return rows;
    }
    case Node::Kind::kNot: {
      UREC_ASSIGN_OR_RETURN(Rows excluded, Evaluate(shard, node.children.front(), candidates));
      return Subtract(candidates != nullptr ? *candidates : AllRows(shard.records()), excluded);
    }
  }
  return Status::Internal("query: unknown node kind");
}

void ExplainNode(const Node& node, int depth, bool first_in_and, std::string* out) {
  const std::string indent(static_cast<size_t>(depth) * 2, ' ');
  switch (node.kind) {
    case Node::Kind::kComparison: {
      const Comparison& c = node.comparison;
      const size_t ranges = c.is_string() ? c.strings.size() : c.keys.size();
      *out += indent + c.text + "  ->  ";
      if (c.is_list()) {
        const bool contains = c.test == Comparison::Test::kContains;
        if (c.indexed && contains) {
          *out += "list index: binary search of the distinct values for " + std::to_string(ranges) +
                  (ranges == 1 ? " value" : " values") + ", their rows read in order (no blob is read)";
        } else if (c.indexed) {
          *out += std::string(first_in_and ? "list index: the length of every row" : "list index: the lengths of the rows kept so far") +
                  " (4 bytes a row, no blob is read)";
        } else {
          *out += first_in_and ? "scan of every row's blob (field has no list index)"
                               : "check of the rows kept so far in their blobs (field has no list index)";
        }
        *out += "\n";
        return;
      }
      if (c.indexed) {
        *out += "sorted index: binary search for " + std::to_string(ranges) + (ranges == 1 ? " range" : " ranges");
        if (!first_in_and) *out += " (or a check of the rows kept so far, when they are fewer)";
      } else {
        *out += first_in_and ? "scan of the scalar pages (field not indexed)"
                             : "check of the rows kept so far in the scalar pages (field not indexed)";
      }
      *out += "\n";
      return;
    }
    case Node::Kind::kAnd: {
      *out += indent +
              "and (indexed clauses first, in each shard the one with the fewest rows in its index ranges "
              "first; each clause narrows the rows for the next)\n";
      std::vector<const Node*> order;
      for (const Node& child : node.children) order.push_back(&child);
      std::stable_partition(order.begin(), order.end(), [](const Node* n) { return !n->scans; });
      for (size_t i = 0; i < order.size(); ++i) ExplainNode(*order[i], depth + 1, first_in_and && i == 0, out);
      return;
    }
    case Node::Kind::kOr:
      *out += indent + "or (union of sorted row lists)\n";
      for (const Node& child : node.children) ExplainNode(child, depth + 1, first_in_and, out);
      return;
    case Node::Kind::kNot:
      *out += indent + "not (complement of the sorted row list)\n";
      ExplainNode(node.children.front(), depth + 1, first_in_and, out);
      return;
  }
}

Status CheckSchema(const ParsedQuery& q, const Dataset& dataset) {
  if (dataset.schema() != q.schema) {
    return Status::InvalidArgument("query '" + q.expression + "' was parsed against another schema (" +
                                   q.schema.ToString() + ") than the dataset's (" + dataset.schema().ToString() + ")");
  }
  return Status::OK();
}

// Whether evaluating `node` reads scalar pages (compares a field that is not
// indexed): then a remote dataset's shards are downloaded, not only their indexes.
bool ReadsPages(const Node& node) {
  if (node.kind == Node::Kind::kComparison) return !node.comparison.indexed;
  for (const Node& child : node.children) {
    if (ReadsPages(child)) return true;
  }
  return false;
}

// Calls `visit(first_id, rows)` with each shard's matching rows, in id order.
// `reads_pages`: the query or the visit reads scalar pages.
template <typename Visit>
Status ForEachShard(const ParsedQuery& q, const Dataset& dataset, bool reads_pages, Visit visit) {
  UREC_RETURN_IF_ERROR(CheckSchema(q, dataset));
  using dataset_internal::ShardAccess;
  for (size_t s = 0; s < ShardAccess::ShardCount(dataset); ++s) {
    UREC_ASSIGN_OR_RETURN(std::vector<ShardPages::Reader> files, ShardAccess::Files(dataset, s, reads_pages));
    const ShardScan shard(dataset, s, std::move(files), dataset.options().verify_checksums);
    UREC_ASSIGN_OR_RETURN(Rows rows, Evaluate(shard, q.root, nullptr));
    UREC_RETURN_IF_ERROR(visit(ShardAccess::FirstId(dataset, s), shard, rows));
  }
  return Status::OK();
}

QueryValue ValueOfKey(FieldType type, uint64_t key) {
  QueryValue v;
  // Undo IndexedOrderKey: ints had the sign bit flipped; floats too when
  // positive (sign now set), all bits when negative (sign now clear).
  constexpr uint64_t kSign = uint64_t{1} << 63;
  if (IsIntegral(type)) {
    v.type = FieldType::kInt64;
    v.int_value = static_cast<int64_t>(key ^ kSign);
  } else {
    const uint64_t bits = (key & kSign) != 0 ? key ^ kSign : ~key;
    v.type = FieldType::kFloat64;
    std::memcpy(&v.float_value, &bits, sizeof(bits));
  }
  return v;
}

}  // namespace

std::string QueryValue::ToString() const {
  if (type == FieldType::kString) {
    std::string out = "\"";
    for (char c : string_value) {
      if (c == '"' || c == '\\') out += '\\';
      if (c == '\n') {
        out += "\\n";
      } else if (c == '\t') {
        out += "\\t";
      } else {
        out += c;
      }
    }
    return out + "\"";
  }
  if (type != FieldType::kFloat32 && type != FieldType::kFloat64) return std::to_string(int_value);
  if (std::isnan(float_value)) return std::signbit(float_value) ? "-nan" : "nan";
  if (std::isinf(float_value)) return float_value < 0 ? "-inf" : "inf";
  char text[32];
  std::snprintf(text, sizeof(text), "%.17g", float_value);
  std::string s = text;
  // Shortest form that reads back to the same double.
  for (int precision = 1; precision < 17; ++precision) {
    std::snprintf(text, sizeof(text), "%.*g", precision, float_value);
    if (std::strtod(text, nullptr) == float_value) {
      s = text;
      break;
    }
  }
  if (s.find_first_of(".en") == std::string::npos) s += ".0";  // still a float literal
  return s;
}

Result<Query> Query::Parse(std::string_view expression, const Schema& schema,
                           const std::map<std::string, std::string>& metadata) {
  auto impl = std::make_shared<Impl>();
  impl->expression = std::string(expression);
  impl->schema = schema;
  UREC_ASSIGN_OR_RETURN(impl->root, query::ParseExpression(expression, schema, metadata));
  return Query(std::move(impl));
}

Result<Query> Query::Parse(std::string_view expression, const Dataset& dataset) {
  return Parse(expression, dataset.schema(), dataset.metadata());
}

const std::string& Query::expression() const { return impl_->expression; }

std::string Query::Explain() const {
  std::string out;
  ExplainNode(impl_->root, 0, true, &out);
  return out;
}

Result<std::vector<uint64_t>> Query::Ids(const Dataset& dataset) const {
  // Room for every id up front: only the pages written are ever touched, and
  // a broad answer is not copied again and again as it grows.
  std::vector<uint64_t> ids;
  ids.reserve(static_cast<size_t>(dataset.size()));
  UREC_RETURN_IF_ERROR(ForEachShard(*impl_, dataset, ReadsPages(impl_->root), [&](uint64_t first_id, const ShardScan&, const Rows& rows) {
    for (uint32_t row : rows) ids.push_back(first_id + row);
    return Status::OK();
  }));
  if (ids.size() < ids.capacity() / 2) ids.shrink_to_fit();
  return ids;
}

Result<uint64_t> Query::Count(const Dataset& dataset) const {
  const Node& root = impl_->root;
  if (root.kind == Node::Kind::kComparison && root.comparison.indexed && !root.comparison.is_list()) {
    // One indexed comparison: the sizes of its index spans, no row is listed.
    UREC_RETURN_IF_ERROR(CheckSchema(*impl_, dataset));
    using dataset_internal::ShardAccess;
    uint64_t count = 0;
    for (size_t s = 0; s < ShardAccess::ShardCount(dataset); ++s) {
      UREC_ASSIGN_OR_RETURN(std::vector<ShardPages::Reader> frames, ShardAccess::Files(dataset, s, false));
      const ShardScan shard(dataset, s, std::move(frames), dataset.options().verify_checksums);
      uint64_t total = 0;
      UREC_RETURN_IF_ERROR(IndexSpans(shard, root.comparison, &total).status());
      count += total;
    }
    return count;
  }
  uint64_t count = 0;
  UREC_RETURN_IF_ERROR(ForEachShard(*impl_, dataset, ReadsPages(impl_->root), [&](uint64_t, const ShardScan&, const Rows& rows) {
    count += rows.size();
    return Status::OK();
  }));
  return count;
}

namespace {

// A comparison that reads scalar field `field_name` (its ranges unused), for
// CountBy and ForEachValue; InvalidArgument for a bytes or array field.
Result<Comparison> FieldReader(const Schema& schema, std::string_view field_name, const char* what) {
  UREC_ASSIGN_OR_RETURN(size_t field, schema.FindField(field_name));
  const Field& f = schema.field(field);
  if (f.type == FieldType::kBytes || f.is_array()) {
    return Status::InvalidArgument(std::string(what) + " field '" + f.name + "': it is " +
                                   (f.is_array() ? "an array" : "a bytes field") + "; only scalar fields have values to group by");
  }
  Comparison reader;
  reader.field = field;
  reader.type = f.type;
  reader.indexed = f.indexed;
  return reader;
}

}  // namespace

Result<std::vector<ValueCount>> Query::CountBy(const Dataset& dataset, std::string_view field_name) const {
  UREC_ASSIGN_OR_RETURN(const Comparison reader, FieldReader(impl_->schema, field_name, "cannot count by"));
  const size_t field = reader.field;
  const Field& f = impl_->schema.field(field);
  std::map<uint64_t, uint64_t> by_key;
  std::map<std::string, uint64_t> by_string;
  UREC_RETURN_IF_ERROR(ForEachShard(*impl_, dataset, ReadsPages(impl_->root) || !f.indexed,
                                    [&](uint64_t, const ShardScan& shard, const Rows& rows) -> Status {
    for (uint32_t row : rows) {
      if (reader.is_string()) {
        UREC_ASSIGN_OR_RETURN(std::string_view v, shard.ColumnValue(field, row));
        ++by_string[std::string(v)];
      } else {
        UREC_ASSIGN_OR_RETURN(uint64_t key, shard.NumericKey(reader, row));
        ++by_key[key];
      }
    }
    return Status::OK();
  }));
  std::vector<ValueCount> out;
  for (const auto& [key, count] : by_key) out.push_back({ValueOfKey(f.type, key), count});
  for (auto& [text, count] : by_string) {
    ValueCount vc;
    vc.value.type = FieldType::kString;
    vc.value.string_value = text;
    vc.count = count;
    out.push_back(std::move(vc));
  }
  return out;
}

Status Query::ForEachValue(const Dataset& dataset, std::string_view field_name, const Query* query,
                           const ValueVisitor& visit) {
  UREC_ASSIGN_OR_RETURN(const Comparison reader, FieldReader(dataset.schema(), field_name, "cannot read values of"));
  using dataset_internal::ShardAccess;
  const bool reads_pages = !reader.indexed || (query != nullptr && ReadsPages(query->impl_->root));
  if (query != nullptr) UREC_RETURN_IF_ERROR(CheckSchema(*query->impl_, dataset));
  QueryValue value;
  for (size_t s = 0; s < ShardAccess::ShardCount(dataset); ++s) {
    UREC_ASSIGN_OR_RETURN(std::vector<ShardPages::Reader> files, ShardAccess::Files(dataset, s, reads_pages));
    const ShardScan shard(dataset, s, std::move(files), dataset.options().verify_checksums);
    Rows all;
    if (query == nullptr) {
      all.resize(static_cast<size_t>(shard.records()));
      for (size_t row = 0; row < all.size(); ++row) all[row] = static_cast<uint32_t>(row);
    }
    Rows matched;
    if (query != nullptr) {
      UREC_ASSIGN_OR_RETURN(matched, Evaluate(shard, query->impl_->root, nullptr));
    }
    const uint64_t first_id = ShardAccess::FirstId(dataset, s);
    for (uint32_t row : query == nullptr ? all : matched) {
      if (reader.is_string()) {
        UREC_ASSIGN_OR_RETURN(std::string_view v, shard.ColumnValue(reader.field, row));
        value.type = FieldType::kString;
        value.string_value.assign(v.data(), v.size());
      } else {
        UREC_ASSIGN_OR_RETURN(uint64_t key, shard.NumericKey(reader, row));
        value = ValueOfKey(reader.type, key);
      }
      UREC_RETURN_IF_ERROR(visit(first_id + row, value));
    }
  }
  return Status::OK();
}

}  // namespace unirecord
