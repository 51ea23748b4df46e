// What `urec inspect` and `urec cat` share: opening a dataset for reading
// and turning its values into JSON (nlohmann::json escapes strings correctly).
#ifndef UNIRECORD_TOOLS_UREC_DATASET_JSON_H_
#define UNIRECORD_TOOLS_UREC_DATASET_JSON_H_

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "unirecord/dataset.h"
#include "unirecord/status.h"

namespace unirecord::cli {

using Json = nlohmann::ordered_json;

// Opens a directory, glob or shard list as a whole dataset; a single .urec
// file opens on its own (ids then number that shard's records from 0).
Result<std::shared_ptr<Dataset>> OpenForReading(const std::string& path);

// One field of one record: a number, a string, a nested array for a
// fixed-shape array, and {"size": N} for a bytes field.
Result<Json> FieldToJson(const Record& record, size_t field);

// {"id": ID, field: value, ...} for `fields` (schema indexes, in that order);
// what `urec cat` and `urec query --json` print for a record.
Result<Json> RecordToJson(const Record& record, const std::vector<size_t>& fields);

// The field's description: name, type, shape, indexed, compression.
Json FieldSchemaToJson(const Field& field);

// Pretty-printed, with invalid UTF-8 replaced by U+FFFD instead of failing.
std::string DumpJson(const Json& json);
// The same on one line (JSON Lines output).
std::string DumpJsonLine(const Json& json);

// Writes and flushes; IOError when standard output cannot take it.
Status WriteStdout(std::string_view bytes);

}  // namespace unirecord::cli

#endif  // UNIRECORD_TOOLS_UREC_DATASET_JSON_H_
