// Coverage: which records a loader delivered in an epoch, as a digest that
// adds up across ranks, and the check that the ranks together delivered the
// epoch exactly: every record once, or the multiset a padded or weighted
// epoch calls for (docs/loader.md, "Coverage").
//
//   // each rank, after the epoch's last batch
//   CoverageDigest mine = loader->coverage();
//   std::string bytes = mine.Serialize();           // gather these on one rank
//   // one rank, with every rank's digest parsed back
//   UREC_ASSIGN_OR_RETURN(CoverageCheck check, CheckCoverage(digests));
//   if (!check.ok) std::puts(check.message.c_str());  // what is missing or repeated
//
// A digest is order-independent and additive: the count of ids and two sums
// (modulo 2^64) of 64-bit mixes of each id, so the digests of the ranks add
// up to the digest of what they delivered together. On request
// (CoverageDetail::kIds) it also holds the ids themselves, with their
// multiplicities, as compressed bitmaps (CRoaring), and the check then names
// each missing or repeated id.
#ifndef UNIRECORD_COVERAGE_H_
#define UNIRECORD_COVERAGE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "unirecord/sampler.h"
#include "unirecord/status.h"

namespace unirecord {

// What a loader records of the ids it delivers (LoaderOptions::coverage).
enum class CoverageDetail : uint8_t {
  kNone,    // nothing: coverage() holds no delivery (and the check fails)
  kDigest,  // counts and sums (default): a few nanoseconds per sample
  kIds,     // also the ids as bitmaps, so that the check names them
};

// "none" | "digest" | "ids"; parse returns InvalidArgument for another name.
const char* CoverageDetailName(CoverageDetail detail);
Result<CoverageDetail> ParseCoverageDetail(std::string_view name);

// A multiset of record ids as a count and two sums, modulo 2^64, of the first
// two outputs of SplitMix64 seeded with each id (format/SPEC.md section
// 13.3): independent of order, and the digest of a union is the sum of the
// digests. Two different multisets share a digest with probability about
// 2^-128 (for ids that nobody chose to collide).
struct IdDigest {
  uint64_t count = 0;
  uint64_t sum1 = 0;
  uint64_t sum2 = 0;

  void Add(uint64_t id);
  void Add(const uint64_t* ids, size_t n);
  void Add(const IdDigest& other);
  void Subtract(const IdDigest& other);
  bool operator==(const IdDigest& other) const {
    return count == other.count && sum1 == other.sum1 && sum2 == other.sum2;
  }
  bool operator!=(const IdDigest& other) const { return !(*this == other); }
};

// A multiset of record ids as compressed bitmaps (CRoaring): layer m holds
// the ids held more than m times. Multiplicities up to kMaxMultiplicity.
class IdBitmap {
 public:
  static constexpr uint32_t kMaxMultiplicity = 1024;

  IdBitmap();
  ~IdBitmap();
  IdBitmap(const IdBitmap& other);
  IdBitmap& operator=(const IdBitmap& other);
  IdBitmap(IdBitmap&& other) noexcept;
  IdBitmap& operator=(IdBitmap&& other) noexcept;

  // One more of `id`; false (and nothing added) past kMaxMultiplicity.
  bool Add(uint64_t id);
  // One more of each id in [begin, end); false as Add.
  bool AddRange(uint64_t begin, uint64_t end);
  // The multiset sum; false as Add (this is then unchanged).
  bool Add(const IdBitmap& other);
  // What `a` holds more often than `b`: each id as many times as the excess.
  static IdBitmap Excess(const IdBitmap& a, const IdBitmap& b);

  uint64_t count() const;  // ids, each as often as it is held
  bool empty() const { return count() == 0; }
  // The ids in ascending order, each as often as it is held, at most `max`.
  std::vector<uint64_t> Ids(uint64_t max = UINT64_MAX) const;
  bool operator==(const IdBitmap& other) const;

  // Portable bytes (format/SPEC.md section 13.3); Parse refuses anything
  // malformed as InvalidArgument.
  std::string Serialize() const;
  static Result<IdBitmap> Parse(std::string_view bytes);

 private:
  struct Layers;
  std::unique_ptr<Layers> layers_;
};

// One multiset of a digest: its IdDigest, and its ids when asked for.
struct CoveragePart {
  IdDigest digest;
  std::optional<IdBitmap> ids;

