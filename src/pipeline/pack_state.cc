// Where a pack stage is (PackState, format/SPEC.md section 13): the state's
// bytes, the stage's state and Restore, and elastic resume (the states of
// every rank combined into one that restores on any number of ranks).
#include <algorithm>
#include <cstring>

#include "format/checksum.h"
#include "format/endian.h"
#include "format/format_constants.h"
#include "pipeline/pack_stage.h"

namespace unirecord {

namespace pipeline {

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

// The carried spans of `position` (an empty range: none).
std::pair<const PackSpan*, const PackSpan*> SpansAt(const std::vector<PackSpan>& spans, uint64_t position) {
  auto begin = std::lower_bound(spans.begin(), spans.end(), position,
                                [](const PackSpan& s, uint64_t p) { return s.position < p; });
  auto end = begin;
  while (end != spans.end() && end->position == position) ++end;
  return {spans.data() + (begin - spans.begin()), spans.data() + (end - spans.begin())};
}

}  // namespace pipeline

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
  UREC_RETURN_IF_ERROR(pipeline::CheckCarried(s));
  return s;
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
    UREC_ASSIGN_OR_RETURN(std::shared_ptr<pipeline::PackStage> rank, pipeline::PackStage::Create(datasets, o));
    const std::string context = "combine pack states: rank " + std::to_string(r);
    Status restored = rank->Restore(*by_rank[r]);
    if (!restored.ok()) return restored.WithContext(context);
    rank->Unfinished(&out.consumed, &out.remaining);
    // The positions of its partition between the earliest window and its own.
    Sampler at = rank->order();
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
  UREC_RETURN_IF_ERROR(pipeline::CheckCarried(out).WithContext("combine pack states: the ranks' states overlap"));
  return out;
}

