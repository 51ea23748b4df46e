// How a window of documents becomes rows (PackOptions' first_fit and
// best_fit; concat is cut as the documents stream, in packed_loader.cc).
// Pure: the same lengths and options give the same rows. Not public API.
#ifndef UNIRECORD_SRC_PIPELINE_PACKER_H_
#define UNIRECORD_SRC_PIPELINE_PACKER_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "unirecord/packing.h"

namespace unirecord::pipeline {

// Tokens [offset, offset + length) of document `document` of the window.
struct PackPiece {
  uint32_t document = 0;
  uint64_t offset = 0;
  uint64_t length = 0;
};

struct WindowRows {
  std::vector<PackPiece> pieces;   // row by row, each row's pieces in the order they went in
  std::vector<size_t> row_starts;  // rows + 1 entries into `pieces`
  uint64_t overlong = 0;           // documents with a span longer than seq_len
  uint64_t cut_tokens = 0;         // tokens left out (kTruncate, kDrop)
  uint64_t dropped = 0;            // documents left out (kDrop)

  size_t rows() const { return row_starts.empty() ? 0 : row_starts.size() - 1; }
};

// Packs the spans of a window's documents (a whole document is one span from
// token 0; one resumed elsewhere, what is left of it) into rows of
// options.seq_len with options.strategy (kFirstFit or kBestFit) and
// options.overlong, which applies to a span longer than seq_len. Every token
// of every span is in exactly one piece, but those kTruncate and kDrop leave
// out.
WindowRows PackWindow(const std::vector<PackPiece>& spans, const PackOptions& options);

}  // namespace unirecord::pipeline

#endif  // UNIRECORD_SRC_PIPELINE_PACKER_H_
