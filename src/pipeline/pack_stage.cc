// The pack stage (pack_stage.h): windows of documents in, rows out, cut in
// the consumer's Next().
#include "pipeline/pack_stage.h"

#include <algorithm>
#include <cstring>

#include "pipeline/batch_fields.h"

namespace unirecord::pipeline {

Result<std::shared_ptr<PackStage>> PackStage::Create(std::vector<std::shared_ptr<const Dataset>> datasets,
                                                     const LoaderOptions& given) {
  UREC_RETURN_IF_ERROR(CheckDatasets(datasets));
  auto p = std::make_shared<PackStage>();
  p->options_ = given;
  p->pack_ = *given.pack;
  if (p->pack_.fields.empty()) p->pack_.fields = given.fields;
  UREC_RETURN_IF_ERROR(CheckPackOptions(datasets, given, p->pack_));
  const Schema& schema = datasets[0]->schema();
  for (size_t f = 0; f < p->pack_.fields.size(); ++f) {
    const Field& field = schema.field(schema.FieldIndex(p->pack_.fields[f]));
    PackedField out;
    out.name = field.name;
    out.type = field.type;
    out.width = NumericWidth(field.type);
    out.pad.resize(out.width);
    UREC_RETURN_IF_ERROR(EncodeElement(field, p->pack_.pad_value, "pad_value", out.pad.data()));
    if (f == 0 && p->pack_.eos) {
      out.eos.resize(out.width);
      UREC_RETURN_IF_ERROR(EncodeElement(field, static_cast<double>(*p->pack_.eos), "eos", out.eos.data()));
    }
    p->fields_.push_back(std::move(out));
  }
  p->fingerprint_ = PackFingerprint(p->pack_);
  UREC_ASSIGN_OR_RETURN(const LoaderOptions windows, WindowOptions(datasets, given, p->pack_));
  UREC_ASSIGN_OR_RETURN(p->windows_, SampleBatches::Create(std::move(datasets), windows));
  p->StartCoverage(p->windows_->order(), /*carries=*/false);
  if (given.cuda.device >= 0) {
    p->max_slots_ = static_cast<size_t>(given.prefetch) + 1;
    UREC_ASSIGN_OR_RETURN(p->device_, DeviceStage::Create(given.cuda, p->max_slots_, given.batch_size,
                                                          /*height=*/0, /*width=*/0));
  }
  return p;
}

void PackStage::DropWindow() {
  window_.Release();
  window_fields_.clear();
  lengths_.clear();
  positions_.clear();
  spans_.clear();
  first_.clear();
  plan_ = {};
  next_row_ = 0;
  document_ = 0;
  token_ = 0;
}

Status PackStage::LoadWindow() {
  DropWindow();
  window_state_ = windows_->state();
  UREC_ASSIGN_OR_RETURN(window_, windows_->Next());
  if (window_.empty()) {
    epoch_done_ = true;
    return Status::OK();
  }
  for (const PackedField& f : fields_) window_fields_.push_back(window_.field(f.name));
  const size_t n = window_.size();
  const int64_t* offsets = window_fields_[0]->offsets;
  lengths_.resize(n);
  const uint64_t eos = fields_[0].eos.empty() ? 0 : 1;
  for (size_t d = 0; d < n; ++d) {
    const auto length = static_cast<uint64_t>(offsets[d + 1] - offsets[d]);
    for (size_t f = 1; f < fields_.size(); ++f) {
      const int64_t* other = window_fields_[f]->offsets;
      if (other[d + 1] - other[d] != offsets[d + 1] - offsets[d]) {
        return Status::InvalidArgument("pack: record " + std::to_string(window_.record_ids()[d]) + ": field '" +
                                       fields_[f].name + "' has " + std::to_string(other[d + 1] - other[d]) +
                                       " values, '" + fields_[0].name + "' " + std::to_string(length) +
                                       ": packed fields hold one value per token");
      }
    }
    if (length == 0) ++totals_.empty;
    lengths_[d] = length + eos;
  }
  // Where the documents are in the epoch's order, and what is left of them.
  Sampler at = windows_->order();
  UREC_RETURN_IF_ERROR(at.Restore(window_state_));
  positions_.resize(n);
  first_.assign(n, 0);
  uint64_t skipped = 0;
  for (size_t d = 0; d < n; ++d) {
    positions_[d] = at.PaddedPosition(at.position() + d);
    const auto doc = static_cast<uint32_t>(d);
    const auto [begin, end] = SpansAt(carried_remaining_, positions_[d]);
    if (std::binary_search(carried_consumed_.begin(), carried_consumed_.end(), positions_[d])) {
      first_[d] = lengths_[d];
      ++skipped;
    } else if (begin != end) {
      const PackSpan& last = *(end - 1);
      const bool concat_suffix = end - begin == 1 && last.end == lengths_[d];
      if (last.end > lengths_[d] || (pack_.strategy == PackStrategy::kConcat && !concat_suffix)) {
        return Status::InvalidArgument(
            "pack state: the document at position " + std::to_string(positions_[d]) + " (record " +
            std::to_string(window_.record_ids()[d]) + ") has " + std::to_string(lengths_[d]) + " tokens, the state " +
            "leaves tokens [" + std::to_string(begin->begin) + ", " + std::to_string(last.end) + ") of it in " +
            std::to_string(end - begin) + " span(s)" +
            (pack_.strategy == PackStrategy::kConcat ? " (concat: one, to the document's end)" : "") +
            ": a state of other datasets or options");
      }
      first_[d] = begin->begin;
      for (const PackSpan* span = begin; span != end; ++span) {
        spans_.push_back({doc, span->begin, span->end - span->begin});
      }
    } else if (lengths_[d] > 0) {
      spans_.push_back({doc, 0, lengths_[d]});
    }
  }
  totals_.documents += n - skipped;
  if (pack_.strategy != PackStrategy::kConcat) {
    plan_ = PackWindow(spans_, pack_);
    totals_.overlong += plan_.overlong;
    totals_.cut_tokens += plan_.cut_tokens;
    totals_.dropped += plan_.dropped;
  } else {
    token_ = first_[0];
  }
  PlanDocumentEnds();
  return Status::OK();
}

// Rows being written into one slot: appends pieces to the current row, ends
// rows (padding them) and counts segments.
struct PackStage::RowWriter {
  PackStage& p;
  OutSlot& slot;
  size_t row = 0;     // rows done
  size_t filled = 0;  // tokens in the current row
  uint64_t tokens = 0;

