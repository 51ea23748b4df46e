// The query language's parser (docs/query.md): text -> a tree of
// comparisons bound to schema fields, every literal already converted to
// what the field's values are compared with.
#ifndef UNIRECORD_QUERY_PARSER_H_
#define UNIRECORD_QUERY_PARSER_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "unirecord/schema.h"
#include "unirecord/status.h"

namespace unirecord::query {

// Closed range of order keys (index::IndexedOrderKey) of a numeric field.
struct KeyRange {
  uint64_t lo = 0;
  uint64_t hi = 0;
};

// Range of strings, compared bytewise; a missing bound is unbounded.
struct StringRange {
  std::string lo, hi;
  bool has_lo = false, has_hi = false;
  bool lo_open = false, hi_open = false;
};

// One comparison on one field: the set of values it accepts, as ascending,
// disjoint ranges (an `in` list is a list of points, `!=` two ranges).
struct Comparison {
  // What is compared: the field's value, or (list fields, docs/query.md)
  // whether the list holds one of the keys (`contains`, `any(f in [...])`),
  // or the list's length (`len(f)`, keys over int64 lengths).
  enum class Test { kValue, kContains, kLength };
  Test test = Test::kValue;
  size_t field = 0;
  FieldType type = FieldType::kInt64;
  // kValue: an indexed scalar (sorted index); kContains, kLength: the field
  // has a list index (format/SPEC.md section 8.4). Otherwise a scan.
  bool indexed = false;
  std::vector<KeyRange> keys;       // int and float fields
  std::vector<StringRange> strings;  // string fields
  std::string text;                 // the clause as written, for Explain

  bool is_string() const { return test == Test::kValue && type == FieldType::kString; }
  bool is_list() const { return test != Test::kValue; }
  bool Matches(uint64_t key) const;
  bool Matches(std::string_view value) const;
};

struct Node {
  enum class Kind { kComparison, kAnd, kOr, kNot };
  Kind kind = Kind::kComparison;
  Comparison comparison;       // kComparison
  std::vector<Node> children;  // kAnd, kOr (two or more), kNot (one)
  bool scans = false;          // a comparison below reads scalar pages
};

// Nesting deeper than this (parentheses, `not`) is refused, so that a hostile
// expression cannot exhaust the stack of the parser or the evaluator.
inline constexpr int kMaxQueryDepth = 200;

// InvalidArgument naming the problem and its column, with a caret line.
Result<Node> ParseExpression(std::string_view expression, const Schema& schema,
                             const std::map<std::string, std::string>& metadata);

}  // namespace unirecord::query

#endif  // UNIRECORD_QUERY_PARSER_H_
