// `urec show`: a contact sheet of a dataset's samples as PNG, decoded by the
// loader's own per-sample decoder (SampleDecoder): with --transform train the
// tiles are the exact crops the Loader feeds for that seed and epoch.
//
//   urec show out/ --where 'label == 3' --transform train --epoch 2 -o sheet.png
//
// Under each tile a strip shows the record id and the label in a built-in
// 3x5 digit font (digits are all it needs); sheet.tsv beside the sheet
// names every tile's id, label, class name, path and position. When the
// dataset has a boxes field (float32 (-1, 4), --boxes), each tile shows its
// boxes as the Loader maps them (MapBoxes, the one box mapping). With
// --clip-frames T a video dataset is drawn as frame strips: a row per
// record, the T frames of the clip the Loader samples for that seed and
// epoch (ClipOptions), cropped as it crops them.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "command.h"
#include "convert/tool_files.h"
#include "dataset_json.h"
#include "image/resize_rgb.h"
#include "unirecord/image.h"
#include "unirecord/loader.h"
#include "unirecord/query.h"
#include "unirecord/sample_decoder.h"

namespace unirecord::cli {
namespace {

struct ShowArgs {
  std::string path;
  std::string where;
  std::vector<uint64_t> ids;
  std::string transform = "none";
  uint64_t epoch = 0;
  uint64_t seed = 0;
  int size = 224;
  int resize = 256;
  int count = 16;
  int columns = 0;
  std::string output;
  std::string boxes = "boxes";  // drawn when the dataset has this field
  bool boxes_given = false;     // --boxes on the command line: the field must exist
  std::string box_format = "xywh";
  int clip_frames = 0;  // > 0: frame strips of clips of this many frames
  int clip_stride = ClipOptions().stride;
  std::string clip_field = ClipOptions().field;
};

constexpr int kGap = 4;        // pixels between tiles and around the sheet
constexpr int kScale = 2;      // each font pixel is kScale x kScale
constexpr int kStrip = 5 * kScale + 4;  // the caption strip under a tile
constexpr uint8_t kBackground = 40;
constexpr uint8_t kBoxColor[3] = {255, 214, 0};

// Digits 0-9, 3 columns x 5 rows, one bit per pixel (bit 2 = left).
constexpr uint8_t kDigits[10][5] = {
    {7, 5, 5, 5, 7}, {2, 6, 2, 2, 7}, {7, 1, 7, 4, 7}, {7, 1, 7, 1, 7}, {5, 5, 7, 1, 1},
    {7, 4, 7, 1, 7}, {7, 4, 7, 5, 7}, {7, 1, 1, 1, 1}, {7, 5, 7, 5, 7}, {7, 5, 7, 1, 7},
};

struct Sheet {
  int width, height;
  std::vector<uint8_t> rgb;

