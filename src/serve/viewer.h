// The viewer's answers, apart from HTTP (server.cc carries them): a request
// is a path and its decoded parameters, an answer a status, a content type
// and a body. Every path it knows is listed here; anything else is 404, so
// nothing outside the dataset and the built-in page can be asked for.
//
//   /, /viewer.js, /viewer.css, ...   the page (assets built into the library)
//   /api/overview                     schema, sizes, segments, versions, classes
//   /api/distribution?field=F&q=Q&scan=1   a field's distribution (distributions.h)
//   /api/grid?q=Q&page=P&size=S       a page of the records Q matches, summarised
//   /api/record?id=N                  every value of record N (bounded)
//   /api/thumb?id=N&field=F&size=S    record N's image F as a PNG thumbnail
//   /api/thumbs?ids=N,M,...&field=F&size=S   a page's thumbnails as one atlas
//                                     (images.h): its cells and their errors
//   /api/thumbs.png?ids=N,M,...&field=F&size=S   that atlas, PNG
//   /api/crops?id=N&field=F&transform=T&size=S&seed=S&epoch=E&count=C
//                                     the training crops' windows and boxes
//   /api/crop?id=N&field=F&transform=T&size=S&seed=S&epoch=E   one crop, PNG
#ifndef UNIRECORD_SRC_SERVE_VIEWER_H_
#define UNIRECORD_SRC_SERVE_VIEWER_H_

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "serve/byte_cache.h"
#include "serve/distributions.h"
#include "serve/images.h"
#include "serve/json.h"
#include "serve/record_json.h"
#include "unirecord/dataset.h"
#include "unirecord/query.h"
#include "unirecord/serve.h"

namespace unirecord::serve {

struct Reply {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  // The same request gets the same answer while the server runs (the page,
  // thumbnails, crops): the browser may keep it.
  bool immutable = false;
};

using Params = std::map<std::string, std::string>;

// Bounds of a request.
inline constexpr size_t kMaxQueryBytes = 4096;
inline constexpr uint64_t kMaxPageSize = 200;
inline constexpr int kMinImageSize = 32;
inline constexpr int kMaxImageSize = 512;
inline constexpr uint64_t kMaxCrops = 16;

class Viewer {
 public:
  Viewer(std::shared_ptr<const Dataset> dataset, std::string path, const ServeOptions& options);
  ~Viewer();  // Stop()

  // Never throws: a failure is an answer ({"error": message}, with
  // "column" for a query's mistake), its status by its kind (400 for a bad
  // request, 404 for what does not exist, 500 for damaged data).
  Reply Answer(const std::string& path, const Params& params);

  // Stops the distributions' thread.
  void Stop();

  // How long a distribution request waits for its answer before it says
  // "running" (tests make it long, so that answers are complete).
  void set_distribution_wait(std::chrono::milliseconds wait) { distribution_wait_ = wait; }

 private:
  Result<Reply> Route(const std::string& path, const Params& params);
  Result<Json> Grid(const Params& params);
  Result<Json> RecordPage(const Params& params);
  Result<Reply> Thumbnail(const Params& params);
  // The atlas `params` ask for, from the cache or made; its picture may be
  // missing (empty png) unless `with_png`.
  Result<std::shared_ptr<const Atlas>> ThumbnailAtlas(const Params& params, bool with_png);
  Result<Json> AtlasCells(const Params& params);
  Result<Reply> AtlasImage(const Params& params);
  Result<Json> Crops(const Params& params);
  Result<Reply> Crop(const Params& params);
  Result<Json> Distribution(const Params& params);

  // The ids `expression` matches, from the cache or the query engine, and
  // the parsed query.
  Result<std::shared_ptr<const std::vector<uint64_t>>> Matches(const std::string& expression,
                                                               std::shared_ptr<const Query>* query);
  Status CheckRecordExists(uint64_t id) const;
  Result<uint64_t> RecordId(const Params& params) const;
  Result<std::vector<uint64_t>> RecordIds(const Params& params) const;  // ids=N,M,...
  Result<int> ThumbnailSize(const Params& params) const;
  Result<size_t> ImageField(const Params& params) const;
  Result<CropRequest> CropParams(const Params& params) const;
  Result<Reply> Png(const std::string& key, const std::function<Result<std::string>()>& make);

  std::shared_ptr<const Dataset> dataset_;
  std::string path_;
  ServeOptions options_;
  FieldRoles roles_;
  ByteCache cache_;
  Images images_;
  Distributions distributions_;
  std::chrono::milliseconds distribution_wait_{300};
};

}  // namespace unirecord::serve

#endif  // UNIRECORD_SRC_SERVE_VIEWER_H_
