// The packing loader (packed_loader.h): windows of documents from an inner
// Loader, cut into rows in the consumer's Next().
#include "pipeline/packed_loader.h"

#include <algorithm>
#include <cstring>

#include "format/array_values.h"
#include "format/checksum.h"
#include "format/endian.h"
#include "format/format_constants.h"
#include "index/record_table.h"
#include "pipeline/batch_fields.h"
#include "util/splitmix64.h"

namespace unirecord {

using pipeline::Clock;
using pipeline::Seconds;

const char* PackStrategyName(PackStrategy strategy) {
  switch (strategy) {
    case PackStrategy::kConcat: return "concat";
    case PackStrategy::kFirstFit: return "first_fit";
    case PackStrategy::kBestFit: return "best_fit";
  }
  return "unknown";
}

Result<PackStrategy> ParsePackStrategy(std::string_view name) {
  for (PackStrategy s : {PackStrategy::kConcat, PackStrategy::kFirstFit, PackStrategy::kBestFit}) {
    if (name == PackStrategyName(s)) return s;
  }
  return Status::InvalidArgument("unknown packing strategy '" + std::string(name) +
                                 "' (expected 'concat', 'first_fit' or 'best_fit')");
}

const char* PackOverlongName(PackOverlong overlong) {
  switch (overlong) {
    case PackOverlong::kSplit: return "split";
    case PackOverlong::kTruncate: return "truncate";
    case PackOverlong::kDrop: return "drop";
  }
  return "unknown";
}

Result<PackOverlong> ParsePackOverlong(std::string_view name) {
  for (PackOverlong o : {PackOverlong::kSplit, PackOverlong::kTruncate, PackOverlong::kDrop}) {
    if (name == PackOverlongName(o)) return o;
  }
  return Status::InvalidArgument("unknown overlong policy '" + std::string(name) +
                                 "' (expected 'split', 'truncate' or 'drop')");
}

const char* WeightUnitName(WeightUnit unit) {
  switch (unit) {
    case WeightUnit::kDocuments: return "documents";
    case WeightUnit::kTokens: return "tokens";
  }
  return "unknown";
}

Result<WeightUnit> ParseWeightUnit(std::string_view name) {
  for (WeightUnit u : {WeightUnit::kDocuments, WeightUnit::kTokens}) {
    if (name == WeightUnitName(u)) return u;
  }
  return Status::InvalidArgument("unknown weight unit '" + std::string(name) + "' (expected 'documents' or 'tokens')");
}

namespace {

// What a state carries is well formed: increasing positions at or past the
// window's, spans in order with tokens in them, no position both consumed
// and remaining; a combined state (num_shards 0) stands at a window's start.
Status CheckCarried(const PackState& s) {
  if (s.num_shards == 0 ? s.shard_id != 0 || s.rows != 0 || s.document != 0 || s.token != 0
                        : s.shard_id >= s.num_shards) {
    return Status::InvalidArgument("pack state: rank " + std::to_string(s.shard_id) + " of " +
                                   std::to_string(s.num_shards) + " at row " + std::to_string(s.rows) +
                                   ", document " + std::to_string(s.document) + ", token " +
                                   std::to_string(s.token) + " (a combined state, of 0 ranks, is at rank 0, row 0)");
  }
  const uint64_t from = s.window.position;
  for (size_t i = 0; i < s.consumed.size(); ++i) {
    if (s.consumed[i] < from || (i > 0 && s.consumed[i] <= s.consumed[i - 1])) {
      return Status::InvalidArgument("pack state: consumed position " + std::to_string(s.consumed[i]) +
                                     " is before the window's " + std::to_string(from) + " or out of order");
    }
  }
  for (size_t i = 0; i < s.remaining.size(); ++i) {
    const PackSpan& span = s.remaining[i];
    const bool ordered = i == 0 || span.position > s.remaining[i - 1].position ||
                         (span.position == s.remaining[i - 1].position && span.begin > s.remaining[i - 1].end);
    if (span.position < from || span.begin >= span.end || !ordered ||
        std::binary_search(s.consumed.begin(), s.consumed.end(), span.position)) {
      return Status::InvalidArgument("pack state: remaining tokens [" + std::to_string(span.begin) + ", " +
                                     std::to_string(span.end) + ") at position " + std::to_string(span.position) +
                                     " are empty, out of order, overlapping, before the window's position " +
                                     std::to_string(from) + " or of a consumed document");
    }
  }
  return Status::OK();
}

}  // namespace

std::string PackState::Serialize() const {
  // A rank's state that carries nothing keeps version 1's 88 bytes.
  const bool carried = num_shards == 0 || !consumed.empty() || !remaining.empty();
  std::string out(carried ? format::kPackStateCarriedOffset + consumed.size() * format::kPackStatePositionSize +
                                remaining.size() * format::kPackStateSpanSize + format::kPackStateChecksumSize
                          : format::kPackStateSize,
                  '\0');
  auto* bytes = reinterpret_cast<uint8_t*>(out.data());
  std::memcpy(bytes, format::kPackStateMagic, sizeof(format::kPackStateMagic));
  format::StoreLE<uint32_t>(bytes + format::kPackStateVersionOffset,
                            carried ? format::kPackStateVersionCarried : format::kPackStateVersion);
  const std::string sampler = window.Serialize();
  std::memcpy(bytes + format::kPackStateWindowOffset, sampler.data(), format::kSamplerStateSize);
  format::StoreLE<uint32_t>(bytes + format::kPackStateNumShardsOffset, num_shards);
  format::StoreLE<uint32_t>(bytes + format::kPackStateShardIdOffset, shard_id);
  format::StoreLE<uint64_t>(bytes + format::kPackStateRowsOffset, rows);
  format::StoreLE<uint64_t>(bytes + format::kPackStateDocumentOffset, document);
  format::StoreLE<uint64_t>(bytes + format::kPackStateTokenOffset, token);
  format::StoreLE<uint64_t>(bytes + format::kPackStateFingerprintOffset, options_fingerprint);
  if (!carried) return out;
  format::StoreLE<uint64_t>(bytes + format::kPackStateConsumedCountOffset, consumed.size());
  format::StoreLE<uint64_t>(bytes + format::kPackStateSpanCountOffset, remaining.size());
  uint8_t* at = bytes + format::kPackStateCarriedOffset;
  for (uint64_t position : consumed) {
    format::StoreLE<uint64_t>(at, position);
    at += format::kPackStatePositionSize;
  }
  for (const PackSpan& span : remaining) {
    format::StoreLE<uint64_t>(at, span.position);
    format::StoreLE<uint64_t>(at + format::kPackStateSpanBeginOffset, span.begin);
    format::StoreLE<uint64_t>(at + format::kPackStateSpanEndOffset, span.end);
    at += format::kPackStateSpanSize;
  }
  format::StoreLE<uint64_t>(at, format::Checksum(bytes, static_cast<size_t>(at - bytes)));
  return out;
}

Result<PackState> PackState::Parse(std::string_view bytes) {
  const size_t magic = sizeof(format::kPackStateMagic);
  if (bytes.size() < format::kPackStateSize || std::memcmp(bytes.data(), format::kPackStateMagic, magic) != 0) {
    return Status::InvalidArgument("pack state: expected at least " + std::to_string(format::kPackStateSize) +
                                   " bytes starting with 'URPS', got " + std::to_string(bytes.size()) + " bytes");
  }
  const auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
  const uint32_t version = format::LoadLE<uint32_t>(data + format::kPackStateVersionOffset);
  if (version != format::kPackStateVersion && version != format::kPackStateVersionCarried) {
    return Status::NotSupported("pack state: version " + std::to_string(version) + " (this build reads versions " +
                                std::to_string(format::kPackStateVersion) + " and " +
                                std::to_string(format::kPackStateVersionCarried) + ")");
  }
  const bool carried = version == format::kPackStateVersionCarried;
  if (!carried && bytes.size() != format::kPackStateSize) {
    return Status::InvalidArgument("pack state: version 1 is " + std::to_string(format::kPackStateSize) +
                                   " bytes, got " + std::to_string(bytes.size()));
  }
  PackState s;
  UREC_ASSIGN_OR_RETURN(s.window, SamplerState::Parse(bytes.substr(format::kPackStateWindowOffset,
                                                                    format::kSamplerStateSize)));
  s.num_shards = format::LoadLE<uint32_t>(data + format::kPackStateNumShardsOffset);
  s.shard_id = format::LoadLE<uint32_t>(data + format::kPackStateShardIdOffset);
  s.rows = format::LoadLE<uint64_t>(data + format::kPackStateRowsOffset);
  s.document = format::LoadLE<uint64_t>(data + format::kPackStateDocumentOffset);
  s.token = format::LoadLE<uint64_t>(data + format::kPackStateTokenOffset);
  s.options_fingerprint = format::LoadLE<uint64_t>(data + format::kPackStateFingerprintOffset);
  if (!carried) {
    if (s.num_shards == 0) {
      return Status::InvalidArgument("pack state: version 1 of 0 ranks (a combined state is version 2)");
    }
    return s;
  }
  const size_t fixed = format::kPackStateCarriedOffset + format::kPackStateChecksumSize;
  if (bytes.size() < fixed) {
    return Status::InvalidArgument("pack state: version 2 is at least " + std::to_string(fixed) + " bytes, got " +
                                   std::to_string(bytes.size()) + " (truncated)");
  }
  const uint64_t consumed = format::LoadLE<uint64_t>(data + format::kPackStateConsumedCountOffset);
  const uint64_t spans = format::LoadLE<uint64_t>(data + format::kPackStateSpanCountOffset);
  const uint64_t room = bytes.size() - fixed;
  const uint64_t position_size = format::kPackStatePositionSize;
  if (consumed > room / position_size || spans > (room - consumed * position_size) / format::kPackStateSpanSize ||
      consumed * position_size + spans * format::kPackStateSpanSize != room) {
    return Status::InvalidArgument("pack state: " + std::to_string(bytes.size()) + " bytes do not hold the " +
                                   std::to_string(consumed) + " consumed positions and " + std::to_string(spans) +
                                   " spans it counts (truncated or damaged)");
  }
  const size_t body = bytes.size() - format::kPackStateChecksumSize;
  if (format::LoadLE<uint64_t>(data + body) != format::Checksum(data, body)) {
    return Status::InvalidArgument("pack state: checksum mismatch (the bytes are damaged)");
  }
  const uint8_t* at = data + format::kPackStateCarriedOffset;
  for (uint64_t i = 0; i < consumed; ++i, at += position_size) s.consumed.push_back(format::LoadLE<uint64_t>(at));
  for (uint64_t i = 0; i < spans; ++i, at += format::kPackStateSpanSize) {
    s.remaining.push_back({format::LoadLE<uint64_t>(at),
                           format::LoadLE<uint64_t>(at + format::kPackStateSpanBeginOffset),
                           format::LoadLE<uint64_t>(at + format::kPackStateSpanEndOffset)});
  }
  UREC_RETURN_IF_ERROR(CheckCarried(s));
  return s;
}

namespace {

// The batch outputs beside the packed fields.
constexpr const char* kPackOutputs[] = {"segment_ids", "positions", "cu_seqlens", "max_seqlen", "id"};

uint64_t PackFingerprint(const PackOptions& pack) {
  uint64_t h = kSplitMix64Gamma;
  for (uint64_t f : {uint64_t{static_cast<uint8_t>(pack.strategy)}, uint64_t{pack.seq_len}, uint64_t{pack.window},
                     uint64_t{static_cast<uint8_t>(pack.overlong)}, uint64_t{pack.eos.has_value()},
                     static_cast<uint64_t>(pack.eos.value_or(0))}) {
    h = Mix64(h + f);
  }
  return h;
}

Status CheckPackOptions(const std::vector<std::shared_ptr<const Dataset>>& datasets, const LoaderOptions& o,
                        const PackOptions& pack) {
  if (pack.seq_len < 1 || pack.seq_len > (uint64_t{1} << 30)) {
    return Status::InvalidArgument("pack: seq_len " + std::to_string(pack.seq_len) + " is out of range 1..2^30");
  }
  if (pack.window < 1 || pack.window > (uint64_t{1} << 24)) {
    return Status::InvalidArgument("pack: window " + std::to_string(pack.window) + " is out of range 1..2^24");
  }
  if (pack.fields.empty()) return Status::InvalidArgument("pack: no packed field (name them in fields)");
  const LoaderOptions defaults;
  if (!o.image_field.empty() && o.image_field != defaults.image_field) {
    return Status::InvalidArgument("pack: a packing loader batches no image (image_field '" + o.image_field +
                                   "' given)");
  }
  if (!o.label_field.empty() && o.label_field != defaults.label_field) {
    return Status::InvalidArgument("pack: a packing loader batches no label (label_field '" + o.label_field +
                                   "' given)");
  }
  if (!o.boxes_field.empty() || !o.box_aligned.empty() || !o.masks.empty()) {
    return Status::InvalidArgument("pack: boxes and masks are not packed");
  }
  for (const std::string& name : o.fields) {
    if (std::find(pack.fields.begin(), pack.fields.end(), name) == pack.fields.end()) {
      return Status::InvalidArgument("pack: field '" + name + "' is not packed; a packing loader batches only "
                                     "the packed fields");
    }
  }
  const Schema& schema = datasets[0]->schema();
  for (const std::string& name : pack.fields) {
    for (const char* output : kPackOutputs) {
      if (name == output) return Status::InvalidArgument("pack: field '" + name + "' has the name of an output");
    }
    const int index = schema.FieldIndex(name);
    if (index < 0) return Status::InvalidArgument("pack: the dataset has no field '" + name + "'");
    const Field& field = schema.field(index);
    if (!IsNumeric(field.type) || field.shape != std::vector<int64_t>{kVariableDim}) {
      return Status::InvalidArgument("pack: field '" + name + "' is " + Schema::Make({field}).value().ToString() +
                                     "; packed fields are 1-D numeric arrays of any length (shape [-1])");
    }
  }
  return Status::OK();
}

// The tokens of a dataset's documents: the elements of `field` (a 1-D
// variable-shape array) summed over its records, plus one per record for an
// EOS, from the record table's blob lengths (no blob is read), of the file
// each shard's value is read from (the shard, or a column file: SPEC.md 1.4).
Result<uint64_t> DatasetTokens(const Dataset& dataset, const std::string& field, bool eos) {
  using dataset_internal::ShardAccess;
  uint64_t tokens = eos ? dataset.size() : 0;
  const int in_dataset = dataset.schema().FieldIndex(field);
  if (in_dataset < 0) return Status::InvalidArgument("pack: the dataset has no field '" + field + "'");
  for (size_t s = 0; s < ShardAccess::ShardCount(dataset); ++s) {
    UREC_ASSIGN_OR_RETURN(std::vector<ShardPages::Reader> frames, ShardAccess::Files(dataset, s, false));
    const auto [source, index] = ShardAccess::SourceOf(dataset, s, static_cast<size_t>(in_dataset));
    const shard::ShardReader& frame = *frames[source].reader;
    const Field& stored = frame.header().schema.field(index);
    const size_t slot = static_cast<size_t>(frame.layout().blob_slot[index]);
    const uint64_t prefix = format::ShapePrefixBytes(stored);
    const uint64_t width = NumericWidth(stored.type);
    for (uint64_t row = 0; row < frame.records(); ++row) {
      UREC_ASSIGN_OR_RETURN(const uint8_t* entry, frame.Entry(row, /*verify=*/true));
      const uint32_t bytes = index::LoadBlobLocator(frame.layout(), entry, slot).raw_length;
      if (bytes < prefix || (bytes - prefix) % width != 0) {
        return Status::Corruption(frame.RowContext(row) + ": field '" + field + "' has " + std::to_string(bytes) +
                                  " bytes, not a shape prefix and whole elements");
      }
      tokens += (bytes - prefix) / width;
    }
  }
  return tokens;
}

// Weights in tokens as the sampler's document weights: w_i * n_i / T_i, so
// that c_i documents of mean length T_i / n_i carry the token share w_i.
Result<std::vector<double>> TokenWeightsAsDocumentWeights(const std::vector<std::shared_ptr<const Dataset>>& datasets,
                                                          const std::vector<double>& token_weights,
                                                          const PackOptions& pack) {
  if (token_weights.size() != datasets.size()) {
    return Status::InvalidArgument("pack: " + std::to_string(token_weights.size()) + " weights in tokens for " +
                                   std::to_string(datasets.size()) + " datasets");
  }
  std::vector<double> weights(datasets.size(), 0);
  for (size_t i = 0; i < datasets.size(); ++i) {
    if (token_weights[i] == 0) continue;  // the sampler checks the weights themselves
    UREC_ASSIGN_OR_RETURN(uint64_t tokens, DatasetTokens(*datasets[i], pack.fields[0], pack.eos.has_value()));
    if (tokens == 0) {
      return Status::InvalidArgument("pack: dataset " + std::to_string(i) + " has weight " +
                                     std::to_string(token_weights[i]) + " in tokens but no token in field '" +
                                     pack.fields[0] + "'");
    }
    weights[i] = token_weights[i] * static_cast<double>(datasets[i]->size()) / static_cast<double>(tokens);
  }
  return weights;
}

}  // namespace

Result<std::shared_ptr<Loader::Packed>> Loader::Packed::Create(std::vector<std::shared_ptr<const Dataset>> datasets,
                                                               const LoaderOptions& given) {
  auto p = std::make_shared<Packed>();
  p->options = given;
  p->pack = *given.pack;
  if (p->pack.fields.empty()) p->pack.fields = given.fields;
  if (datasets.empty() || datasets[0] == nullptr) return Status::InvalidArgument("loader: no dataset");
  UREC_RETURN_IF_ERROR(CheckPackOptions(datasets, given, p->pack));
  const Schema& schema = datasets[0]->schema();
  for (size_t f = 0; f < p->pack.fields.size(); ++f) {
    const Field& field = schema.field(schema.FieldIndex(p->pack.fields[f]));
    PackedField out;
    out.name = field.name;
    out.type = field.type;
    out.width = NumericWidth(field.type);
    out.pad.resize(out.width);
    UREC_RETURN_IF_ERROR(pipeline::EncodeElement(field, p->pack.pad_value, "pad_value", out.pad.data()));
    if (f == 0 && p->pack.eos) {
      out.eos.resize(out.width);
      UREC_RETURN_IF_ERROR(
          pipeline::EncodeElement(field, static_cast<double>(*p->pack.eos), "eos", out.eos.data()));
    }
    p->packed.push_back(std::move(out));
  }
  p->fingerprint = PackFingerprint(p->pack);
  // The inner loader reads windows: `window` documents in the rank's order,
  // the packed fields one after another (jagged).
  LoaderOptions inner = given;
  inner.pack.reset();
  inner.batch_size = p->pack.window;
  inner.drop_last = false;
  inner.fields = p->pack.fields;
  inner.ragged = RaggedLayout::kJagged;
  inner.image_field.clear();
  inner.label_field.clear();
  inner.cuda = CudaOptions{};  // windows stay on the host; packed batches go up
  inner.coverage = CoverageDetail::kNone;  // documents count as rows go out, below
  // Empty weights in tokens (proportional to the datasets' tokens) are the
  // sampler's default (proportional to their documents): the same mixture.
  if (p->pack.weight_unit == WeightUnit::kTokens && !given.sampler.weights.empty()) {
    UREC_ASSIGN_OR_RETURN(inner.sampler.weights,
                          TokenWeightsAsDocumentWeights(datasets, given.sampler.weights, p->pack));
  }
  UREC_ASSIGN_OR_RETURN(p->inner, Loader::Create(std::move(datasets), inner));
  {
    std::lock_guard<std::mutex> lock(p->inner->impl_->mu);
    p->order = p->inner->impl_->sampler;
  }
  p->StartCoverage(*p->order, /*carries=*/false);
  if (given.cuda.device >= 0) {
    p->max_slots = static_cast<size_t>(given.prefetch) + 1;
    UREC_ASSIGN_OR_RETURN(p->device, pipeline::DeviceStage::Create(given.cuda, p->max_slots, given.batch_size,
                                                                    /*image_size=*/0));
  }
  return p;
}

void Loader::Packed::DropWindow() {
  window.Release();
  window_fields.clear();
  lengths.clear();
  positions.clear();
  spans.clear();
  first.clear();
  plan = {};
  next_row = 0;
  document = 0;
  token = 0;
}

namespace {

// The carried spans of `position` (an empty range: none).
std::pair<const PackSpan*, const PackSpan*> SpansAt(const std::vector<PackSpan>& spans, uint64_t position) {
  auto begin = std::lower_bound(spans.begin(), spans.end(), position,
                                [](const PackSpan& s, uint64_t p) { return s.position < p; });
  auto end = begin;
  while (end != spans.end() && end->position == position) ++end;
  return {spans.data() + (begin - spans.begin()), spans.data() + (end - spans.begin())};
}

}  // namespace

Status Loader::Packed::LoadWindow() {
  DropWindow();
  window_state = inner->state();
  UREC_ASSIGN_OR_RETURN(window, inner->Next());
  if (window.empty()) {
    epoch_done = true;
    return Status::OK();
  }
  for (const PackedField& f : packed) window_fields.push_back(window.field(f.name));
  const size_t n = window.size();
  const int64_t* offsets = window_fields[0]->offsets;
  lengths.resize(n);
  const uint64_t eos = packed[0].eos.empty() ? 0 : 1;
  for (size_t d = 0; d < n; ++d) {
    const auto length = static_cast<uint64_t>(offsets[d + 1] - offsets[d]);
    for (size_t f = 1; f < packed.size(); ++f) {
      const int64_t* other = window_fields[f]->offsets;
      if (other[d + 1] - other[d] != offsets[d + 1] - offsets[d]) {
        return Status::InvalidArgument("pack: record " + std::to_string(window.record_ids()[d]) + ": field '" +
                                       packed[f].name + "' has " + std::to_string(other[d + 1] - other[d]) +
                                       " values, '" + packed[0].name + "' " + std::to_string(length) +
                                       ": packed fields hold one value per token");
      }
    }
    if (length == 0) ++totals.empty;
    lengths[d] = length + eos;
  }
  // Where the documents are in the epoch's order, and what is left of them.
  Sampler at = *order;
  UREC_RETURN_IF_ERROR(at.Restore(window_state));
  positions.resize(n);
  first.assign(n, 0);
  uint64_t skipped = 0;
  for (size_t d = 0; d < n; ++d) {
    positions[d] = at.PaddedPosition(at.position() + d);
    const auto doc = static_cast<uint32_t>(d);
    const auto [begin, end] = SpansAt(carried_remaining, positions[d]);
    if (std::binary_search(carried_consumed.begin(), carried_consumed.end(), positions[d])) {
      first[d] = lengths[d];
      ++skipped;
    } else if (begin != end) {
      const PackSpan& last = *(end - 1);
      const bool concat_suffix = end - begin == 1 && last.end == lengths[d];
      if (last.end > lengths[d] || (pack.strategy == PackStrategy::kConcat && !concat_suffix)) {
        return Status::InvalidArgument(
            "pack state: the document at position " + std::to_string(positions[d]) + " (record " +
            std::to_string(window.record_ids()[d]) + ") has " + std::to_string(lengths[d]) + " tokens, the state " +
            "leaves tokens [" + std::to_string(begin->begin) + ", " + std::to_string(last.end) + ") of it in " +
            std::to_string(end - begin) + " span(s)" +
            (pack.strategy == PackStrategy::kConcat ? " (concat: one, to the document's end)" : "") +
            ": a state of other datasets or options");
      }
      first[d] = begin->begin;
      for (const PackSpan* span = begin; span != end; ++span) {
        spans.push_back({doc, span->begin, span->end - span->begin});
      }
    } else if (lengths[d] > 0) {
      spans.push_back({doc, 0, lengths[d]});
    }
  }
  totals.documents += n - skipped;
  if (pack.strategy != PackStrategy::kConcat) {
    plan = pipeline::PackWindow(spans, pack);
    totals.overlong += plan.overlong;
    totals.cut_tokens += plan.cut_tokens;
    totals.dropped += plan.dropped;
  } else {
    token = first[0];
  }
  PlanDocumentEnds();
  return Status::OK();
}

// Rows being written into one slot: appends pieces to the current row, ends
// rows (padding them) and counts segments.
struct Loader::Packed::RowWriter {
  Packed& p;
  OutSlot& slot;
  size_t row = 0;     // rows done
  size_t filled = 0;  // tokens in the current row
  uint64_t tokens = 0;

