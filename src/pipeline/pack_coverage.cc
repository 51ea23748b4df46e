// What the pack stage delivered of its epoch (Loader::coverage,
// ResumeCoverage): each document counts when its last token goes out
// (pack_stage.h: doc_pieces_, staged_). SampleBatches counts its batches
// itself, as Next hands them out.
#include <algorithm>

#include "pipeline/pack_stage.h"

namespace unirecord::pipeline {

// A run starts at `at` (SetEpoch, Restore, Create).
void PackStage::StartCoverage(const Sampler& at, bool carries) {
  staged_.clear();
  coverage_.Start(at, options_.subset ? &*options_.subset : nullptr, options_.coverage, at.size(), carries);
}

// How each document of the window is settled: when the last of its pieces
// in rows from next_row_ on goes out (concat: its stream's end); with
// nothing placed (no token, or left out by overlong), when the window ends;
// consumed before (a carried state), never.
void PackStage::PlanDocumentEnds() {
  doc_pieces_.assign(lengths_.size(), kSettledAtWindowEnd);
  for (size_t d = 0; d < lengths_.size(); ++d) {
    if (std::binary_search(carried_consumed_.begin(), carried_consumed_.end(), positions_[d])) {
      doc_pieces_[d] = kConsumedBefore;
    } else if (pack_.strategy == PackStrategy::kConcat && first_[d] < lengths_[d]) {
      doc_pieces_[d] = 1;
    }
  }
  for (size_t r = 0; r < plan_.rows(); ++r) {
    for (size_t i = plan_.row_starts[r]; i < plan_.row_starts[r + 1]; ++i) {
      uint32_t& pieces = doc_pieces_[plan_.pieces[i].document];
      if (pieces == kConsumedBefore) continue;
      if (pieces == kSettledAtWindowEnd) pieces = 0;
      if (r >= next_row_) ++pieces;  // rows before next_row_ went out before a restore
    }
  }
}

// Tokens [offset, offset + length) of document d went into a row.
void PackStage::PieceOut(size_t d, uint64_t offset, uint64_t length) {
  if (pack_.strategy == PackStrategy::kConcat && offset + length != lengths_[d]) return;
  if (--doc_pieces_[d] == 0) StageDocument(d, StagedDocument::kEnded);
}

void PackStage::StageDocument(size_t d, StagedDocument::Kind kind) {
  staged_.push_back({kind, window_.record_ids()[d], positions_[d]});
}

// The window is cut through: its documents with nothing placed are settled,
// delivered (no token) or dropped (overlong "drop").
void PackStage::SettleWindow() {
  for (size_t d = 0; d < doc_pieces_.size(); ++d) {
    if (doc_pieces_[d] != kSettledAtWindowEnd) continue;
    StageDocument(d, lengths_[d] == 0 ? StagedDocument::kEmpty : StagedDocument::kDropped);
  }
}

// The documents settled while a batch was cut: delivered with it, but those
// whose last token was in a batch that drop_last drops.
void PackStage::CommitStaged(bool batch_dropped) {
  for (const StagedDocument& s : staged_) {
    if (s.kind == StagedDocument::kEmpty || (s.kind == StagedDocument::kEnded && !batch_dropped)) {
      coverage_.DeliverAt(s.id, s.position);
    } else {
      coverage_.DropAt(s.id, s.position);
    }
  }
  staged_.clear();
  if (epoch_done_) coverage_.Finish();
}

}  // namespace unirecord::pipeline
