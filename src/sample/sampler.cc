#include "unirecord/sampler.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "format/endian.h"
#include "format/format_constants.h"
#include "util/enum_names.h"
#include "util/splitmix64.h"

namespace unirecord {

static_assert(SamplerState{}.version == format::kSamplerStateVersion, "sampler.h's default state version");

namespace {

// Distinct key streams of one (seed, epoch), so that the block order and
// the window shuffles are independent of each other.
// A mixture's interleaving, each source's passes and its cycle are three more.
enum KeyStream : uint64_t { kGlobalOrder = 1, kBlockOrder = 2, kWindowOrder = 3, kMixOrder = 4, kSourceOrder = 5,
                         kSourceCycle = 6 };

// Counts above this are refused, so that sums and products of positions stay
// far from overflowing 64 bits.
constexpr uint64_t kMaxCount = uint64_t{1} << 62;

uint64_t DeriveKey(uint64_t seed, uint64_t epoch, KeyStream stream, uint64_t index) {
  uint64_t k = Mix64(seed ^ kSplitMix64Gamma);
  k = Mix64(k + epoch);
  k = Mix64(k + static_cast<uint64_t>(stream));
  return Mix64(k + index);
}

}  // namespace

Permutation::Permutation(uint64_t size, uint64_t key) : size_(size) {
  int bits = 0;  // of the largest id, size - 1
  for (uint64_t largest = size > 1 ? size - 1 : 0; largest != 0; largest >>= 1) ++bits;
  half_bits_ = bits <= 2 ? 1 : (bits + 1) / 2;
  half_mask_ = (uint64_t{1} << half_bits_) - 1;
  SplitMix64 generator(key);
  for (uint64_t& k : round_keys_) k = generator.Next();
}

uint64_t Permutation::Encrypt(uint64_t x) const {
  uint64_t left = x >> half_bits_, right = x & half_mask_;
  for (uint64_t k : round_keys_) {
    const uint64_t next_right = left ^ (Mix64(right + k) & half_mask_);
    left = right;
    right = next_right;
  }
  return (left << half_bits_) | right;
}

uint64_t Permutation::Decrypt(uint64_t x) const {
  uint64_t left = x >> half_bits_, right = x & half_mask_;
  for (int i = kRounds - 1; i >= 0; --i) {
    const uint64_t prev_left = right ^ (Mix64(left + round_keys_[i]) & half_mask_);
    right = left;
    left = prev_left;
  }
  return (left << half_bits_) | right;
}

// Cycle-walking: the network permutes [0, 2^(2*half_bits)); following the
// cycle of x until it re-enters [0, size) restricts it to a bijection there.
uint64_t Permutation::operator()(uint64_t x) const {
  do x = Encrypt(x);
  while (x >= size_);
  return x;
}

uint64_t Permutation::Inverse(uint64_t y) const {
  do y = Decrypt(y);
  while (y >= size_);
  return y;
}

constexpr EnumName<SampleOrder> kSampleOrderNames[] = {
    {SampleOrder::kSequential, "sequential"}, {SampleOrder::kShuffle, "shuffle"}, {SampleOrder::kBlockShuffle, "block"}};

const char* SampleOrderName(SampleOrder order) { return EnumNameOf(kSampleOrderNames, order); }

Result<SampleOrder> ParseSampleOrder(std::string_view name) {
  return ParseEnumName(kSampleOrderNames, name, "sample order");
}

std::string SamplerState::Serialize() const {
  uint8_t bytes[format::kSamplerStateSize];
  std::memcpy(bytes, format::kSamplerStateMagic, format::kSamplerStateMagicSize);
  format::StoreLE<uint32_t>(bytes + format::kSamplerStateVersionOffset, version);
  format::StoreLE<uint64_t>(bytes + format::kSamplerStateSeedOffset, seed);
  format::StoreLE<uint64_t>(bytes + format::kSamplerStateEpochOffset, epoch);
  format::StoreLE<uint64_t>(bytes + format::kSamplerStatePositionOffset, position);
  format::StoreLE<uint64_t>(bytes + format::kSamplerStateFingerprintOffset, fingerprint);
  return std::string(reinterpret_cast<const char*>(bytes), sizeof(bytes));
}

Result<SamplerState> SamplerState::Parse(std::string_view bytes) {
  if (bytes.size() != format::kSamplerStateSize ||
      std::memcmp(bytes.data(), format::kSamplerStateMagic, format::kSamplerStateMagicSize) != 0) {
    return Status::InvalidArgument("sampler state: expected " + std::to_string(format::kSamplerStateSize) +
                                   " bytes starting with 'URSS', got " + std::to_string(bytes.size()) + " bytes");
  }
  const auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
  const uint32_t version = format::LoadLE<uint32_t>(data + format::kSamplerStateVersionOffset);
  if (version != format::kSamplerStateVersion && version != format::kSamplerStateVersionRankPosition) {
    return Status::NotSupported("sampler state: version " + std::to_string(version) + " (this build reads versions " +
                                std::to_string(format::kSamplerStateVersionRankPosition) + " and " +
                                std::to_string(format::kSamplerStateVersion) + ")");
  }
  SamplerState s;
  s.version = version;
  s.seed = format::LoadLE<uint64_t>(data + format::kSamplerStateSeedOffset);
  s.epoch = format::LoadLE<uint64_t>(data + format::kSamplerStateEpochOffset);
  s.position = format::LoadLE<uint64_t>(data + format::kSamplerStatePositionOffset);
  s.fingerprint = format::LoadLE<uint64_t>(data + format::kSamplerStateFingerprintOffset);
  return s;
}

Result<Sampler> Sampler::Create(uint64_t num_records, const SamplerOptions& options) {
  if (options.num_shards == 0 || options.shard_id >= options.num_shards) {
    return Status::InvalidArgument("sampler: shard_id " + std::to_string(options.shard_id) +
                                   " is not below num_shards " + std::to_string(options.num_shards));
  }
  if (options.num_workers == 0 || options.worker_id >= options.num_workers) {
    return Status::InvalidArgument("sampler: worker_id " + std::to_string(options.worker_id) +
                                   " is not below num_workers " + std::to_string(options.num_workers));
  }
  if (options.order == SampleOrder::kBlockShuffle && options.block_size == 0) {
    return Status::InvalidArgument("sampler: block_size must be positive for block shuffle");
  }
  if (num_records >= kMaxCount) {
    return Status::InvalidArgument("sampler: " + std::to_string(num_records) + " records is too many");
  }
  return Sampler(num_records, options);
}

Result<Sampler> Sampler::Create(const std::vector<uint64_t>& source_sizes, const SamplerOptions& options) {
  const size_t sources = source_sizes.size();
  if (sources == 0) return Status::InvalidArgument("sampler: no sources to mix");
  const std::vector<double>& weights = options.weights;
  if (!weights.empty() && weights.size() != sources) {
    return Status::InvalidArgument("sampler: " + std::to_string(weights.size()) + " weights for " +
                                   std::to_string(sources) + " sources");
  }
  uint64_t total = 0;
  double weight_sum = 0;
  for (size_t i = 0; i < sources; ++i) {
    if (source_sizes[i] >= kMaxCount - total) {
      return Status::InvalidArgument("sampler: the sources' " + std::to_string(total) + "+ records are too many");
    }
    total += source_sizes[i];
    if (weights.empty()) continue;
    if (!std::isfinite(weights[i]) || weights[i] < 0) {
      return Status::InvalidArgument("sampler: weight " + std::to_string(i) + " (" + std::to_string(weights[i]) +
                                     ") must be a finite number >= 0");
    }
    if (weights[i] > 0 && source_sizes[i] == 0) {
      return Status::InvalidArgument("sampler: source " + std::to_string(i) + " has weight " +
                                     std::to_string(weights[i]) + " but no records");
    }
    weight_sum += weights[i];
  }
  if (!weights.empty() && !(weight_sum > 0)) return Status::InvalidArgument("sampler: every weight is 0");
  const uint64_t length = options.epoch_size != 0 ? options.epoch_size : total;
  if (length >= kMaxCount) {
    return Status::InvalidArgument("sampler: epoch_size " + std::to_string(length) + " is too large");
  }
  if ((sources == 1 && length == total) || length == 0) return Create(length, options);
  if (total == 0) return Status::InvalidArgument("sampler: epoch_size " + std::to_string(length) + " of no records");
  if (options.order == SampleOrder::kBlockShuffle) {
    return Status::InvalidArgument("sampler: block shuffle does not mix sources or resample them (epoch_size); "
                                   "use the shuffle or sequential order");
  }
  UREC_ASSIGN_OR_RETURN(Sampler sampler, Create(length, options));
  // Each source's samples per epoch: the differences of the cumulative
  // quotas rounded down, floor(length * (w_0 + ... + w_i) / sum): monotone, so
  // never negative, summing to exactly `length`, each within 1 of its share.
  sampler.mixed_ = true;
  sampler.num_ids_ = total;
  sampler.sizes_ = source_sizes;
  sampler.first_ids_.assign(sources, 0);
  sampler.counts_.assign(sources, 0);
  sampler.count_starts_.assign(sources + 1, 0);
  uint64_t first_id = 0;
  double cumulative = 0;
  for (size_t i = 0; i < sources; ++i) {
    sampler.first_ids_[i] = first_id;
    first_id += source_sizes[i];
    cumulative += weights.empty() ? static_cast<double>(source_sizes[i]) : weights[i];
    const double sum = weights.empty() ? static_cast<double>(total) : weight_sum;
    const double quota = std::floor(static_cast<double>(length) * cumulative / sum);
    uint64_t end = i + 1 == sources ? length : std::min<uint64_t>(length, static_cast<uint64_t>(quota));
    end = std::max(end, sampler.count_starts_[i]);
    sampler.count_starts_[i + 1] = end;
    sampler.counts_[i] = end - sampler.count_starts_[i];
  }
  sampler.SetEpoch(0);
  return sampler;
}

Sampler::Sampler(uint64_t num_records, const SamplerOptions& options)
    : num_records_(num_records), num_ids_(num_records), options_(options),
      sizes_{num_records}, first_ids_{0}, counts_{num_records}, count_starts_{0, num_records} {
  SetEpoch(0);
}

void Sampler::Partition() {
  const uint64_t remaining = num_records_ - base_;
  const uint64_t shards = options_.num_shards;
  rank_size_ = options_.drop_last ? remaining / shards : (remaining + shards - 1) / shards;
  const uint64_t workers = options_.num_workers;
  size_ = rank_size_ > options_.worker_id ? (rank_size_ - options_.worker_id + workers - 1) / workers : 0;
}

void Sampler::SetEpoch(uint64_t epoch) {
  epoch_ = epoch;
  position_ = 0;
  base_ = 0;
  Partition();
  const uint64_t n = num_records_;
  if (mixed_) {
    if (options_.order == SampleOrder::kShuffle) order_ = Permutation(n, DeriveKey(options_.seed, epoch, kMixOrder, 0));
  } else if (options_.order == SampleOrder::kShuffle) {
    order_ = Permutation(n, DeriveKey(options_.seed, epoch, kGlobalOrder, 0));
  } else if (options_.order == SampleOrder::kBlockShuffle) {
    const uint64_t blocks = (n + options_.block_size - 1) / options_.block_size;
    order_ = Permutation(blocks, DeriveKey(options_.seed, epoch, kBlockOrder, 0));
    short_block_slot_ = (n % options_.block_size != 0) ? order_.Inverse(blocks - 1) : blocks;
  }
}

uint64_t Sampler::BlockShuffleAt(uint64_t p) const {
  const uint64_t n = num_records_;
  // Stage 1: shuffle positions within their window.
  const uint64_t window = options_.window;
  if (window > 1) {
    const uint64_t base = p - p % window;
    const uint64_t len = n - base < window ? n - base : window;
    p = base + Permutation(len, DeriveKey(options_.seed, epoch_, kWindowOrder, base / window))(p - base);
  }
  // Stage 2: position -> (slot, offset) -> (block, offset). Every block has
  // block_size ids but the last one; positions after the slot holding that
  // shorter block are shifted by its shortfall.
  const uint64_t bs = options_.block_size;
  const uint64_t short_start = short_block_slot_ * bs;
  if (p < short_start) return order_(p / bs) * bs + p % bs;
  const uint64_t short_len = n - (order_.size() - 1) * bs;
  if (p < short_start + short_len) return (order_.size() - 1) * bs + (p - short_start);
  const uint64_t after = p - short_start - short_len;
  return order_(short_block_slot_ + 1 + after / bs) * bs + after % bs;
}

// Position p of the mixed epoch -> position q of the sources' quotas laid
// one after another (shuffled, or as is in sequential order) -> source i's
// sample t of this epoch. A source's count c of size n is floor(c / n) whole
// passes, each a fresh permutation of the source (sequential: in id order),
// then c mod n samples from the source's cycle: one fixed permutation of the
// source that epoch e reads from position e * (c mod n) on, wrapping around.
// So within an epoch each record appears floor(c / n) times or once more,
// and the samples beyond whole passes go through the whole source, across
// epochs, before repeating a record.
uint64_t Sampler::MixtureAt(uint64_t p) const {
  const bool shuffle = options_.order == SampleOrder::kShuffle;
  const uint64_t q = shuffle ? order_(p) : p;
  const size_t i = static_cast<size_t>(std::upper_bound(count_starts_.begin(), count_starts_.end(), q) -
                                       count_starts_.begin()) - 1;
  const uint64_t t = q - count_starts_[i], n = sizes_[i];
  const uint64_t whole = counts_[i] / n * n;
  if (t < whole) {
    if (!shuffle) return first_ids_[i] + t % n;
    const uint64_t key = Mix64(DeriveKey(options_.seed, epoch_, kSourceOrder, i) + t / n);
    return first_ids_[i] + Permutation(n, key)(t % n);
  }
  const uint64_t rest = counts_[i] - whole;  // < n
  const uint64_t cycle_position =
      static_cast<uint64_t>((static_cast<unsigned __int128>(epoch_ % n) * rest + (t - whole)) % n);
  if (!shuffle) return first_ids_[i] + cycle_position;
  return first_ids_[i] + Permutation(n, DeriveKey(options_.seed, 0, kSourceCycle, i))(cycle_position);
}

uint64_t Sampler::GlobalAt(uint64_t p) const {
  if (mixed_) return MixtureAt(p);
  switch (options_.order) {
    case SampleOrder::kSequential: return p;
    case SampleOrder::kShuffle: return order_(p);
    case SampleOrder::kBlockShuffle: return BlockShuffleAt(p);
  }
  return p;
}

uint64_t Sampler::At(uint64_t k) const { return GlobalAt(PaddedPosition(k) % num_records_); }

uint64_t Sampler::PaddedPosition(uint64_t k) const {
  // Worker split of the rank's sequence, then DistributedSampler's
  // indices[shard_id::num_shards] over the rest of the order from base_,
  // padded by wrapping around to the start of the epoch.
  const uint64_t rank_position = options_.worker_id + k * options_.num_workers;
  return base_ + options_.shard_id + rank_position * options_.num_shards;
}

bool Sampler::Holds(uint64_t padded) const {
  const uint64_t first = PaddedPosition(0);
  const uint64_t step = uint64_t{options_.num_shards} * options_.num_workers;
  return padded >= first && (padded - first) % step == 0 && (padded - first) / step < size_;
}

uint64_t Sampler::GlobalPosition(uint64_t position) const {
  const uint64_t rank_positions = std::min(std::min(position, size_) * options_.num_workers, rank_size_);
  return base_ + std::min(rank_positions * options_.num_shards, num_records_ - base_);
}

bool Sampler::Next(uint64_t* id) {
  if (position_ >= size_) return false;
  *id = At(position_++);
  return true;
}

size_t Sampler::NextBatch(uint64_t* ids, size_t max) {
  size_t count = 0;
  while (count < max && Next(&ids[count])) ++count;
  return count;
}

Status Sampler::Seek(uint64_t position) {
  if (position > size_) {
    return Status::OutOfRange("sampler: position " + std::to_string(position) +
                              " is past the epoch's " + std::to_string(size_) + " ids");
  }
  position_ = position;
  return Status::OK();
}

uint64_t Sampler::Fingerprint(uint32_t version) const {
  // Block options matter only to the block shuffle; leaving them out
  // elsewhere keeps states valid across unrelated default changes.
  const bool blocks = options_.order == SampleOrder::kBlockShuffle;
  uint64_t h = kSplitMix64Gamma;
  auto add = [&h](uint64_t f) { h = Mix64(h + f); };
  if (version == format::kSamplerStateVersionRankPosition) {
    for (uint64_t f : {num_records_, static_cast<uint64_t>(options_.order), uint64_t{options_.num_shards},
                       uint64_t{options_.shard_id}, uint64_t{options_.drop_last ? 1u : 0u},
                       blocks ? options_.block_size : 0, blocks ? options_.window : 0,
                       uint64_t{options_.num_workers}, uint64_t{options_.worker_id}}) {
      add(f);
    }
    return h;
  }
  // Version 2: what shapes the epoch's order, not how it is partitioned.
  for (uint64_t f : {num_records_, static_cast<uint64_t>(options_.order), blocks ? options_.block_size : 0,
                     blocks ? options_.window : 0}) {
    add(f);
  }
  if (mixed_) {
    add(sizes_.size());
    for (size_t i = 0; i < sizes_.size(); ++i) {
      add(sizes_[i]);
      add(counts_[i]);
    }
  }
  return h;
}

SamplerState Sampler::state() const {
  SamplerState state;
  state.version = format::kSamplerStateVersion;
  state.seed = options_.seed;
  state.epoch = epoch_;
  state.position = GlobalPosition(position_);
  state.fingerprint = Fingerprint(state.version);
  return state;
}

Status Sampler::Restore(const SamplerState& state) {
  const bool global = state.version == format::kSamplerStateVersion;
  if (!global && state.version != format::kSamplerStateVersionRankPosition) {
    return Status::InvalidArgument("sampler state: unknown version " + std::to_string(state.version));
  }
  if (state.fingerprint != Fingerprint(state.version)) {
    return Status::InvalidArgument(
        global ? "sampler state was saved by a sampler over another record count (or mixture) or another order"
               : "sampler state (version 1) was saved by a sampler with another record count or other options "
                 "(version 1 states restore only into the same ranks and workers)");
  }
  Sampler restored = *this;
  restored.options_.seed = state.seed;
  restored.SetEpoch(state.epoch);
  if (!global) {
    if (state.position > restored.size_) {
      return Status::OutOfRange("sampler state: position " + std::to_string(state.position) +
                                " is past the epoch's " + std::to_string(restored.size_) + " ids");
    }
    restored.position_ = state.position;
  } else {
    if (state.position > num_records_) {
      return Status::OutOfRange("sampler state: position " + std::to_string(state.position) +
                                " is past the epoch's " + std::to_string(num_records_) + " positions");
    }
    // Where this sampler's own partition of the epoch reaches the state's
    // position (always, with the ranks and workers that took it), continue
    // there; else partition the rest of the epoch anew from it. Both give the
    // same ids: the first only keeps position() counting from the epoch's start.
    const uint64_t step = uint64_t{options_.num_shards} * options_.num_workers;
    bool aligned = false;
    for (uint64_t k : {state.position / step, (state.position + step - 1) / step}) {
      if (!aligned && k <= restored.size_ && restored.GlobalPosition(k) == state.position) {
        restored.position_ = k;
        aligned = true;
      }
    }
    if (!aligned) {
      restored.base_ = state.position;
      restored.Partition();
    }
  }
  *this = std::move(restored);
  return Status::OK();
}

}  // namespace unirecord