  // Tokens [offset, offset + length) of the window's document d: its values
  // (the EOS or pad value past the stored ones) as a new segment.
  void Append(size_t d, uint64_t offset, uint64_t length) {
    const size_t L = p.pack.seq_len;
    const size_t at = row * L + filled;
    for (size_t f = 0; f < p.packed.size(); ++f) {
      const PackedField& field = p.packed[f];
      const BatchField& source = *p.window_fields[f];
      const auto stored = static_cast<uint64_t>(source.offsets[d + 1] - source.offsets[d]);
      const uint64_t copied = offset < stored ? std::min(length, stored - offset) : 0;
      uint8_t* out = slot.values[f].data() + at * field.width;
      if (copied > 0) {
        const auto* in = static_cast<const uint8_t*>(source.data) +
                         (static_cast<uint64_t>(source.offsets[d]) + offset) * field.width;
        std::memcpy(out, in, copied * field.width);
      }
      if (copied < length) {  // the EOS position: the only one past the stored values
        std::memcpy(out + copied * field.width, field.eos.empty() ? field.pad.data() : field.eos.data(), field.width);
      }
    }
    const auto segment = static_cast<int32_t>(slot.ids.size() - first_segment_of_row + 1);
    std::fill_n(slot.segment_ids.data() + at, length, segment);
    int32_t* positions = slot.positions.data() + at;
    for (uint64_t i = 0; i < length; ++i) positions[i] = static_cast<int32_t>(i);
    slot.ids.push_back(static_cast<int64_t>(p.window.record_ids()[d]));
    p.PieceOut(d, offset, length);
    slot.cu_seqlens.push_back(slot.cu_seqlens.back() + static_cast<int32_t>(length));
    slot.max_seqlen = std::max(slot.max_seqlen, static_cast<int32_t>(length));
    filled += length;
    tokens += length;
  }

