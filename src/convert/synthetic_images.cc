#include "convert/synthetic_images.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <set>
#include <vector>

#include "image/jpeg_encoder.h"
#include "image/png_encoder.h"
#include "util/splitmix64.h"
#include "util/threads.h"

namespace unirecord {
namespace {

namespace fs = std::filesystem;

// SplitMix64 with the draws pictures and names need: portable and good enough.
class Rng {
 public:
  explicit Rng(uint64_t seed) : generator_(seed) {}
  uint64_t Next() { return generator_.Next(); }
  double Uniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }
  double Uniform(double lo, double hi) { return lo + (hi - lo) * Uniform(); }
  int Int(int lo, int hi) { return lo + static_cast<int>(Next() % static_cast<uint64_t>(hi - lo + 1)); }

 private:
  SplitMix64 generator_;
};

uint64_t MixSeed(uint64_t a, uint64_t b) { return Rng(a * 0x100000001B3ull ^ b).Next(); }

uint8_t Clamp8(double v) { return static_cast<uint8_t>(std::lround(std::clamp(v, 0.0, 255.0))); }

struct Color {
  double r, g, b;
};

Color RandomColor(Rng& rng) { return {rng.Uniform(0, 255), rng.Uniform(0, 255), rng.Uniform(0, 255)}; }

// A shaded ellipse or rectangle drawn over the background.
struct Shape {
  bool ellipse;
  double cx, cy, rx, ry;
  Color color;
  double shading;  // darkening from centre to edge, 0..1
};

// Photo-like RGB pixels: a two-colour gradient with a slow wave, shaded
// shapes, and film-grain noise (the noise is what makes the JPEG size real).
std::vector<uint8_t> PaintPicture(int width, int height, uint64_t seed) {
  Rng rng(seed);
  const Color from = RandomColor(rng), to = RandomColor(rng);
  const double angle = rng.Uniform(0, 2 * M_PI);
  const double dx = std::cos(angle), dy = std::sin(angle);
  const double wave_freq = rng.Uniform(1, 4) * 2 * M_PI / std::max(width, height);
  const double wave_amp = rng.Uniform(5, 25);
  std::vector<Shape> shapes(rng.Int(5, 14));
  for (Shape& s : shapes) {
    s.ellipse = rng.Next() & 1;
    s.cx = rng.Uniform(0, width);
    s.cy = rng.Uniform(0, height);
    s.rx = rng.Uniform(0.04, 0.3) * width;
    s.ry = rng.Uniform(0.04, 0.3) * height;
    s.color = RandomColor(rng);
    s.shading = rng.Uniform(0, 0.6);
  }
  const double grain = rng.Uniform(38, 48);
  const double texture_amp = rng.Uniform(6, 16);
  const double texture_freq = rng.Uniform(0.15, 0.6);

  std::vector<uint8_t> pixels(static_cast<size_t>(width) * height * 3);
  const double span = std::abs(dx) * width + std::abs(dy) * height;
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      double t = ((dx >= 0 ? x : x - width) * dx + (dy >= 0 ? y : y - height) * dy) / span;
      Color c{from.r + (to.r - from.r) * t, from.g + (to.g - from.g) * t, from.b + (to.b - from.b) * t};
      double wave = wave_amp * std::sin(wave_freq * (x + 0.7 * y));
      c = {c.r + wave, c.g + wave, c.b + wave};
      for (const Shape& s : shapes) {
        const double u = (x - s.cx) / s.rx, v = (y - s.cy) / s.ry;
        const double d = s.ellipse ? u * u + v * v : std::max(u * u, v * v);
        if (d > 1) continue;
        const double shade = 1 - s.shading * d;
        c = {s.color.r * shade, s.color.g * shade, s.color.b * shade};
      }
      // Texture: a fine interference pattern, like foliage or fabric.
      const double texture = texture_amp * std::sin(texture_freq * x * (1 + 0.3 * std::sin(0.05 * y))) *
                             std::cos(texture_freq * 0.8 * y);
      const double luma_noise = grain * (rng.Uniform() + rng.Uniform() - 1);
      uint8_t* p = &pixels[(static_cast<size_t>(y) * width + x) * 3];
      p[0] = Clamp8(c.r + texture + luma_noise + 18 * (rng.Uniform() - 0.5));
      p[1] = Clamp8(c.g + texture + luma_noise + 18 * (rng.Uniform() - 0.5));
      p[2] = Clamp8(c.b + texture + luma_noise + 18 * (rng.Uniform() - 0.5));
    }
  }
  return pixels;
}

