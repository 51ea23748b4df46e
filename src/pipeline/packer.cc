#include "pipeline/packer.h"

#include <algorithm>
#include <numeric>
#include <set>
#include <utility>

namespace unirecord::pipeline {

WindowRows PackWindow(const std::vector<PackPiece>& spans, const PackOptions& options) {
  const uint64_t capacity = options.seq_len;
  WindowRows out;
  // The items to place: whole spans, or the pieces of overlong ones (from
  // the span's start, so a split document's pieces stay where they were).
  std::vector<PackPiece> items;
  items.reserve(spans.size());
  bool counted = false;  // the document of the previous span is counted overlong
  for (size_t i = 0; i < spans.size(); ++i) {
    const PackPiece& span = spans[i];
    if (i > 0 && spans[i - 1].document != span.document) counted = false;
    if (span.length <= capacity) {
      if (span.length > 0) items.push_back(span);
      continue;
    }
    if (!counted) ++out.overlong;
    counted = true;
    switch (options.overlong) {
      case PackOverlong::kSplit:
        for (uint64_t offset = 0; offset < span.length; offset += capacity) {
          items.push_back({span.document, span.offset + offset, std::min(capacity, span.length - offset)});
        }
        break;
      case PackOverlong::kTruncate:
        items.push_back({span.document, span.offset, capacity});
        out.cut_tokens += span.length - capacity;
        break;
      case PackOverlong::kDrop:
        ++out.dropped;
        out.cut_tokens += span.length;
        break;
    }
  }
  if (options.strategy == PackStrategy::kBestFit) {
    // Longest first; equal lengths keep their order (stable).
    std::stable_sort(items.begin(), items.end(),
                     [](const PackPiece& a, const PackPiece& b) { return a.length > b.length; });
  }
  std::vector<uint64_t> room;                    // per row
  std::vector<std::vector<PackPiece>> rows;      // per row, in the order pieces went in
  std::set<std::pair<uint64_t, size_t>> by_room;  // best fit: (room, row), least room first
  for (const PackPiece& item : items) {
    size_t row = rows.size();
    if (options.strategy == PackStrategy::kBestFit) {
      auto fit = by_room.lower_bound({item.length, 0});
      if (fit != by_room.end()) {
        row = fit->second;
        by_room.erase(fit);
      }
    } else {
      for (size_t r = 0; r < rows.size(); ++r) {
        if (room[r] >= item.length) {
          row = r;
          break;
        }
      }
    }
    if (row == rows.size()) {
      rows.emplace_back();
      room.push_back(capacity);
    }
    rows[row].push_back(item);
    room[row] -= item.length;
    if (options.strategy == PackStrategy::kBestFit && room[row] > 0) by_room.insert({room[row], row});
  }
  out.row_starts.push_back(0);
  for (const std::vector<PackPiece>& row : rows) {
    out.pieces.insert(out.pieces.end(), row.begin(), row.end());
    out.row_starts.push_back(out.pieces.size());
  }
  return out;
}

}  // namespace unirecord::pipeline
