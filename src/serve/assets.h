// The page's files (src/serve/assets/), built into the library by
// embed_assets.cmake: nothing is read from disk or downloaded at run time.
#ifndef UNIRECORD_SRC_SERVE_ASSETS_H_
#define UNIRECORD_SRC_SERVE_ASSETS_H_

#include <string_view>

namespace unirecord::serve {

struct Asset {
  std::string_view name;  // "index.html", "viewer.js", ...
  std::string_view content_type;
  std::string_view data;
};

// The asset called `name` exactly (no path), or null.
const Asset* FindAsset(std::string_view name);

}  // namespace unirecord::serve

#endif  // UNIRECORD_SRC_SERVE_ASSETS_H_
