#include "serve/assets.h"

#include <cstddef>
#include <vector>

namespace unirecord::serve {
namespace {

struct EmbeddedAsset {
  const char* name;
  const unsigned char* data;
  size_t size;
};

// kEmbeddedAssets[]: every file of src/serve/assets/, as bytes.
#include "serve/assets_data.inc"

std::string_view ContentType(std::string_view name) {
  auto ends_with = [&](std::string_view suffix) {
    return name.size() >= suffix.size() && name.substr(name.size() - suffix.size()) == suffix;
  };
  if (ends_with(".html")) return "text/html; charset=utf-8";
  if (ends_with(".js")) return "text/javascript; charset=utf-8";
  if (ends_with(".css")) return "text/css; charset=utf-8";
  if (ends_with(".svg")) return "image/svg+xml";
  return "application/octet-stream";
}

}  // namespace

const Asset* FindAsset(std::string_view name) {
  static const auto* assets = [] {
    auto* list = new std::vector<Asset>;
    for (const EmbeddedAsset& a : kEmbeddedAssets) {
      list->push_back(Asset{a.name, ContentType(a.name),
                            std::string_view(reinterpret_cast<const char*>(a.data), a.size)});
    }
    return list;
  }();
  for (const Asset& asset : *assets) {
    if (asset.name == name) return &asset;
  }
  return nullptr;
}

}  // namespace unirecord::serve
