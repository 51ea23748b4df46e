#include "serve/distributions.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "unirecord/image.h"

namespace unirecord::serve {
namespace {

constexpr size_t kMaxBuckets = 4096;    // an IntHistogram's memory, in distinct buckets
constexpr int kBars = 50;               // bars of a histogram of ranges
constexpr size_t kValueBars = 60;       // at most this many distinct values: one bar each
constexpr size_t kClassBars = 1024;     // ... the label field with class names: up to this many
constexpr size_t kStringValues = 64;    // a string field with at most this many distinct values: one bar each
constexpr size_t kMaxQueued = 64;       // distributions waiting for the thread

// Integers in bounded memory: exact counts while at most kMaxBuckets values
// are distinct; past that, counts of buckets of 2^shift consecutive values
// (halving the resolution each time the buckets outgrow the bound).
class IntHistogram {
 public:
  void Add(int64_t v) {
    ++count_;
    min_ = std::min(min_, v);
    max_ = std::max(max_, v);
    ++buckets_[v >> shift_];
    while (buckets_.size() > kMaxBuckets) Coarsen();
  }
  uint64_t count() const { return count_; }

  struct Bar {
    int64_t lo, hi;
    uint64_t n;
  };
  // One bar per value when exact and at most `max_values` are distinct;
  // else at most kBars equal ranges from the minimum to the maximum.
  // Values that hardly repeat (fewer than two records a value on average)
  // get ranges too, unless `always_values`.
  std::vector<Bar> Bars(size_t max_values, bool always_values = false) const {
    std::vector<std::pair<int64_t, uint64_t>> sorted(buckets_.begin(), buckets_.end());
    std::sort(sorted.begin(), sorted.end());
    std::vector<Bar> bars;
    if (count_ == 0) return bars;
    if (shift_ == 0 && sorted.size() <= max_values && (always_values || 2 * sorted.size() <= count_)) {
      for (const auto& [v, n] : sorted) bars.push_back({v, v, n});
      return bars;
    }
    using Wide = __int128;
    const Wide unit = Wide{1} << shift_;
    const Wide lo0 = Wide{min_ >> shift_} * unit;
    const Wide units = (Wide{max_} - lo0 + unit) / unit;
    const Wide width = (units + kBars - 1) / kBars * unit;
    const int n = static_cast<int>((Wide{max_} - lo0) / width) + 1;
    for (int i = 0; i < n; ++i) {
      const Wide lo = lo0 + width * i;
      bars.push_back({static_cast<int64_t>(std::max<Wide>(lo, min_)),
                      static_cast<int64_t>(std::min<Wide>(lo + width - 1, max_)), 0});
    }
    for (const auto& [b, count] : sorted) bars[static_cast<size_t>((Wide{b} * unit - lo0) / width)].n += count;
    return bars;
  }

 private:
  void Coarsen() {
    std::unordered_map<int64_t, uint64_t> coarser;
    for (const auto& [b, n] : buckets_) coarser[b >> 1] += n;
    buckets_.swap(coarser);
    ++shift_;
  }

  std::unordered_map<int64_t, uint64_t> buckets_;
  int shift_ = 0;
  uint64_t count_ = 0;
  int64_t min_ = std::numeric_limits<int64_t>::max();
  int64_t max_ = std::numeric_limits<int64_t>::min();
};

std::string IntLiteral(int64_t v) { return std::to_string(v); }

std::string FloatLiteral(double v) {
  QueryValue value;
  value.type = FieldType::kFloat64;
  value.float_value = v;
  return value.ToString();
}

// A chart of integer bars; `filter(lo, hi)` the expression selecting a bar
// (empty: bars cannot filter), `name(v)` a value's name.
template <typename Filter, typename Name>
Json IntChart(const std::string& title, const IntHistogram& h, size_t max_values, Filter filter, Name name,
              bool always_values = false) {
  Json bars = Json::array();
  for (const IntHistogram::Bar& bar : h.Bars(max_values, always_values)) {
    Json b{{"lo", IntegerJson(bar.lo)}, {"hi", IntegerJson(bar.hi)}, {"n", bar.n}};
    const std::string expression = filter(bar.lo, bar.hi);
    if (!expression.empty()) b["filter"] = expression;
    if (bar.lo == bar.hi) {
      const std::string text = name(bar.lo);
      if (!text.empty()) b["name"] = text;
    }
    bars.push_back(std::move(b));
  }
  return Json{{"title", title}, {"count", h.count()}, {"bars", std::move(bars)}};
}

std::string NoFilter(int64_t, int64_t) { return ""; }
std::string NoName(int64_t) { return ""; }

// Records read so far, and whether to stop (the server is stopping).
struct Progress {
  std::atomic<uint64_t>* done;
  const std::atomic<bool>* stopping;

