// What `urec inspect` and `urec cat` share: opening a dataset for reading
// and turning its values into JSON (nlohmann::json escapes strings correctly).
#ifndef UNIRECORD_TOOLS_UREC_DATASET_JSON_H_
#define UNIRECORD_TOOLS_UREC_DATASET_JSON_H_

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "command.h"
#include "unirecord/dataset.h"
#include "unirecord/status.h"

namespace unirecord::cli {

using Json = nlohmann::ordered_json;

// --version G / --tag T: which kept version to open (DatasetOptions).
struct VersionChoice {
  uint64_t version = 0;
  std::string tag;
};
void AddVersionOptions(CLI::App* cmd, VersionChoice* version);

// Opens a directory, glob or shard list as a whole dataset; a single .urec
// file opens on its own (ids then number that shard's records from 0); a
// remote location (http://, https://, s3://) with `remote`'s cache settings;
// `page_cache_bytes` bounds its inflated scalar pages (DatasetOptions).
Result<std::shared_ptr<Dataset>> OpenForReading(const std::string& path, const RemoteOptions& remote = {},
                                                const VersionChoice& version = {},
                                                uint64_t page_cache_bytes = DatasetOptions{}.page_cache_bytes);

// --cache-dir, --cache-limit, --prefetch-shards, --max-requests, --attempts,
// the time limits (--timeout-s, --min-rate-*, --request-deadline-s),
// --s3-endpoint, --s3-addressing: the settings of a remote PATH
// (docs/remote.md).
void AddRemoteOptions(CLI::App* cmd, RemoteOptions* remote);

// The field called `name` of the dataset opened from `path`; the error names
// the dataset and lists its fields.
Result<size_t> FindDatasetField(const std::string& path, const Dataset& dataset, const std::string& name);

// One field of one record: a number, a string, a nested array for a
// fixed-shape array, {"size": N} for a bytes field, and a hash field's
// 16 hex digits (IsHashField).
Result<Json> FieldToJson(const Record& record, size_t field);

// A floating-point value as every JSON printer of urec writes it (cat, get,
// query --json and --group-by --json, inspect --json): a number when finite,
// else the string "inf", "-inf" or "nan" (JSON has no such numbers;
// docs/cli.md, "JSON output"). The sign of a NaN is not kept.
Json FloatToJson(double value);

// {"id": ID, field: value, ...} for `fields` (schema indexes, in that order);
// what `urec cat` and `urec query --json` print for a record.
Result<Json> RecordToJson(const Record& record, const std::vector<size_t>& fields);

// An int64 field whose name ends in "_xxh3" (source_xxh3 of `urec convert`)
// holds a 64-bit hash: printed as the unsigned value in 16 lowercase hex
// digits, never as the negative number its bits read as.
bool IsHashField(const Field& field);
std::string HashHex(int64_t bits);

// The media fields of a schema: [{"field", "kind", "parameters": [names]}] (urec inspect).
Json MediaFieldsJson(const Schema& schema);
// The field's description: name, type, shape, indexed, compression.
Json FieldSchemaToJson(const Field& field);

// Pretty-printed. A string's bytes that are not UTF-8 are written as the
// escapes \udc80..\udcff (byte + 0xDC00, Python's surrogateescape), so
// nothing is lost: json.loads(text) then s.encode("utf-8", "surrogateescape")
// (os.fsencode) gives the bytes back (docs/cli.md, "JSON output").
std::string DumpJson(const Json& json);
// The same on one line (JSON Lines output).
std::string DumpJsonLine(const Json& json);

// Writes and flushes; IOError when standard output cannot take it.
Status WriteStdout(std::string_view bytes);

}  // namespace unirecord::cli

#endif  // UNIRECORD_TOOLS_UREC_DATASET_JSON_H_