  void Fill(int x, int y, int w, int h, uint8_t v) {
    for (int r = std::max(y, 0); r < std::min(y + h, height); ++r) {
      for (int c = std::max(x, 0); c < std::min(x + w, width); ++c) {
        uint8_t* p = &rgb[(size_t(r) * width + c) * 3];
        p[0] = p[1] = p[2] = v;
      }
    }
  }
  // Digits and spaces from (x, y); stops at max_x.
  void Text(int x, int y, const std::string& text, int max_x) {
    for (char ch : text) {
      if (x + 3 * kScale > max_x) return;
      if (ch >= '0' && ch <= '9') {
        for (int r = 0; r < 5; ++r) {
          for (int c = 0; c < 3; ++c) {
            if (kDigits[ch - '0'][r] & (4 >> c)) Fill(x + c * kScale, y + r * kScale, kScale, kScale, 255);
          }
        }
      }
      x += 4 * kScale;
    }
  }
  // The outline of the box (x0, y0)-(x1, y1), clipped to the sheet.
  void Outline(int x0, int y0, int x1, int y1) {
    auto dot = [&](int x, int y) {
      if (x < 0 || y < 0 || x >= width || y >= height) return;
      std::copy(kBoxColor, kBoxColor + 3, &rgb[(size_t(y) * width + x) * 3]);
    };
    for (int x = x0; x <= x1; ++x) dot(x, y0), dot(x, y1);
    for (int y = y0; y <= y1; ++y) dot(x0, y), dot(x1, y);
  }
  void Paste(const uint8_t* tile, int w, int h, int x, int y) {
    for (int r = 0; r < h; ++r) {
      std::copy(tile + size_t(r) * w * 3, tile + size_t(r + 1) * w * 3, &rgb[(size_t(y + r) * width + x) * 3]);
    }
  }
};

Result<std::vector<uint64_t>> ChooseIds(const Dataset& dataset, const ShowArgs& args) {
  std::vector<uint64_t> ids;
  if (!args.ids.empty()) {
    for (uint64_t id : args.ids) {
      if (id >= dataset.size()) {
        return Status::OutOfRange("record " + std::to_string(id) + " does not exist (the dataset has " +
                                  std::to_string(dataset.size()) + ")");
      }
    }
    ids = args.ids;
  } else if (!args.where.empty()) {
    UREC_ASSIGN_OR_RETURN(Query query, Query::Parse(args.where, dataset));
    UREC_ASSIGN_OR_RETURN(ids, query.Ids(dataset));
  } else {
    for (uint64_t id = 0; id < dataset.size() && id < uint64_t(args.count); ++id) ids.push_back(id);
  }
  if (ids.size() > size_t(args.count)) ids.resize(args.count);
  if (ids.empty()) return Status::InvalidArgument("no records to show");
  return ids;
}

// Where an image went in its tile: `window` (of the image's pixels) was
// resized to width x height at (x, y) of the tile.
struct Placement {
  CropWindow window;
  int x = 0, y = 0, width = 0, height = 0;
};

// The whole image scaled to fit size x size (aspect kept), centered on the
// background: --transform none.
Status FitWhole(ImageDecoder* decoder, std::string_view bytes, int size, std::vector<uint8_t>* tile,
                Placement* placement) {
  UREC_ASSIGN_OR_RETURN(RgbImage image, decoder->Decode(bytes));
  const double scale = std::min(double(size) / image.width, double(size) / image.height);
  const int w = std::clamp(int(std::lround(image.width * scale)), 1, size);
  const int h = std::clamp(int(std::lround(image.height * scale)), 1, size);
  *placement = Placement{CropWindow{0, 0, image.width, image.height, false}, (size - w) / 2, (size - h) / 2, w, h};
  std::vector<uint8_t> fitted(size_t(w) * h * 3);
  UREC_RETURN_IF_ERROR(image_internal::ResizeRgb(image.pixels.data(), image.width, image.height, size_t(image.width) * 3,
                                 fitted.data(), w, h, false));
  tile->assign(size_t(size) * size * 3, kBackground);
  const int x0 = (size - w) / 2, y0 = (size - h) / 2;
  for (int r = 0; r < h; ++r) {
    std::copy(fitted.begin() + size_t(r) * w * 3, fitted.begin() + size_t(r + 1) * w * 3,
              tile->begin() + (size_t(y0 + r) * size + x0) * 3);
  }
  return Status::OK();
}

std::string TsvField(std::string s) {
  for (char& c : s) {
    if (c == '\t' || c == '\n') c = ' ';
  }
  return s;
}

// The boxes field to draw: its index, or -1 when there is none to draw.
Result<int> BoxesField(const Dataset& dataset, const ShowArgs& args) {
  const int index = dataset.schema().FieldIndex(args.boxes);
  if (index < 0) {
    if (args.boxes_given) return dataset.schema().FindField(args.boxes).status().WithContext("--boxes");
    return -1;
  }
  const Field& field = dataset.schema().field(size_t(index));
  if (field.type != FieldType::kFloat32 || field.shape != std::vector<int64_t>{kVariableDim, 4}) {
    if (!args.boxes_given) return -1;
    return Status::InvalidArgument("--boxes: field '" + args.boxes + "' is not float32 (-1, 4)");
  }
  return index;
}

// Draws record `id`'s boxes mapped as the Loader maps them onto the tile at
// (x, y) of the sheet.
Status DrawBoxes(const Dataset& dataset, uint64_t id, int field, BoxFormat format, const Placement& placement,
                 int x, int y, Sheet* sheet) {
  UREC_ASSIGN_OR_RETURN(Record record, dataset.Get(id));
  UREC_ASSIGN_OR_RETURN(ArrayView boxes, record.GetArray(size_t(field)));
  const size_t count = size_t(boxes.shape[0]);
  std::vector<float> mapped(count * 4);
  std::vector<uint8_t> keep(count);
  const size_t kept = MapBoxes(placement.window, placement.width, placement.height, format, boxes.as<float>(), count,
                               mapped.data(), keep.data());
  for (size_t b = 0; b < kept; ++b) {
    const float* m = &mapped[4 * b];
    const float x1 = format == BoxFormat::kXYWH ? m[0] + m[2] : m[2];
    const float y1 = format == BoxFormat::kXYWH ? m[1] + m[3] : m[3];
    const int left = x + placement.x, top = y + placement.y;
    sheet->Outline(left + int(std::floor(m[0])), top + int(std::floor(m[1])),
                   left + std::min(int(std::ceil(x1)), placement.width) - 1,
                   top + std::min(int(std::ceil(y1)), placement.height) - 1);
  }
  return Status::OK();
}

// The sheet and legend into args.output and its .tsv.
Status WriteSheet(const ShowArgs& args, const Sheet& sheet, const std::string& legend, std::string* legend_path) {
  UREC_ASSIGN_OR_RETURN(std::string png, EncodePngRgb(sheet.rgb.data(), sheet.rgb.size(), sheet.width, sheet.height));
  UREC_RETURN_IF_ERROR(WriteWholeFile(args.output, {png}));
  *legend_path = args.output;
  const size_t dot = legend_path->rfind('.');
  if (dot != std::string::npos && legend_path->find('/', dot) == std::string::npos) legend_path->resize(dot);
  *legend_path += ".tsv";
  return WriteWholeFile(*legend_path, {legend});
}

// --clip-frames: a strip of the Loader's clip per record (the Loader itself,
// over the chosen ids in order; "none" draws the centre crop).
Status RunShowClips(const ShowArgs& args, std::shared_ptr<Dataset> dataset, const std::vector<uint64_t>& ids,
                    const TransformName& transform) {
  LoaderOptions options;
  options.batch_size = 1;
  options.threads = 1;
  options.prefetch = 1;
  options.image_size = args.size;
  options.resize_shorter = args.resize;
  options.transform = transform.none ? SampleTransform::kCenterCrop : transform.transform;
  options.sampler.seed = args.seed;
  options.sampler.order = SampleOrder::kSequential;
  options.subset = ids;
  options.clip.emplace();
  options.clip->field = args.clip_field;
  options.clip->frames = args.clip_frames;
  options.clip->stride = args.clip_stride;
  UREC_ASSIGN_OR_RETURN(std::unique_ptr<Loader> loader, Loader::Create(dataset, options));
  loader->SetEpoch(args.epoch);
  const int n = static_cast<int>(ids.size()), t = args.clip_frames;
  Sheet sheet;
  sheet.width = kGap + t * (args.size + kGap);
  sheet.height = kGap + n * (args.size + kStrip + kGap);
  UREC_RETURN_IF_ERROR(CheckOutputSize(sheet.width, sheet.height).WithContext("frame strips"));
  sheet.rgb.assign(size_t(sheet.width) * sheet.height * 3, kBackground);
  std::string legend = "row\tid\tlabel\tframe_pts\tx\ty\n";
  const size_t frame_bytes = size_t(args.size) * size_t(args.size) * 3;
  for (int row = 0; row < n; ++row) {
    UREC_ASSIGN_OR_RETURN(Batch batch, loader->Next());
    if (batch.empty()) return Status::Internal("urec show: the loader ended before record " + std::to_string(ids[row]));
    const int y = kGap + row * (args.size + kStrip + kGap);
    std::string pts;
    for (int f = 0; f < t; ++f) {
      sheet.Paste(batch.images() + size_t(f) * frame_bytes, args.size, args.size, kGap + f * (args.size + kGap), y);
      pts += (f ? "," : "") + std::to_string(batch.frame_pts()[f]);
    }
    const std::string label = batch.labels() != nullptr ? std::to_string(batch.labels()[0]) : "";
    sheet.Text(kGap + 2, y + args.size + 2, std::to_string(ids[row]) + (label.empty() ? "" : "  " + label),
               sheet.width - kGap);
    legend += std::to_string(row) + "\t" + std::to_string(ids[row]) + "\t" + label + "\t" + pts + "\t" +
              std::to_string(kGap) + "\t" + std::to_string(y) + "\n";
  }
  std::string legend_path;
  UREC_RETURN_IF_ERROR(WriteSheet(args, sheet, legend, &legend_path));
  std::printf("%s: %d clips of %d frames (%s, epoch %llu, seed %llu), a strip each, %d px frames; legend %s\n",
              args.output.c_str(), n, t, transform.none ? "center crop" : args.transform.c_str(),
              static_cast<unsigned long long>(args.epoch), static_cast<unsigned long long>(args.seed), args.size,
              legend_path.c_str());
  return Status::OK();
}

Status RunShow(const ShowArgs& args) {
  if (args.output.empty()) return Status::InvalidArgument("-o SHEET.png is required");
  if (!args.where.empty() && !args.ids.empty()) return Status::InvalidArgument("--where and --ids exclude each other");
  const Result<TransformName> parsed = ParseTransformName(args.transform);
  if (!parsed.ok()) return parsed.status().WithContext("--transform");
  const TransformName transform = *parsed;
  UREC_ASSIGN_OR_RETURN(std::shared_ptr<Dataset> dataset, OpenForReading(args.path));
  UREC_ASSIGN_OR_RETURN(std::vector<uint64_t> ids, ChooseIds(*dataset, args));
  if (args.clip_frames > 0) return RunShowClips(args, dataset, ids, transform);

  // The loader's per-sample decoder with the loader's defaults, or a plain
  // decode for --transform none.
  SampleDecoderOptions options;
  options.image_size = args.size;
  options.transform = transform.transform;
  if (options.transform == SampleTransform::kCenterCrop) options.resize_shorter = args.resize;
  UREC_ASSIGN_OR_RETURN(std::unique_ptr<SampleDecoder> sample_decoder, SampleDecoder::Create(options));
  SampleFields fields;
  if (dataset->schema().FieldIndex(fields.label) < 0) fields.label = "";  // e.g. a detection dataset
  UREC_ASSIGN_OR_RETURN(SampleSource source, SampleSource::Create(dataset, fields, args.path));
  UREC_ASSIGN_OR_RETURN(const int boxes_field, BoxesField(*dataset, args));
  UREC_ASSIGN_OR_RETURN(const BoxFormat box_format, ParseBoxFormat(args.box_format));
  std::vector<std::string> classes;
  auto found = dataset->metadata().find(kClassesMetadataKey);
  if (found != dataset->metadata().end()) classes = DecodeNameList(found->second);

  const int n = static_cast<int>(ids.size());
  const int columns = args.columns > 0 ? std::min(args.columns, n) : int(std::ceil(std::sqrt(double(n))));
  const int rows = (n + columns - 1) / columns;
  Sheet sheet;
  sheet.width = kGap + columns * (args.size + kGap);
  sheet.height = kGap + rows * (args.size + kStrip + kGap);
  UREC_RETURN_IF_ERROR(CheckOutputSize(sheet.width, sheet.height).WithContext("contact sheet"));
  sheet.rgb.assign(size_t(sheet.width) * sheet.height * 3, kBackground);

  ImageDecoder whole;
  std::vector<uint8_t> tile(options.output_bytes());
  std::string legend = "tile\tid\tlabel\tclass\tpath\tx\ty\n";
  for (int t = 0; t < n; ++t) {
    const uint64_t id = ids[t];
    int64_t label = -1;
    Placement placement{CropWindow{}, 0, 0, args.size, args.size};
    if (transform.none) {
      Blob image;
      UREC_RETURN_IF_ERROR(source.Read(id, &image, &label).WithContext(source.Describe(id)));
      UREC_RETURN_IF_ERROR(
          FitWhole(&whole, image.data(), args.size, &tile, &placement).WithContext(source.Describe(id)));
    } else {
      UREC_RETURN_IF_ERROR(sample_decoder->DecodeRecord(source, id, args.seed, args.epoch, tile.data(), tile.size(),
                                                        &label, nullptr, &placement.window));
    }
    const int x = kGap + (t % columns) * (args.size + kGap);
    const int y = kGap + (t / columns) * (args.size + kStrip + kGap);
    sheet.Paste(tile.data(), args.size, args.size, x, y);
    if (boxes_field >= 0) {
      UREC_RETURN_IF_ERROR(DrawBoxes(*dataset, id, boxes_field, box_format, placement, x, y, &sheet)
                               .WithContext(source.Describe(id)));
    }
    sheet.Text(x + 2, y + args.size + 2, std::to_string(id) + (source.has_labels() ? "  " + std::to_string(label) : ""),
               x + args.size);
    std::string path;
    Result<Record> record = dataset->Get(id);
    if (record.ok()) {
      Result<std::string_view> p = record->GetString("path");
      if (p.ok()) path = std::string(*p);
    }
    const std::string name = label >= 0 && size_t(label) < classes.size() ? classes[size_t(label)] : "";
    legend += std::to_string(t) + "\t" + std::to_string(id) + "\t" + (source.has_labels() ? std::to_string(label) : "") +
              "\t" + TsvField(name) + "\t" + TsvField(path) + "\t" + std::to_string(x) + "\t" + std::to_string(y) + "\n";
  }

  std::string legend_path;
  UREC_RETURN_IF_ERROR(WriteSheet(args, sheet, legend, &legend_path));
  std::printf("%s: %d samples (%s, epoch %llu, seed %llu) in %dx%d tiles of %d; legend %s\n", args.output.c_str(), n,
              args.transform.c_str(), static_cast<unsigned long long>(args.epoch),
              static_cast<unsigned long long>(args.seed), columns, rows, args.size, legend_path.c_str());
  return Status::OK();
}

CommandRunner SetupShow(CLI::App* cmd) {
  auto args = std::make_shared<ShowArgs>();
  cmd->add_option("DATASET", args->path, "Dataset folder, one .urec shard, or a glob")->required();
  cmd->add_option("--where", args->where, "Show the records matching this query expression (docs/query.md)");
  cmd->add_option("--ids", args->ids, "Show these record ids")->delimiter(',')->check(IntegerIn(0, UINT64_MAX));
  cmd->add_option("--transform", args->transform,
                  "none (the whole image, fitted), train (RandomResizedCrop + flip, as the Loader) or val "
                  "(Resize + CenterCrop); also random_resized_crop | center_crop")
      ->capture_default_str();
  cmd->add_option("--epoch", args->epoch, "Epoch of the train crops")->capture_default_str()->check(IntegerIn(0, UINT64_MAX));
  cmd->add_option("--seed", args->seed, "Seed of the train crops (the Loader's seed)")->capture_default_str()->check(IntegerIn(0, UINT64_MAX));
  cmd->add_option("--size", args->size, "Tile size: the Loader's image_size")
      ->check(IntegerIn(8, 1024))
      ->capture_default_str();
  cmd->add_option("--resize", args->resize, "val: the shorter side before the center crop")
      ->check(IntegerIn(8, 65500))
      ->capture_default_str();
  cmd->add_option("--count", args->count, "At most this many samples")->check(IntegerIn(1, 1024))->capture_default_str();
  cmd->add_option("--columns", args->columns, "Tiles per row (default: a square sheet)")->check(IntegerIn(0, 1024));
  cmd->add_option("-o,--output", args->output, "The sheet, a PNG; the legend goes beside it as .tsv")->required();
  CLI::Option* boxes = cmd->add_option("--boxes", args->boxes,
                                       "Draw this float32 (-1, 4) field's boxes on the tiles, mapped as the Loader "
                                       "maps them (drawn by default when a field 'boxes' exists)")
                           ->capture_default_str();
  cmd->add_option("--box-format", args->box_format, "xywh (COCO's) or xyxy")->capture_default_str();
  cmd->add_option("--clip-frames", args->clip_frames,
                  "A video dataset as frame strips: the Loader's clip of N frames per record, one row each")
      ->check(IntegerIn(1, 256));
  cmd->add_option("--clip-stride", args->clip_stride, "Clips: frames between sampled frames")
      ->capture_default_str()
      ->check(IntegerIn(1, 1024));
  cmd->add_option("--clip-field", args->clip_field, "Clips: the video field")->capture_default_str();
  return [args, boxes] {
    ShowArgs run = *args;
    run.boxes_given = boxes->count() > 0;
    return RunShow(run);
  };
}

}  // namespace

UREC_REGISTER_COMMAND("show", "A contact sheet (PNG) of decoded samples, as the loader sees them", SetupShow);

}  // namespace unirecord::cli
