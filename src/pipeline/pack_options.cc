// The pack stage's options (PackOptions, packing.h): their names, their
// checks against the datasets, the fingerprint a state records, and the
// options of the windows the stage reads, with weights in tokens turned
// into document weights.
#include <algorithm>

#include "dataset/shard_access.h"
#include "format/array_values.h"
#include "index/record_table.h"
#include "pipeline/pack_stage.h"
#include "util/enum_names.h"
#include "util/splitmix64.h"

namespace unirecord {

constexpr EnumName<PackStrategy> kPackStrategyNames[] = {
    {PackStrategy::kConcat, "concat"}, {PackStrategy::kFirstFit, "first_fit"}, {PackStrategy::kBestFit, "best_fit"}};
constexpr EnumName<PackOverlong> kPackOverlongNames[] = {
    {PackOverlong::kSplit, "split"}, {PackOverlong::kTruncate, "truncate"}, {PackOverlong::kDrop, "drop"}};
constexpr EnumName<WeightUnit> kWeightUnitNames[] = {{WeightUnit::kDocuments, "documents"},
                                                     {WeightUnit::kTokens, "tokens"}};

const char* PackStrategyName(PackStrategy strategy) { return EnumNameOf(kPackStrategyNames, strategy); }

Result<PackStrategy> ParsePackStrategy(std::string_view name) {
  return ParseEnumName(kPackStrategyNames, name, "packing strategy");
}

const char* PackOverlongName(PackOverlong overlong) { return EnumNameOf(kPackOverlongNames, overlong); }

Result<PackOverlong> ParsePackOverlong(std::string_view name) {
  return ParseEnumName(kPackOverlongNames, name, "overlong policy");
}

const char* WeightUnitName(WeightUnit unit) { return EnumNameOf(kWeightUnitNames, unit); }

Result<WeightUnit> ParseWeightUnit(std::string_view name) { return ParseEnumName(kWeightUnitNames, name, "weight unit"); }

namespace pipeline {

namespace {

// The batch outputs beside the packed fields.
constexpr const char* kPackOutputs[] = {"segment_ids", "positions", "cu_seqlens", "max_seqlen", "id"};

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

Result<LoaderOptions> WindowOptions(const std::vector<std::shared_ptr<const Dataset>>& datasets,
                                    const LoaderOptions& given, const PackOptions& pack) {
  // `window` documents a batch in the rank's order, the packed fields one
  // after another (jagged), on the host (the packed batches go up).
  LoaderOptions windows = given;
  windows.pack.reset();
  windows.batch_size = pack.window;
  windows.drop_last = false;
  windows.fields = pack.fields;
  windows.ragged = RaggedLayout::kJagged;
  windows.image_field.clear();
  windows.label_field.clear();
  windows.cuda = CudaOptions{};
  windows.coverage = CoverageDetail::kNone;  // documents count as rows go out (pack_coverage.cc)
  // Empty weights in tokens (proportional to the datasets' tokens) are the
  // sampler's default (proportional to their documents): the same mixture.
  if (pack.weight_unit == WeightUnit::kTokens && !given.sampler.weights.empty()) {
    UREC_ASSIGN_OR_RETURN(windows.sampler.weights, TokenWeightsAsDocumentWeights(datasets, given.sampler.weights, pack));
  }
  return windows;
}

}  // namespace pipeline
}  // namespace unirecord
