#include "index/list_index.h"

#include <algorithm>

namespace unirecord::index {

using format::kListIndexFixedSize;
using format::kListLengthSize;
using format::kListRowSize;
using format::kListStartSize;
using format::kListValueSize;

uint64_t ListLengthsBytes(uint64_t records) {
  const uint64_t a = format::kListLengthsAlignment;
  return (records * kListLengthSize + a - 1) / a * a;
}

void ListIndexBuilder::AddRow(uint32_t row, const int64_t* values, size_t count) {
  lengths_.resize(row, 0);  // rows without a call (none today) have empty lists
  lengths_.push_back(static_cast<uint32_t>(count));
  scratch_.assign(values, values + count);
  std::sort(scratch_.begin(), scratch_.end());
  scratch_.erase(std::unique(scratch_.begin(), scratch_.end()), scratch_.end());
  for (int64_t v : scratch_) pairs_.emplace_back(v, row);
}

std::string ListIndexBuilder::Build(uint64_t records) {
  lengths_.resize(records, 0);
  std::sort(pairs_.begin(), pairs_.end());
  uint64_t distinct = 0;
  for (size_t i = 0; i < pairs_.size(); ++i) distinct += i == 0 || pairs_[i].first != pairs_[i - 1].first;
  const uint64_t lengths_bytes = ListLengthsBytes(records);
  std::string out(kListIndexFixedSize + lengths_bytes + distinct * kListValueSize + (distinct + 1) * kListStartSize +
                      pairs_.size() * kListRowSize,
                  '\0');
  uint8_t* p = reinterpret_cast<uint8_t*>(out.data());
  format::StoreLE<uint64_t>(p + format::kListIndexValueCountOffset, distinct);
  format::StoreLE<uint64_t>(p + format::kListIndexPairCountOffset, pairs_.size());
  uint8_t* lengths = p + kListIndexFixedSize;
  for (uint64_t r = 0; r < records; ++r) format::StoreLE<uint32_t>(lengths + r * kListLengthSize, lengths_[r]);
  uint8_t* values = lengths + lengths_bytes;
  uint8_t* starts = values + distinct * kListValueSize;
  uint8_t* rows = starts + (distinct + 1) * kListStartSize;
  uint64_t d = 0;
  for (size_t i = 0; i < pairs_.size(); ++i) {
    if (i == 0 || pairs_[i].first != pairs_[i - 1].first) {
      format::StoreLE<uint64_t>(values + d * kListValueSize, static_cast<uint64_t>(pairs_[i].first));
      format::StoreLE<uint64_t>(starts + d * kListStartSize, i);
      ++d;
    }
    format::StoreLE<uint32_t>(rows + i * kListRowSize, pairs_[i].second);
  }
  format::StoreLE<uint64_t>(starts + distinct * kListStartSize, pairs_.size());
  lengths_ = std::vector<uint32_t>();
  pairs_ = std::vector<std::pair<int64_t, uint32_t>>();
  return out;
}

Result<ListIndexView> ListIndexView::Parse(const uint8_t* data, uint64_t length, uint64_t records,
                                           const std::string& where) {
  if (length < kListIndexFixedSize) return Status::Corruption(where + ": shorter than its 16-byte counts");
  ListIndexView v;
  v.records_ = records;
  v.values_count_ = format::LoadLE<uint64_t>(data + format::kListIndexValueCountOffset);
  v.pairs_ = format::LoadLE<uint64_t>(data + format::kListIndexPairCountOffset);
  // Overflow-safe: every term is bounded by `length` before it is added.
  const uint64_t rest = length - kListIndexFixedSize;
  const Status bad = Status::Corruption(where + ": length " + std::to_string(length) + " does not match " +
                                        std::to_string(records) + " rows, " + std::to_string(v.values_count_) +
                                        " values and " + std::to_string(v.pairs_) + " pairs");
  if (records > rest / kListLengthSize) return bad;
  const uint64_t lengths_bytes = ListLengthsBytes(records);
  if (lengths_bytes > rest) return bad;
  uint64_t left = rest - lengths_bytes;
  if (v.values_count_ > left / (kListValueSize + kListStartSize)) return bad;
  left -= v.values_count_ * (kListValueSize + kListStartSize);
  if (left < kListStartSize) return bad;
  left -= kListStartSize;
  if (v.pairs_ > left / kListRowSize || left != v.pairs_ * kListRowSize) return bad;
  v.base_ = data;
  v.lengths_ = data + kListIndexFixedSize;
  v.values_ = v.lengths_ + lengths_bytes;
  v.starts_ = v.values_ + v.values_count_ * kListValueSize;
  v.rows_ = v.starts_ + (v.values_count_ + 1) * kListStartSize;
  return v;
}

uint64_t ListIndexView::LowerBound(int64_t value) const {
  uint64_t lo = 0, hi = values_count_;
  while (lo < hi) {
    const uint64_t mid = lo + (hi - lo) / 2;
    if (Value(mid) < value) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

Status ListIndexView::Span(uint64_t i, uint64_t* begin, uint64_t* end, const std::string& where) const {
  *begin = Start(i);
  *end = Start(i + 1);
  if (*begin > *end || *end > pairs_) {
    return Status::Corruption(where + ": value " + std::to_string(i) + " starts at pair " + std::to_string(*begin) +
                              " and ends at " + std::to_string(*end) + " of " + std::to_string(pairs_));
  }
  return Status::OK();
}

Status ListIndexView::CheckStructure(const std::string& where) const {
  auto corrupt = [&](const std::string& what) { return Status::Corruption(where + ": " + what); };
  for (uint64_t b = records_ * kListLengthSize; b < ListLengthsBytes(records_); ++b) {
    if (lengths_[b] != 0) return corrupt("nonzero padding after the lengths");
  }
  std::vector<uint32_t> listed(records_, 0);
  for (uint64_t r = 0; r < records_; ++r) {
    if (Length(r) > static_cast<uint64_t>(format::kMaxArrayElements)) {
      return corrupt("row " + std::to_string(r) + " has length " + std::to_string(Length(r)) + ", over 2^28");
    }
  }
  if (Start(0) != 0) return corrupt("the first value's rows do not start at pair 0");
  if (Start(values_count_) != pairs_) {
    return corrupt("the starts end at pair " + std::to_string(Start(values_count_)) + ", not at the pair count " +
                   std::to_string(pairs_));
  }
  for (uint64_t i = 0; i < values_count_; ++i) {
    if (i > 0 && Value(i) <= Value(i - 1)) return corrupt("values not sorted at value " + std::to_string(i));
    const uint64_t begin = Start(i), end = Start(i + 1);
    if (end <= begin || end > pairs_) return corrupt("starts not ascending at value " + std::to_string(i));
    for (uint64_t p = begin; p < end; ++p) {
      const uint32_t row = Row(p);
      if (row >= records_) return corrupt("pair " + std::to_string(p) + " names row " + std::to_string(row) + " of " + std::to_string(records_));
      if (p > begin && row <= Row(p - 1)) return corrupt("rows of value " + std::to_string(i) + " not sorted at pair " + std::to_string(p));
      if (++listed[row] > Length(row)) {
        return corrupt("row " + std::to_string(row) + " is listed under more values than its length " +
                       std::to_string(Length(row)));
      }
    }
  }
  return Status::OK();
}

}  // namespace unirecord::index
