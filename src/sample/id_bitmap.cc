// IdBitmap (include/unirecord/coverage.h): multisets of 64-bit record ids as
// layers of CRoaring bitmaps, and their bytes (format/SPEC.md section 13.3).
#include <roaring/roaring.hh>

#include <algorithm>
#include <map>
#include <utility>

#include "format/endian.h"
#include "format/format_constants.h"
#include "unirecord/coverage.h"

namespace unirecord {

static_assert(IdBitmap::kMaxMultiplicity == format::kCoverageMaxLayers, "coverage.h's multiplicity limit");

namespace {

// CRoaring's portable serialization (RoaringFormatSpec), checked in full
// before CRoaring reads it: its reader trusts what it finds past the header
// (and prints to stderr on a bad cookie), so malformed bytes stop here.
namespace portable {

constexpr uint32_t kCookieNoRuns = 12346;
constexpr uint32_t kCookieRuns = 12347;
constexpr uint32_t kArrayMax = 4096;       // cardinalities above: a bitset container
constexpr size_t kBitsetBytes = 8192;
constexpr uint32_t kNoOffsetThreshold = 4;  // with runs, fewer containers have no offsets

uint16_t U16(const uint8_t* p) { return format::LoadLE<uint16_t>(p); }

// The error, or an empty string when `bytes` is one well-formed bitmap exactly.
std::string Check(std::string_view bytes) {
  const auto* b = reinterpret_cast<const uint8_t*>(bytes.data());
  const size_t n = bytes.size();
  if (n < 4) return "shorter than a cookie";
  const uint32_t cookie = format::LoadLE<uint32_t>(b);
  const bool runs = (cookie & 0xffff) == kCookieRuns;
  size_t at = 4, size = 0;
  const uint8_t* run_flags = nullptr;
  if (runs) {
    size = (cookie >> 16) + 1;
    run_flags = b + at;
    at += (size + 7) / 8;
  } else if (cookie == kCookieNoRuns) {
    if (n < 8) return "truncated size";
    size = format::LoadLE<uint32_t>(b + 4);
    at = 8;
    if (size > 65536) return "more than 65536 containers";
  } else {
    return "cookie " + std::to_string(cookie) + " is not CRoaring's";
  }
  const size_t header = at;
  const bool offsets = !runs || size >= kNoOffsetThreshold;
  if (!format::RangeWithin(at, size * 4 + (offsets ? size * 4 : 0), n)) return "truncated header";
  at += size * 4 + (offsets ? size * 4 : 0);
  for (size_t i = 0; i < size; ++i) {
    const uint16_t key = U16(b + header + 4 * i);
    const uint32_t card = uint32_t{U16(b + header + 4 * i + 2)} + 1;
    if (i > 0 && key <= U16(b + header + 4 * (i - 1))) return "container keys out of order";
    if (offsets && format::LoadLE<uint32_t>(b + header + 4 * size + 4 * i) != at) return "a wrong container offset";
    if (runs && (run_flags[i / 8] >> (i % 8)) & 1) {
      if (!format::RangeWithin(at, 2, n)) return "truncated run container";
      const size_t count = U16(b + at);
      if (!format::RangeWithin(at + 2, count * 4, n)) return "truncated runs";
      uint64_t total = 0, next = 0;  // the first value a run may start at
      for (size_t r = 0; r < count; ++r) {
        const uint64_t start = U16(b + at + 2 + 4 * r), length = uint64_t{U16(b + at + 4 + 4 * r)} + 1;
        if (start < next || start + length > 65536) return "runs out of order, overlapping or past 65535";
        next = start + length;
        total += length;
      }
      if (total != card) return "a run container's cardinality is wrong";
      at += 2 + count * 4;
    } else if (card > kArrayMax) {
      if (!format::RangeWithin(at, kBitsetBytes, n)) return "truncated bitset container";
      uint64_t ones = 0;
      for (size_t w = 0; w < kBitsetBytes; w += 8) ones += __builtin_popcountll(format::LoadLE<uint64_t>(b + at + w));
      if (ones != card) return "a bitset container's cardinality is wrong";
      at += kBitsetBytes;
    } else {
      if (!format::RangeWithin(at, size_t{card} * 2, n)) return "truncated array container";
      for (size_t v = 1; v < card; ++v) {
        if (U16(b + at + 2 * v) <= U16(b + at + 2 * (v - 1))) return "an array container out of order";
      }
      at += size_t{card} * 2;
    }
  }
  return at == n ? "" : std::to_string(n - at) + " bytes past the containers";
}

}  // namespace portable

uint32_t High(uint64_t id) { return static_cast<uint32_t>(id >> 32); }
uint32_t Low(uint64_t id) { return static_cast<uint32_t>(id); }

// A set of 64-bit ids: a 32-bit Roaring bitmap per value of the ids' high
// 32 bits (record ids rarely need more than one). No part is empty.
class IdSet {
 public:
  bool AddChecked(uint64_t id) { return parts_[High(id)].addChecked(Low(id)); }

