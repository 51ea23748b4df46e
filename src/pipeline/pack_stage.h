// The pack stage (LoaderOptions::pack; docs/loader.md, "Packing
// sequences"): documents become rows of seq_len tokens. It reads the record
// stream as windows of `window` documents in the rank's sampler order (the
// batches of a SampleBatches of the packed fields, jagged, on the host:
// WindowOptions), cuts them into rows in the consumer's Next() (packer.h for
// first_fit and best_fit, streaming for concat) in buffers of its own, and
// with a device (LoaderOptions::cuda) sends each batch's outputs up through
// a device stage of its own. Its options are PackOptions (packing.h); its
// state a PackState (pack_state.cc). Not public API.
//
//   pack_stage.{h,cc}   the stage: windows in, rows out
//   pack_options.cc     its options checked, the windows' options, token weights
//   pack_state.cc       where it is: PackState, Restore, elastic resume
//   packer.{h,cc}       a window's rows (first_fit, best_fit)
#ifndef UNIRECORD_SRC_PIPELINE_PACK_STAGE_H_
#define UNIRECORD_SRC_PIPELINE_PACK_STAGE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "pipeline/batch_stream.h"
#include "pipeline/device_stage.h"
#include "pipeline/packer.h"
#include "pipeline/sample_batches.h"
#include "sample/coverage.h"
#include "unirecord/loader.h"
#include "unirecord/packing.h"

namespace unirecord::pipeline {

class PackStage final : public BatchStream {
 public:
  static Result<std::shared_ptr<PackStage>> Create(std::vector<std::shared_ptr<const Dataset>> datasets,
                                                   const LoaderOptions& options);

  // BatchStream
  void Stop() override { windows_->Stop(); }
  const LoaderOptions& options() const override { return options_; }
  int threads() const override { return windows_->threads(); }
  uint64_t batches_per_epoch() const override { return 0; }  // the rows depend on the documents' lengths
  Result<Batch> Next() override;
  void SetEpoch(uint64_t epoch) override;
  uint64_t epoch() const override { return windows_->epoch(); }
  // The current window's start; a packing loader restores a PackState.
  SamplerState state() const override { return State().window; }
  Status Restore(const SamplerState& state) override;
  Result<PackState> pack_state() const override { return State(); }
  Status Restore(const PackState& state) override;
  LoaderStats stats() const override;
  void ResetStats() override;
  // Documents count when their last token goes out (pack_coverage.cc).
  CoverageDigest coverage() const override { return coverage_.Digest(); }
  Status ResumeCoverage(const CoverageDigest& before) override { return coverage_.Carry(before); }

  // Batch::Pool
  void Return(size_t slot) override;
  Status WaitOn(size_t slot, void* cuda_stream) const override;
  Status Synchronize(size_t slot) const override;

  // What this rank has consumed in part or whole of the documents it has
  // read (the window's, at the consumer's row) or carries, past its
  // window's position: what CombinePackStates gathers from each rank.
  void Unfinished(std::vector<uint64_t>* consumed, std::vector<PackSpan>* remaining) const;
  // The sampler of the windows as created: where a window's documents are
  // in the epoch's order.
  const Sampler& order() const { return windows_->order(); }

 private:
  // One packed field: its element and the values it takes in padding and
  // at the EOS.
  struct PackedField {
    std::string name;
    FieldType type = FieldType::kInt32;
    size_t width = 0;
    std::vector<uint8_t> pad;  // pad_value as one element
    std::vector<uint8_t> eos;  // the EOS element (first field only; empty: none)
  };
  // A batch buffer: rows x seq_len values of each packed field and of the
  // segment ids and positions, the segments' cumulative lengths and ids.
  struct OutSlot {
    std::vector<std::vector<uint8_t>> values;  // per packed field
    std::vector<int32_t> segment_ids;
    std::vector<int32_t> positions;
    std::vector<int32_t> cu_seqlens;
    std::vector<int64_t> ids;
    int32_t max_seqlen = 0;
    std::vector<BatchField> fields;
    bool held = false;
  };
  // Where a batch's rows go: the slot and how far it is filled.
  struct RowWriter;