  // Pads the current row and starts the next.
  void EndRow() {
    const size_t L = p.pack.seq_len;
    const size_t at = row * L + filled;
    for (size_t f = 0; f < p.packed.size(); ++f) {
      const PackedField& field = p.packed[f];
      pipeline::FillElements(slot.values[f].data() + at * field.width, L - filled, field.pad.data(), field.width);
    }
    std::fill_n(slot.segment_ids.data() + at, L - filled, 0);
    std::fill_n(slot.positions.data() + at, L - filled, 0);
    ++row;
    filled = 0;
    first_segment_of_row = slot.ids.size();
  }

  size_t first_segment_of_row = 0;
};

Status Loader::Packed::CutRows(RowWriter& w) {
  const size_t B = options.batch_size;
  const uint64_t L = pack.seq_len;
  while (w.row < B) {
    if (window.empty()) {
      if (epoch_done) break;
      UREC_RETURN_IF_ERROR(LoadWindow());
      continue;
    }
    if (pack.strategy != PackStrategy::kConcat) {
      if (next_row == plan.rows()) {
        SettleWindow();
        DropWindow();
        continue;
      }
      for (size_t i = plan.row_starts[next_row]; i < plan.row_starts[next_row + 1]; ++i) {
        const pipeline::PackPiece& piece = plan.pieces[i];
        w.Append(piece.document, piece.offset, piece.length);
      }
      ++next_row;
      w.EndRow();
      continue;
    }
    // concat: the documents stream; a row may take pieces of two windows.
    while (w.filled < L && document < lengths.size()) {
      const uint64_t take = std::min<uint64_t>(L - w.filled, lengths[document] - token);
      if (take > 0) w.Append(document, token, take);
      token += take;
      if (token == lengths[document]) {
        ++document;
        token = document < first.size() ? first[document] : 0;
      }
    }
    if (w.filled == L) {
      w.EndRow();
    } else {
      SettleWindow();
      DropWindow();  // the row continues in the next window
    }
  }
  if (w.filled > 0) w.EndRow();  // concat: the epoch's last row
  return Status::OK();
}

Result<size_t> Loader::Packed::Next(size_t* rows) {
  *rows = 0;
  if (!sticky_error.ok()) return sticky_error;
  const Clock::time_point t0 = Clock::now();
  const size_t B = options.batch_size;
  const size_t L = pack.seq_len;
  size_t index;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (free_slots.empty()) {
      if (max_slots != 0 && slots.size() == max_slots) {
        return Status::FailedPrecondition("the consumer holds all " + std::to_string(max_slots) +
                                          " device batches of the packing loader (prefetch + 1); release one "
                                          "before the next");
      }
      auto slot = std::make_unique<OutSlot>();
      slot->values.resize(packed.size());
      for (size_t f = 0; f < packed.size(); ++f) slot->values[f].resize(B * L * packed[f].width);
      slot->segment_ids.resize(B * L);
      slot->positions.resize(B * L);
      slots.push_back(std::move(slot));
      free_slots.push_back(slots.size() - 1);
    }
    index = free_slots.back();
    free_slots.pop_back();
  }
  OutSlot& slot = *slots[index];
  slot.cu_seqlens.assign(1, 0);
  slot.ids.clear();
  slot.max_seqlen = 0;
  RowWriter writer{*this, slot};
  Status cut = CutRows(writer);
  const bool keep = cut.ok() && writer.row > 0 && !(writer.row < B && options.drop_last);
  if (!keep) {
    std::lock_guard<std::mutex> lock(mu);
    free_slots.push_back(index);
    if (!cut.ok()) {
      sticky_error = cut;
      return cut;
    }
    totals.wait_s += Seconds(Clock::now() - t0);
    CommitStaged(/*batch_dropped=*/writer.row > 0);
    return index;  // *rows == 0: the end of the epoch
  }
  const size_t n = writer.row;
  const auto segments = static_cast<int64_t>(slot.ids.size());
  slot.fields.clear();
  for (size_t f = 0; f < packed.size(); ++f) {
    BatchField field;
    field.name = packed[f].name;
    field.type = packed[f].type;
    field.kind = FieldKind::kFixedArray;
    field.data = slot.values[f].data();
    field.shape = {static_cast<int64_t>(n), static_cast<int64_t>(L)};
    slot.fields.push_back(std::move(field));
  }
  auto add = [&](const char* name, FieldType type, const void* data, std::vector<int64_t> shape) {
    BatchField field;
    field.name = name;
    field.type = type;
    field.kind = shape.empty() ? FieldKind::kScalar : FieldKind::kFixedArray;
    field.data = data;
    field.shape = std::move(shape);
    slot.fields.push_back(std::move(field));
  };
  add("segment_ids", FieldType::kInt32, slot.segment_ids.data(), {static_cast<int64_t>(n), static_cast<int64_t>(L)});
  add("positions", FieldType::kInt32, slot.positions.data(), {static_cast<int64_t>(n), static_cast<int64_t>(L)});
  add("cu_seqlens", FieldType::kInt32, slot.cu_seqlens.data(), {segments + 1});
  add("max_seqlen", FieldType::kInt32, &slot.max_seqlen, {});
  add("id", FieldType::kInt64, slot.ids.data(), {segments});
  if (device != nullptr) {
    Status uploaded = device->Upload(index, n, slot.fields);
    if (!uploaded.ok()) {
      std::lock_guard<std::mutex> lock(mu);
      free_slots.push_back(index);
      sticky_error = uploaded;
      return uploaded;
    }
  }
  {
    std::lock_guard<std::mutex> lock(mu);
    slot.held = true;
  }
  CommitStaged(/*batch_dropped=*/false);
  ++totals.batches;
  ++run_batches;
  totals.samples += n;
  totals.tokens += writer.tokens;
  totals.padding += n * L - writer.tokens;
  totals.wait_s += Seconds(Clock::now() - t0);
  *rows = n;
  return index;
}