  void AddRange(uint64_t begin, uint64_t end) {
    while (begin < end) {
      const uint64_t part_end = std::min<uint64_t>(end, (begin | 0xffffffffULL) + 1);  // the end of begin's part
      parts_[High(begin)].addRange(Low(begin), part_end - (begin & ~0xffffffffULL));
      begin = part_end;
    }
  }

  void Union(const IdSet& other) {
    for (const auto& [high, bits] : other.parts_) parts_[high] |= bits;
  }

  void Subtract(const IdSet& other) {
    for (const auto& [high, bits] : other.parts_) {
      auto it = parts_.find(high);
      if (it == parts_.end()) continue;
      it->second -= bits;
      if (it->second.isEmpty()) parts_.erase(it);
    }
  }

  IdSet Intersection(const IdSet& other) const {
    IdSet out;
    for (const auto& [high, bits] : parts_) {
      auto it = other.parts_.find(high);
      if (it == other.parts_.end()) continue;
      Roaring both = bits & it->second;
      if (!both.isEmpty()) out.parts_.emplace(high, std::move(both));
    }
    return out;
  }

  bool IsSubsetOf(const IdSet& other) const {
    for (const auto& [high, bits] : parts_) {
      auto it = other.parts_.find(high);
      if (it == other.parts_.end() || !bits.isSubset(it->second)) return false;
    }
    return true;
  }

  uint64_t Cardinality() const {
    uint64_t n = 0;
    for (const auto& part : parts_) n += part.second.cardinality();
    return n;
  }
  bool Empty() const { return parts_.empty(); }
  bool operator==(const IdSet& other) const { return parts_ == other.parts_; }

  void AppendIds(std::vector<uint64_t>* out) const {
    for (const auto& [high, bits] : parts_) {
      for (uint32_t low : bits) out->push_back((uint64_t{high} << 32) | low);
    }
  }

  // [parts: u32] then per part [high: u32][bytes: u32][CRoaring portable bytes].
  void Serialize(std::string* out) const {
    AppendU32(out, static_cast<uint32_t>(parts_.size()));
    for (auto& [high, bits] : parts_) {
      Roaring compact = bits;
      compact.runOptimize();
      const size_t size = compact.getSizeInBytes(/*portable=*/true);
      AppendU32(out, high);
      AppendU32(out, static_cast<uint32_t>(size));
      const size_t at = out->size();
      out->resize(at + size);
      compact.write(out->data() + at, /*portable=*/true);
    }
  }

  // Reads a set from the front of `in`, advancing it.
  static Result<IdSet> Parse(std::string_view* in) {
    uint32_t parts = 0;
    UREC_RETURN_IF_ERROR(ReadU32(in, &parts));
    IdSet set;
    for (uint32_t i = 0; i < parts; ++i) {
      uint32_t high = 0, size = 0;
      UREC_RETURN_IF_ERROR(ReadU32(in, &high));
      UREC_RETURN_IF_ERROR(ReadU32(in, &size));
      if (i > 0 && high <= set.parts_.rbegin()->first) return Bad("parts out of order");
      if (size > in->size()) return Bad("a part of " + std::to_string(size) + " bytes past the end");
      const std::string malformed = portable::Check(in->substr(0, size));
      if (!malformed.empty()) return Bad("a part is not a CRoaring portable bitmap: " + malformed);
      roaring_bitmap_t* bits = roaring_bitmap_portable_deserialize_safe(in->data(), size);
      if (bits == nullptr) return Bad("a part is not a CRoaring portable bitmap");
      Roaring part(bits);
      if (part.getSizeInBytes(/*portable=*/true) != size || part.isEmpty()) {
        return Bad("a part's bitmap is empty or does not fill its " + std::to_string(size) + " bytes");
      }
      set.parts_.emplace(high, std::move(part));
      in->remove_prefix(size);
    }
    return set;
  }

  static Status Bad(const std::string& what) { return Status::InvalidArgument("id bitmap: " + what); }

  static void AppendU32(std::string* out, uint32_t v) {
    uint8_t bytes[4];
    format::StoreLE<uint32_t>(bytes, v);
    out->append(reinterpret_cast<const char*>(bytes), sizeof(bytes));
  }

  static Status ReadU32(std::string_view* in, uint32_t* v) {
    if (in->size() < 4) return Bad("truncated");
    *v = format::LoadLE<uint32_t>(reinterpret_cast<const uint8_t*>(in->data()));
    in->remove_prefix(4);
    return Status::OK();
  }

 private:
  std::map<uint32_t, Roaring> parts_;
};

}  // namespace

// layers[m]: the ids held more than m times (so each layer contains the next).
struct IdBitmap::Layers {
  std::vector<IdSet> layers;