  Status Step() const {
    done->fetch_add(1, std::memory_order_relaxed);
    return stopping->load(std::memory_order_relaxed) ? Status::Unavailable("the server is stopping") : Status::OK();
  }
  void Restart() const { done->store(0, std::memory_order_relaxed); }
};

// A float field: one bar per value when at most kValueBars are distinct,
// else kBars equal ranges from the least finite value to the greatest (a
// second pass); NaNs and infinities counted apart.
Result<Json> FloatChart(const Dataset& dataset, const Field& f, const Query* filter, const Progress& progress) {
  const std::string name = QueryFieldName(f.name);
  uint64_t count = 0, nans = 0, negative_inf = 0, positive_inf = 0;
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  std::map<double, uint64_t> values;
  bool few = true;
  UREC_RETURN_IF_ERROR(Query::ForEachValue(dataset, f.name, filter, [&](uint64_t, const QueryValue& value) {
    const double v = value.float_value;
    if (std::isnan(v)) {
      ++nans;
    } else if (std::isinf(v)) {
      ++(v < 0 ? negative_inf : positive_inf);
    } else {
      ++count;
      lo = std::min(lo, v);
      hi = std::max(hi, v);
      if (few && ++values[v] == 1 && values.size() > kValueBars) {
        few = false;
        values.clear();
      }
    }
    return progress.Step();
  }));
  Json bars = Json::array();
  if (few && 2 * values.size() <= count) {
    for (const auto& [v, n] : values) {
      bars.push_back(Json{{"lo", v}, {"hi", v}, {"n", n}, {"filter", name + " == " + FloatLiteral(v)}});
    }
  } else {
    // Bar i holds [edges[i], edges[i + 1]), the last one its upper edge too;
    // its filter says exactly that, so a click selects the bar's records.
    std::vector<double> edges(kBars + 1);
    for (int i = 0; i <= kBars; ++i) edges[i] = i == kBars ? hi : lo + (hi - lo) * i / kBars;
    std::vector<uint64_t> counts(kBars, 0);
    progress.Restart();
    UREC_RETURN_IF_ERROR(Query::ForEachValue(dataset, f.name, filter, [&](uint64_t, const QueryValue& value) {
      const double v = value.float_value;
      if (std::isfinite(v)) ++counts[std::upper_bound(edges.begin() + 1, edges.end() - 1, v) - (edges.begin() + 1)];
      return progress.Step();
    }));
    for (int i = 0; i < kBars; ++i) {
      const bool last = i + 1 == kBars;
      bars.push_back(Json{{"lo", edges[i]}, {"hi", edges[i + 1]}, {"n", counts[i]},
                          {"filter", name + " >= " + FloatLiteral(edges[i]) + " and " + name + (last ? " <= " : " < ") +
                                         FloatLiteral(edges[i + 1])}});
    }
  }
  return Json{{"title", "values"}, {"count", count}, {"bars", std::move(bars)},
              {"nan", nans}, {"-inf", negative_inf}, {"inf", positive_inf}};
}

Result<Json> IntCharts(const Dataset& dataset, const Field& f, const Query* filter, const FieldRoles& roles,
                       const Progress& progress) {
  const std::string name = QueryFieldName(f.name);
  IntHistogram values;
  UREC_RETURN_IF_ERROR(Query::ForEachValue(dataset, f.name, filter, [&](uint64_t, const QueryValue& v) {
    values.Add(v.int_value);
    return progress.Step();
  }));
  const bool label = roles.label >= 0 && dataset.schema().field(static_cast<size_t>(roles.label)).name == f.name;
  const bool classes = label && !roles.class_names.empty();
  return Json::array({IntChart(
      "values", values, classes ? kClassBars : kValueBars,
      [&](int64_t lo, int64_t hi) {
        return lo == hi ? name + " == " + IntLiteral(lo) : name + " between " + IntLiteral(lo) + " and " + IntLiteral(hi);
      },
      [&](int64_t v) { return label ? roles.ClassName(v, false) : ""; }, classes)});
}

// A string field: its values when at most kStringValues are distinct, and
// the lengths (in bytes).
Result<Json> StringCharts(const Dataset& dataset, const Field& f, const Query* filter, const Progress& progress) {
  const std::string name = QueryFieldName(f.name);
  IntHistogram lengths;
  std::map<std::string, uint64_t> values;
  bool few = true;
  UREC_RETURN_IF_ERROR(Query::ForEachValue(dataset, f.name, filter, [&](uint64_t, const QueryValue& v) {
    lengths.Add(static_cast<int64_t>(v.string_value.size()));
    if (few && ++values[v.string_value] == 1 && values.size() > kStringValues) {
      few = false;
      values.clear();
    }
    return progress.Step();
  }));
  Json charts = Json::array();
  if (few && 2 * values.size() <= lengths.count()) {  // values that repeat
    Json bars = Json::array();
    for (const auto& [text, n] : values) {
      bars.push_back(Json{{"lo", text}, {"hi", text}, {"n", n}, {"name", text}, {"filter", name + " == " + QueryString(text)}});
    }
    charts.push_back(Json{{"title", "values"}, {"count", lengths.count()}, {"bars", std::move(bars)}});
  }
  charts.push_back(IntChart("length (bytes)", lengths, kValueBars, NoFilter, NoName));
  return charts;
}

// A blob field, read record by record: a variable-shape array's lengths
// (its first dimension), a bytes field's sizes, formats and image sizes.
// Records that cannot be read are counted, the first error kept.
Result<Json> BlobCharts(const Dataset& dataset, size_t field, const std::vector<uint64_t>* ids, uint64_t total,
                        const Progress& progress) {
  const Field& f = dataset.schema().field(field);
  IntHistogram sizes, widths, heights;
  std::map<std::string, uint64_t> formats;
  uint64_t errors = 0;
  std::string first_error;
  for (uint64_t i = 0; i < total; ++i) {
    const uint64_t id = ids != nullptr ? (*ids)[i] : i;
    UREC_RETURN_IF_ERROR(progress.Step());
    Status read;
    if (f.kind() == FieldKind::kVarArray) {
      Result<Record> record = dataset.Get(id);
      Result<ArrayView> array = record.ok() ? record->GetArray(field) : Result<ArrayView>(record.status());
      if (array.ok()) sizes.Add(array->shape[0]);
      read = array.status();
    } else if (Result<Blob> blob = dataset.GetBlob(id, field); blob.ok()) {
      sizes.Add(static_cast<int64_t>(blob->size()));
      const ImageFormat format = SniffImageFormat(blob->data());
      ++formats[format == ImageFormat::kUnknown ? "other" : ImageFormatName(format)];
      if (format != ImageFormat::kUnknown) {
        Result<ImageInfo> info = ProbeImage(blob->data());
        if (info.ok()) {
          widths.Add(info->width);
          heights.Add(info->height);
        }
        read = info.status();
      }
    } else {
      read = blob.status();
    }
    if (!read.ok() && errors++ == 0) first_error = read.ToString();
  }
  Json charts = Json::array();
  if (f.kind() == FieldKind::kVarArray) {
    const std::string name = QueryFieldName(f.name);
    charts.push_back(IntChart("length", sizes, kValueBars, [&](int64_t lo, int64_t hi) {
      return "len(" + name + ") between " + IntLiteral(lo) + " and " + IntLiteral(hi);
    }, NoName));
  } else {
    Json bars = Json::array();
    for (const auto& [format, n] : formats) bars.push_back(Json{{"lo", format}, {"hi", format}, {"n", n}, {"name", format}});
    charts.push_back(Json{{"title", "format"}, {"count", sizes.count()}, {"bars", std::move(bars)}});
    charts.push_back(IntChart("size (bytes)", sizes, kValueBars, NoFilter, NoName));
    if (widths.count()) charts.push_back(IntChart("image width", widths, kValueBars, NoFilter, NoName));
    if (heights.count()) charts.push_back(IntChart("image height", heights, kValueBars, NoFilter, NoName));
  }
  Json out{{"charts", std::move(charts)}, {"errors", errors}};
  if (errors) out["error"] = first_error;
  return out;
}

}  // namespace

std::string QueryFieldName(const std::string& name) {
  auto plain = [](const std::string& s) {
    if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
    for (char c : s) {
      if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.')) return false;
    }
    std::string lower = s;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    for (const char* reserved : {"and", "or", "not", "in", "between", "any", "len", "contains", "inf", "nan"}) {
      if (lower == reserved) return false;
    }
    return true;
  };
  if (plain(name)) return name;
  std::string out = "`";
  for (char c : name) {
    if (c == '\\' || c == '`') out += '\\';
    out += c == '\n' ? std::string("\\n") : c == '\t' ? std::string("\\t") : std::string(1, c);
  }
  return out + "`";
}

std::string QueryString(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '\\' || c == '"') out += '\\';
    out += c == '\n' ? std::string("\\n") : c == '\t' ? std::string("\\t") : std::string(1, c);
  }
  return out + "\"";
}

