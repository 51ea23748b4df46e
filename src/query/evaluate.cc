// Evaluating a parsed query in one shard (evaluate.h).
#include "query/evaluate.h"

#include <algorithm>
#include <iterator>

namespace unirecord::query {
namespace {

// A range of a comparison is materialised through a bitmap of the shard
// rather than sorted when it holds more than 1/kDenseRatio of the rows.
constexpr uint64_t kDenseRatio = 32;
// An indexed comparison filters the rows kept so far (reading each one's
// record-table entry) instead of searching the index when they are fewer
// than 1/kFilterRatio of the rows its ranges hold.
constexpr uint64_t kFilterRatio = 8;

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

}  // namespace

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

}  // namespace unirecord::query
