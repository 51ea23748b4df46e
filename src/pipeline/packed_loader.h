// A Loader that packs documents into rows (LoaderOptions::pack): an inner
// Loader reads windows of `window` documents (the packed fields, jagged),
// and the consumer's Next() cuts them into rows of seq_len (packer.h for
// first_fit and best_fit, streaming for concat) in buffers of its own; with
// a device (LoaderOptions::cuda) each batch's outputs go up through the
// Loader's device stage. Not public API.
#ifndef UNIRECORD_SRC_PIPELINE_PACKED_LOADER_H_
#define UNIRECORD_SRC_PIPELINE_PACKED_LOADER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "pipeline/device_stage.h"
#include "pipeline/loader_impl.h"
#include "pipeline/packer.h"
#include "sample/coverage.h"
#include "unirecord/loader.h"
#include "unirecord/packing.h"

namespace unirecord {

struct Loader::Packed final : Batch::Pool {
  // One packed field: its place among the window's fields and its element.
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

  static Result<std::shared_ptr<Packed>> Create(std::vector<std::shared_ptr<const Dataset>> datasets,
                                                const LoaderOptions& options);

  // The next batch's slot and rows (0 at the end of the epoch).
  Result<size_t> Next(size_t* rows);
  void SetEpoch(uint64_t epoch);
  PackState state() const;
  Status Restore(const PackState& state);
  LoaderStats stats() const;
  void ResetStats();

  // What this rank has consumed in part or whole of the documents it has
  // read (the window's, at the consumer's row) or carries, past its
  // window's position: what CombinePackStates gathers from each rank.
  void Unfinished(std::vector<uint64_t>* consumed, std::vector<PackSpan>* remaining) const;

  void Return(size_t slot) override;
  Status WaitOn(size_t slot, void* cuda_stream) const override;
  Status Synchronize(size_t slot) const override;

  LoaderOptions options;  // as given
  PackOptions pack;       // its fields resolved
  std::unique_ptr<Loader> inner;
  // The inner loader's sampler as created: restored at a window's state, it
  // says where the window's documents are in the epoch's order.
  std::optional<Sampler> order;
  std::vector<PackedField> packed;
  uint64_t fingerprint = 0;
  // On a device (cuda.device >= 0): prefetch + 1 slots there, the most
  // batches the consumer may hold at once; none on the host.
  std::unique_ptr<pipeline::DeviceStage> device;
  size_t max_slots = 0;  // 0: unbounded (host)

  // --- the consumer's (Next, SetEpoch, state, Restore) ---
  Batch window;             // the window being cut (empty: none)
  SamplerState window_state;  // the inner loader's state at the window's first document
  std::vector<const BatchField*> window_fields;  // per packed field, in `window`
  std::vector<uint64_t> lengths;  // the window's documents, EOS included
  // Each document's position in the epoch's order, before padding wraps it
  // around (Sampler::PaddedPosition).
  std::vector<uint64_t> positions;
  // What is left of the documents (elastic resume leaves some in part or
  // none of them): first_fit, best_fit: the spans to place; concat: each
  // document's first token to deliver (its length: none).
  std::vector<pipeline::PackPiece> spans;
  std::vector<uint64_t> first;
  pipeline::WindowRows plan;      // first_fit, best_fit
  size_t next_row = 0;            // of `plan`
  size_t document = 0;            // concat: where the next row starts
  uint64_t token = 0;
  bool epoch_done = false;
  // Restored from a combined state (PackState::num_shards 0) or a state of
  // such a run: the documents of this rank's partition it carries, consumed
  // in whole or in part before the restore, until the epoch ends.
  std::vector<uint64_t> carried_consumed;
  std::vector<PackSpan> carried_remaining;
  // Batches handed out since SetEpoch or Restore (Batch::index(): a packing
  // loader does not know how many batches came before a state).
  uint64_t run_batches = 0;
  // Coverage (loader_coverage.cc): documents count when their last token
  // goes out. Per document of the window, the pieces it has still to place
  // in rows not yet cut (concat: 1, its stream's end), or:
  static constexpr uint32_t kSettledAtWindowEnd = UINT32_MAX - 1;  // nothing placed
  static constexpr uint32_t kConsumedBefore = UINT32_MAX;          // carried as consumed
  std::vector<uint32_t> doc_pieces;
  // Documents settled while the current batch is cut, committed with it.
  struct StagedDocument {
    enum Kind : uint8_t { kEnded, kEmpty, kDropped } kind;  // last token placed; no token; left out
    uint64_t id;
    uint64_t position;
  };
  std::vector<StagedDocument> staged;
  sample::CoverageTracker coverage;
  Status sticky_error;
  LoaderStats totals;
  pipeline::Clock::time_point stats_since = pipeline::Clock::now();

  // --- slots, guarded by mu (batches come back from any thread) ---
  mutable std::mutex mu;
  std::vector<std::unique_ptr<OutSlot>> slots;
  std::vector<size_t> free_slots;

 private:
  Status LoadWindow();
  void DropWindow();
  Status CutRows(RowWriter& writer);
  void StartCoverage(const Sampler& at, bool carries);
  void PlanDocumentEnds();
  void PieceOut(size_t d, uint64_t offset, uint64_t length);
  void StageDocument(size_t d, StagedDocument::Kind kind);
  void SettleWindow();
  void CommitStaged(bool batch_dropped);
};

}  // namespace unirecord

#endif  // UNIRECORD_SRC_PIPELINE_PACKED_LOADER_H_