namespace pipeline {

PackState PackStage::State() const {
  PackState s;
  s.window = window_.empty() ? windows_->state() : window_state_;
  s.num_shards = options_.sampler.num_shards;
  s.shard_id = options_.sampler.shard_id;
  if (!window_.empty()) {
    if (pack_.strategy == PackStrategy::kConcat) {
      s.document = document_;
      s.token = token_;
    } else {
      s.rows = next_row_;
    }
  }
  s.options_fingerprint = fingerprint_;
  // What this rank still reads of what it carries (all of it is its own).
  const uint64_t from = s.window.position;
  for (uint64_t p : carried_consumed_) {
    if (p >= from) s.consumed.push_back(p);
  }
  for (const PackSpan& span : carried_remaining_) {
    if (span.position >= from) s.remaining.push_back(span);
  }
  return s;
}

Status PackStage::Restore(const PackState& s) {
  const bool combined = s.num_shards == 0;
  if (!combined && (s.num_shards != options_.sampler.num_shards || s.shard_id != options_.sampler.shard_id)) {
    return Status::InvalidArgument("pack state: taken on rank " + std::to_string(s.shard_id) + " of " +
                                   std::to_string(s.num_shards) + ", restored on rank " +
                                   std::to_string(options_.sampler.shard_id) + " of " +
                                   std::to_string(options_.sampler.num_shards) +
                                   "; a rank's state resumes on that rank of as many ranks: to resume on another "
                                   "number of ranks, combine the states of all ranks (CombinePackStates; Python: "
                                   "load_state_dict with the list of every rank's state_dict)");
  }
  if (s.options_fingerprint != fingerprint_) {
    return Status::InvalidArgument("pack state: taken with other packing options (strategy, seq_len, window, "
                                   "overlong or eos)");
  }
  UREC_RETURN_IF_ERROR(CheckCarried(s));
  Sampler at = windows_->order();
  UREC_RETURN_IF_ERROR(at.Restore(s.window));
  const uint64_t end = at.num_records();
  if ((!s.consumed.empty() && s.consumed.back() >= end) ||
      (!s.remaining.empty() && s.remaining.back().position >= end)) {
    return Status::OutOfRange("pack state: a carried position is past the epoch's " + std::to_string(end));
  }
  DropWindow();
  UREC_RETURN_IF_ERROR(windows_->Restore(s.window));
  // This rank's part of what the state carries.
  carried_consumed_.clear();
  carried_remaining_.clear();
  for (uint64_t p : s.consumed) {
    if (at.Holds(p)) carried_consumed_.push_back(p);
  }
  for (const PackSpan& span : s.remaining) {
    if (at.Holds(span.position)) carried_remaining_.push_back(span);
  }
  epoch_done_ = false;
  run_batches_ = 0;
  sticky_error_ = Status::OK();
  Status loaded = LoadWindow();
  const bool fits = pack_.strategy == PackStrategy::kConcat
                        ? s.rows == 0 && (s.document < lengths_.size() ? s.token <= lengths_[s.document]
                                                                      : s.document == lengths_.size() && s.token == 0)
                        : s.rows <= plan_.rows() && s.document == 0 && s.token == 0;
  if (!loaded.ok() || !fits) {
    DropWindow();
    carried_consumed_.clear();
    carried_remaining_.clear();
    if (!loaded.ok()) return loaded;
    return Status::OutOfRange("pack state: row " + std::to_string(s.rows) + ", document " +
                              std::to_string(s.document) + ", token " + std::to_string(s.token) +
                              " is past its window");
  }
  if (!combined) {  // a combined state starts the window where LoadWindow did
    next_row_ = s.rows;
    document_ = s.document;
    token_ = s.token;
    PlanDocumentEnds();  // the rows before next_row_ went out before the state
  }
  const bool mid_window = s.rows > 0 || s.document > 0 || s.token > 0;
  StartCoverage(at, /*carries=*/mid_window || !s.consumed.empty() || !s.remaining.empty());
  return Status::OK();
}

void PackStage::Unfinished(std::vector<uint64_t>* consumed, std::vector<PackSpan>* remaining) const {
  const uint64_t L = windows_->order().num_records();
  // The window's documents, as the consumer left them.
  std::vector<std::vector<PackPiece>> pending(lengths_.size());
  std::vector<bool> started(lengths_.size(), false);
  if (pack_.strategy != PackStrategy::kConcat) {
    for (size_t r = 0; r < plan_.rows(); ++r) {
      for (size_t i = plan_.row_starts[r]; i < plan_.row_starts[r + 1]; ++i) {
        const PackPiece& piece = plan_.pieces[i];
        if (r < next_row_) {
          started[piece.document] = true;
        } else {
          pending[piece.document].push_back(piece);
        }
      }
    }
  } else {
    for (size_t d = 0; d < lengths_.size(); ++d) {
      const uint64_t from = d < document_ ? lengths_[d] : d == document_ ? token_ : first_[d];
      started[d] = from > 0;
      if (from < lengths_[d]) pending[d].push_back({static_cast<uint32_t>(d), from, lengths_[d] - from});
    }
  }
  for (size_t d = 0; d < lengths_.size(); ++d) {
    const uint64_t p = positions_[d];
    if (p >= L) continue;  // padding: a position of no document
    const auto [begin, end] = SpansAt(carried_remaining_, p);
    const bool carried =
        begin != end || std::binary_search(carried_consumed_.begin(), carried_consumed_.end(), p);
    if (!started[d] && !carried) continue;  // untouched: read whole again
    std::vector<PackPiece>& left = pending[d];
    if (left.empty()) {
      consumed->push_back(p);
      continue;
    }
    std::sort(left.begin(), left.end(),
              [](const PackPiece& a, const PackPiece& b) { return a.offset < b.offset; });
    for (const PackPiece& piece : left) {
      if (!remaining->empty() && remaining->back().position == p && remaining->back().end == piece.offset) {
        remaining->back().end += piece.length;
      } else {
        remaining->push_back({p, piece.offset, piece.offset + piece.length});
      }
    }
  }
  // What it carries past the window.
  const uint64_t past = window_.empty() ? windows_->state().position : positions_.back() + 1;
  for (uint64_t p : carried_consumed_) {
    if (p >= past) consumed->push_back(p);
  }
  for (const PackSpan& span : carried_remaining_) {
    if (span.position >= past) remaining->push_back(span);
  }
}

}  // namespace pipeline
}  // namespace unirecord
