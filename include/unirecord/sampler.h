// Sampler: which record ids a rank reads, in which order, for each epoch.
//
// The order of an epoch is a pure function of (number of records, options,
// seed, epoch): a keyed Feistel network over the ids with cycle-walking, using
// only fixed-width integer arithmetic, so every platform and compiler yields
// the same ids. Nothing is materialised: any position is computed in O(1)
// time and memory, and a saved (seed, epoch, position) restores exactly the
// rest of the sequence.
//
// Partitioning follows torch.utils.data.DistributedSampler: the epoch's order
// is padded by wrapping around to ceil(n / num_shards) * num_shards ids (or cut
// to floor(...) with drop_last), and rank r takes every num_shards-th id
// starting at r. A rank can be split further across loader workers: worker w
// of W takes every W-th id of its rank's sequence starting at w (no padding).
#ifndef UNIRECORD_SAMPLER_H_
#define UNIRECORD_SAMPLER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "unirecord/status.h"

namespace unirecord {

// A keyed bijection of [0, size): a balanced Feistel network over the
// smallest even bit width that covers size, cycle-walked back into range.
// Identical results on every platform; O(1) memory; thread-safe (const).
class Permutation {
 public:
  static constexpr int kRounds = 6;

  Permutation() = default;  // the empty domain
  Permutation(uint64_t size, uint64_t key);

  uint64_t size() const { return size_; }
  // The image of x; x must be < size().
  uint64_t operator()(uint64_t x) const;
  // The x with (*this)(x) == y; y must be < size().
  uint64_t Inverse(uint64_t y) const;

 private:
  uint64_t Encrypt(uint64_t x) const;
  uint64_t Decrypt(uint64_t x) const;

  uint64_t size_ = 0;
  int half_bits_ = 1;
  uint64_t half_mask_ = 1;
  uint64_t round_keys_[kRounds] = {};
};

enum class SampleOrder : uint8_t {
  kSequential = 0,    // ids 0, 1, 2, ... every epoch (seed unused)
  kShuffle = 1,       // a uniform-looking permutation of all ids per epoch
  kBlockShuffle = 2,  // runs of block_size consecutive ids in shuffled order,
                      // then shuffled within windows of `window` positions:
                      // reads stay mostly sequential on slow storage
};

// "sequential" | "shuffle" | "block"; parse returns InvalidArgument otherwise.
const char* SampleOrderName(SampleOrder order);
Result<SampleOrder> ParseSampleOrder(std::string_view name);

struct SamplerOptions {
  SampleOrder order = SampleOrder::kShuffle;
  uint64_t seed = 0;           // with the epoch, keys the permutation
  uint32_t num_shards = 1;     // data-parallel ranks (DistributedSampler's num_replicas)
  uint32_t shard_id = 0;       // this rank, < num_shards
  bool drop_last = false;      // true: floor(n / num_shards) ids per rank, no padding
  uint64_t block_size = 256;   // kBlockShuffle: consecutive ids per run
  uint64_t window = 1024;      // kBlockShuffle: positions shuffled together (0: no window shuffle)
  uint32_t num_workers = 1;    // loader workers sharing this rank's sequence
  uint32_t worker_id = 0;      // this worker, < num_workers
};

// Where a sampler is within its sequence. Serialize() gives 40 portable
// bytes (little-endian, format/SPEC.md section 13); Parse() refuses anything
// else.
struct SamplerState {
  uint64_t seed = 0;
  uint64_t epoch = 0;
  uint64_t position = 0;     // ids of this epoch already handed out
  uint64_t fingerprint = 0;  // of the record count and the options that shape the order, seed aside

  std::string Serialize() const;
  static Result<SamplerState> Parse(std::string_view bytes);
};

class Sampler {
 public:
  // Fails with InvalidArgument on shard_id >= num_shards, worker_id >=
  // num_workers, a zero count, or block_size == 0 in kBlockShuffle.
  static Result<Sampler> Create(uint64_t num_records, const SamplerOptions& options);

  // Starts `epoch` from its first id.
  void SetEpoch(uint64_t epoch);
  uint64_t epoch() const { return epoch_; }
  uint64_t num_records() const { return num_records_; }
  const SamplerOptions& options() const { return options_; }

  // Ids this sampler (rank, worker) yields per epoch.
  uint64_t size() const { return size_; }
  // Ids of the epoch already handed out by Next().
  uint64_t position() const { return position_; }
  uint64_t remaining() const { return size_ - position_; }

  // The id at position k (< size()) of this sampler's sequence for the
  // current epoch. Pure and thread-safe.
  uint64_t At(uint64_t k) const;
  // The id at position p (< num_records()) of the whole epoch's order, before
  // partitioning across ranks and workers.
  uint64_t GlobalAt(uint64_t p) const;

  // Hands out the next id; false at the end of the epoch.
  bool Next(uint64_t* id);
  // Hands out up to `max` next ids into `ids`; returns how many (0 at the end).
  size_t NextBatch(uint64_t* ids, size_t max);
  // Moves to position k of the current epoch (k <= size()).
  Status Seek(uint64_t position);

  SamplerState state() const;
  // Continues exactly where `state` was taken. Fails if the state comes from
  // a sampler over another record count or with other options (seed aside:
  // the state's seed is adopted).
  Status Restore(const SamplerState& state);

 private:
  Sampler(uint64_t num_records, const SamplerOptions& options);
  uint64_t Fingerprint() const;
  uint64_t BlockShuffleAt(uint64_t p) const;

  uint64_t num_records_ = 0;
  SamplerOptions options_;
  uint64_t rank_size_ = 0;  // ids per rank, before the worker split
  uint64_t size_ = 0;       // ids for this worker
  uint64_t epoch_ = 0;
  uint64_t position_ = 0;
  Permutation order_;  // kShuffle: positions -> ids; kBlockShuffle: slots -> blocks
  uint64_t short_block_slot_ = 0;  // kBlockShuffle: slot of the last, shorter block
};

}  // namespace unirecord

#endif  // UNIRECORD_SAMPLER_H_
