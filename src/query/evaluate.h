// Evaluating a parsed query in one shard: comparisons on indexed fields
// are binary searches over the shard's sorted index, others scan scalar
// pages; `and`/`or`/`not` are merges of sorted row lists (docs/query.md,
// "Plans").
#ifndef UNIRECORD_QUERY_EVALUATE_H_
#define UNIRECORD_QUERY_EVALUATE_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "query/parser.h"
#include "query/shard_scan.h"
#include "unirecord/status.h"

namespace unirecord::query {

using Rows = std::vector<uint32_t>;  // ascending rows of one shard

// Positions [begin, end) of the sorted index per key range of `c`; `*total`
// the rows they hold.
Result<std::vector<std::pair<uint64_t, uint64_t>>> IndexSpans(const ShardScan& shard, const Comparison& c,
                                                              uint64_t* total);

// The rows of the shard matching `node`; with `candidates`, only those of
// them (the result is then a subset of *candidates).
Result<Rows> Evaluate(const ShardScan& shard, const Node& node, const Rows* candidates);

}  // namespace unirecord::query

#endif  // UNIRECORD_QUERY_EVALUATE_H_
