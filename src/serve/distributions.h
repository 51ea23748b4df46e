// The viewer's distributions of a field over every record or over those a
// query matches: class balance with names, numeric histograms, NaN and
// infinity counts, lengths of strings and of variable-shape arrays, blob
// sizes and image sizes. Scalar fields are read as the query engine reads
// them (Query::ForEachValue: the index record table of an indexed field,
// else its scalar pages; no blob). Blob fields need a read of every record's
// blob, so they run only when asked (`scan`). Each distribution is computed
// once, in one background thread (two cores are shared with everything
// else), with its progress readable meanwhile, and kept in the byte cache.
#ifndef UNIRECORD_SRC_SERVE_DISTRIBUTIONS_H_
#define UNIRECORD_SRC_SERVE_DISTRIBUTIONS_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "serve/byte_cache.h"
#include "serve/json.h"
#include "serve/record_json.h"
#include "unirecord/dataset.h"
#include "unirecord/query.h"

namespace unirecord::serve {

// A field named in a query: as is when it is a plain name, else in
// backquotes with its backslashes, backquotes, newlines and tabs escaped
// (docs/query.md).
std::string QueryFieldName(const std::string& name);
// A string literal of the query language, in double quotes.
std::string QueryString(std::string_view text);

class Distributions {
 public:
  Distributions(std::shared_ptr<const Dataset> dataset, const FieldRoles* roles, ByteCache* cache);
  ~Distributions();  // Stop()

  // Field `field`'s distribution over the records `filter` matches (null:
  // all; `filter_text` its expression). {"state": "done", "charts": [...]}
  // when known; otherwise its computation is queued (a blob field's only
  // when `scan`, else {"state": "scan_needed"}) and, after waiting up to
  // `wait` for it, {"state": "running" or "queued", "done": records read}.
  // {"state": "error", "error": ...} when it failed.
  Json Get(size_t field, std::shared_ptr<const Query> filter, const std::string& filter_text, bool scan,
           std::chrono::milliseconds wait);

  // Cancels the computations and joins the thread.
  void Stop();

 private:
  struct Job;
  void Work();
  Status Compute(Job& job);

  std::shared_ptr<const Dataset> dataset_;
  const FieldRoles* roles_;
  ByteCache* cache_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::string, std::shared_ptr<Job>> jobs_;  // queued or running, by cache key
  std::deque<std::shared_ptr<Job>> queue_;
  std::atomic<bool> stopping_{false};
  std::thread worker_;
};

}  // namespace unirecord::serve

#endif  // UNIRECORD_SRC_SERVE_DISTRIBUTIONS_H_