struct Distributions::Job {
  std::string key;
  size_t field = 0;
  std::shared_ptr<const Query> filter;
  std::atomic<uint64_t> done{0};
  uint64_t total = 0;  // 0: not known
  bool running = false;
  bool finished = false;
  Json result;
};

Distributions::Distributions(std::shared_ptr<const Dataset> dataset, const FieldRoles* roles, ByteCache* cache)
    : dataset_(std::move(dataset)), roles_(roles), cache_(cache) {}

Distributions::~Distributions() { Stop(); }

void Distributions::Stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  if (worker_.joinable()) worker_.join();
}

Json Distributions::Get(size_t field, std::shared_ptr<const Query> filter, const std::string& filter_text, bool scan,
                        std::chrono::milliseconds wait) {
  const std::string key = "dist:" + std::to_string(field) + "\n" + filter_text;
  if (auto cached = cache_->Get<Json>(key)) return *cached;
  const Field& f = dataset_->schema().field(field);
  const bool blobs = f.kind() == FieldKind::kBytes || f.kind() == FieldKind::kVarArray;
  if (f.kind() == FieldKind::kFixedArray) {
    return Json{{"state", "done"}, {"charts", Json::array()}, {"note", "every record has the same shape"}};
  }
  std::unique_lock<std::mutex> lock(mutex_);
  std::shared_ptr<Job>& job = jobs_[key];
  if (job == nullptr) {
    if ((blobs && !scan) || queue_.size() >= kMaxQueued || stopping_) {
      jobs_.erase(key);
      if (blobs && !scan) return Json{{"state", "scan_needed"}, {"records", dataset_->size()}};
      return Json{{"state", "error"}, {"error", "too many distributions are being computed; try again later"}};
    }
    job = std::make_shared<Job>();
    job->key = key;
    job->field = field;
    job->filter = std::move(filter);
    job->total = job->filter == nullptr ? dataset_->size() : 0;
    queue_.push_back(job);
    if (!worker_.joinable()) worker_ = std::thread([this] { Work(); });
    changed_.notify_all();
  }
  const std::shared_ptr<Job> mine = job;
  changed_.wait_for(lock, wait, [&] { return mine->finished || stopping_; });
  if (mine->finished) return mine->result;
  return Json{{"state", mine->running ? "running" : "queued"},
              {"done", mine->done.load(std::memory_order_relaxed)},
              {"total", mine->total}};
}

