#include "serve/viewer.h"

#include <cctype>
#include <chrono>
#include <exception>
#include <limits>

#include "serve/assets.h"
#include "serve/overview.h"

namespace unirecord::serve {
namespace {

int HttpStatus(StatusCode code) {
  switch (code) {
    case StatusCode::kInvalidArgument:
      return 400;
    case StatusCode::kNotFound:
    case StatusCode::kKeyNotFound:
    case StatusCode::kOutOfRange:
      return 404;
    default:
      return 500;
  }
}

// The column a query's error names ("query: column 16: ..."), or 0.
int QueryErrorColumn(const std::string& message) {
  const std::string marker = "query: column ";
  const size_t at = message.find(marker);
  if (at == std::string::npos) return 0;
  int column = 0;
  for (size_t i = at + marker.size(); i < message.size() && std::isdigit(static_cast<unsigned char>(message[i])); ++i) {
    column = std::min(column * 10 + (message[i] - '0'), 1 << 20);
  }
  return column;
}

Reply JsonReply(const Json& json) { return Reply{200, "application/json", DumpJson(json), false}; }

Reply ErrorReply(int status, const std::string& message, int column = 0) {
  Json body{{"error", message}};
  if (column > 0) body["column"] = column;
  return Reply{status, "application/json", DumpJson(body), false};
}

// `text`, parameter `name`'s value (or one of its values), as an unsigned
// decimal in [lo, hi].
Result<uint64_t> ParseUint(const std::string& text, const char* name, uint64_t lo, uint64_t hi) {
  uint64_t value = 0;
  bool ok = !text.empty() && text.size() <= 20;
  for (char c : text) {
    if (!ok || !std::isdigit(static_cast<unsigned char>(c))) {
      ok = false;
      break;
    }
    const uint64_t digit = static_cast<uint64_t>(c - '0');
    if (value > (std::numeric_limits<uint64_t>::max() - digit) / 10) ok = false;
    value = value * 10 + digit;
  }
  if (!ok || value < lo || value > hi) {
    return Status::InvalidArgument("parameter '" + std::string(name) + "' must be an integer from " + std::to_string(lo) +
                                   " to " + std::to_string(hi) + ", not '" + text.substr(0, 40) + "'");
  }
  return value;
}

// Parameter `name` as an unsigned decimal in [lo, hi]; `fallback` when absent.
Result<uint64_t> UintParam(const Params& params, const char* name, uint64_t fallback, uint64_t lo, uint64_t hi) {
  auto found = params.find(name);
  if (found == params.end() || found->second.empty()) return fallback;
  return ParseUint(found->second, name, lo, hi);
}

// Parameter `name` (at most max_bytes), "" when absent.
Result<std::string> TextParam(const Params& params, const char* name, size_t max_bytes) {
  auto found = params.find(name);
  if (found == params.end()) return std::string();
  if (found->second.size() > max_bytes) {
    return Status::InvalidArgument("parameter '" + std::string(name) + "' is longer than " + std::to_string(max_bytes) +
                                   " bytes");
  }
  return found->second;
}

bool Blank(const std::string& text) {
  for (char c : text) {
    if (!std::isspace(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

// `text` as one word of a POSIX shell.
std::string ShellWord(const std::string& text) {
  bool plain = !text.empty();
  for (char c : text) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && std::string("_-./:=@%+,").find(c) == std::string::npos) {
      plain = false;
    }
  }
  if (plain) return text;
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

Viewer::Viewer(std::shared_ptr<const Dataset> dataset, std::string path, const ServeOptions& options)
    : dataset_(std::move(dataset)),
      path_(std::move(path)),
      options_(options),
      roles_(FindRoles(*dataset_, options.box_format)),
      cache_(options.cache_bytes),
      images_(dataset_, path_),
      distributions_(dataset_, &roles_, &cache_) {}

Viewer::~Viewer() { Stop(); }

void Viewer::Stop() { distributions_.Stop(); }

Reply Viewer::Answer(const std::string& path, const Params& params) {
  try {
    Result<Reply> reply = Route(path, params);
    if (reply.ok()) return std::move(*reply);
    const Status& s = reply.status();
    return ErrorReply(HttpStatus(s.code()), s.ToString(), QueryErrorColumn(s.message()));
  } catch (const std::exception& e) {  // nlohmann's, std::bad_alloc: never out of the library
    return ErrorReply(500, std::string("internal error: ") + e.what());
  }
}

Result<Reply> Viewer::Route(const std::string& path, const Params& params) {
  if (path.rfind("/api/", 0) == 0) {
    const std::string api = path.substr(5);
    if (api == "overview") {
      if (auto cached = cache_.Get<std::string>("overview")) return Reply{200, "application/json", *cached, false};
      Reply reply = JsonReply(OverviewJson(*dataset_, path_, roles_, options_));
      cache_.Put("overview", std::make_shared<const std::string>(reply.body), reply.body.size());
      return reply;
    }
    using JsonAnswer = Result<Json> (Viewer::*)(const Params&);
    static const std::pair<const char*, JsonAnswer> kJsonAnswers[] = {
        {"grid", &Viewer::Grid}, {"record", &Viewer::RecordPage}, {"distribution", &Viewer::Distribution},
        {"crops", &Viewer::Crops}, {"thumbs", &Viewer::AtlasCells}};
    for (const auto& [name, answer] : kJsonAnswers) {
      if (api != name) continue;
      UREC_ASSIGN_OR_RETURN(Json json, (this->*answer)(params));
      return JsonReply(json);
    }
    if (api == "thumb") return Thumbnail(params);
    if (api == "thumbs.png") return AtlasImage(params);
    if (api == "crop") return Crop(params);
    return Status::NotFound("no such request: " + path.substr(0, 200));
  }
  const Asset* asset = FindAsset(path == "/" ? "index.html" : path.substr(1));
  if (asset == nullptr) return Status::NotFound("no such page: " + path.substr(0, 200));
  return Reply{200, std::string(asset->content_type), std::string(asset->data), true};
}

Result<std::shared_ptr<const std::vector<uint64_t>>> Viewer::Matches(const std::string& expression,
                                                                     std::shared_ptr<const Query>* query) {
  UREC_ASSIGN_OR_RETURN(Query parsed, Query::Parse(expression, *dataset_));
  *query = std::make_shared<const Query>(parsed);
  const std::string key = "ids:" + expression;
  if (auto cached = cache_.Get<std::vector<uint64_t>>(key)) return cached;
  UREC_ASSIGN_OR_RETURN(std::vector<uint64_t> ids, parsed.Ids(*dataset_));
  auto shared = std::make_shared<const std::vector<uint64_t>>(std::move(ids));
  cache_.Put(key, shared, shared->size() * sizeof(uint64_t) + key.size());
  return shared;
}

Result<Json> Viewer::Grid(const Params& params) {
  const auto start = std::chrono::steady_clock::now();
  UREC_ASSIGN_OR_RETURN(const std::string q, TextParam(params, "q", kMaxQueryBytes));
  UREC_ASSIGN_OR_RETURN(const uint64_t size, UintParam(params, "size", 48, 1, kMaxPageSize));
  UREC_ASSIGN_OR_RETURN(const uint64_t page, UintParam(params, "page", 0, 0, uint64_t{1} << 40));
  std::shared_ptr<const std::vector<uint64_t>> ids;
  std::shared_ptr<const Query> query;
  if (!Blank(q)) {
    UREC_ASSIGN_OR_RETURN(ids, Matches(q, &query));
  }
  const uint64_t total = ids != nullptr ? ids->size() : dataset_->size();
  const auto matched = std::chrono::steady_clock::now();
  Json records = Json::array();
  for (uint64_t i = page * size; i < total && i < (page + 1) * size; ++i) {
    const uint64_t id = ids != nullptr ? (*ids)[i] : i;
    Result<Record> record = dataset_->Get(id);
    records.push_back(record.ok() ? RecordSummary(*record, roles_) : Json{{"id", id}, {"error", record.status().ToString()}});
  }
  auto ms = [](auto a, auto b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
  return Json{{"total", total},
              {"page", page},
              {"size", size},
              {"records", std::move(records)},
              {"query_ms", ms(start, matched)},
              {"page_ms", ms(matched, std::chrono::steady_clock::now())}};
}

Status Viewer::CheckRecordExists(uint64_t id) const {
  if (id < dataset_->size()) return Status::OK();
  return Status::OutOfRange("record " + std::to_string(id) + " does not exist (the dataset has " +
                            std::to_string(dataset_->size()) + " records)");
}

Result<uint64_t> Viewer::RecordId(const Params& params) const {
  if (params.find("id") == params.end()) return Status::InvalidArgument("parameter 'id' is missing");
  UREC_ASSIGN_OR_RETURN(const uint64_t id, UintParam(params, "id", 0, 0, std::numeric_limits<uint64_t>::max()));
  UREC_RETURN_IF_ERROR(CheckRecordExists(id));
  return id;
}

Result<std::vector<uint64_t>> Viewer::RecordIds(const Params& params) const {
  UREC_ASSIGN_OR_RETURN(const std::string text, TextParam(params, "ids", kMaxPageSize * 21));
  if (text.empty()) return Status::InvalidArgument("parameter 'ids' is missing");
  std::vector<uint64_t> ids;
  for (size_t at = 0; at <= text.size();) {
    size_t end = text.find(',', at);
    if (end == std::string::npos) end = text.size();
    if (ids.size() == kMaxPageSize) {
      return Status::InvalidArgument("parameter 'ids' names more than " + std::to_string(kMaxPageSize) + " records");
    }
    UREC_ASSIGN_OR_RETURN(const uint64_t id,
                          ParseUint(text.substr(at, end - at), "ids", 0, std::numeric_limits<uint64_t>::max()));
    UREC_RETURN_IF_ERROR(CheckRecordExists(id));
    ids.push_back(id);
    at = end + 1;
  }
  return ids;
}

Result<int> Viewer::ThumbnailSize(const Params& params) const {
  UREC_ASSIGN_OR_RETURN(const uint64_t size,
                        UintParam(params, "size", static_cast<uint64_t>(options_.thumbnail_size), kMinImageSize, kMaxImageSize));
  return static_cast<int>(size);
}

Result<Json> Viewer::RecordPage(const Params& params) {
  UREC_ASSIGN_OR_RETURN(const uint64_t id, RecordId(params));
  std::string command = "urec cat " + ShellWord(path_) + " " + std::to_string(id);
  if (!dataset_->options().tag.empty()) {
    command += " --tag " + ShellWord(dataset_->options().tag);
  } else if (dataset_->options().version != 0) {
    command += " --version " + std::to_string(dataset_->options().version);
  }
  Result<Record> record = dataset_->Get(id);
  Json out = record.ok() ? RecordValues(*record, roles_) : Json{{"id", id}, {"error", record.status().ToString()}};
  out["cat"] = command;
  return out;
}

Result<size_t> Viewer::ImageField(const Params& params) const {
  const Schema& schema = dataset_->schema();
  auto found = params.find("field");
  if (found == params.end()) {
    for (size_t f = 0; f < schema.num_fields(); ++f) {
      if (schema.field(f).kind() == FieldKind::kBytes) return f;
    }
    return Status::InvalidArgument("the dataset has no bytes field to show as an image");
  }
  UREC_ASSIGN_OR_RETURN(const size_t field, schema.FindField(found->second));
  if (schema.field(field).kind() != FieldKind::kBytes) {
    return Status::InvalidArgument("field '" + schema.field(field).name + "' is not a bytes field");
  }
  return field;
}

Result<CropRequest> Viewer::CropParams(const Params& params) const {
  CropRequest crop;
  UREC_ASSIGN_OR_RETURN(const std::string transform, TextParam(params, "transform", 32));
  if (!transform.empty()) {
    UREC_ASSIGN_OR_RETURN(crop.transform, ParseSampleTransform(transform));
  }
  UREC_ASSIGN_OR_RETURN(const uint64_t size, UintParam(params, "size", 224, kMinImageSize, kMaxImageSize));
  crop.size = static_cast<int>(size);
  UREC_ASSIGN_OR_RETURN(crop.seed, UintParam(params, "seed", 0, 0, std::numeric_limits<uint64_t>::max()));
  UREC_ASSIGN_OR_RETURN(crop.epoch, UintParam(params, "epoch", 0, 0, std::numeric_limits<uint64_t>::max() - kMaxCrops));
  return crop;
}

Result<Reply> Viewer::Png(const std::string& key, const std::function<Result<std::string>()>& make) {
  std::shared_ptr<const std::string> png = cache_.Get<std::string>(key);
  if (png == nullptr) {
    UREC_ASSIGN_OR_RETURN(std::string made, make());
    png = std::make_shared<const std::string>(std::move(made));
    cache_.Put(key, png, png->size() + key.size());
  }
  return Reply{200, "image/png", *png, true};
}

Result<Reply> Viewer::Thumbnail(const Params& params) {
  UREC_ASSIGN_OR_RETURN(const uint64_t id, RecordId(params));
  UREC_ASSIGN_OR_RETURN(const size_t field, ImageField(params));
  UREC_ASSIGN_OR_RETURN(const int size, ThumbnailSize(params));
  const std::string key = "thumb:" + std::to_string(field) + ":" + std::to_string(size) + ":" + std::to_string(id);
  return Png(key, [&] { return images_.Thumbnail(id, field, size); });
}

Result<std::shared_ptr<const Atlas>> Viewer::ThumbnailAtlas(const Params& params, bool with_png) {
  UREC_ASSIGN_OR_RETURN(const std::vector<uint64_t> ids, RecordIds(params));
  UREC_ASSIGN_OR_RETURN(const size_t field, ImageField(params));
  UREC_ASSIGN_OR_RETURN(const int size, ThumbnailSize(params));
  std::string key = std::to_string(field) + ":" + std::to_string(size) + ":";
  for (uint64_t id : ids) key += std::to_string(id) + ",";
  if (auto cached = cache_.Get<Atlas>("atlas:" + key)) return cached;
  if (!with_png) {
    if (auto cached = cache_.Get<Atlas>("cells:" + key)) return cached;
  }
  UREC_ASSIGN_OR_RETURN(Atlas made, images_.ThumbnailAtlas(ids, field, size));
  // The cells are kept apart from the picture: a page asks for the picture,
  // then the cells, which stay cached when the picture is too large to be.
  Atlas cells{made.width, made.height, made.cell_width, made.cell_height, made.cells, ""};
  uint64_t cells_bytes = key.size();
  for (const AtlasCell& cell : cells.cells) cells_bytes += sizeof(AtlasCell) + cell.error.size();
  cache_.Put("cells:" + key, std::make_shared<const Atlas>(std::move(cells)), cells_bytes);
  auto atlas = std::make_shared<const Atlas>(std::move(made));
  cache_.Put("atlas:" + key, atlas, cells_bytes + atlas->png.size());
  return atlas;
}

Result<Json> Viewer::AtlasCells(const Params& params) {
  UREC_ASSIGN_OR_RETURN(std::shared_ptr<const Atlas> atlas, ThumbnailAtlas(params, false));
  Json cells = Json::array();
  for (const AtlasCell& cell : atlas->cells) {
    if (cell.error.empty()) {
      cells.push_back(Json{{"id", cell.id}, {"x", cell.x}, {"y", cell.y}, {"width", cell.width}, {"height", cell.height}});
    } else {
      cells.push_back(Json{{"id", cell.id}, {"error", cell.error}});
    }
  }
  return Json{{"width", atlas->width},
              {"height", atlas->height},
              {"columns", kAtlasColumns},
              {"cell_width", atlas->cell_width},
              {"cell_height", atlas->cell_height},
              {"cells", std::move(cells)}};
}

Result<Reply> Viewer::AtlasImage(const Params& params) {
  UREC_ASSIGN_OR_RETURN(std::shared_ptr<const Atlas> atlas, ThumbnailAtlas(params, true));
  return Reply{200, "image/png", atlas->png, true};
}

Result<Reply> Viewer::Crop(const Params& params) {
  UREC_ASSIGN_OR_RETURN(const uint64_t id, RecordId(params));
  UREC_ASSIGN_OR_RETURN(const size_t field, ImageField(params));
  UREC_ASSIGN_OR_RETURN(const CropRequest crop, CropParams(params));
  const std::string key = "crop:" + std::to_string(field) + ":" + SampleTransformName(crop.transform) + ":" +
                          std::to_string(crop.size) + ":" + std::to_string(crop.seed) + ":" +
                          std::to_string(crop.epoch) + ":" + std::to_string(id);
  return Png(key, [&] { return images_.Crop(id, field, crop); });
}

Result<Json> Viewer::Crops(const Params& params) {
  UREC_ASSIGN_OR_RETURN(const uint64_t id, RecordId(params));
  UREC_ASSIGN_OR_RETURN(const size_t field, ImageField(params));
  UREC_ASSIGN_OR_RETURN(CropRequest crop, CropParams(params));
  UREC_ASSIGN_OR_RETURN(const uint64_t count, UintParam(params, "count", 4, 1, kMaxCrops));
  UREC_ASSIGN_OR_RETURN(Record record, dataset_->Get(id));
  Json crops = Json::array();
  const uint64_t first_epoch = crop.epoch;
  for (uint64_t e = first_epoch; e < first_epoch + count; ++e) {
    crop.epoch = e;
    UREC_ASSIGN_OR_RETURN(const CropWindow window, images_.CropWindowOf(id, field, crop));
    crops.push_back(Json{{"epoch", e},
                         {"window", {{"x", window.x}, {"y", window.y}, {"width", window.width},
                                     {"height", window.height}, {"flip", window.flip}}},
                         {"boxes", BoxesJson(record, roles_, &window, crop.size)}});
  }
  return Json{{"id", id}, {"field", dataset_->schema().field(field).name}, {"transform", SampleTransformName(crop.transform)},
              {"size", crop.size}, {"seed", crop.seed}, {"crops", std::move(crops)}};
}

Result<Json> Viewer::Distribution(const Params& params) {
  auto found = params.find("field");
  if (found == params.end()) return Status::InvalidArgument("parameter 'field' is missing");
  UREC_ASSIGN_OR_RETURN(const size_t field, dataset_->schema().FindField(found->second));
  UREC_ASSIGN_OR_RETURN(const std::string q, TextParam(params, "q", kMaxQueryBytes));
  UREC_ASSIGN_OR_RETURN(const uint64_t scan, UintParam(params, "scan", 0, 0, 1));
  std::shared_ptr<const Query> query;
  if (!Blank(q)) {
    UREC_ASSIGN_OR_RETURN(Query parsed, Query::Parse(q, *dataset_));
    query = std::make_shared<const Query>(std::move(parsed));
  }
  return distributions_.Get(field, std::move(query), Blank(q) ? "" : q, scan != 0, distribution_wait_);
}

}  // namespace unirecord::serve
