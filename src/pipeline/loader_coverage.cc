// What a Loader delivered of its epoch (Loader::coverage, ResumeCoverage):
// the plain loader's sample::CoverageTracker counts each batch as Next hands
// it out; the packing loader's counts each document when its last token goes
// out (packed_loader.h: doc_ends, staged).
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

// Where each document of the window is settled: at the end of its last
// piece; nothing to place (no token, or left out by overlong): when the
// window ends; consumed before (a carried state): never.
void Loader::Packed::PlanDocumentEnds() {
  doc_ends.assign(lengths.size(), kSettledAtWindowEnd);
  for (size_t d = 0; d < lengths.size(); ++d) {
    if (std::binary_search(carried_consumed.begin(), carried_consumed.end(), positions[d])) {
      doc_ends[d] = kConsumedBefore;
    } else if (pack.strategy == PackStrategy::kConcat && first[d] < lengths[d]) {
      doc_ends[d] = lengths[d];
    }
  }
  for (const pipeline::PackPiece& piece : plan.pieces) {
    uint64_t& end = doc_ends[piece.document];
    if (end == kConsumedBefore) continue;
    end = end == kSettledAtWindowEnd ? piece.offset + piece.length : std::max(end, piece.offset + piece.length);
  }
}

void Loader::Packed::StageDocument(size_t d, StagedDocument::Kind kind) {
  staged.push_back({kind, window.record_ids()[d], positions[d]});
}

// The window is cut through: its documents with nothing placed are settled,
// delivered (no token) or dropped (overlong "drop").
void Loader::Packed::SettleWindow() {
  for (size_t d = 0; d < doc_ends.size(); ++d) {
    if (doc_ends[d] != kSettledAtWindowEnd) continue;
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