void Distributions::Work() {
  for (;;) {
    std::shared_ptr<Job> job;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      changed_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      job = queue_.front();
      queue_.pop_front();
      job->running = true;
    }
    const Status status = Compute(*job);
    std::lock_guard<std::mutex> lock(mutex_);
    if (!status.ok()) job->result = Json{{"state", "error"}, {"error", status.ToString()}};
    if (stopping_) return;
    job->result["field"] = job->field;
    cache_->Put(job->key, std::make_shared<const Json>(job->result), DumpJson(job->result).size() + job->key.size());
    job->finished = true;
    jobs_.erase(job->key);
    changed_.notify_all();
  }
}

Status Distributions::Compute(Job& job) {
  const Dataset& dataset = *dataset_;
  const Field& f = dataset.schema().field(job.field);
  const Progress progress{&job.done, &stopping_};
  Json charts;
  std::string source = f.indexed ? "index" : "scalar pages";
  if (f.kind() == FieldKind::kBytes || f.kind() == FieldKind::kVarArray) {
    std::vector<uint64_t> ids;
    if (job.filter != nullptr) {
      UREC_ASSIGN_OR_RETURN(ids, job.filter->Ids(dataset));
    }
    job.total = job.filter != nullptr ? ids.size() : dataset.size();
    UREC_ASSIGN_OR_RETURN(Json blobs, BlobCharts(dataset, job.field, job.filter != nullptr ? &ids : nullptr, job.total,
                                                 progress));
    job.result = std::move(blobs);
    job.result["state"] = "done";
    job.result["source"] = "blobs";
    return Status::OK();
  }
  if (f.type == FieldType::kString) {
    UREC_ASSIGN_OR_RETURN(charts, StringCharts(dataset, f, job.filter.get(), progress));
  } else if (IsIntegral(f.type) || f.type == FieldType::kBool) {
    UREC_ASSIGN_OR_RETURN(charts, IntCharts(dataset, f, job.filter.get(), *roles_, progress));
  } else {
    UREC_ASSIGN_OR_RETURN(Json chart, FloatChart(dataset, f, job.filter.get(), progress));
    charts = Json::array({std::move(chart)});
  }
  job.result = Json{{"state", "done"}, {"source", source}, {"charts", std::move(charts)}};
  return Status::OK();
}

}  // namespace unirecord::serve
