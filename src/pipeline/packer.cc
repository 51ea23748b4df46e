#include "pipeline/packer.h"

#include <algorithm>
#include <numeric>
#include <set>
#include <utility>

namespace unirecord::pipeline {

WindowRows PackWindow(const std::vector<uint64_t>& lengths, const PackOptions& options) {
  const uint64_t capacity = options.seq_len;
  WindowRows out;
  // The items to place: whole documents, or the pieces of overlong ones.
  std::vector<PackPiece> items;
  items.reserve(lengths.size());
  for (size_t d = 0; d < lengths.size(); ++d) {
    const uint64_t length = lengths[d];
    const auto document = static_cast<uint32_t>(d);
    if (length <= capacity) {
      if (length > 0) items.push_back({document, 0, length});
      continue;
    }
    ++out.overlong;
    switch (options.overlong) {
      case PackOverlong::kSplit:
        for (uint64_t offset = 0; offset < length; offset += capacity) {
          items.push_back({document, offset, std::min(capacity, length - offset)});
        }
        break;
      case PackOverlong::kTruncate:
        items.push_back({document, 0, capacity});
        out.cut_tokens += length - capacity;
        break;
      case PackOverlong::kDrop:
        ++out.dropped;
        out.cut_tokens += length;
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