image_internal::Sampling EncoderSampling(SyntheticJpegSpec::Sampling sampling) {
  switch (sampling) {
    case SyntheticJpegSpec::Sampling::k420: return image_internal::Sampling::k420;
    case SyntheticJpegSpec::Sampling::k422: return image_internal::Sampling::k422;
    case SyntheticJpegSpec::Sampling::k444: return image_internal::Sampling::k444;
    case SyntheticJpegSpec::Sampling::kGray: return image_internal::Sampling::kGray;
  }
  return image_internal::Sampling::k420;
}

// --- Writing the folder.

Status WriteFile(const fs::path& path, const std::string& bytes) {
  std::unique_ptr<FILE, int (*)(FILE*)> file(std::fopen(path.c_str(), "wb"), std::fclose);
  if (!file) return Status::IOError("cannot create " + path.string());
  if (!bytes.empty() && std::fwrite(bytes.data(), 1, bytes.size(), file.get()) != bytes.size()) {
    return Status::IOError("cannot write " + path.string());
  }
  if (std::fclose(file.release()) != 0) return Status::IOError("cannot write " + path.string());
  return Status::OK();
}

// Distinct random numbers in [lo, hi], sorted so names come out in order.
std::vector<int> DistinctNumbers(Rng& rng, int count, int lo, int hi) {
  std::set<int> chosen;
  while (static_cast<int>(chosen.size()) < count) chosen.insert(rng.Int(lo, hi));
  return {chosen.begin(), chosen.end()};
}

struct PlannedImage {
  fs::path path;
  SyntheticJpegSpec spec;
};

// Decides names and encodings of every image up front, so threads only encode.
std::vector<PlannedImage> PlanImages(const fs::path& out, const SyntheticFolderOptions& o,
                                     std::vector<fs::path>* class_dirs) {
  Rng names(MixSeed(o.seed, 0x6e616d6573));
  const std::vector<int> synsets = DistinctNumbers(names, o.classes, 1000000, 15999999);
  std::vector<PlannedImage> plan;
  for (int c = 0; c < o.classes; ++c) {
    char synset[16];
    std::snprintf(synset, sizeof synset, "n%08d", synsets[c]);
    class_dirs->push_back(out / synset);
    const int max_id = std::max(99999, o.per_class * 4);  // n01440764_10026.JPEG: not a format value
    const std::vector<int> ids = DistinctNumbers(names, o.per_class, 1, max_id);
    for (int i = 0; i < o.per_class; ++i) {
      const int global = c * o.per_class + i;
      Rng rng(MixSeed(o.seed, static_cast<uint64_t>(global) + 1));
      PlannedImage img;
      img.path = class_dirs->back() / (std::string(synset) + "_" + std::to_string(ids[i]) + ".JPEG");
      SyntheticJpegSpec& s = img.spec;
      s.width = std::max(8, static_cast<int>(o.width * rng.Uniform(0.75, 1.25)));
      s.height = std::max(8, static_cast<int>(o.height * rng.Uniform(0.8, 1.2)));
      if (global % 4 == 1) std::swap(s.width, s.height);  // portrait
      s.quality = rng.Int(85, 95);
      // Fixed positions in every run of 20 make each variant appear in small folders too.
      switch (global % 20) {
        case 3: s.sampling = SyntheticJpegSpec::Sampling::k444; break;
        case 7: s.sampling = SyntheticJpegSpec::Sampling::kGray; break;
        case 13: s.sampling = SyntheticJpegSpec::Sampling::k422; break;
        default: s.sampling = SyntheticJpegSpec::Sampling::k420; break;
      }
      s.progressive = global % 6 == 4;
      s.seed = rng.Next();
      plan.push_back(std::move(img));
    }
  }
  return plan;
}

}  // namespace

Result<std::string> EncodeSyntheticJpeg(const SyntheticJpegSpec& spec) {
  if (spec.width <= 0 || spec.height <= 0 || spec.width > 16384 || spec.height > 16384) {
    return Status::InvalidArgument("synthetic JPEG size " + std::to_string(spec.width) + "x" +
                                   std::to_string(spec.height) + " is out of range 1..16384");
  }
  image_internal::EncodeSpec encode;
  encode.width = spec.width;
  encode.height = spec.height;
  encode.sampling = EncoderSampling(spec.sampling);
  encode.quality = spec.quality;
  encode.progressive = spec.progressive;
  encode.cmyk = spec.cmyk;
  // The fast forward DCT below quality 96, as TurboJPEG's tjCompress2 (which
  // wrote these files before): the same options keep giving the same bytes.
  encode.fast_dct = spec.quality < 96;
  std::vector<uint8_t> pixels = PaintPicture(spec.width, spec.height, spec.seed);
  if (spec.cmyk) pixels = image_internal::RgbToAdobeCmyk(pixels);  // decodes to the same picture
  Result<std::string> jpeg = image_internal::EncodeJpeg(pixels, encode);
  if (!jpeg.ok()) return jpeg.status().WithContext("synthetic JPEG (seed " + std::to_string(spec.seed) + ")");
  return jpeg;
}

