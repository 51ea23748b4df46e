#include "unirecord/sampler.h"

#include <cstring>

#include "format/endian.h"
#include "format/format_constants.h"
#include "util/splitmix64.h"

namespace unirecord {
namespace {

// Distinct key streams of one (seed, epoch), so that the block order and
// the window shuffles are independent of each other.
enum KeyStream : uint64_t { kGlobalOrder = 1, kBlockOrder = 2, kWindowOrder = 3 };

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

const char* SampleOrderName(SampleOrder order) {
  switch (order) {
    case SampleOrder::kSequential: return "sequential";
    case SampleOrder::kShuffle: return "shuffle";
    case SampleOrder::kBlockShuffle: return "block";
  }
  return "unknown";
}

Result<SampleOrder> ParseSampleOrder(std::string_view name) {
  if (name == "sequential") return SampleOrder::kSequential;
  if (name == "shuffle") return SampleOrder::kShuffle;
  if (name == "block") return SampleOrder::kBlockShuffle;
  return Status::InvalidArgument("unknown sample order '" + std::string(name) +
                                 "' (expected sequential, shuffle or block)");
}

std::string SamplerState::Serialize() const {
  uint8_t bytes[format::kSamplerStateSize];
  std::memcpy(bytes, format::kSamplerStateMagic, format::kSamplerStateMagicSize);
  format::StoreLE<uint32_t>(bytes + format::kSamplerStateVersionOffset, format::kSamplerStateVersion);
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
  if (version != format::kSamplerStateVersion) {
    return Status::NotSupported("sampler state: version " + std::to_string(version) + " (this build reads version " +
                                std::to_string(format::kSamplerStateVersion) + ")");
  }
  SamplerState s;
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
  if (num_records >= (uint64_t{1} << 62)) {
    return Status::InvalidArgument("sampler: " + std::to_string(num_records) + " records is too many");
  }
  return Sampler(num_records, options);
}

Sampler::Sampler(uint64_t num_records, const SamplerOptions& options)
    : num_records_(num_records), options_(options) {
  const uint64_t shards = options.num_shards;
  rank_size_ = options.drop_last ? num_records / shards : (num_records + shards - 1) / shards;
  const uint64_t workers = options.num_workers;
  size_ = rank_size_ > options.worker_id ? (rank_size_ - options.worker_id + workers - 1) / workers : 0;
  SetEpoch(0);
}

void Sampler::SetEpoch(uint64_t epoch) {
  epoch_ = epoch;
  position_ = 0;
  const uint64_t n = num_records_;
  if (options_.order == SampleOrder::kShuffle) {
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

uint64_t Sampler::GlobalAt(uint64_t p) const {
  switch (options_.order) {
    case SampleOrder::kSequential: return p;
    case SampleOrder::kShuffle: return order_(p);
    case SampleOrder::kBlockShuffle: return BlockShuffleAt(p);
  }
  return p;
}

uint64_t Sampler::At(uint64_t k) const {
  // Worker split of the rank's sequence, then DistributedSampler's
  // indices[shard_id::num_shards] over the order padded by wrapping around.
  const uint64_t rank_position = options_.worker_id + k * options_.num_workers;
  const uint64_t padded = options_.shard_id + rank_position * options_.num_shards;
  return GlobalAt(padded % num_records_);
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

uint64_t Sampler::Fingerprint() const {
  // Block options matter only to the block shuffle; leaving them out
  // elsewhere keeps states valid across unrelated default changes.
  const bool blocks = options_.order == SampleOrder::kBlockShuffle;
  const uint64_t fields[] = {num_records_,
                             static_cast<uint64_t>(options_.order),
                             options_.num_shards,
                             options_.shard_id,
                             options_.drop_last ? 1u : 0u,
                             blocks ? options_.block_size : 0,
                             blocks ? options_.window : 0,
                             options_.num_workers,
                             options_.worker_id};
  uint64_t h = kSplitMix64Gamma;
  for (uint64_t f : fields) h = Mix64(h + f);
  return h;
}

SamplerState Sampler::state() const {
  return SamplerState{options_.seed, epoch_, position_, Fingerprint()};
}

Status Sampler::Restore(const SamplerState& state) {
  if (state.fingerprint != Fingerprint()) {
    return Status::InvalidArgument(
        "sampler state was saved by a sampler with another record count or other options");
  }
  if (state.position > size_) {
    return Status::OutOfRange("sampler state: position " + std::to_string(state.position) +
                              " is past the epoch's " + std::to_string(size_) + " ids");
  }
  options_.seed = state.seed;
  SetEpoch(state.epoch);
  position_ = state.position;
  return Status::OK();
}

}  // namespace unirecord
