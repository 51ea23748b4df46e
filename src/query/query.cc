// Query: parsing, explaining, and running a query shard by shard
// (query/evaluate.h) for its ids, counts and values.
#include "unirecord/query.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iterator>

#include "dataset/shard_access.h"
#include "query/evaluate.h"
#include "query/parser.h"
#include "query/shard_scan.h"

namespace unirecord {

// A parsed query (Query::Impl, private to Query, is this): the helpers
// below take it.
struct ParsedQuery {
  std::string expression;
  Schema schema;
  query::Node root;
};

struct Query::Impl : ParsedQuery {};

namespace {

using query::Comparison;
using query::Evaluate;
using query::IndexSpans;
using query::Node;
using query::Rows;
using query::ShardScan;

void ExplainNode(const Node& node, int depth, bool first_in_and, std::string* out) {
  const std::string indent(static_cast<size_t>(depth) * 2, ' ');
  switch (node.kind) {
    case Node::Kind::kComparison: {
      const Comparison& c = node.comparison;
      const size_t ranges = c.is_string() ? c.strings.size() : c.keys.size();
      *out += indent + c.text + "  ->  ";
      if (c.is_list()) {
        const bool contains = c.test == Comparison::Test::kContains;
        if (c.indexed && contains) {
          *out += "list index: binary search of the distinct values for " + std::to_string(ranges) +
                  (ranges == 1 ? " value" : " values") + ", their rows read in order (no blob is read)";
        } else if (c.indexed) {
          *out += std::string(first_in_and ? "list index: the length of every row" : "list index: the lengths of the rows kept so far") +
                  " (4 bytes a row, no blob is read)";
        } else {
          *out += first_in_and ? "scan of every row's blob (field has no list index)"
                               : "check of the rows kept so far in their blobs (field has no list index)";
        }
        *out += "\n";
        return;
      }
      if (c.indexed) {
        *out += "sorted index: binary search for " + std::to_string(ranges) + (ranges == 1 ? " range" : " ranges");
        if (!first_in_and) *out += " (or a check of the rows kept so far, when they are fewer)";
      } else {
        *out += first_in_and ? "scan of the scalar pages (field not indexed)"
                             : "check of the rows kept so far in the scalar pages (field not indexed)";
      }
      *out += "\n";
      return;
    }
    case Node::Kind::kAnd: {
      *out += indent +
              "and (indexed clauses first, in each shard the one with the fewest rows in its index ranges "
              "first; each clause narrows the rows for the next)\n";
      std::vector<const Node*> order;
      for (const Node& child : node.children) order.push_back(&child);
      std::stable_partition(order.begin(), order.end(), [](const Node* n) { return !n->scans; });
      for (size_t i = 0; i < order.size(); ++i) ExplainNode(*order[i], depth + 1, first_in_and && i == 0, out);
      return;
    }
    case Node::Kind::kOr:
      *out += indent + "or (union of sorted row lists)\n";
      for (const Node& child : node.children) ExplainNode(child, depth + 1, first_in_and, out);
      return;
    case Node::Kind::kNot:
      *out += indent + "not (complement of the sorted row list)\n";
      ExplainNode(node.children.front(), depth + 1, first_in_and, out);
      return;
  }
}

Status CheckSchema(const ParsedQuery& q, const Dataset& dataset) {
  if (dataset.schema() != q.schema) {
    return Status::InvalidArgument("query '" + q.expression + "' was parsed against another schema (" +
                                   q.schema.ToString() + ") than the dataset's (" + dataset.schema().ToString() + ")");
  }
  return Status::OK();
}

// Whether evaluating `node` reads scalar pages (compares a field that is not
// indexed): then a remote dataset's shards are downloaded, not only their indexes.
bool ReadsPages(const Node& node) {
  if (node.kind == Node::Kind::kComparison) return !node.comparison.indexed;
  for (const Node& child : node.children) {
    if (ReadsPages(child)) return true;
  }
  return false;
}

// Calls `visit(first_id, rows)` with each shard's matching rows, in id order.
// `reads_pages`: the query or the visit reads scalar pages.
template <typename Visit>
Status ForEachShard(const ParsedQuery& q, const Dataset& dataset, bool reads_pages, Visit visit) {
  UREC_RETURN_IF_ERROR(CheckSchema(q, dataset));
  using dataset_internal::ShardAccess;
  for (size_t s = 0; s < ShardAccess::ShardCount(dataset); ++s) {
    UREC_ASSIGN_OR_RETURN(std::vector<ShardPages::Reader> files, ShardAccess::Files(dataset, s, reads_pages));
    const ShardScan shard(dataset, s, std::move(files), dataset.options().verify_checksums);
    UREC_ASSIGN_OR_RETURN(Rows rows, Evaluate(shard, q.root, nullptr));
    UREC_RETURN_IF_ERROR(visit(ShardAccess::FirstId(dataset, s), shard, rows));
  }
  return Status::OK();
}

QueryValue ValueOfKey(FieldType type, uint64_t key) {
  QueryValue v;
  // Undo IndexedOrderKey: ints had the sign bit flipped; floats too when
  // positive (sign now set), all bits when negative (sign now clear).
  constexpr uint64_t kSign = uint64_t{1} << 63;
  if (IsIntegral(type)) {
    v.type = FieldType::kInt64;
    v.int_value = static_cast<int64_t>(key ^ kSign);
  } else {
    const uint64_t bits = (key & kSign) != 0 ? key ^ kSign : ~key;
    v.type = FieldType::kFloat64;
    std::memcpy(&v.float_value, &bits, sizeof(bits));
  }
  return v;
}

}  // namespace

std::string QueryValue::ToString() const {
  if (type == FieldType::kString) {
    std::string out = "\"";
    for (char c : string_value) {
      if (c == '"' || c == '\\') out += '\\';
      if (c == '\n') {
        out += "\\n";
      } else if (c == '\t') {
        out += "\\t";
      } else {
        out += c;
      }
    }
    return out + "\"";
  }
  if (type != FieldType::kFloat32 && type != FieldType::kFloat64) return std::to_string(int_value);
  if (std::isnan(float_value)) return std::signbit(float_value) ? "-nan" : "nan";
  if (std::isinf(float_value)) return float_value < 0 ? "-inf" : "inf";
  char text[32];
  std::snprintf(text, sizeof(text), "%.17g", float_value);
  std::string s = text;
  // Shortest form that reads back to the same double.
  for (int precision = 1; precision < 17; ++precision) {
    std::snprintf(text, sizeof(text), "%.*g", precision, float_value);
    if (std::strtod(text, nullptr) == float_value) {
      s = text;
      break;
    }
  }
  if (s.find_first_of(".en") == std::string::npos) s += ".0";  // still a float literal
  return s;
}

Result<Query> Query::Parse(std::string_view expression, const Schema& schema,
                           const std::map<std::string, std::string>& metadata) {
  auto impl = std::make_shared<Impl>();
  impl->expression = std::string(expression);
  impl->schema = schema;
  UREC_ASSIGN_OR_RETURN(impl->root, query::ParseExpression(expression, schema, metadata));
  return Query(std::move(impl));
}

Result<Query> Query::Parse(std::string_view expression, const Dataset& dataset) {
  return Parse(expression, dataset.schema(), dataset.metadata());
}

const std::string& Query::expression() const { return impl_->expression; }

std::string Query::Explain() const {
  std::string out;
  ExplainNode(impl_->root, 0, true, &out);
  return out;
}

Result<std::vector<uint64_t>> Query::Ids(const Dataset& dataset) const {
  // Room for every id up front: only the pages written are ever touched, and
  // a broad answer is not copied again and again as it grows.
  std::vector<uint64_t> ids;
  ids.reserve(static_cast<size_t>(dataset.size()));
  UREC_RETURN_IF_ERROR(ForEachShard(*impl_, dataset, ReadsPages(impl_->root), [&](uint64_t first_id, const ShardScan&, const Rows& rows) {
    for (uint32_t row : rows) ids.push_back(first_id + row);
    return Status::OK();
  }));
  if (ids.size() < ids.capacity() / 2) ids.shrink_to_fit();
  return ids;
}

Result<uint64_t> Query::Count(const Dataset& dataset) const {
  const Node& root = impl_->root;
  if (root.kind == Node::Kind::kComparison && root.comparison.indexed && !root.comparison.is_list()) {
    // One indexed comparison: the sizes of its index spans, no row is listed.
    UREC_RETURN_IF_ERROR(CheckSchema(*impl_, dataset));
    using dataset_internal::ShardAccess;
    uint64_t count = 0;
    for (size_t s = 0; s < ShardAccess::ShardCount(dataset); ++s) {
      UREC_ASSIGN_OR_RETURN(std::vector<ShardPages::Reader> frames, ShardAccess::Files(dataset, s, false));
      const ShardScan shard(dataset, s, std::move(frames), dataset.options().verify_checksums);
      uint64_t total = 0;
      UREC_RETURN_IF_ERROR(IndexSpans(shard, root.comparison, &total).status());
      count += total;
    }
    return count;
  }
  uint64_t count = 0;
  UREC_RETURN_IF_ERROR(ForEachShard(*impl_, dataset, ReadsPages(impl_->root), [&](uint64_t, const ShardScan&, const Rows& rows) {
    count += rows.size();
    return Status::OK();
  }));
  return count;
}

namespace {

// A comparison that reads scalar field `field_name` (its ranges unused), for
// CountBy and ForEachValue; InvalidArgument for a bytes or array field.
Result<Comparison> FieldReader(const Schema& schema, std::string_view field_name, const char* what) {
  UREC_ASSIGN_OR_RETURN(size_t field, schema.FindField(field_name));
  const Field& f = schema.field(field);
  if (f.type == FieldType::kBytes || f.is_array()) {
    return Status::InvalidArgument(std::string(what) + " field '" + f.name + "': it is " +
                                   (f.is_array() ? "an array" : "a bytes field") + "; only scalar fields have values to group by");
  }
  Comparison reader;
  reader.field = field;
  reader.type = f.type;
  reader.indexed = f.indexed;
  return reader;
}

}  // namespace

Result<std::vector<ValueCount>> Query::CountBy(const Dataset& dataset, std::string_view field_name) const {
  UREC_ASSIGN_OR_RETURN(const Comparison reader, FieldReader(impl_->schema, field_name, "cannot count by"));
  const size_t field = reader.field;
  const Field& f = impl_->schema.field(field);
  std::map<uint64_t, uint64_t> by_key;
  std::map<std::string, uint64_t> by_string;
  UREC_RETURN_IF_ERROR(ForEachShard(*impl_, dataset, ReadsPages(impl_->root) || !f.indexed,
                                    [&](uint64_t, const ShardScan& shard, const Rows& rows) -> Status {
    for (uint32_t row : rows) {
      if (reader.is_string()) {
        UREC_ASSIGN_OR_RETURN(std::string_view v, shard.ColumnValue(field, row));
        ++by_string[std::string(v)];
      } else {
        UREC_ASSIGN_OR_RETURN(uint64_t key, shard.NumericKey(reader, row));
        ++by_key[key];
      }
    }
    return Status::OK();
  }));
  std::vector<ValueCount> out;
  for (const auto& [key, count] : by_key) out.push_back({ValueOfKey(f.type, key), count});
  for (auto& [text, count] : by_string) {
    ValueCount vc;
    vc.value.type = FieldType::kString;
    vc.value.string_value = text;
    vc.count = count;
    out.push_back(std::move(vc));
  }
  return out;
}

Status Query::ForEachValue(const Dataset& dataset, std::string_view field_name, const Query* query,
                           const ValueVisitor& visit) {
  UREC_ASSIGN_OR_RETURN(const Comparison reader, FieldReader(dataset.schema(), field_name, "cannot read values of"));
  using dataset_internal::ShardAccess;
  const bool reads_pages = !reader.indexed || (query != nullptr && ReadsPages(query->impl_->root));
  if (query != nullptr) UREC_RETURN_IF_ERROR(CheckSchema(*query->impl_, dataset));
  QueryValue value;
  for (size_t s = 0; s < ShardAccess::ShardCount(dataset); ++s) {
    UREC_ASSIGN_OR_RETURN(std::vector<ShardPages::Reader> files, ShardAccess::Files(dataset, s, reads_pages));
    const ShardScan shard(dataset, s, std::move(files), dataset.options().verify_checksums);
    Rows all;
    if (query == nullptr) {
      all.resize(static_cast<size_t>(shard.records()));
      for (size_t row = 0; row < all.size(); ++row) all[row] = static_cast<uint32_t>(row);
    }
    Rows matched;
    if (query != nullptr) {
      UREC_ASSIGN_OR_RETURN(matched, Evaluate(shard, query->impl_->root, nullptr));
    }
    const uint64_t first_id = ShardAccess::FirstId(dataset, s);
    for (uint32_t row : query == nullptr ? all : matched) {
      if (reader.is_string()) {
        UREC_ASSIGN_OR_RETURN(std::string_view v, shard.ColumnValue(reader.field, row));
        value.type = FieldType::kString;
        value.string_value.assign(v.data(), v.size());
      } else {
        UREC_ASSIGN_OR_RETURN(uint64_t key, shard.NumericKey(reader, row));
        value = ValueOfKey(reader.type, key);
      }
      UREC_RETURN_IF_ERROR(visit(first_id + row, value));
    }
  }
  return Status::OK();
}

}  // namespace unirecord