std::string EncodeSyntheticPng(int width, int height) {
  image_internal::PngSpec spec;  // 8-bit RGB
  spec.width = width;
  spec.height = height;
  std::vector<uint8_t> rgb;
  rgb.reserve(size_t(width) * height * 3);
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      rgb.push_back(static_cast<uint8_t>(x * 255 / std::max(1, width - 1)));
      rgb.push_back(static_cast<uint8_t>(y * 255 / std::max(1, height - 1)));
      rgb.push_back(128);
    }
  }
  Result<std::string> png = image_internal::EncodePng(spec, rgb);
  return png.ok() ? *png : std::string();  // a positive size always encodes
}

Result<SyntheticFolderReport> WriteSyntheticImageFolder(const std::string& out,
                                                        const SyntheticFolderOptions& options) {
  if (options.classes < 1 || options.per_class < 0) {
    return Status::InvalidArgument("need --classes >= 1 and --per-class >= 0");
  }
  if (options.width < 8 || options.height < 8 || options.width > 8192 || options.height > 8192) {
    return Status::InvalidArgument("--width and --height must be within 8..8192");
  }
  std::error_code ec;
  const fs::path root(out);
  if (fs::exists(root, ec) && !(fs::is_directory(root, ec) && fs::is_empty(root, ec))) {
    return Status::InvalidArgument(out + " already exists and is not an empty directory");
  }
  std::vector<fs::path> class_dirs;
  const std::vector<PlannedImage> plan = PlanImages(root, options, &class_dirs);
  for (const fs::path& dir : class_dirs) {
    fs::create_directories(dir, ec);
    if (ec) return Status::IOError("cannot create " + dir.string() + ": " + ec.message());
  }

  std::atomic<int64_t> bytes{0};
  UREC_RETURN_IF_ERROR(ParallelFor(plan.size(), options.threads, "threads", [&](size_t i) {
    Result<std::string> jpeg = EncodeSyntheticJpeg(plan[i].spec);
    if (!jpeg.ok()) return jpeg.status();
    bytes += static_cast<int64_t>(jpeg->size());
    return WriteFile(plan[i].path, *jpeg);
  }));

  SyntheticFolderReport report;
  report.jpegs = static_cast<int64_t>(plan.size());
  report.bytes = bytes;
  if (!options.mix) return report;

  // The awkward files of real datasets, spread over the first classes.
  auto class_dir = [&](int i) { return class_dirs[i % class_dirs.size()]; };
  Rng rng(MixSeed(options.seed, 0x6d6978));
  SyntheticJpegSpec spec;
  spec.seed = rng.Next();
  spec.cmyk = true;
  UREC_ASSIGN_OR_RETURN(std::string cmyk, EncodeSyntheticJpeg(spec));
  spec.cmyk = false;
  spec.seed = rng.Next();
  UREC_ASSIGN_OR_RETURN(std::string whole, EncodeSyntheticJpeg(spec));
  const std::string truncated = whole.substr(0, whole.size() * 3 / 5);
  const std::string png = EncodeSyntheticPng(64, 48);
  const std::string readme = "Synthetic image folder written by `urec synth-imagefolder`.\n";
  const std::pair<fs::path, const std::string*> extras[] = {
      {class_dir(0) / "cmyk.JPEG", &cmyk},
      {class_dir(1) / "png_named_jpeg.JPEG", &png},
      {class_dir(2) / "truncated.JPEG", &truncated},
      {class_dir(3) / "empty.JPEG", nullptr},
      {root / "README.txt", &readme},
  };
  for (const auto& [path, content] : extras) {
    const std::string empty;
    UREC_RETURN_IF_ERROR(WriteFile(path, content ? *content : empty));
    report.bytes += content ? static_cast<int64_t>(content->size()) : 0;
  }
  report.jpegs += 1;  // the CMYK one decodes
  report.pngs = 1;
  report.extras = 3;  // truncated, empty, README
  return report;
}

}  // namespace unirecord
