// PackWindow: the first-fit and best-fit rows of a window, checked on
// hand-worked cases and against plain reference packers on random lengths.
#include "pipeline/packer.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace unirecord::pipeline {
namespace {

// Whole documents of these lengths, as the packing loader places them.
std::vector<PackPiece> WholeDocuments(const std::vector<uint64_t>& lengths) {
  std::vector<PackPiece> spans;
  for (size_t d = 0; d < lengths.size(); ++d) {
    if (lengths[d] > 0) spans.push_back({static_cast<uint32_t>(d), 0, lengths[d]});
  }
  return spans;
}

PackOptions Options(PackStrategy strategy, size_t seq_len, PackOverlong overlong = PackOverlong::kSplit) {
  PackOptions o;
  o.strategy = strategy;
  o.seq_len = seq_len;
  o.overlong = overlong;
  return o;
}

// Each row as its (document, offset, length) pieces.
std::vector<std::vector<std::vector<uint64_t>>> Rows(const WindowRows& w) {
  std::vector<std::vector<std::vector<uint64_t>>> rows;
  for (size_t r = 0; r < w.rows(); ++r) {
    rows.emplace_back();
    for (size_t i = w.row_starts[r]; i < w.row_starts[r + 1]; ++i) {
      rows.back().push_back({w.pieces[i].document, w.pieces[i].offset, w.pieces[i].length});
    }
  }
  return rows;
}

TEST(PackWindowTest, FirstFitTakesTheFirstRowWithRoomInDocumentOrder) {
  // seq_len 10: 2 -> row 0; 5 -> row 0 (room 3); 8 -> row 1; 5 -> row 2.
  WindowRows w = PackWindow(WholeDocuments({2, 5, 8, 5}), Options(PackStrategy::kFirstFit, 10));
  using R = std::vector<std::vector<std::vector<uint64_t>>>;
  EXPECT_EQ(Rows(w), (R{{{0, 0, 2}, {1, 0, 5}}, {{2, 0, 8}}, {{3, 0, 5}}}));
}

TEST(PackWindowTest, BestFitTakesLongestFirstIntoTheFullestRowThatFits) {
  // Longest first: 8 -> row 0 (room 2); 5 (doc 1) -> row 1 (room 5); 5 (doc 3) -> row 1; 2 -> row 0.
  WindowRows w = PackWindow(WholeDocuments({2, 5, 8, 5}), Options(PackStrategy::kBestFit, 10));
  using R = std::vector<std::vector<std::vector<uint64_t>>>;
  EXPECT_EQ(Rows(w), (R{{{2, 0, 8}, {0, 0, 2}}, {{1, 0, 5}, {3, 0, 5}}}));
}

TEST(PackWindowTest, OverlongDocumentsAreSplitTruncatedOrDroppedAndCounted) {
  using R = std::vector<std::vector<std::vector<uint64_t>>>;
  WindowRows split =
      PackWindow(WholeDocuments({25, 3}), Options(PackStrategy::kFirstFit, 10, PackOverlong::kSplit));
  EXPECT_EQ(Rows(split), (R{{{0, 0, 10}}, {{0, 10, 10}}, {{0, 20, 5}, {1, 0, 3}}}));
  EXPECT_EQ(split.overlong, 1u);
  EXPECT_EQ(split.cut_tokens, 0u);
  WindowRows truncated =
      PackWindow(WholeDocuments({25, 3}), Options(PackStrategy::kFirstFit, 10, PackOverlong::kTruncate));
  EXPECT_EQ(Rows(truncated), (R{{{0, 0, 10}}, {{1, 0, 3}}}));
  EXPECT_EQ(truncated.cut_tokens, 15u);
  EXPECT_EQ(truncated.dropped, 0u);
  WindowRows dropped =
      PackWindow(WholeDocuments({25, 3}), Options(PackStrategy::kBestFit, 10, PackOverlong::kDrop));
  EXPECT_EQ(Rows(dropped), (R{{{1, 0, 3}}}));
  EXPECT_EQ(dropped.cut_tokens, 25u);
  EXPECT_EQ(dropped.dropped, 1u);
}

TEST(PackWindowTest, WhatIsLeftOfAResumedDocumentIsSplitWhereItWas) {
  // Document 0's first piece was delivered elsewhere: its tokens [10, 25)
  // are split at 20 as the whole document was; document 1 has two spans
  // left, each placed as it is; overlong counts documents.
  const std::vector<PackPiece> spans = {{0, 10, 15}, {1, 0, 3}, {1, 6, 2}};
  WindowRows w = PackWindow(spans, Options(PackStrategy::kFirstFit, 10));
  using R = std::vector<std::vector<std::vector<uint64_t>>>;
  EXPECT_EQ(Rows(w), (R{{{0, 10, 10}}, {{0, 20, 5}, {1, 0, 3}, {1, 6, 2}}}));
  EXPECT_EQ(w.overlong, 1u);
  WindowRows twice = PackWindow({{0, 0, 12}, {0, 20, 12}}, Options(PackStrategy::kBestFit, 10));
  EXPECT_EQ(twice.overlong, 1u);
  EXPECT_EQ(Rows(twice), (R{{{0, 0, 10}}, {{0, 20, 10}}, {{0, 10, 2}, {0, 30, 2}}}));
}

TEST(PackWindowTest, EmptyDocumentsAndAnEmptyWindowMakeNoRows) {
  EXPECT_EQ(PackWindow(WholeDocuments({}), Options(PackStrategy::kBestFit, 8)).rows(), 0u);
  WindowRows w = PackWindow(WholeDocuments({0, 3, 0}), Options(PackStrategy::kFirstFit, 8));
  ASSERT_EQ(w.rows(), 1u);
  EXPECT_EQ(w.pieces.size(), 1u);
  EXPECT_EQ(w.pieces[0].document, 1u);
}

// The plain packers: every row scanned for each item.
std::vector<std::vector<uint32_t>> ReferenceRows(std::vector<uint64_t> lengths, size_t seq_len, bool best) {
  std::vector<uint32_t> order(lengths.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  if (best) {
    std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return lengths[a] > lengths[b]; });
  }
  std::vector<std::vector<uint32_t>> rows;
  std::vector<uint64_t> room;
  for (uint32_t d : order) {
    size_t chosen = rows.size();
    for (size_t r = 0; r < rows.size(); ++r) {
      if (room[r] < lengths[d]) continue;
      if (chosen == rows.size() || (best && room[r] < room[chosen])) chosen = r;
      if (!best) break;
    }
    if (chosen == rows.size()) {
      rows.emplace_back();
      room.push_back(seq_len);
    }
    rows[chosen].push_back(d);
    room[chosen] -= lengths[d];
  }
  return rows;
}