void Loader::Packed::SetEpoch(uint64_t epoch) {
  DropWindow();
  inner->SetEpoch(epoch);
  Sampler at = *order;
  at.SetEpoch(epoch);
  StartCoverage(at, /*carries=*/false);
  carried_consumed.clear();
  carried_remaining.clear();
  epoch_done = false;
  run_batches = 0;
  sticky_error = Status::OK();
}

PackState Loader::Packed::state() const {
  PackState s;
  s.window = window.empty() ? inner->state() : window_state;
  s.num_shards = options.sampler.num_shards;
  s.shard_id = options.sampler.shard_id;
  if (!window.empty()) {
    if (pack.strategy == PackStrategy::kConcat) {
      s.document = document;
      s.token = token;
    } else {
      s.rows = next_row;
    }
  }
  s.options_fingerprint = fingerprint;
  // What this rank still reads of what it carries (all of it is its own).
  const uint64_t from = s.window.position;
  for (uint64_t p : carried_consumed) {
    if (p >= from) s.consumed.push_back(p);
  }
  for (const PackSpan& span : carried_remaining) {
    if (span.position >= from) s.remaining.push_back(span);
  }
  return s;
}

Status Loader::Packed::Restore(const PackState& s) {
  const bool combined = s.num_shards == 0;
  if (!combined && (s.num_shards != options.sampler.num_shards || s.shard_id != options.sampler.shard_id)) {
    return Status::InvalidArgument("pack state: taken on rank " + std::to_string(s.shard_id) + " of " +
                                   std::to_string(s.num_shards) + ", restored on rank " +
                                   std::to_string(options.sampler.shard_id) + " of " +
                                   std::to_string(options.sampler.num_shards) +
                                   "; a rank's state resumes on that rank of as many ranks: to resume on another "
                                   "number of ranks, combine the states of all ranks (CombinePackStates; Python: "
                                   "load_state_dict with the list of every rank's state_dict)");
  }
  if (s.options_fingerprint != fingerprint) {
    return Status::InvalidArgument("pack state: taken with other packing options (strategy, seq_len, window, "
                                   "overlong or eos)");
  }
  UREC_RETURN_IF_ERROR(CheckCarried(s));
  Sampler at = *order;
  UREC_RETURN_IF_ERROR(at.Restore(s.window));
  const uint64_t end = at.num_records();
  if ((!s.consumed.empty() && s.consumed.back() >= end) ||
      (!s.remaining.empty() && s.remaining.back().position >= end)) {
    return Status::OutOfRange("pack state: a carried position is past the epoch's " + std::to_string(end));
  }
  DropWindow();
  UREC_RETURN_IF_ERROR(inner->Restore(s.window));
  // This rank's part of what the state carries.
  carried_consumed.clear();
  carried_remaining.clear();
  for (uint64_t p : s.consumed) {
    if (at.Holds(p)) carried_consumed.push_back(p);
  }
  for (const PackSpan& span : s.remaining) {
    if (at.Holds(span.position)) carried_remaining.push_back(span);
  }
  epoch_done = false;
  run_batches = 0;
  sticky_error = Status::OK();
  Status loaded = LoadWindow();
  const bool fits = pack.strategy == PackStrategy::kConcat
                        ? s.rows == 0 && (s.document < lengths.size() ? s.token <= lengths[s.document]
                                                                      : s.document == lengths.size() && s.token == 0)
                        : s.rows <= plan.rows() && s.document == 0 && s.token == 0;
  if (!loaded.ok() || !fits) {
    DropWindow();
    carried_consumed.clear();
    carried_remaining.clear();
    if (!loaded.ok()) return loaded;
    return Status::OutOfRange("pack state: row " + std::to_string(s.rows) + ", document " +
                              std::to_string(s.document) + ", token " + std::to_string(s.token) +
                              " is past its window");
  }
  if (!combined) {  // a combined state starts the window where LoadWindow did
    next_row = s.rows;
    document = s.document;
    token = s.token;
    PlanDocumentEnds();  // the rows before next_row went out before the state
  }
  const bool mid_window = s.rows > 0 || s.document > 0 || s.token > 0;
  StartCoverage(at, /*carries=*/mid_window || !s.consumed.empty() || !s.remaining.empty());
  return Status::OK();
}

