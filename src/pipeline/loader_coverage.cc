// What a Loader delivered of its epoch (Loader::coverage, ResumeCoverage):
// the plain loader's sample::CoverageTracker counts each batch as Next hands
// it out; the packing loader's counts each document when its last token goes
// out (packed_loader.h: doc_pieces, staged).
#include <algorithm>

#include "pipeline/loader_impl.h"
#include "pipeline/packed_loader.h"

namespace unirecord {

CoverageDigest Loader::coverage() const { return packed_ ? packed_->coverage.Digest() : impl_->coverage.Digest(); }

Status Loader::ResumeCoverage(const CoverageDigest& before) {
  return packed_ ? packed_->coverage.Carry(before) : impl_->coverage.Carry(before);
}

// A run starts at `at` (SetEpoch, Restore, Create).
void Loader::Packed::StartCoverage(const Sampler& at, bool carries) {
  staged.clear();
  coverage.Start(at, options.subset ? &*options.subset : nullptr, options.coverage, at.size(), carries);
}

// How each document of the window is settled: when the last of its pieces
// in rows from next_row on goes out (concat: its stream's end); with nothing
// placed (no token, or left out by overlong), when the window ends; consumed
// before (a carried state), never.
void Loader::Packed::PlanDocumentEnds() {
  doc_pieces.assign(lengths.size(), kSettledAtWindowEnd);
  for (size_t d = 0; d < lengths.size(); ++d) {
    if (std::binary_search(carried_consumed.begin(), carried_consumed.end(), positions[d])) {
      doc_pieces[d] = kConsumedBefore;
    } else if (pack.strategy == PackStrategy::kConcat && first[d] < lengths[d]) {
      doc_pieces[d] = 1;
    }
  }
  for (size_t r = 0; r < plan.rows(); ++r) {
    for (size_t i = plan.row_starts[r]; i < plan.row_starts[r + 1]; ++i) {
      uint32_t& pieces = doc_pieces[plan.pieces[i].document];
      if (pieces == kConsumedBefore) continue;
      if (pieces == kSettledAtWindowEnd) pieces = 0;
      if (r >= next_row) ++pieces;  // rows before next_row went out before a restore
    }
  }
}

// Tokens [offset, offset + length) of document d went into a row.
void Loader::Packed::PieceOut(size_t d, uint64_t offset, uint64_t length) {
  if (pack.strategy == PackStrategy::kConcat && offset + length != lengths[d]) return;
  if (--doc_pieces[d] == 0) StageDocument(d, StagedDocument::kEnded);
}

void Loader::Packed::StageDocument(size_t d, StagedDocument::Kind kind) {
  staged.push_back({kind, window.record_ids()[d], positions[d]});
}

// The window is cut through: its documents with nothing placed are settled,
// delivered (no token) or dropped (overlong "drop").
void Loader::Packed::SettleWindow() {
  for (size_t d = 0; d < doc_pieces.size(); ++d) {
    if (doc_pieces[d] != kSettledAtWindowEnd) continue;
    StageDocument(d, lengths[d] == 0 ? StagedDocument::kEmpty : StagedDocument::kDropped);
  }
}

// The documents settled while a batch was cut: delivered with it, but those
// whose last token was in a batch that drop_last drops.
void Loader::Packed::CommitStaged(bool batch_dropped) {
  for (const StagedDocument& s : staged) {
    if (s.kind == StagedDocument::kEmpty || (s.kind == StagedDocument::kEnded && !batch_dropped)) {
      coverage.DeliverAt(s.id, s.position);
    } else {
      coverage.DropAt(s.id, s.position);
    }
  }
  staged.clear();
  if (epoch_done) coverage.Finish();
}

}  // namespace unirecord
