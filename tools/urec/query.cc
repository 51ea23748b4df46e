// urec query: the records matching an expression (docs/query.md).
//
//   urec query out/ 'label in [3, 7] and width >= 400'          (ids, one a line)
//   urec query out/ 'label == "n01440764"' --count
//   urec query out/ 'width < 100' --json --limit 5              (records as `urec cat`)
//   urec query out/ 'height > 500' --group-by label             (value, count)
//   urec query out/ 'path < "n02"' --explain                    (the plan)
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "command.h"
#include "dataset_json.h"
#include "unirecord/query.h"

namespace unirecord::cli {
namespace {

struct QueryArgs {
  VersionChoice version;
  std::string path;
  RemoteOptions remote;
  std::string expression;
  bool count = false;
  bool ids = false;
  bool json = false;
  std::vector<std::string> fields;
  uint64_t limit = UINT64_MAX;
  std::string group_by;
  bool explain = false;
};

// Collects output and writes it in large pieces.
class Output {
 public:
  Status Add(const std::string& line) {
    buffer_ += line;
    buffer_ += '\n';
    return buffer_.size() >= (1 << 20) ? Flush() : Status::OK();
  }
  Status Flush() {
    Status s = WriteStdout(buffer_);
    buffer_.clear();
    return s;
  }

 private:
  std::string buffer_;
};

Status PrintGroups(const Dataset& dataset, const Query& query, const QueryArgs& args) {
  UREC_ASSIGN_OR_RETURN(size_t field, FindDatasetField(args.path, dataset, args.group_by));
  UREC_ASSIGN_OR_RETURN(std::vector<ValueCount> groups, query.CountBy(dataset, args.group_by));
  // Class names beside the values of an int field, when the dataset has them.
  std::vector<std::string> classes;
  const bool hash = IsHashField(dataset.schema().field(field));
  auto found = dataset.metadata().find(kClassesMetadataKey);
  if (found != dataset.metadata().end()) classes = DecodeNameList(found->second);
  Output out;
  uint64_t printed = 0;
  for (const ValueCount& g : groups) {
    if (printed++ == args.limit) break;
    const QueryValue& v = g.value;
    const bool named = !hash && v.type == FieldType::kInt64 && v.int_value >= 0 &&
                       static_cast<uint64_t>(v.int_value) < classes.size();
    const std::string text = hash ? HashHex(v.int_value) : v.ToString();
    if (args.json) {
      Json line;
      if (hash) {
        line[args.group_by] = text;
      } else if (v.type == FieldType::kInt64) {
        line[args.group_by] = v.int_value;
      } else if (v.type == FieldType::kString) {
        line[args.group_by] = v.string_value;
      } else {
        line[args.group_by] = FloatToJson(v.float_value);  // as `urec cat` prints it
      }
      if (named) line["class"] = classes[static_cast<size_t>(v.int_value)];
      line["count"] = g.count;
      UREC_RETURN_IF_ERROR(out.Add(DumpJsonLine(line)));
    } else {
      std::string line = text + "\t" + std::to_string(g.count);
      if (named) line += "\t" + classes[static_cast<size_t>(v.int_value)];
      UREC_RETURN_IF_ERROR(out.Add(line));
    }
  }
  return out.Flush();
}

Status RunQuery(const QueryArgs& args) {
  if (static_cast<int>(args.count) + static_cast<int>(args.ids) + static_cast<int>(args.json || !args.fields.empty()) > 1) {
    return Status::InvalidArgument("choose one of --count, --ids and --json/--fields");
  }
  if (!args.group_by.empty() && (args.count || args.ids || !args.fields.empty())) {
    return Status::InvalidArgument("--group-by prints value and count lines (or --json objects); it takes no --count, --ids or --fields");
  }
  UREC_ASSIGN_OR_RETURN(std::shared_ptr<Dataset> dataset, OpenForReading(args.path, args.remote, args.version));
  UREC_ASSIGN_OR_RETURN(Query query, Query::Parse(args.expression, *dataset));
  if (args.explain) {
    UREC_ASSIGN_OR_RETURN(uint64_t count, query.Count(*dataset));
    return WriteStdout(query.Explain() + std::to_string(count) + " of " + std::to_string(dataset->size()) +
                       " records match\n");
  }
  if (!args.group_by.empty()) return PrintGroups(*dataset, query, args);
  if (args.count) {
    UREC_ASSIGN_OR_RETURN(uint64_t count, query.Count(*dataset));
    return WriteStdout(std::to_string(count) + "\n");
  }
  UREC_ASSIGN_OR_RETURN(std::vector<uint64_t> ids, query.Ids(*dataset));
  if (ids.size() > args.limit) ids.resize(args.limit);
  Output out;
  if (!args.json && args.fields.empty()) {
    for (uint64_t id : ids) UREC_RETURN_IF_ERROR(out.Add(std::to_string(id)));
    return out.Flush();
  }
  const Schema& schema = dataset->schema();
  std::vector<size_t> fields;
  for (const std::string& name : args.fields) {
    UREC_ASSIGN_OR_RETURN(size_t f, FindDatasetField(args.path, *dataset, name));
    fields.push_back(f);
  }
  if (args.fields.empty()) {
    for (size_t f = 0; f < schema.num_fields(); ++f) fields.push_back(f);
  }
  for (uint64_t id : ids) {
    UREC_ASSIGN_OR_RETURN(Record record, dataset->Get(id));
    UREC_ASSIGN_OR_RETURN(Json json, RecordToJson(record, fields));
    UREC_RETURN_IF_ERROR(out.Add(DumpJsonLine(json)));
  }
  return out.Flush();
}

CommandRunner SetupQuery(CLI::App* cmd) {
  auto args = std::make_shared<QueryArgs>();
  cmd->add_option("PATH", args->path, "Dataset folder, one .urec shard, a glob, or an http(s):// or s3:// location")->required();
  AddRemoteOptions(cmd, &args->remote);
  AddVersionOptions(cmd, &args->version);
  cmd->add_option("EXPR", args->expression, "Expression, e.g. 'label in [3, 7] and width >= 400' (docs/query.md)")
      ->required();
  cmd->add_flag("--count", args->count, "Print only the number of matching records");
  cmd->add_flag("--ids", args->ids, "Print the matching ids, one a line (the default)");
  cmd->add_flag("--json", args->json, "Print each matching record as one JSON object a line (as `urec cat`)");
  cmd->add_option("--fields", args->fields, "JSON objects with only these fields (and the id)")->delimiter(',');
  cmd->add_option("--limit", args->limit, "Print at most N records (or groups)")->check(IntegerIn(0, UINT64_MAX));
  cmd->add_option("--group-by", args->group_by, "Print the matching records' count per value of FIELD");
  cmd->add_flag("--explain", args->explain, "Print the plan of each clause and the number of matches");
  return [args] { return RunQuery(*args); };
}

}  // namespace

UREC_REGISTER_COMMAND("query", "Find records by their field values (index search)", SetupQuery);

}  // namespace unirecord::cli
