// Sequence packing: the Loader packs documents (records of one or more 1-D
// token fields) into rows of a fixed length for language-model training
// (LoaderOptions::pack; docs/loader.md, "Packing sequences").
//
// A rank's documents come in its sampler order and are packed in windows of
// `window` consecutive documents of that order, so the rows are a pure
// function of (seed, epoch, rank, ranks, options) and a state names a window
// and a row: resuming re-reads one window, never the epoch.
#ifndef UNIRECORD_PACKING_H_
#define UNIRECORD_PACKING_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "unirecord/sampler.h"
#include "unirecord/status.h"

namespace unirecord {

enum class PackStrategy : uint8_t {
  // The documents one after another, cut every seq_len tokens: no padding
  // but the epoch's last row; a document may continue into the next row
  // (its piece there is a new segment, positions from 0).
  kConcat,
  // Within each window, in document order: a document goes into the first
  // row with room for it, else a new row. Rows in the order they opened.
  kFirstFit,
  // Within each window, longest document first (ties: document order): a
  // document goes into the row it fills most (the least room that fits;
  // ties: the row opened first), else a new row. Rows in the order they opened.
  kBestFit,
};

// A document longer than seq_len (first_fit, best_fit; concat cuts anyway).
enum class PackOverlong : uint8_t {
  kSplit,     // pieces of seq_len tokens (the last shorter), each packed as a document
  kTruncate,  // its first seq_len tokens; the rest is counted, not loaded
  kDrop,      // left out, counted
};

// "concat" | "first_fit" | "best_fit" and "split" | "truncate" | "drop";
// the parsers return InvalidArgument naming the accepted names.
// What LoaderOptions::sampler.weights weigh when several datasets are mixed.
enum class WeightUnit : uint8_t {
  kDocuments,  // each dataset's share of the epoch's documents (records)
  // Each dataset's share of the epoch's tokens: the loader turns the weights
  // into document weights w_i * n_i / T_i (n_i records holding T_i tokens,
  // EOS included, counted from the record table without reading a blob), so
  // a dataset's expected tokens per epoch are its token share
  // (docs/loader.md, "Mixing by tokens").
  kTokens,
};

const char* PackStrategyName(PackStrategy strategy);
Result<PackStrategy> ParsePackStrategy(std::string_view name);
const char* PackOverlongName(PackOverlong overlong);
Result<PackOverlong> ParsePackOverlong(std::string_view name);
// "documents" | "tokens".
const char* WeightUnitName(WeightUnit unit);
Result<WeightUnit> ParseWeightUnit(std::string_view name);

struct PackOptions {
  size_t seq_len = 4096;  // tokens per row
  PackStrategy strategy = PackStrategy::kBestFit;
  size_t window = 1024;   // documents packed together (first_fit, best_fit); also the read unit of concat
  PackOverlong overlong = PackOverlong::kSplit;
  // The packed fields: 1-D numeric arrays of any length ([-1]) holding one
  // value per token, equally long in each record (tokens, a loss mask...).
  // Empty (default): every field of LoaderOptions::fields.
  std::vector<std::string> fields;
  double pad_value = 0;         // every packed field's value in padding
  // Appended to every document's first packed field (the others get
  // pad_value there) before packing; unset (default): nothing appended.
  std::optional<int64_t> eos;
  // What LoaderOptions::sampler.weights weigh (several datasets); the
  // epoch's length (`epoch_size`) stays counted in documents.
  WeightUnit weight_unit = WeightUnit::kDocuments;
};

// Tokens [begin, end) of the document at `position` of the epoch's order
// (SamplerState's positions), still to be delivered: its other tokens were.
struct PackSpan {
  uint64_t position = 0;
  uint64_t begin = 0;
  uint64_t end = 0;
};

// Where a packed loader is: the window being handed out (the state of the
// sampler at its first document) and, in it, the next row: for first_fit
// and best_fit the rows of the window already handed out; for concat the
// document (of the window) and token at which the next row starts.
//
// Elastic resume (another number of ranks): CombinePackStates (loader.h)
// merges the states of all ranks into one taken on no rank (num_shards 0),
// which restores into every rank of any number of ranks. It names the
// documents of the epoch's order consumed past the window's position, in
// whole (`consumed`) or in part (`remaining`: what is left of them); a run
// restored from it carries those of its rank in its own states until the
// epoch ends. Serialize() gives 88 portable bytes when both are empty and
// the state is a rank's (format/SPEC.md section 13.1), else 112 + 8 per
// consumed document + 24 per span (section 13.2).
struct PackState {
  SamplerState window;
  // The ranks and rank that took it: a state restores into the same rank of
  // as many ranks; num_shards 0 (a combined state): into any rank.
  uint32_t num_shards = 1;
  uint32_t shard_id = 0;
  uint64_t rows = 0;
  uint64_t document = 0;
  uint64_t token = 0;
  uint64_t options_fingerprint = 0;  // of the pack options (SPEC.md 13.1)
  std::vector<uint64_t> consumed;    // increasing positions, at or past window.position
  std::vector<PackSpan> remaining;   // by position, then begin; none overlapping, none of a consumed position

  std::string Serialize() const;
  static Result<PackState> Parse(std::string_view bytes);
};

}  // namespace unirecord

#endif  // UNIRECORD_PACKING_H_