void Loader::Packed::Unfinished(std::vector<uint64_t>* consumed, std::vector<PackSpan>* remaining) const {
  const uint64_t L = order->num_records();
  // The window's documents, as the consumer left them.
  std::vector<std::vector<pipeline::PackPiece>> pending(lengths.size());
  std::vector<bool> started(lengths.size(), false);
  if (pack.strategy != PackStrategy::kConcat) {
    for (size_t r = 0; r < plan.rows(); ++r) {
      for (size_t i = plan.row_starts[r]; i < plan.row_starts[r + 1]; ++i) {
        const pipeline::PackPiece& piece = plan.pieces[i];
        if (r < next_row) {
          started[piece.document] = true;
        } else {
          pending[piece.document].push_back(piece);
        }
      }
    }
  } else {
    for (size_t d = 0; d < lengths.size(); ++d) {
      const uint64_t from = d < document ? lengths[d] : d == document ? token : first[d];
      started[d] = from > 0;
      if (from < lengths[d]) pending[d].push_back({static_cast<uint32_t>(d), from, lengths[d] - from});
    }
  }
  for (size_t d = 0; d < lengths.size(); ++d) {
    const uint64_t p = positions[d];
    if (p >= L) continue;  // padding: a position of no document
    const auto [begin, end] = SpansAt(carried_remaining, p);
    const bool carried =
        begin != end || std::binary_search(carried_consumed.begin(), carried_consumed.end(), p);
    if (!started[d] && !carried) continue;  // untouched: read whole again
    std::vector<pipeline::PackPiece>& left = pending[d];
    if (left.empty()) {
      consumed->push_back(p);
      continue;
    }
    std::sort(left.begin(), left.end(),
              [](const pipeline::PackPiece& a, const pipeline::PackPiece& b) { return a.offset < b.offset; });
    for (const pipeline::PackPiece& piece : left) {
      if (!remaining->empty() && remaining->back().position == p && remaining->back().end == piece.offset) {
        remaining->back().end += piece.length;
      } else {
        remaining->push_back({p, piece.offset, piece.offset + piece.length});
      }
    }
  }
  // What it carries past the window.
  const uint64_t past = window.empty() ? inner->state().position : positions.back() + 1;
  for (uint64_t p : carried_consumed) {
    if (p >= past) consumed->push_back(p);
  }
  for (const PackSpan& span : carried_remaining) {
    if (span.position >= past) remaining->push_back(span);
  }
}