  void Add(uint64_t id);
};

// What one loader (rank) delivered of one epoch so far. The check compares
//   delivered + dropped + cut   with   expected + padding
// (as multisets of record ids, over every rank's digest).
struct CoverageDigest {
  // The epoch: the digests of one check agree on all three.
  uint64_t seed = 0;
  uint64_t epoch = 0;
  // Of what decides the epoch's multiset: the sampler state's fingerprint
  // (record counts, mixture, order) and the subset.
  uint64_t fingerprint = 0;
  // Who: the rank and worker of its run. num_shards 0: the digests of every
  // rank of a run merged (MergeCoverage).
  uint32_t num_shards = 1;
  uint32_t shard_id = 0;
  uint32_t num_workers = 1;
  uint32_t worker_id = 0;
  // Each position of the epoch's order once: every record once (or the
  // subset's ids; a mixture: each dataset's samples by the weights).
  CoveragePart expected;
  // Ids handed out in batches (packing: documents whose last token was).
  CoveragePart delivered;
  // Of `delivered`, those at positions past the epoch's end:
  // DistributedSampler's padding, repeats by design.
  CoveragePart padding;
  // Left out by design where they were reached: packing's overlong "drop",
  // and the documents ending in a last batch that drop_last drops.
  CoveragePart dropped;
  // Positions this rank's run leaves out ahead of it: the sampler's
  // drop_last tail (counted by rank 0 of the run) and the loader's drop_last
  // (its last, partial batch). A resumed run partitions them anew, so a
  // digest carried into it (Loader::ResumeCoverage) leaves them behind.
  CoveragePart cut;
  uint64_t skipped = 0;    // bad records replaced (on_bad_record skip): each leaves one missing, one repeated
  uint64_t uncarried = 0;  // restores mid-epoch whose earlier part was not carried
  bool complete = false;   // the run handed out its last batch
  bool ids = false;        // every part holds its ids (CoverageDetail::kIds)

  // Portable bytes (format/SPEC.md section 13.3, with a checksum); Parse
  // refuses anything else as InvalidArgument.
  std::string Serialize() const;
  static Result<CoverageDigest> Parse(std::string_view bytes);
};

// The digests of every rank (and worker) of one run, each once, as one
// digest of num_shards 0: what carries a run's coverage into a run of any
// number of ranks (Loader::ResumeCoverage). InvalidArgument for digests of
// other epochs or orders, of another run, missing or repeated ranks.
Result<CoverageDigest> MergeCoverage(const std::vector<CoverageDigest>& digests);

struct CoverageCheck {
  bool ok = false;
  uint64_t records = 0;     // positions of the epoch (the expected multiset's size)
  uint64_t deliveries = 0;  // ids delivered, padding included
  uint64_t padding = 0;
  uint64_t dropped = 0;     // dropped + cut
  // Deliveries expected and not made, and made beyond those expected: exact
  // with ids; else from the counts (both 0 and `mismatch` when the counts
  // agree and the sums do not: as many repeated as missing).
  uint64_t missing = 0;
  uint64_t repeated = 0;
  bool mismatch = false;
  bool ids = false;  // every digest held its ids: missing_ids and repeated_ids are exact
  std::vector<uint64_t> missing_ids;   // ascending, each as often as it is missing
  std::vector<uint64_t> repeated_ids;  // ascending, each as often as it is repeated
  uint64_t skipped = 0;
  uint64_t uncarried = 0;
  std::vector<uint32_t> unfinished;  // shard ids whose digest is not complete
  // One line: what holds, or each thing that does not.
  std::string message;
};

// Whether the digests together delivered the epoch exactly: `delivered`
// plus `dropped` and `cut` equal `expected` plus `padding`, with no
// restore left uncarried. InvalidArgument for no digest or digests of
// different epochs, seeds or orders; a failed check is ok == false.
Result<CoverageCheck> CheckCoverage(const std::vector<CoverageDigest>& digests);

// A run planned without reading data (`urec sample --check`): its ranks
// hand out their sampler partitions of one epoch, and, with resume_shards,
// stop and go on in another run as loaders restored from the state do.
struct CoveragePlan {
  std::vector<uint64_t> source_sizes;  // the records (several: a mixture, as Sampler::Create)
  SamplerOptions sampler;              // order, seed, ranks (num_shards) and workers; shard and worker ids unused
  uint64_t epoch = 0;
  CoverageDetail detail = CoverageDetail::kDigest;
  // Each rank (and worker) of the first run hands out `stop` ids (0: its
  // whole partition). With resume_shards > 0, a run of that many ranks then
  // restores the state at `resume_position` (unset: where the first run
  // stopped, as any of its ranks' state says) and carries the merge of the
  // first run's digests (Loader::ResumeCoverage).
  uint64_t stop = 0;
  uint32_t resume_shards = 0;
  std::optional<uint64_t> resume_position;
};

// The digests of the last run of `plan`, one per rank and worker.
// InvalidArgument for what Sampler::Create or Restore refuses.
Result<std::vector<CoverageDigest>> PlanCoverage(const CoveragePlan& plan);

}  // namespace unirecord

#endif  // UNIRECORD_COVERAGE_H_
