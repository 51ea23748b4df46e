// Test helper shared by query_test and fuzz/fuzz_damaged_index: every answer
// a query gives over a dataset (Ids, Count, CountBy "label") as one text, so
// two datasets' answers compare with ==.
#ifndef UNIRECORD_QUERY_QUERY_TESTING_H_
#define UNIRECORD_QUERY_QUERY_TESTING_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "unirecord/dataset.h"
#include "unirecord/query.h"

namespace unirecord::testing {

inline Result<std::string> QueryAnswers(const Dataset& ds, std::string_view expression) {
  UREC_ASSIGN_OR_RETURN(Query query, Query::Parse(expression, ds));
  UREC_ASSIGN_OR_RETURN(std::vector<uint64_t> ids, query.Ids(ds));
  UREC_ASSIGN_OR_RETURN(uint64_t count, query.Count(ds));
  UREC_ASSIGN_OR_RETURN(std::vector<ValueCount> groups, query.CountBy(ds, "label"));
  std::string text = std::to_string(count) + ":";
  for (uint64_t id : ids) text += " " + std::to_string(id);
  for (const ValueCount& g : groups) text += " " + g.value.ToString() + "x" + std::to_string(g.count);
  return text;
}

}  // namespace unirecord::testing

#endif  // UNIRECORD_QUERY_QUERY_TESTING_H_
