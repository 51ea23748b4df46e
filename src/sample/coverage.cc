// Coverage digests (include/unirecord/coverage.h): the id digest, the
// digest's bytes (format/SPEC.md section 13.3), merging and the check.
#include "unirecord/coverage.h"

#include <algorithm>
#include <array>
#include <cstring>

#include "format/checksum.h"
#include "format/endian.h"
#include "format/format_constants.h"
#include "util/splitmix64.h"

namespace unirecord {

const char* CoverageDetailName(CoverageDetail detail) {
  switch (detail) {
    case CoverageDetail::kNone: return "none";
    case CoverageDetail::kDigest: return "digest";
    case CoverageDetail::kIds: return "ids";
  }
  return "unknown";
}

Result<CoverageDetail> ParseCoverageDetail(std::string_view name) {
  for (CoverageDetail d : {CoverageDetail::kNone, CoverageDetail::kDigest, CoverageDetail::kIds}) {
    if (name == CoverageDetailName(d)) return d;
  }
  return Status::InvalidArgument("unknown coverage detail '" + std::string(name) +
                                 "' (expected 'none', 'digest' or 'ids')");
}

// The first two outputs of SplitMix64 seeded with the id.
void IdDigest::Add(uint64_t id) {
  ++count;
  sum1 += Mix64(id + kSplitMix64Gamma);
  sum2 += Mix64(id + 2 * kSplitMix64Gamma);
}

void IdDigest::Add(const uint64_t* ids, size_t n) {
  uint64_t s1 = 0, s2 = 0;
  for (size_t i = 0; i < n; ++i) {
    s1 += Mix64(ids[i] + kSplitMix64Gamma);
    s2 += Mix64(ids[i] + 2 * kSplitMix64Gamma);
  }
  count += n;
  sum1 += s1;
  sum2 += s2;
}

void IdDigest::Add(const IdDigest& other) {
  count += other.count;
  sum1 += other.sum1;
  sum2 += other.sum2;
}

void IdDigest::Subtract(const IdDigest& other) {
  count -= other.count;
  sum1 -= other.sum1;
  sum2 -= other.sum2;
}

void CoveragePart::Add(uint64_t id) {
  digest.Add(id);
  if (ids && !ids->Add(id)) ids.reset();
}

namespace {

using format::LoadLE;
using format::StoreLE;

// The parts in the order of their bytes.
std::array<CoveragePart*, format::kCoveragePartCount> Parts(CoverageDigest& d) {
  return {&d.expected, &d.delivered, &d.padding, &d.dropped, &d.cut};
}
std::array<const CoveragePart*, format::kCoveragePartCount> Parts(const CoverageDigest& d) {
  return {&d.expected, &d.delivered, &d.padding, &d.dropped, &d.cut};
}

Status Bad(const std::string& what) { return Status::InvalidArgument("coverage digest: " + what); }

}  // namespace

std::string CoverageDigest::Serialize() const {
  const auto parts = Parts(*this);
  std::string out(format::kCoverageIdsOffset, '\0');
  auto* b = reinterpret_cast<uint8_t*>(out.data());
  std::memcpy(b, format::kCoverageMagic, sizeof(format::kCoverageMagic));
  StoreLE<uint32_t>(b + format::kCoverageVersionOffset, format::kCoverageVersion);
  StoreLE<uint64_t>(b + format::kCoverageSeedOffset, seed);
  StoreLE<uint64_t>(b + format::kCoverageEpochOffset, epoch);
  StoreLE<uint64_t>(b + format::kCoverageFingerprintOffset, fingerprint);
  StoreLE<uint32_t>(b + format::kCoverageNumShardsOffset, num_shards);
  StoreLE<uint32_t>(b + format::kCoverageShardIdOffset, shard_id);
  StoreLE<uint32_t>(b + format::kCoverageNumWorkersOffset, num_workers);
  StoreLE<uint32_t>(b + format::kCoverageWorkerIdOffset, worker_id);
  StoreLE<uint32_t>(b + format::kCoverageFlagsOffset, (complete ? format::kCoverageFlagComplete : 0) |
                                                          (ids ? format::kCoverageFlagIds : 0));
  StoreLE<uint64_t>(b + format::kCoverageSkippedOffset, skipped);
  StoreLE<uint64_t>(b + format::kCoverageUncarriedOffset, uncarried);
  for (size_t i = 0; i < format::kCoveragePartCount; ++i) {
    uint8_t* at = b + format::kCoveragePartsOffset + i * format::kCoveragePartSize;
    StoreLE<uint64_t>(at, parts[i]->digest.count);
    StoreLE<uint64_t>(at + 8, parts[i]->digest.sum1);
    StoreLE<uint64_t>(at + 16, parts[i]->digest.sum2);
  }
  for (size_t i = 0; ids && i < format::kCoveragePartCount; ++i) {
    const std::string bitmap = parts[i]->ids ? parts[i]->ids->Serialize() : IdBitmap().Serialize();
    uint8_t length[8];
    StoreLE<uint64_t>(length, bitmap.size());
    out.append(reinterpret_cast<const char*>(length), sizeof(length));
    out += bitmap;
  }
  uint8_t checksum[format::kCoverageChecksumSize];
  StoreLE<uint64_t>(checksum, format::Checksum(out.data(), out.size()));
  out.append(reinterpret_cast<const char*>(checksum), sizeof(checksum));
  return out;
}

Result<CoverageDigest> CoverageDigest::Parse(std::string_view bytes) {
  if (bytes.size() < format::kCoverageMinSize ||
      std::memcmp(bytes.data(), format::kCoverageMagic, sizeof(format::kCoverageMagic)) != 0) {
    return Bad("expected at least " + std::to_string(format::kCoverageMinSize) + " bytes starting with 'URCD', got " +
               std::to_string(bytes.size()) + " bytes");
  }
  const auto* b = reinterpret_cast<const uint8_t*>(bytes.data());
  const uint32_t version = LoadLE<uint32_t>(b + format::kCoverageVersionOffset);
  if (version != format::kCoverageVersion) {
    return Status::NotSupported("coverage digest: version " + std::to_string(version) + " (this build reads version " +
                                std::to_string(format::kCoverageVersion) + ")");
  }
  const size_t body = bytes.size() - format::kCoverageChecksumSize;
  if (LoadLE<uint64_t>(b + body) != format::Checksum(b, body)) return Bad("checksum mismatch (the bytes are damaged)");
  CoverageDigest d;
  d.seed = LoadLE<uint64_t>(b + format::kCoverageSeedOffset);
  d.epoch = LoadLE<uint64_t>(b + format::kCoverageEpochOffset);
  d.fingerprint = LoadLE<uint64_t>(b + format::kCoverageFingerprintOffset);
  d.num_shards = LoadLE<uint32_t>(b + format::kCoverageNumShardsOffset);
  d.shard_id = LoadLE<uint32_t>(b + format::kCoverageShardIdOffset);
  d.num_workers = LoadLE<uint32_t>(b + format::kCoverageNumWorkersOffset);
  d.worker_id = LoadLE<uint32_t>(b + format::kCoverageWorkerIdOffset);
  const uint32_t flags = LoadLE<uint32_t>(b + format::kCoverageFlagsOffset);
  if ((flags & ~(format::kCoverageFlagComplete | format::kCoverageFlagIds)) != 0 ||
      LoadLE<uint32_t>(b + format::kCoverageFlagsOffset + 4) != 0) {
    return Bad("unknown flags " + std::to_string(flags));
  }
  const bool merged = d.num_shards == 0;
  if (merged ? d.shard_id != 0 || d.num_workers != 0 || d.worker_id != 0
             : d.shard_id >= d.num_shards || d.num_workers == 0 || d.worker_id >= d.num_workers) {
    return Bad("rank " + std::to_string(d.shard_id) + " of " + std::to_string(d.num_shards) + ", worker " +
               std::to_string(d.worker_id) + " of " + std::to_string(d.num_workers) +
               " (a merged digest is rank 0 of 0, worker 0 of 0)");
  }
  d.complete = (flags & format::kCoverageFlagComplete) != 0;
  d.ids = (flags & format::kCoverageFlagIds) != 0;
  d.skipped = LoadLE<uint64_t>(b + format::kCoverageSkippedOffset);
  d.uncarried = LoadLE<uint64_t>(b + format::kCoverageUncarriedOffset);
  const auto parts = Parts(d);
  for (size_t i = 0; i < format::kCoveragePartCount; ++i) {
    const uint8_t* at = b + format::kCoveragePartsOffset + i * format::kCoveragePartSize;
    parts[i]->digest = {LoadLE<uint64_t>(at), LoadLE<uint64_t>(at + 8), LoadLE<uint64_t>(at + 16)};
  }
  std::string_view rest = bytes.substr(format::kCoverageIdsOffset, body - format::kCoverageIdsOffset);
  for (size_t i = 0; d.ids && i < format::kCoveragePartCount; ++i) {
    if (rest.size() < 8) return Bad("truncated id bitmaps");
    const uint64_t length = LoadLE<uint64_t>(reinterpret_cast<const uint8_t*>(rest.data()));
    rest.remove_prefix(8);
    if (length > rest.size()) return Bad("an id bitmap of " + std::to_string(length) + " bytes past the end");
    Result<IdBitmap> bitmap = IdBitmap::Parse(rest.substr(0, length));
    if (!bitmap.ok()) return bitmap.status().WithContext("coverage digest");
    if (bitmap->count() != parts[i]->digest.count) {
      return Bad("an id bitmap holds " + std::to_string(bitmap->count()) + " ids, its count says " +
                 std::to_string(parts[i]->digest.count));
    }
    parts[i]->ids = std::move(bitmap).value();
    rest.remove_prefix(length);
  }
  if (!rest.empty()) return Bad(std::to_string(rest.size()) + " bytes past the id bitmaps");
  return d;
}

namespace {

std::string RankName(const CoverageDigest& d) {
  if (d.num_shards == 0) return "a merged digest";
  std::string name = "rank " + std::to_string(d.shard_id) + " of " + std::to_string(d.num_shards);
  if (d.num_workers > 1) name += ", worker " + std::to_string(d.worker_id) + " of " + std::to_string(d.num_workers);
  return name;
}

// Every digest is of the first one's epoch, seed and order, and expects the same.
Status CheckSameEpoch(const std::vector<CoverageDigest>& digests, const char* what) {
  if (digests.empty()) return Status::InvalidArgument(std::string(what) + ": no digest");
  const CoverageDigest& first = digests[0];
  for (const CoverageDigest& d : digests) {
    if (d.seed != first.seed || d.epoch != first.epoch || d.fingerprint != first.fingerprint ||
        d.expected.digest != first.expected.digest) {
      return Status::InvalidArgument(std::string(what) + ": " + RankName(d) + "'s digest is of seed " +
                                     std::to_string(d.seed) + ", epoch " + std::to_string(d.epoch) + ", " +
                                     RankName(first) + "'s of seed " + std::to_string(first.seed) + ", epoch " +
                                     std::to_string(first.epoch) +
                                     " (or their orders or subsets differ): digests of one epoch of one run only");
    }
  }
  return Status::OK();
}

// The digests added up, part by part (ids when every digest has them);
// `expected` is the first's, which CheckSameEpoch found common to all.
CoverageDigest Sum(const std::vector<CoverageDigest>& digests) {
  CoverageDigest sum = digests[0];
  sum.ids = std::all_of(digests.begin(), digests.end(), [](const CoverageDigest& d) { return d.ids; });
  sum.complete = true;
  const auto total = Parts(sum);
  for (size_t i = 1; i < format::kCoveragePartCount; ++i) *total[i] = CoveragePart{};
  sum.skipped = sum.uncarried = 0;
  for (CoveragePart* part : {total[1], total[2], total[3], total[4]}) {
    if (sum.ids) part->ids = IdBitmap();
  }
  for (const CoverageDigest& d : digests) {
    const auto parts = Parts(d);
    for (size_t i = 1; i < format::kCoveragePartCount; ++i) {
      total[i]->digest.Add(parts[i]->digest);
      if (total[i]->ids && !total[i]->ids->Add(*parts[i]->ids)) sum.ids = false;
    }
    sum.skipped += d.skipped;
    sum.uncarried += d.uncarried;
    sum.complete = sum.complete && d.complete;
  }
  if (!sum.ids) {
    for (size_t i = 0; i < format::kCoveragePartCount; ++i) total[i]->ids.reset();
  }
  return sum;
}

}  // namespace

Result<CoverageDigest> MergeCoverage(const std::vector<CoverageDigest>& digests) {
  UREC_RETURN_IF_ERROR(CheckSameEpoch(digests, "merge coverage"));
  const uint32_t shards = digests[0].num_shards, workers = digests[0].num_workers;
  std::vector<bool> seen(uint64_t{shards} * workers, false);
  for (const CoverageDigest& d : digests) {
    const uint64_t slot = uint64_t{d.shard_id} * workers + d.worker_id;
    if (d.num_shards == 0 || d.num_shards != shards || d.num_workers != workers || seen[slot]) {
      return Status::InvalidArgument("merge coverage: " + RankName(d) + " among digests of " +
                                     RankName(digests[0]) + "'s run (give each rank of one run once; a merged "
                                     "digest is carried as it is)");
    }
    seen[slot] = true;
  }
  if (digests.size() != seen.size()) {
    return Status::InvalidArgument("merge coverage: " + std::to_string(digests.size()) + " digests of a run of " +
                                   std::to_string(seen.size()) + " ranks and workers; every one is needed");
  }
  CoverageDigest merged = Sum(digests);
  merged.num_shards = merged.shard_id = merged.num_workers = merged.worker_id = 0;
  return merged;
}

namespace {

std::string IdList(const std::vector<uint64_t>& ids) {
  constexpr size_t kShown = 10;
  std::string out;
  for (size_t i = 0; i < ids.size() && i < kShown; ++i) out += (i == 0 ? "" : ", ") + std::to_string(ids[i]);
  if (ids.size() > kShown) out += ", ...";
  return out;
}

std::string Described(uint64_t count, const char* what, const std::vector<uint64_t>& ids, bool with_ids) {
  std::string out = std::to_string(count) + " " + what;
  if (with_ids && count > 0) out += " (" + std::string(count == 1 ? "id " : "ids ") + IdList(ids) + ")";
  return out;
}

}  // namespace

Result<CoverageCheck> CheckCoverage(const std::vector<CoverageDigest>& digests) {
  UREC_RETURN_IF_ERROR(CheckSameEpoch(digests, "check coverage"));
  const CoverageDigest sum = Sum(digests);
  CoverageCheck check;
  check.records = sum.expected.digest.count;
  check.deliveries = sum.delivered.digest.count;
  check.padding = sum.padding.digest.count;
  check.dropped = sum.dropped.digest.count + sum.cut.digest.count;
  check.skipped = sum.skipped;
  check.uncarried = sum.uncarried;
  for (const CoverageDigest& d : digests) {
    if (!d.complete) check.unfinished.push_back(d.shard_id);
  }
  // delivered + dropped + cut against expected + padding.
  IdDigest got = sum.delivered.digest, want = sum.expected.digest;
  got.Add(sum.dropped.digest);
  got.Add(sum.cut.digest);
  want.Add(sum.padding.digest);
  check.ids = sum.ids;
  if (check.ids) {
    IdBitmap got_ids = *sum.delivered.ids, want_ids = *sum.expected.ids;
    const bool fits = got_ids.Add(*sum.dropped.ids) && got_ids.Add(*sum.cut.ids) && want_ids.Add(*sum.padding.ids);
    check.ids = fits;
    if (fits) {
      check.missing_ids = IdBitmap::Excess(want_ids, got_ids).Ids();
      check.repeated_ids = IdBitmap::Excess(got_ids, want_ids).Ids();
      check.missing = check.missing_ids.size();
      check.repeated = check.repeated_ids.size();
    }
  }
  if (!check.ids) {
    check.missing = want.count > got.count ? want.count - got.count : 0;
    check.repeated = got.count > want.count ? got.count - want.count : 0;
    check.mismatch = got.count == want.count && got != want;
  }
  const bool exact = got == want && check.missing == 0 && check.repeated == 0;
  check.ok = exact && check.uncarried == 0;
  std::string& m = check.message;
  m = "epoch " + std::to_string(sum.epoch) + ": ";
  if (exact) {
    m += "every record exactly once: " + std::to_string(check.records) + " expected, " +
         std::to_string(check.deliveries) + " delivered";
    if (check.padding > 0) m += " (" + std::to_string(check.padding) + " of them padding)";
    if (check.dropped > 0) m += ", " + std::to_string(check.dropped) + " left out by drop_last or overlong drop";
  } else if (check.mismatch) {
    m += "the delivered ids differ from the expected ones though their counts agree (" +
         std::to_string(check.deliveries) + "): records repeated and as many missing (coverage detail 'ids' names them)";
  } else {
    m += Described(check.missing, "missing", check.missing_ids, check.ids) + ", " +
         Described(check.repeated, "repeated", check.repeated_ids, check.ids) + " (" +
         std::to_string(check.records) + " expected, " + std::to_string(check.deliveries) + " delivered";
    if (check.padding > 0) m += ", " + std::to_string(check.padding) + " of them padding";
    m += ")";
  }
  if (check.uncarried > 0) {
    m += "; " + std::to_string(check.uncarried) + " restore(s) mid-epoch did not carry the coverage of what came "
         "before (load every rank's state, or carry MergeCoverage of every rank's digest)";
  }
  if (check.skipped > 0) m += "; " + std::to_string(check.skipped) + " bad record(s) replaced (on_bad_record skip)";
  if (!check.unfinished.empty()) {
    m += "; " + std::to_string(check.unfinished.size()) + " digest(s) of a run not at its end (rank " +
         std::to_string(check.unfinished[0]) + (check.unfinished.size() > 1 ? ", ..." : "") + ")";
  }
  return check;
}

}  // namespace unirecord
