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
//
// Elastic resume: ranks that hand out ids in lockstep have together consumed
// a prefix of the epoch's order (rank r's first k ids are the positions
// r, r + num_shards, ... below k * num_shards). The state records that global
// position, so a state taken on any rank of a run with one number of ranks
// restores into every rank of a run with another: the rest of the epoch's
// order is partitioned again, DistributedSampler's way, from there.
//
// Mixing: a sampler over several sources (Create with a list of sizes) walks
// a mixed epoch whose positions are drawn from the sources in proportion to
// `weights`; its ids number the sources' records one after another (source
// k's record r is the sum of the sizes before k, plus r). docs/loader.md,
// "Mixing", defines the epoch.
#ifndef UNIRECORD_SAMPLER_H_
#define UNIRECORD_SAMPLER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

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
  // Mixing several sources (Create with a list of sizes): each source's
  // weight, non-negative (empty: proportional to the source sizes), and the
  // mixed epoch's length (0: the sum of the source sizes).
  std::vector<double> weights;
  uint64_t epoch_size = 0;
};

// Where a sampler is within its epoch. Serialize() gives 40 portable bytes
// (little-endian, format/SPEC.md section 13); Parse() refuses anything else.
// Version 2 (what state() returns) counts positions of the whole epoch's
// order consumed by all ranks together, and fingerprints only what shapes
// that order, so it restores into any number of ranks and workers. Version 1
// (older builds' states, still restored) counted one rank's ids and
// fingerprinted the partition too.
struct SamplerState {
  uint32_t version = 2;      // 1 or 2 (format::kSamplerStateVersion)
  uint64_t seed = 0;
  uint64_t epoch = 0;
  // Version 2: positions of the epoch's order consumed by all ranks (at most
  // num_records()); version 1: ids this rank (and worker) had handed out.
  uint64_t position = 0;
  // Version 2: of the record count(s) and the order's options, seed aside;
  // version 1: of the record count and every option but the seed.
  uint64_t fingerprint = 0;

  std::string Serialize() const;
  static Result<SamplerState> Parse(std::string_view bytes);
};

class Sampler {
 public:
  // Fails with InvalidArgument on shard_id >= num_shards, worker_id >=
  // num_workers, a zero count, or block_size == 0 in kBlockShuffle.
  static Result<Sampler> Create(uint64_t num_records, const SamplerOptions& options);
  // A mixture of sources of these sizes (one source: as the overload above
  // unless `epoch_size` resamples it). Also fails on a weight count other
  // than the source count, a negative or non-finite weight, all weights 0,
  // a positive weight on an empty source, and kBlockShuffle with a mixture.
  static Result<Sampler> Create(const std::vector<uint64_t>& source_sizes, const SamplerOptions& options);

  // Starts `epoch` from its first id.
  void SetEpoch(uint64_t epoch);
  uint64_t epoch() const { return epoch_; }
  // Positions of one epoch's order: the record count, or a mixture's epoch length.
  uint64_t num_records() const { return num_records_; }
  // Ids range over [0, num_ids()): the record count, or a mixture's sources' total.
  uint64_t num_ids() const { return num_ids_; }
  // A mixture's samples per epoch from each source (one entry for one source).
  const std::vector<uint64_t>& source_counts() const { return counts_; }
  const SamplerOptions& options() const { return options_; }

  // The global position at which this sampler's partition of the epoch
  // starts: 0, unless restored from a state its own partition cannot reach
  // (taken with another number of ranks or workers).
  uint64_t base() const { return base_; }
  // Ids this sampler (rank, worker) yields in its partition of the epoch.
  uint64_t size() const { return size_; }
  // Ids of the partition already handed out by Next().
  uint64_t position() const { return position_; }
  uint64_t remaining() const { return size_ - position_; }
  // Positions of the epoch's order consumed once every rank and worker has
  // handed out `position` ids of its partition (capped at each one's size):
  // base() + the positions those ids cover, at most num_records().
  uint64_t GlobalPosition(uint64_t position) const;

  // The id at position k (< size()) of this sampler's partition of the
  // current epoch. Pure and thread-safe.
  uint64_t At(uint64_t k) const;
  // The position of the epoch's order that At(k) reads, before padding wraps
  // it around: from num_records() on, DistributedSampler's padding (At(k) is
  // GlobalAt(PaddedPosition(k) % num_records())).
  uint64_t PaddedPosition(uint64_t k) const;
  // Whether PaddedPosition(k) == padded for some k < size().
  bool Holds(uint64_t padded) const;
  // The id at position p (< num_records()) of the whole epoch's order, before
  // partitioning across ranks and workers.
  uint64_t GlobalAt(uint64_t p) const;

  // Hands out the next id; false at the end of the epoch.
  bool Next(uint64_t* id);
  // Hands out up to `max` next ids into `ids`; returns how many (0 at the end).
  size_t NextBatch(uint64_t* ids, size_t max);
  // Moves to position k of the current partition (k <= size()).
  Status Seek(uint64_t position);

  // A version-2 state at GlobalPosition(position()).
  SamplerState state() const;
  // Continues where `state` was taken (the state's seed is adopted). Version
  // 2: the positions of the epoch's order before the state's are consumed;
  // the rest is partitioned across this sampler's ranks and workers (the
  // same ids as the sampler that took it when they have the same number of
  // both). Fails if the state comes from a sampler over other record counts
  // or another order. Version 1: as the sampler that took it, which must
  // have had the same options (ranks and workers included).
  Status Restore(const SamplerState& state);

 private:
  Sampler(uint64_t num_records, const SamplerOptions& options);
  void Partition();  // sizes of this rank's and worker's share from base_
  uint64_t Fingerprint(uint32_t version) const;
  uint64_t BlockShuffleAt(uint64_t p) const;
  uint64_t MixtureAt(uint64_t p) const;

  uint64_t num_records_ = 0;
  uint64_t num_ids_ = 0;
  SamplerOptions options_;
  // A mixture (mixed_): each source's size, first id and samples per epoch,
  // and the epoch positions where each source's samples start (in the
  // mixed order's domain, before shuffling).
  bool mixed_ = false;
  std::vector<uint64_t> sizes_, first_ids_, counts_, count_starts_;
  uint64_t base_ = 0;
  uint64_t rank_size_ = 0;  // ids per rank, before the worker split
  uint64_t size_ = 0;       // ids for this worker
  uint64_t epoch_ = 0;
  uint64_t position_ = 0;
  Permutation order_;  // kShuffle: positions -> ids; kBlockShuffle: slots -> blocks
  uint64_t short_block_slot_ = 0;  // kBlockShuffle: slot of the last, shorter block
};

}  // namespace unirecord

#endif  // UNIRECORD_SAMPLER_H_