Result<PackState> CombinePackStates(const std::vector<std::shared_ptr<const Dataset>>& datasets,
                                    const LoaderOptions& options, const std::vector<PackState>& states) {
  if (!options.pack) return Status::InvalidArgument("combine pack states: the loader options do not pack");
  if (options.sampler.num_workers != 1) {
    return Status::InvalidArgument("combine pack states: the sampler's workers split a rank's documents; "
                                   "combine the states of ranks of one worker each");
  }
  if (states.empty()) return Status::InvalidArgument("combine pack states: no state");
  const uint32_t ranks = states[0].num_shards;
  if (ranks == 0) {
    return Status::InvalidArgument("combine pack states: a combined state restores as it is (load it into every "
                                   "rank); combine the states the ranks of its run took");
  }
  std::vector<const PackState*> by_rank(ranks, nullptr);
  for (const PackState& s : states) {
    const PackState& s0 = states[0];
    if (s.num_shards != ranks || s.shard_id >= ranks || by_rank[s.shard_id] != nullptr) {
      return Status::InvalidArgument("combine pack states: a state of rank " + std::to_string(s.shard_id) + " of " +
                                     std::to_string(s.num_shards) + " among states of " + std::to_string(ranks) +
                                     " ranks (give each rank's state once)");
    }
    if (s.options_fingerprint != s0.options_fingerprint || s.window.seed != s0.window.seed ||
        s.window.epoch != s0.window.epoch || s.window.fingerprint != s0.window.fingerprint ||
        s.window.version != s0.window.version) {
      return Status::InvalidArgument("combine pack states: rank " + std::to_string(s.shard_id) + "'s state has " +
                                     "another seed, epoch, order or packing options than rank " +
                                     std::to_string(s0.shard_id) + "'s (states of one run and one step only)");
    }
    by_rank[s.shard_id] = &s;
  }
  if (states.size() != ranks) {
    return Status::InvalidArgument("combine pack states: " + std::to_string(states.size()) + " states of " +
                                   std::to_string(ranks) + " ranks; every rank's state is needed");
  }
  // Together the ranks have consumed the epoch's order up to the earliest
  // window (ranks step through the order in turn, W positions per document).
  const PackState* earliest = by_rank[0];
  for (const PackState* s : by_rank) {
    if (s->window.position < earliest->window.position) earliest = s;
  }
  PackState out;
  out.window = earliest->window;
  out.num_shards = 0;
  out.shard_id = 0;
  out.options_fingerprint = earliest->options_fingerprint;
  for (uint32_t r = 0; r < ranks; ++r) {
    LoaderOptions o = options;
    o.sampler.num_shards = ranks;
    o.sampler.shard_id = r;
    o.cuda = CudaOptions{};
    UREC_ASSIGN_OR_RETURN(std::unique_ptr<Loader> loader, Loader::Create(datasets, o));
    const std::string context = "combine pack states: rank " + std::to_string(r);
    Status restored = loader->Restore(*by_rank[r]);
    if (!restored.ok()) return restored.WithContext(context);
    const Loader::Packed& p = *loader->packed_;
    p.Unfinished(&out.consumed, &out.remaining);
    // The positions of its partition between the earliest window and its own.
    Sampler at = *p.order;
    UREC_RETURN_IF_ERROR(at.Restore(out.window));
    for (uint64_t k = at.position(); k < at.size(); ++k) {
      const uint64_t q = at.PaddedPosition(k);
      if (q >= by_rank[r]->window.position || q >= at.num_records()) break;
      out.consumed.push_back(q);
    }
  }
  std::sort(out.consumed.begin(), out.consumed.end());
  std::sort(out.remaining.begin(), out.remaining.end(), [](const PackSpan& a, const PackSpan& b) {
    return a.position != b.position ? a.position < b.position : a.begin < b.begin;
  });
  UREC_RETURN_IF_ERROR(CheckCarried(out).WithContext("combine pack states: the ranks' states overlap"));
  return out;
}

