// Query: which records match an expression over their scalar fields.
//
//   UREC_ASSIGN_OR_RETURN(auto ds, Dataset::Open("records"));
//   UREC_ASSIGN_OR_RETURN(Query q, Query::Parse("label in [3, 7] and width >= 400", *ds));
//   UREC_ASSIGN_OR_RETURN(std::vector<uint64_t> ids, q.Ids(*ds));   // sorted global ids
//   UREC_ASSIGN_OR_RETURN(uint64_t n, q.Count(*ds));
//
// The language (docs/query.md): comparisons `==`, `!=`, `<`, `<=`, `>`, `>=`,
// `FIELD in [v, ...]`, `FIELD not in [...]`, `FIELD between A and B`
// (inclusive), combined with `and`, `or`, `not` and parentheses (`not` binds
// tightest, then `and`, then `or`). Literals: integers (the full int64
// range), floats (`1.5`, `-2e-3`, `inf`, `-inf`, `nan`, `-nan`, `-0.0`),
// strings in double or single quotes. Float fields compare by the IEEE-754
// total order of the sorted indexes (format/SPEC.md 8.3): `-nan < -inf <
// ... < -0.0 < 0.0 < ... < inf < nan`, so `x == nan` matches the canonical
// quiet NaN, `x > inf` any positive NaN, and `-0.0` differs from `0.0`. A string compared with an integer field names a
// class of the dataset's `classes` metadata (`label == "n01440764"`).
//
// Indexed fields are answered by binary search over the memory-mapped
// sorted indexes; other scalar fields by scanning their scalar pages; bytes
// and array fields cannot be queried. Explain() says which plan each clause
// uses. Parse errors are InvalidArgument statuses whose message names the
// problem and its column and shows the expression with a caret under it.
//
// A Query is immutable, cheap to copy and safe to run from many threads.
#ifndef UNIRECORD_QUERY_H_
#define UNIRECORD_QUERY_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "unirecord/dataset.h"
#include "unirecord/schema.h"
#include "unirecord/status.h"

namespace unirecord {

// One value of a queried field: int fields as int64, float fields as
// float64 (float32 widened), strings as they are.
struct QueryValue {
  FieldType type = FieldType::kInt64;  // kInt64, kFloat64 or kString
  int64_t int_value = 0;
  double float_value = 0;
  std::string string_value;

  // As the query language writes it: 3, -0.0, inf, nan, 2.5, "text".
  std::string ToString() const;
};

struct ValueCount {
  QueryValue value;
  uint64_t count = 0;
};

class Query {
 public:
  // Parses and checks `expression` against `schema`; `metadata` supplies the
  // `classes` list for class-name literals.
  static Result<Query> Parse(std::string_view expression, const Schema& schema,
                             const std::map<std::string, std::string>& metadata = {});
  // Against the dataset's schema and metadata.
  static Result<Query> Parse(std::string_view expression, const Dataset& dataset);

  const std::string& expression() const;

  // The plan, one clause a line, indented by nesting: for each comparison
  // whether it is a binary search of a sorted index or a scan of scalar
  // pages, and in which order the clauses of an `and` run.
  std::string Explain() const;

  // The matching records' global ids, ascending. The dataset must have the
  // schema the query was parsed against (InvalidArgument otherwise);
  // Corruption when an index or page is damaged.
  Result<std::vector<uint64_t>> Ids(const Dataset& dataset) const;
  Result<uint64_t> Count(const Dataset& dataset) const;

  // Matching records per value of `field` (an int, float or string scalar),
  // ascending by value in the order comparisons use; values without matches
  // are left out.
  Result<std::vector<ValueCount>> CountBy(const Dataset& dataset, std::string_view field) const;

  // The value of the scalar field `field` (int, float or string) of every
  // record the query matches, or of every record when `query` is null, in id
  // order: visit(id, value), the value as CountBy gives it. Read as CountBy
  // reads it (the record table for an indexed field, else its scalar pages);
  // no blob is read. Stops at the first error, a visit's included. For
  // distributions of a field (urec serve), where CountBy's table of every
  // distinct value would be as large as the column.
  using ValueVisitor = std::function<Status(uint64_t id, const QueryValue& value)>;
  static Status ForEachValue(const Dataset& dataset, std::string_view field, const Query* query,
                             const ValueVisitor& visit);

 private:
  struct Impl;
  explicit Query(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<const Impl> impl_;
};

}  // namespace unirecord

#endif  // UNIRECORD_QUERY_H_