  // Tokens [offset, offset + length) of the window's document d: its values
  // (the EOS or pad value past the stored ones) as a new segment.
  void Append(size_t d, uint64_t offset, uint64_t length) {
    const size_t L = p.pack_.seq_len;
    const size_t at = row * L + filled;
    for (size_t f = 0; f < p.fields_.size(); ++f) {
      const PackedField& field = p.fields_[f];
      const BatchField& source = *p.window_fields_[f];
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
    slot.ids.push_back(static_cast<int64_t>(p.window_.record_ids()[d]));
    p.PieceOut(d, offset, length);
    slot.cu_seqlens.push_back(slot.cu_seqlens.back() + static_cast<int32_t>(length));
    slot.max_seqlen = std::max(slot.max_seqlen, static_cast<int32_t>(length));
    filled += length;
    tokens += length;
  }

  // Pads the current row and starts the next.
  void EndRow() {
    const size_t L = p.pack_.seq_len;
    const size_t at = row * L + filled;
    for (size_t f = 0; f < p.fields_.size(); ++f) {
      const PackedField& field = p.fields_[f];
      FillElements(slot.values[f].data() + at * field.width, L - filled, field.pad.data(), field.width);
    }
    std::fill_n(slot.segment_ids.data() + at, L - filled, 0);
    std::fill_n(slot.positions.data() + at, L - filled, 0);
    ++row;
    filled = 0;
    first_segment_of_row = slot.ids.size();
  }

  size_t first_segment_of_row = 0;
};


Status PackStage::CutRows(RowWriter& w) {
  const size_t B = options_.batch_size;
  const uint64_t L = pack_.seq_len;
  while (w.row < B) {
    if (window_.empty()) {
      if (epoch_done_) break;
      UREC_RETURN_IF_ERROR(LoadWindow());
      continue;
    }
    if (pack_.strategy != PackStrategy::kConcat) {
      if (next_row_ == plan_.rows()) {
        SettleWindow();
        DropWindow();
        continue;
      }
      for (size_t i = plan_.row_starts[next_row_]; i < plan_.row_starts[next_row_ + 1]; ++i) {
        const PackPiece& piece = plan_.pieces[i];
        w.Append(piece.document, piece.offset, piece.length);
      }
      ++next_row_;
      w.EndRow();
      continue;
    }
    // concat: the documents stream; a row may take pieces of two windows.
    while (w.filled < L && document_ < lengths_.size()) {
      const uint64_t take = std::min<uint64_t>(L - w.filled, lengths_[document_] - token_);
      if (take > 0) w.Append(document_, token_, take);
      token_ += take;
      if (token_ == lengths_[document_]) {
        ++document_;
        token_ = document_ < first_.size() ? first_[document_] : 0;
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


Result<size_t> PackStage::ClaimSlot() {
  const size_t B = options_.batch_size;
  const size_t L = pack_.seq_len;
  std::lock_guard<std::mutex> lock(mu_);
  if (free_slots_.empty()) {
    if (max_slots_ != 0 && slots_.size() == max_slots_) {
      return Status::FailedPrecondition("the consumer holds all " + std::to_string(max_slots_) +
                                        " device batches of the packing loader (prefetch + 1); release one "
                                        "before the next");
    }
    auto slot = std::make_unique<OutSlot>();
    slot->values.resize(fields_.size());
    for (size_t f = 0; f < fields_.size(); ++f) slot->values[f].resize(B * L * fields_[f].width);
    slot->segment_ids.resize(B * L);
    slot->positions.resize(B * L);
    slots_.push_back(std::move(slot));
    free_slots_.push_back(slots_.size() - 1);
  }
  const size_t index = free_slots_.back();
  free_slots_.pop_back();
  return index;
}

void PackStage::Describe(OutSlot& slot, size_t rows) {
  const auto n = static_cast<int64_t>(rows);
  const auto L = static_cast<int64_t>(pack_.seq_len);
  const auto segments = static_cast<int64_t>(slot.ids.size());
  slot.fields.clear();
  for (size_t f = 0; f < fields_.size(); ++f) {
    BatchField field;
    field.name = fields_[f].name;
    field.type = fields_[f].type;
    field.kind = FieldKind::kFixedArray;
    field.data = slot.values[f].data();
    field.shape = {n, L};
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
  add("segment_ids", FieldType::kInt32, slot.segment_ids.data(), {n, L});
  add("positions", FieldType::kInt32, slot.positions.data(), {n, L});
  add("cu_seqlens", FieldType::kInt32, slot.cu_seqlens.data(), {segments + 1});
  add("max_seqlen", FieldType::kInt32, &slot.max_seqlen, {});
  add("id", FieldType::kInt64, slot.ids.data(), {segments});
}

Result<Batch> PackStage::Next() {
  if (!sticky_error_.ok()) return sticky_error_;
  const Clock::time_point t0 = Clock::now();
  UREC_ASSIGN_OR_RETURN(const size_t index, ClaimSlot());
  OutSlot& slot = *slots_[index];
  slot.cu_seqlens.assign(1, 0);
  slot.ids.clear();
  slot.max_seqlen = 0;
  RowWriter writer{*this, slot};
  Status cut = CutRows(writer);
  Contents batch;
  batch.epoch = windows_->epoch();
  const bool keep = cut.ok() && writer.row > 0 && !(writer.row < options_.batch_size && options_.drop_last);
  if (!keep) {
    std::lock_guard<std::mutex> lock(mu_);
    free_slots_.push_back(index);
    if (!cut.ok()) {
      sticky_error_ = cut;
      return cut;
    }
    totals_.wait_s += Seconds(Clock::now() - t0);
    CommitStaged(/*batch_dropped=*/writer.row > 0);
    return Make(nullptr, 0, batch);  // the end of the epoch
  }
  const size_t n = writer.row;
  Describe(slot, n);
  if (device_ != nullptr) {
    Status uploaded = device_->Upload(index, n, slot.fields);
    if (!uploaded.ok()) {
      std::lock_guard<std::mutex> lock(mu_);
      free_slots_.push_back(index);
      sticky_error_ = uploaded;
      return uploaded;
    }
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    slot.held = true;
  }
  CommitStaged(/*batch_dropped=*/false);
  ++totals_.batches;
  ++run_batches_;
  totals_.samples += n;
  totals_.tokens += writer.tokens;
  totals_.padding += n * pack_.seq_len - writer.tokens;
  totals_.wait_s += Seconds(Clock::now() - t0);
  batch.size = n;
  batch.index = run_batches_ - 1;
  batch.fields = &slot.fields;
  if (device_ != nullptr) batch.ready_event = device_->ready_event(index);
  return Make(shared_from_this(), index, batch);
}

void PackStage::SetEpoch(uint64_t epoch) {
  DropWindow();
  windows_->SetEpoch(epoch);
  Sampler at = windows_->order();
  at.SetEpoch(epoch);
  StartCoverage(at, /*carries=*/false);
  carried_consumed_.clear();
  carried_remaining_.clear();
  epoch_done_ = false;
  run_batches_ = 0;
  sticky_error_ = Status::OK();
}


Status PackStage::Restore(const SamplerState&) {
  return Status::InvalidArgument("loader: a packing loader restores a PackState (pack_state()), not a SamplerState");
}

LoaderStats PackStage::stats() const {
  LoaderStats s = totals_;
  const LoaderStats in = windows_->stats();
  s.read_s = in.read_s;
  s.skipped = in.skipped;
  s.last_bad_record = in.last_bad_record;
  s.wall_s = Seconds(Clock::now() - stats_since_);
  if (s.wall_s > 0) {
    s.images_per_s = double(s.samples) / s.wall_s;
    s.batches_per_s = double(s.batches) / s.wall_s;
  }
  return s;
}

void PackStage::ResetStats() {
  windows_->ResetStats();
  totals_ = LoaderStats{};
  stats_since_ = Clock::now();
}

void PackStage::Return(size_t slot) {
  if (device_ != nullptr) {
    // The upload must have left the host buffers before Next rewrites them.
    Status recycled = device_->Recycle(slot);
    (void)recycled;  // a failing device fails the next upload too
  }
  std::lock_guard<std::mutex> lock(mu_);
  slots_[slot]->held = false;
  free_slots_.push_back(slot);
}

// Only device batches have a ready event (Batch::WaitOn and Synchronize
// answer host batches themselves).
Status PackStage::WaitOn(size_t slot, void* cuda_stream) const { return device_->WaitOn(slot, cuda_stream); }

Status PackStage::Synchronize(size_t slot) const { return device_->Synchronize(slot); }

}  // namespace unirecord::pipeline