LoaderStats Loader::Packed::stats() const {
  LoaderStats s = totals;
  const LoaderStats in = inner->stats();
  s.read_s = in.read_s;
  s.skipped = in.skipped;
  s.last_bad_record = in.last_bad_record;
  s.wall_s = Seconds(Clock::now() - stats_since);
  if (s.wall_s > 0) {
    s.images_per_s = double(s.samples) / s.wall_s;
    s.batches_per_s = double(s.batches) / s.wall_s;
  }
  return s;
}

void Loader::Packed::ResetStats() {
  inner->ResetStats();
  totals = LoaderStats{};
  stats_since = Clock::now();
}

void Loader::Packed::Return(size_t slot) {
  if (device != nullptr) {
    // The upload must have left the host buffers before Next rewrites them.
    Status recycled = device->Recycle(slot);
    (void)recycled;  // a failing device fails the next upload too
  }
  std::lock_guard<std::mutex> lock(mu);
  slots[slot]->held = false;
  free_slots.push_back(slot);
}

// Only device batches have a ready event (Batch::WaitOn and Synchronize
// answer host batches themselves).
Status Loader::Packed::WaitOn(size_t slot, void* cuda_stream) const { return device->WaitOn(slot, cuda_stream); }

Status Loader::Packed::Synchronize(size_t slot) const { return device->Synchronize(slot); }

}  // namespace unirecord