TEST(PackWindowTest, EqualsPlainReferencePackersOnRandomWindows) {
  std::mt19937_64 random(7);
  for (int trial = 0; trial < 200; ++trial) {
    const size_t seq_len = 8 + random() % 120;
    std::vector<uint64_t> lengths(1 + random() % 300);
    for (uint64_t& l : lengths) l = 1 + random() % seq_len;  // none overlong: whole documents only
    for (bool best : {false, true}) {
      const PackStrategy strategy = best ? PackStrategy::kBestFit : PackStrategy::kFirstFit;
      WindowRows w = PackWindow(WholeDocuments(lengths), Options(strategy, seq_len));
      std::vector<std::vector<uint32_t>> got;
      for (size_t r = 0; r < w.rows(); ++r) {
        got.emplace_back();
        uint64_t used = 0;
        for (size_t i = w.row_starts[r]; i < w.row_starts[r + 1]; ++i) {
          got.back().push_back(w.pieces[i].document);
          EXPECT_EQ(w.pieces[i].offset, 0u);
          EXPECT_EQ(w.pieces[i].length, lengths[w.pieces[i].document]);
          used += w.pieces[i].length;
        }
        EXPECT_LE(used, seq_len);
      }
      ASSERT_EQ(got, ReferenceRows(lengths, seq_len, best)) << "trial " << trial << (best ? " best" : " first");
    }
  }
}

}  // namespace
}  // namespace unirecord::pipeline