  PackState State() const;
  Status LoadWindow();
  void DropWindow();
  Status CutRows(RowWriter& writer);
  // A free slot of the pool (allocated while the pool may grow), or
  // FailedPrecondition when the consumer holds every device batch.
  Result<size_t> ClaimSlot();
  // The batch's outputs, after `rows` rows were cut into `slot`.
  void Describe(OutSlot& slot, size_t rows);
  // pack_coverage.cc: what was delivered, as documents settled while a
  // batch is cut and committed with it.
  struct StagedDocument {
    enum Kind : uint8_t { kEnded, kEmpty, kDropped } kind;  // last token placed; no token; left out
    uint64_t id;
    uint64_t position;
  };
  void StartCoverage(const Sampler& at, bool carries);
  void PlanDocumentEnds();
  void PieceOut(size_t d, uint64_t offset, uint64_t length);
  void StageDocument(size_t d, StagedDocument::Kind kind);
  void SettleWindow();
  void CommitStaged(bool batch_dropped);

  LoaderOptions options_;  // as given
  PackOptions pack_;       // its fields resolved
  std::vector<PackedField> fields_;
  uint64_t fingerprint_ = 0;
  // The record stream: windows of documents.
  std::shared_ptr<SampleBatches> windows_;
  // On a device (cuda.device >= 0): prefetch + 1 slots there, the most
  // batches the consumer may hold at once; none on the host.
  std::unique_ptr<DeviceStage> device_;
  size_t max_slots_ = 0;  // 0: unbounded (host)

  // --- the consumer's (Next, SetEpoch, state, Restore) ---
  Batch window_;                // the window being cut (empty: none)
  SamplerState window_state_;   // the windows' state at the window's first document
  std::vector<const BatchField*> window_fields_;  // per packed field, in `window_`
  std::vector<uint64_t> lengths_;  // the window's documents, EOS included
  // Each document's position in the epoch's order, before padding wraps it
  // around (Sampler::PaddedPosition).
  std::vector<uint64_t> positions_;
  // What is left of the documents (elastic resume leaves some in part or
  // none of them): first_fit, best_fit: the spans to place; concat: each
  // document's first token to deliver (its length: none).
  std::vector<PackPiece> spans_;
  std::vector<uint64_t> first_;
  WindowRows plan_;        // first_fit, best_fit
  size_t next_row_ = 0;    // of `plan_`
  size_t document_ = 0;    // concat: where the next row starts
  uint64_t token_ = 0;
  bool epoch_done_ = false;
  // Restored from a combined state (PackState::num_shards 0) or a state of
  // such a run: the documents of this rank's partition it carries, consumed
  // in whole or in part before the restore, until the epoch ends.
  std::vector<uint64_t> carried_consumed_;
  std::vector<PackSpan> carried_remaining_;
  // Batches handed out since SetEpoch or Restore (Batch::index(): a packing
  // loader does not know how many batches came before a state).
  uint64_t run_batches_ = 0;
  // Coverage (pack_coverage.cc): documents count when their last token
  // goes out. Per document of the window, the pieces it has still to place
  // in rows not yet cut (concat: 1, its stream's end), or:
  static constexpr uint32_t kSettledAtWindowEnd = UINT32_MAX - 1;  // nothing placed
  static constexpr uint32_t kConsumedBefore = UINT32_MAX;          // carried as consumed
  std::vector<uint32_t> doc_pieces_;
  // Documents settled while the current batch is cut, committed with it.
  std::vector<StagedDocument> staged_;
  sample::CoverageTracker coverage_;
  Status sticky_error_;
  LoaderStats totals_;
  Clock::time_point stats_since_ = Clock::now();

  // --- slots, guarded by mu_ (batches come back from any thread) ---
  mutable std::mutex mu_;
  std::vector<std::unique_ptr<OutSlot>> slots_;
  std::vector<size_t> free_slots_;
};

// pack_options.cc: the options of the windows the pack stage reads (the
// packed fields, jagged, `window` documents a batch, on the host), and the
// checks of `options.pack` against the datasets.
Status CheckPackOptions(const std::vector<std::shared_ptr<const Dataset>>& datasets, const LoaderOptions& options,
                        const PackOptions& pack);
Result<LoaderOptions> WindowOptions(const std::vector<std::shared_ptr<const Dataset>>& datasets,
                                    const LoaderOptions& options, const PackOptions& pack);
// The pack options a state was taken with, as a state records them.
uint64_t PackFingerprint(const PackOptions& pack);

// pack_state.cc: what a state carries is well formed; the carried spans of
// `position` (an empty range: none).
Status CheckCarried(const PackState& state);
std::pair<const PackSpan*, const PackSpan*> SpansAt(const std::vector<PackSpan>& spans, uint64_t position);

}  // namespace unirecord::pipeline

#endif  // UNIRECORD_SRC_PIPELINE_PACK_STAGE_H_