  // Adds each id of `set` once more: the ids already in a layer go up to the next.
  bool Cascade(IdSet set) {
    if (set.Empty()) return true;
    const std::vector<IdSet> before = layers;
    for (size_t m = 0; !set.Empty(); ++m) {
      if (m == kMaxMultiplicity) {
        layers = before;
        return false;
      }
      if (m == layers.size()) layers.emplace_back();
      IdSet carry = set.Intersection(layers[m]);
      layers[m].Union(set);
      set = std::move(carry);
    }
    return true;
  }
};

IdBitmap::IdBitmap() : layers_(std::make_unique<Layers>()) {}
IdBitmap::~IdBitmap() = default;
IdBitmap::IdBitmap(const IdBitmap& other) : layers_(std::make_unique<Layers>(*other.layers_)) {}
IdBitmap& IdBitmap::operator=(const IdBitmap& other) {
  if (this != &other) *layers_ = *other.layers_;
  return *this;
}
IdBitmap::IdBitmap(IdBitmap&& other) noexcept : layers_(std::make_unique<Layers>()) {
  std::swap(layers_, other.layers_);
}
IdBitmap& IdBitmap::operator=(IdBitmap&& other) noexcept {
  std::swap(layers_, other.layers_);
  return *this;
}

bool IdBitmap::Add(uint64_t id) {
  std::vector<IdSet>& layers = layers_->layers;
  for (size_t m = 0; m < layers.size(); ++m) {
    if (layers[m].AddChecked(id)) return true;
  }
  if (layers.size() == kMaxMultiplicity) return false;
  layers.emplace_back();
  layers.back().AddChecked(id);
  return true;
}

bool IdBitmap::AddRange(uint64_t begin, uint64_t end) {
  IdSet range;
  range.AddRange(begin, end);
  return layers_->Cascade(std::move(range));
}

bool IdBitmap::Add(const IdBitmap& other) {
  const std::vector<IdSet> before = layers_->layers;
  for (const IdSet& layer : other.layers_->layers) {
    if (!layers_->Cascade(layer)) {
      layers_->layers = before;
      return false;
    }
  }
  return true;
}

// An id held a times in `a` and b times in `b` has a - b >= k + 1 exactly
// when, for some j >= 0, b <= j and a >= j + k + 1: layer k of the excess is
// the union over j of a's layer j + k less b's layer j.
IdBitmap IdBitmap::Excess(const IdBitmap& a, const IdBitmap& b) {
  const std::vector<IdSet>& as = a.layers_->layers;
  const std::vector<IdSet>& bs = b.layers_->layers;
  IdBitmap out;
  for (size_t k = 0; k < as.size(); ++k) {
    IdSet layer;
    for (size_t j = 0; j + k < as.size(); ++j) {
      IdSet part = as[j + k];
      if (j < bs.size()) part.Subtract(bs[j]);
      layer.Union(part);
    }
    if (layer.Empty()) break;  // the excess's layers shrink too
    out.layers_->layers.push_back(std::move(layer));
  }
  return out;
}

uint64_t IdBitmap::count() const {
  uint64_t n = 0;
  for (const IdSet& layer : layers_->layers) n += layer.Cardinality();
  return n;
}

std::vector<uint64_t> IdBitmap::Ids(uint64_t max) const {
  std::vector<uint64_t> out;
  for (const IdSet& layer : layers_->layers) layer.AppendIds(&out);
  std::sort(out.begin(), out.end());
  if (out.size() > max) out.resize(static_cast<size_t>(max));
  return out;
}

bool IdBitmap::operator==(const IdBitmap& other) const { return layers_->layers == other.layers_->layers; }

std::string IdBitmap::Serialize() const {
  std::string out;
  IdSet::AppendU32(&out, static_cast<uint32_t>(layers_->layers.size()));
  for (const IdSet& layer : layers_->layers) layer.Serialize(&out);
  return out;
}

Result<IdBitmap> IdBitmap::Parse(std::string_view bytes) {
  uint32_t count = 0;
  UREC_RETURN_IF_ERROR(IdSet::ReadU32(&bytes, &count));
  if (count > kMaxMultiplicity) {
    return IdSet::Bad(std::to_string(count) + " layers (at most " + std::to_string(kMaxMultiplicity) + ")");
  }
  IdBitmap out;
  std::vector<IdSet>& layers = out.layers_->layers;
  for (uint32_t m = 0; m < count; ++m) {
    UREC_ASSIGN_OR_RETURN(IdSet layer, IdSet::Parse(&bytes));
    if (layer.Empty() || (m > 0 && !layer.IsSubsetOf(layers.back()))) {
      return IdSet::Bad("layer " + std::to_string(m) + " is empty or holds an id the layer below lacks");
    }
    layers.push_back(std::move(layer));
  }
  if (!bytes.empty()) return IdSet::Bad(std::to_string(bytes.size()) + " bytes past the last layer");
  return out;
}

}  // namespace unirecord
