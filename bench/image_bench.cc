// Image decode benchmarks on one core (see bench/README.md, "Image decode").
//
// Dataset: an ImageNet-like set (~500x375 photos, mostly 4:2:0, some
// progressive) cut from the real photos of the conformance corpus, resized,
// given sensor-like grain and re-encoded here. $UREC_IMAGE_BENCH_SET picks
// how much entropy it has:
//   smooth   (default) grain sigma 8, quality 85-95: ~3 bits per pixel
//   entropy  grain sigma 11, quality 90-97: ImageNet's ~4.7 bits per pixel
//            (~110 KB per ~470x390 image)
// It is also written to $UREC_IMAGE_BENCH_DIR (default
// /tmp/unirecord-imagenet-like or /tmp/unirecord-imagenet-entropy) for
// bench/image_peer.py. Every file is also transcoded into the fast layout as
// `urec convert` stores it (TranscodeToFastLayout); the *_fastlayout cases
// decode those copies (same pixels, see jpeg_restart_crop_test.cc).
//
// Training transform RandomResizedCrop(224) + flip, four ways:
//   a_full_decode                 full decode only
//   b_full_decode_crop_resize     full decode, then crop + resize
//   c_crop_decode_resize          crop-before-decode + resize
//   d_crop_dct_decode_resize      crop-before-decode with DCT scaling + resize
//   crop_decode_only              the exact window, no resize (vs the floor)
//   *_fastlayout                  the same on the fast-layout copies; their
//                                 entropy_floor_fastlayout entropy-decodes
//                                 only the restart segments under the window
//                                 (with our entropy decoder, jpeg_huffman.h;
//                                 *_libjpeg_entropy: with libjpeg-turbo's)
// Where the bound is (libjpeg called directly, bench-only code):
//   entropy_floor                 entropy decoding down to the window's
//                                 bottom row only: no exact decoder on
//                                 libjpeg-turbo can do less work
//   entropy_full_image            the same down to the last row
//   a_full_decode_fast            full decode, JDCT_IFAST, no fancy upsampling
//   crop_decode_fast              the window as crop_decode_only, same settings
//   c_crop_decode_resize_fast     (c) with those settings
// Every decode case also runs per subset: NAME/baseline and NAME/progressive
// (the file's SOF as ProbeJpeg reports it), NAME/444 (4:4:4 files of either
// process; NAME alone is the whole set).
// Validation Resize(256) + CenterCrop(224), two ways:
//   val_full_decode_resize_crop   full decode, resize whole image, crop
//   val_center_window_decode      planned window, crop decode + resize
//   val_center_crop_exact         DecodeCenterCrop: torchvision's result exactly
// Resize candidates on the same decoded crops -> 224x224:
//   resize/ours (AVX-512 where the CPU has it), resize/ours_avx2, resize/ours_portable
//   (the kernels without AVX2), resize/stb,
//   resize/libyuv_box, resize/libyuv_bilinear, resize/swscale_bilinear,
//   resize/swscale_area (libyuv and swscale are loaded with dlopen when
//   installed, so the build needs no extra link flags), with quality
//   counters against torchvision's result (= ours, byte for byte, see
//   tests/cli/test_decode.py).
#include <dlfcn.h>
#include <time.h>

#include <algorithm>
#include <csetjmp>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <benchmark/benchmark.h>

#define STB_IMAGE_RESIZE_IMPLEMENTATION
#define STB_IMAGE_RESIZE_STATIC
#include <stb/stb_image_resize.h>
extern "C" {
#include <libswscale/swscale.h>
}
// jpegint.h (struct jpeg_entropy_decoder) for the entropy-time split below.
#define JPEG_INTERNALS
#include <jpeglib.h>
#include <x86intrin.h>

#include "image/jpeg_decoder.h"
#include "image/jpeg_encoder.h"
#include "image/jpeg_header.h"
#include "image/jpeg_huffman.h"
#include "image/libjpeg_errors.h"
#include "image/jpeg_restart_crop.h"
#include "image/jpeg_transcode.h"
#include "image/resample.h"
#include "image/resize_rgb.h"
#include "unirecord/image.h"

namespace unirecord {
namespace {

constexpr int kImages = 256;
constexpr int kOut = 224;

struct Sample {
  std::string jpeg;
  std::string fast;       // the same image in the fast layout (TranscodeToFastLayout)
  JpegInfo info;
  CropWindow train;       // RandomResizedCrop(224) + flip window
  CropWindow validation;  // Resize(256) + CenterCrop(224) window
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Real photos of the corpus, decoded once; crops of them become the set.
std::vector<RgbImage> SourcePhotos() {
  const std::string dir = std::string(UNIRECORD_TEST_DATA_DIR) + "/jpeg-conformance/";
  std::vector<RgbImage> photos;
  JpegDecoder decoder;
  for (const char* name : {"pillow__flower.jpg", "pillow__sugarshack_bad_mpo_header.jpg",
                           "pillow__iptc.jpg", "jpeg-decoder__progressive3.jpg",
                           "zune-image__fox410.jpg", "zune-image__large_vertical_samp_7680_4320.jpg"}) {
    Result<RgbImage> image = decoder.Decode(ReadFile(dir + name));
    if (image.ok()) photos.push_back(std::move(*image));
  }
  if (photos.empty()) {
    std::fprintf(stderr, "image_bench: no source photos in %s\n", dir.c_str());
    std::exit(2);
  }
  return photos;
}

// How much entropy the set has ($UREC_IMAGE_BENCH_SET).
struct SetKind {
  double grain_sigma;
  int quality_min, quality_max;
  const char* default_dir;
};

SetKind ChosenSet() {
  const char* env = std::getenv("UREC_IMAGE_BENCH_SET");
  const std::string name = env ? env : "smooth";
  if (name == "smooth") return {8.0, 85, 95, "/tmp/unirecord-imagenet-like"};
  if (name == "entropy") return {11.0, 90, 97, "/tmp/unirecord-imagenet-entropy"};
  std::fprintf(stderr, "UREC_IMAGE_BENCH_SET must be smooth or entropy, not %s\n", name.c_str());
  std::exit(2);
}

const std::vector<Sample>& Dataset() {
  static const std::vector<Sample> samples = [] {
    std::vector<RgbImage> photos = SourcePhotos();
    std::mt19937 rng(2024);
    const SetKind set_kind = ChosenSet();
    const char* env = std::getenv("UREC_IMAGE_BENCH_DIR");
    const std::string out_dir = env ? env : set_kind.default_dir;
    std::system(("mkdir -p '" + out_dir + "'").c_str());
    std::vector<Sample> set;
    // Which file is which, for image_peer.py's per-subset rows.
    std::ofstream manifest(out_dir + "/manifest.tsv");
    manifest << "file\tprogressive\twidth\theight\tquality\tsampling\n";
    for (int i = 0; i < kImages; ++i) {
      const RgbImage& src = photos[i % photos.size()];
      // ImageNet-like sizes: mostly 500x375 landscape, some portrait/other.
      const int kind = rng() % 8;
      int w = kind < 5 ? 500 : kind < 7 ? 375 : 500;
      int h = kind < 5 ? 375 : kind < 7 ? 500 : 333;
      // A random region of the photo with the target's aspect ratio.
      double max_scale = std::min(double(src.width) / w, double(src.height) / h);
      double scale = std::max(0.8, max_scale * std::uniform_real_distribution<>(0.5, 1.0)(rng));
      scale = std::min(scale, max_scale);
      int rw = std::max(1, int(w * scale)), rh = std::max(1, int(h * scale));
      int rx = rng() % (src.width - rw + 1), ry = rng() % (src.height - rh + 1);
      std::vector<uint8_t> rgb(size_t(w) * h * 3);
      if (!image_internal::ResizeRgb(src.pixels.data() + (size_t(ry) * src.width + rx) * 3, rw, rh,
                     size_t(src.width) * 3, rgb.data(), w, h, rng() % 2).ok()) {
        std::abort();
      }
      // Sensor-like noise: the small corpus photos are smoother than camera
      // pictures; this brings the files to ImageNet's ~110 KB at this size.
      std::normal_distribution<double> grain(0.0, set_kind.grain_sigma);
      for (uint8_t& v : rgb) v = uint8_t(std::clamp(v + grain(rng), 0.0, 255.0));
      image_internal::EncodeSpec spec;
      spec.width = w;
      spec.height = h;
      spec.quality = set_kind.quality_min + int(rng() % (set_kind.quality_max - set_kind.quality_min + 1));
      const int s = rng() % 10;
      spec.sampling = s < 8 ? image_internal::Sampling::k420
                            : s < 9 ? image_internal::Sampling::k422 : image_internal::Sampling::k444;
      spec.progressive = rng() % 10 == 0;
      Sample sample;
      sample.jpeg = image_internal::EncodeJpeg(rgb, spec).value();
      sample.info = *ProbeJpeg(sample.jpeg);
      image_internal::TranscodeResult fast = image_internal::TranscodeToFastLayout(sample.jpeg).value();
      if (fast.layout != image_internal::JpegLayout::kFast) std::abort();
      sample.fast = std::move(fast.jpeg);
      sample.train = PlanRandomResizedCrop(sample.info, RandomResizedCropParams{}, 1, 0, i);
      sample.validation = PlanCenterCrop(sample.info, kOut, 256);
      char name[64];
      std::snprintf(name, sizeof name, "/%03d.jpg", i);
      std::ofstream(out_dir + name, std::ios::binary) << sample.jpeg;
      manifest << (name + 1) << '\t' << int(sample.info.progressive) << '\t' << w << '\t' << h
               << '\t' << spec.quality << '\t' << (s < 8 ? "4:2:0" : s < 9 ? "4:2:2" : "4:4:4")
               << '\n';
      set.push_back(std::move(sample));
    }
    return set;
  }();
  return samples;
}

// The images a case cycles through: all, or one coding process only.
enum class Subset { kAll, kBaseline, kProgressive, k444 };

const char* SubsetSuffix(Subset subset) {
  switch (subset) {
    case Subset::kBaseline: return "/baseline";
    case Subset::kProgressive: return "/progressive";
    case Subset::k444: return "/444";
    default: return "";
  }
}

// Indices into Dataset(), in dataset order.
const std::vector<size_t>& Indices(Subset subset) {
  static const std::vector<std::vector<size_t>> lists = [] {
    std::vector<std::vector<size_t>> l(4);
    const auto& set = Dataset();
    for (size_t k = 0; k < set.size(); ++k) {
      l[0].push_back(k);
      l[set[k].info.progressive ? 2 : 1].push_back(k);
      if (set[k].info.subsampling == JpegSubsampling::k444) l[3].push_back(k);
    }
    return l;
  }();
  return lists[static_cast<size_t>(subset)];
}

// Cycles through a subset of the set: next() is the next sample's index.
struct Cycle {
  const std::vector<size_t>& ids;
  size_t i = 0;
  explicit Cycle(Subset subset) : ids(Indices(subset)) {}
  size_t next() { return ids[i++ % ids.size()]; }
};

void SetRate(benchmark::State& state, Subset subset) {
  state.SetItemsProcessed(state.iterations());
  const auto& set = Dataset();
  const auto& ids = Indices(subset);
  size_t bytes = 0, fast_bytes = 0;
  double pixels = 0;
  for (size_t k : ids) {
    bytes += set[k].jpeg.size();
    fast_bytes += set[k].fast.size();
    pixels += double(set[k].info.width) * set[k].info.height;
  }
  state.counters["avg_jpeg_kb"] = double(bytes) / ids.size() / 1024;
  state.counters["bits_per_pixel"] = 8.0 * bytes / pixels;
  state.counters["fast_layout_size"] = double(fast_bytes) / bytes;
  state.counters["images"] = double(ids.size());
}

// The bytes a case decodes: the generated file or its fast-layout copy.
const std::string& Bytes(const Sample& s, bool fast_layout) { return fast_layout ? s.fast : s.jpeg; }

void FullDecode(benchmark::State& state, Subset subset, bool fast_layout) {
  const auto& set = Dataset();
  JpegDecoder decoder;
  Cycle cycle(subset);
  for (auto _ : state) {
    Result<RgbImage> image = decoder.Decode(Bytes(set[cycle.next()], fast_layout));
    benchmark::DoNotOptimize(image.ok());
  }
  SetRate(state, subset);
}

void BM_a_full_decode(benchmark::State& state, Subset subset) { FullDecode(state, subset, false); }
void BM_a_full_decode_fastlayout(benchmark::State& state, Subset subset) {
  FullDecode(state, subset, true);
}

// The resampler with scratch buffers kept across images, as JpegDecoder
// keeps them (ResizeRgb allocates per call).
image_internal::SourceBox WholeBox(int width, int height) {
  return {0, 0, double(width), double(height)};
}

void BM_b_full_decode_crop_resize(benchmark::State& state, Subset subset) {
  const auto& set = Dataset();
  JpegDecoder decoder;
  image_internal::ResampleScratch scratch;
  std::vector<uint8_t> out(kOut * kOut * 3);
  Cycle cycle(subset);
  for (auto _ : state) {
    const Sample& s = set[cycle.next()];
    Result<RgbImage> image = decoder.Decode(s.jpeg);
    const CropWindow& w = s.train;
    const size_t stride = size_t(image->width) * 3;
    image_internal::ResampleRgb(image->pixels.data() + w.y * stride + w.x * 3, w.width, w.height,
                                stride, WholeBox(w.width, w.height), out.data(), kOut, kOut,
                                kOut * 3, w.flip, &scratch);
    benchmark::DoNotOptimize(out.data());
  }
  SetRate(state, subset);
}

// CPU time of this thread: the machine is shared, so wall time is noisy;
// Google Benchmark's rates use CPU time too.
double ThreadSeconds() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

// ------------------------------------------------- libjpeg, bench-only --
//
// Plain libjpeg calls for what the library does not offer: entropy decoding
// alone (the floor) and the approximate fast settings. As in
// src/image/jpeg_decoder.cc, setjmp and every libjpeg call live in small
// functions whose locals are plain C data.

using image_internal::LibjpegErrors;  // the library's one libjpeg error manager

// One pass over a JPEG: jpeg_crop_scanline to [crop_x, crop_x + crop_width)
// (crop_width 0: every column), jpeg_skip_scanlines(skip) from row 0, read
// `read` rows into `rows`, then jpeg_abort_decompress.
struct RawRequest {
  const unsigned char* data;
  unsigned long size;
  int fast;  // JDCT_IFAST and no fancy upsampling
  unsigned int crop_x, crop_width;
  unsigned int skip, read;
  unsigned char* rows;  // `read` rows of `stride` bytes
  size_t stride;
  unsigned int x_offset;      // out: first column libjpeg produced
  unsigned int output_width;  // out: columns it produced per row
  // How libjpeg's decode_mcu runs: as is, replaced by one that decodes
  // nothing (the rest of the floor's cost), or timed call by call.
  enum class Entropy { kLibjpeg, kNone, kTimed } entropy = Entropy::kLibjpeg;
};

// kTimed: libjpeg's decode_mcu, and the time stamp counter's cycles inside it.
boolean (*libjpeg_decode_mcu)(j_decompress_ptr, JBLOCKROW*) = nullptr;
uint64_t decode_mcu_cycles = 0;
boolean TimedDecodeMcu(j_decompress_ptr cinfo, JBLOCKROW* blocks) {
  const uint64_t t0 = __rdtsc();
  const boolean ok = libjpeg_decode_mcu(cinfo, blocks);
  decode_mcu_cycles += __rdtsc() - t0;
  return ok;
}
boolean NoDecodeMcu(j_decompress_ptr, JBLOCKROW*) { return TRUE; }

bool RunRawCreate(jpeg_decompress_struct* cinfo, LibjpegErrors* err) {
  cinfo->err = image_internal::InitLibjpegErrors(err, /*strict=*/false);
  if (setjmp(err->jump)) return false;
  jpeg_create_decompress(cinfo);
  return true;
}

bool RunRaw(jpeg_decompress_struct* cinfo, LibjpegErrors* err, RawRequest* req) {
  if (setjmp(err->jump)) {
    jpeg_abort_decompress(cinfo);
    return false;
  }
  jpeg_mem_src(cinfo, req->data, req->size);
  jpeg_read_header(cinfo, TRUE);
  cinfo->out_color_space = JCS_RGB;
  if (req->fast) {
    cinfo->dct_method = JDCT_IFAST;
    cinfo->do_fancy_upsampling = FALSE;
  }
  jpeg_start_decompress(cinfo);
  if (req->entropy == RawRequest::Entropy::kNone) cinfo->entropy->decode_mcu = NoDecodeMcu;
  if (req->entropy == RawRequest::Entropy::kTimed) {
    libjpeg_decode_mcu = cinfo->entropy->decode_mcu;
    cinfo->entropy->decode_mcu = TimedDecodeMcu;
  }
  JDIMENSION x = req->crop_x;
  JDIMENSION width = req->crop_width ? req->crop_width : cinfo->output_width;
  if (x != 0 || width != cinfo->output_width) jpeg_crop_scanline(cinfo, &x, &width);
  req->x_offset = x;
  req->output_width = cinfo->output_width;
  if (req->skip > 0) jpeg_skip_scanlines(cinfo, req->skip);
  const JDIMENSION end = req->skip + req->read;
  while (cinfo->output_scanline < end) {
    JSAMPROW rows[16];
    const JDIMENSION n = std::min<JDIMENSION>(16, end - cinfo->output_scanline);
    for (JDIMENSION i = 0; i < n; ++i) {
      rows[i] = req->rows + (cinfo->output_scanline - req->skip + i) * req->stride;
    }
    jpeg_read_scanlines(cinfo, rows, n);
  }
  jpeg_abort_decompress(cinfo);
  return true;
}

// One decompressor reused across images, like JpegDecoder.
class RawDecoder {
 public:
  RawDecoder() {
    std::memset(&cinfo_, 0, sizeof cinfo_);
    std::memset(&err_, 0, sizeof err_);
    if (!RunRawCreate(&cinfo_, &err_)) std::abort();
  }
  ~RawDecoder() { jpeg_destroy_decompress(&cinfo_); }
  RawDecoder(const RawDecoder&) = delete;
  RawDecoder& operator=(const RawDecoder&) = delete;

  // Entropy-decodes every iMCU row that holds a row above `bottom`: skips
  // bottom - 1 rows (whole iMCU rows: entropy decoding only, no IDCT,
  // upsampling or colour conversion) and reads the last one, with the
  // columns cropped to one iMCU so that the partial iMCU row read costs
  // next to nothing beyond its entropy decoding. (Skipping to the bottom
  // directly would be free when bottom is the last row: 2.1.5 then just
  // marks EOI.) A progressive file entropy-decodes every scan in
  // jpeg_start_decompress.
  void EntropyOnly(const Sample& s, int bottom) { EntropyOnly(s.jpeg, s.info.width, bottom); }
  void EntropyOnly(const std::string& jpeg, int width, int bottom,
                   RawRequest::Entropy entropy = RawRequest::Entropy::kLibjpeg) {
    rows_.resize(size_t(width) * 3);
    RawRequest req = Request(jpeg, width, false);
    req.entropy = entropy;
    req.crop_width = 1;
    req.skip = unsigned(bottom - 1);
    req.read = 1;
    Run(&req);
  }

  // The fast layout's floor: entropy decoding of only the restart segments
  // JpegDecoder assembles for the window (its one-pixel margin included),
  // down to the window's bottom row.
  void EntropyOnlySegments(const Sample& s, const CropWindow& w,
                           RawRequest::Entropy entropy = RawRequest::Entropy::kLibjpeg) {
    image_internal::SubImage sub;
    const std::string& segments = Segments(s, w, &sub);
    EntropyOnly(segments, sub.width, w.y + w.height - sub.y, entropy);
  }

  // The JPEG of those segments (the fast-layout file itself when they are
  // the whole image), and where it lies.
  const std::string& Segments(const Sample& s, const CropWindow& w, image_internal::SubImage* sub) {
    image_internal::JpegHeaderLayout layout;
    image_internal::RestartGrid grid;
    const JpegInfo info = image_internal::ProbeJpegHeader(s.fast, &layout).value();
    if (!image_internal::FindRestartGrid(info, layout, &grid)) std::abort();
    const int x0 = std::max(w.x - 1, 0), x1 = std::min(w.x + w.width + 1, info.width);
    const int y0 = std::max(w.y - 1, 0), y1 = std::min(w.y + w.height + 1, info.height);
    if (!image_internal::AssembleSubImage(s.fast, layout, grid, x0, y0, x1, y1, &segments_, sub)) {
      std::abort();
    }
    if (sub->whole_image) {
      sub->x = sub->y = 0;
      return s.fast;
    }
    return segments_.jpeg;
  }

  // The window's rows, columns widened by the same 1 left / 2 right margin
  // as JpegDecoder; view() is then the window (no flip).
  void Crop(const Sample& s, const CropWindow& w, bool fast) {
    const int x0 = std::max(w.x - 1, 0);
    const int x1 = std::min(w.x + w.width + 2, s.info.width);
    rows_.resize(size_t(s.info.width) * 3 * w.height);
    RawRequest req = Request(s, fast);
    req.crop_x = unsigned(x0);
    req.crop_width = unsigned(x1 - x0);
    req.skip = unsigned(w.y);
    req.read = unsigned(w.height);
    Run(&req);
    view_ = rows_.data() + (w.x - int(req.x_offset)) * 3;
  }

  void Full(const Sample& s, bool fast) {
    Crop(s, CropWindow{0, 0, s.info.width, s.info.height, false}, fast);
  }

  const uint8_t* view() const { return view_; }
  size_t stride() const { return stride_; }

 private:
  RawRequest Request(const Sample& s, bool fast) { return Request(s.jpeg, s.info.width, fast); }
  RawRequest Request(const std::string& jpeg, int width, bool fast) {
    stride_ = size_t(width) * 3;
    RawRequest req{};
    req.data = reinterpret_cast<const unsigned char*>(jpeg.data());
    req.size = jpeg.size();
    req.fast = fast;
    req.rows = rows_.data();
    req.stride = stride_;
    return req;
  }

  void Run(RawRequest* req) {
    if (!RunRaw(&cinfo_, &err_, req)) {
      std::fprintf(stderr, "libjpeg: %s\n", err_.message);
      std::abort();
    }
  }

  jpeg_decompress_struct cinfo_;
  LibjpegErrors err_;
  std::vector<uint8_t> rows_;
  image_internal::RestartCropScratch segments_;
  const uint8_t* view_ = nullptr;
  size_t stride_ = 0;
};

int Bottom(const CropWindow& w) { return w.y + w.height; }

double AreaFraction(const Sample& s) {
  return double(s.train.width) * s.train.height / (double(s.info.width) * s.info.height);
}

// CPU seconds per image (best of 3, measured once per process, each image's
// variants back to back, so that a shared machine's load skews their ratios
// less than it skews rates taken minutes apart):
//   full            JpegDecoder::Decode
//   entropy_full    RawDecoder::EntropyOnly down to the last row
//   entropy_window  RawDecoder::EntropyOnly down to the train window's bottom
//   raw_full[f], raw_crop[f]  RawDecoder::Full / Crop(train window),
//                   exact (f = 0) and fast (f = 1) settings, same code
//   entropy_segments  RawDecoder::EntropyOnlySegments (the fast layout's floor)
struct ImageCost {
  double full, entropy_full, entropy_window, entropy_segments;
  double raw_full[2], raw_crop[2];
};

template <typename Fn>
double BestOf3(Fn fn) {
  double best = 1e9;
  for (int r = 0; r < 3; ++r) {
    const double t0 = ThreadSeconds();
    fn();
    best = std::min(best, ThreadSeconds() - t0);
  }
  return best;
}

const std::vector<ImageCost>& Costs() {
  static const std::vector<ImageCost> costs = [] {
    std::vector<ImageCost> c;
    JpegDecoder decoder;
    RawDecoder raw;
    for (const Sample& s : Dataset()) {
      ImageCost cost;
      cost.full = BestOf3([&] { benchmark::DoNotOptimize(decoder.Decode(s.jpeg).ok()); });
      cost.entropy_full = BestOf3([&] { raw.EntropyOnly(s, s.info.height); });
      cost.entropy_window = BestOf3([&] { raw.EntropyOnly(s, Bottom(s.train)); });
      cost.entropy_segments = BestOf3([&] { raw.EntropyOnlySegments(s, s.train); });
      for (bool fast : {false, true}) {
        cost.raw_full[fast] = BestOf3([&] { raw.Full(s, fast); });
        cost.raw_crop[fast] = BestOf3([&] { raw.Crop(s, s.train, fast); });
      }
      c.push_back(cost);
    }
    return c;
  }();
  return costs;
}

// The floor for a crop of a baseline JPEG: entropy decoding (55%)
// down to the crop's bottom row, the rest (45%) only for the crop's pixels.
double FloorSeconds(const Sample& s, double full) {
  const double rows = double(Bottom(s.train)) / s.info.height;
  return 0.55 * full * rows + 0.45 * full * AreaFraction(s);
}

// The same floor with the split measured per image instead of 55/45: the
// entropy decoding down to the window's bottom row, plus the rest of a full
// decode (IDCT, upsampling, colour) for the window's share of the pixels.
double MeasuredFloorSeconds(const Sample& s, const ImageCost& c) {
  return c.entropy_window + (c.full - c.entropy_full) * AreaFraction(s);
}

// The fast layout's floor: entropy decoding of only the window's restart
// segments, plus the rest of a full decode for the window's share of pixels.
double FastLayoutFloorSeconds(const Sample& s, const ImageCost& c) {
  return c.entropy_segments + (c.full - c.entropy_full) * AreaFraction(s);
}

// resize = false: the exact window only (DecodeCrop), to compare the
// decode itself with the floor.
// fast_layout: on the fast-layout copies; vs_fast_floor compares with their
// floor (entropy_segments plus the window's IDCT share).
void CropDecode(benchmark::State& state, Subset subset, bool dct_scaling, bool resize,
                bool fast_layout = false, bool own_entropy = true) {
  const auto& set = Dataset();
  DecodeOptions options;
  options.dct_scaling = dct_scaling;
  options.own_entropy_decoder = own_entropy;
  JpegDecoder decoder(options);
  std::vector<uint8_t> out(kOut * kOut * 3);
  const std::vector<ImageCost>& costs = Costs();
  double floor_total = 0, measured_floor_total = 0, fast_floor_total = 0, full_total = 0;
  Cycle cycle(subset);
  const double t0 = ThreadSeconds();
  for (auto _ : state) {
    const size_t k = cycle.next();
    const Sample& s = set[k];
    const std::string& bytes = Bytes(s, fast_layout);
    if (resize) {
      Status st = decoder.DecodeCropResized(bytes, s.train, kOut, kOut, out.data(), out.size());
      benchmark::DoNotOptimize(st.ok());
    } else {
      benchmark::DoNotOptimize(decoder.DecodeCrop(bytes, s.train).ok());
    }
    floor_total += FloorSeconds(s, costs[k].full);
    measured_floor_total += MeasuredFloorSeconds(s, costs[k]);
    fast_floor_total += FastLayoutFloorSeconds(s, costs[k]);
    full_total += costs[k].full;
  }
  const double elapsed = ThreadSeconds() - t0;
  SetRate(state, subset);
  state.counters["floor_us"] = floor_total / state.iterations() * 1e6;
  state.counters["vs_floor"] = elapsed / floor_total;
  state.counters["measured_floor_us"] = measured_floor_total / state.iterations() * 1e6;
  state.counters["vs_measured_floor"] = elapsed / measured_floor_total;
  state.counters["vs_full_decode"] = elapsed / full_total;
  state.counters["fast_floor_us"] = fast_floor_total / state.iterations() * 1e6;
  state.counters["vs_fast_floor"] = elapsed / fast_floor_total;
}

void BM_c_crop_decode_resize(benchmark::State& state, Subset subset) {
  CropDecode(state, subset, false, true);
}
void BM_d_crop_dct_decode_resize(benchmark::State& state, Subset subset) {
  CropDecode(state, subset, true, true);
}
void BM_crop_decode_only(benchmark::State& state, Subset subset) {
  CropDecode(state, subset, false, false);
}
void BM_d_crop_dct_decode_resize_fastlayout(benchmark::State& state, Subset subset) {
  CropDecode(state, subset, true, true, true);
}
void BM_crop_decode_only_fastlayout(benchmark::State& state, Subset subset) {
  CropDecode(state, subset, false, false, true);
}
void BM_d_crop_dct_decode_resize_fastlayout_libjpeg_entropy(benchmark::State& state, Subset subset) {
  CropDecode(state, subset, true, true, true, false);
}

// Entropy decoding alone, down to the train window's bottom row
// (to_last_row: down to the image's last row). Counters, from Costs():
// entropy_share, the entropy-only time of the whole image over a full
// decode's; floor_plus_crop_idct_us, the measured floor above.
void EntropyFloor(benchmark::State& state, Subset subset, bool to_last_row) {
  const auto& set = Dataset();
  RawDecoder raw;
  Cycle cycle(subset);
  for (auto _ : state) {
    const Sample& s = set[cycle.next()];
    raw.EntropyOnly(s, to_last_row ? s.info.height : Bottom(s.train));
  }
  SetRate(state, subset);
  double entropy = 0, full = 0, floor = 0, rows = 0;
  for (size_t k : Indices(subset)) {
    const ImageCost& c = Costs()[k];
    entropy += c.entropy_full;
    full += c.full;
    floor += MeasuredFloorSeconds(set[k], c);
    rows += double(Bottom(set[k].train)) / set[k].info.height;
  }
  const double n = double(Indices(subset).size());
  state.counters["entropy_share"] = entropy / full;
  state.counters["floor_plus_crop_idct_us"] = floor / n * 1e6;
  state.counters["window_bottom_frac"] = rows / n;
}

void BM_entropy_floor(benchmark::State& state, Subset subset) {
  EntropyFloor(state, subset, false);
}
void BM_entropy_full_image(benchmark::State& state, Subset subset) {
  EntropyFloor(state, subset, true);
}

void BM_entropy_floor_fastlayout(benchmark::State& state, Subset subset) {
  const auto& set = Dataset();
  RawDecoder raw;
  Cycle cycle(subset);
  for (auto _ : state) {
    const Sample& s = set[cycle.next()];
    raw.EntropyOnlySegments(s, s.train);
  }
  SetRate(state, subset);
  double floor = 0;
  for (size_t k : Indices(subset)) floor += FastLayoutFloorSeconds(set[k], Costs()[k]);
  state.counters["floor_plus_crop_idct_us"] = floor / double(Indices(subset).size()) * 1e6;
}

// Our Huffman decoder (src/image/jpeg_huffman.h) on the segments that
// entropy_floor_fastlayout decodes: libjpeg reads the header, ours decodes
// the scan into coefficients. First every sample's segments and whole file
// are checked against jpeg_read_coefficients (any difference aborts).
// Counter ours_over_libjpeg: ours over libjpeg's floor (EntropyOnlySegments),
// timed image by image in turn, best of 3 each, summed over the subset.
bool SameCoefficients(const std::string& jpeg, image_internal::OwnHuffmanScratch* scratch) {
  image_internal::JpegCoefficients ours, theirs;
  int warnings = 0;
  std::string error;
  return image_internal::DecodeCoefficientsOwn(jpeg, scratch, &ours) ==
             image_internal::OwnHuffmanResult::kDecoded &&
         image_internal::ReadLibjpegCoefficients(jpeg, &theirs, &warnings, &error) &&
         warnings == 0 && ours.components.size() == theirs.components.size() &&
         std::equal(ours.components.begin(), ours.components.end(), theirs.components.begin(),
                    [](const auto& a, const auto& b) {
                      return a.blocks_wide == b.blocks_wide && a.blocks_high == b.blocks_high &&
                             a.coef == b.coef;
                    });
}

// What DecodeCoefficientsOwn spends before its own decoder starts: a
// decompressor created, the header read, the decompressor destroyed.
bool ReadHeaderOnly(jpeg_decompress_struct* cinfo, LibjpegErrors* err, const std::string& jpeg) {
  if (setjmp(err->jump)) return false;
  jpeg_mem_src(cinfo, reinterpret_cast<const unsigned char*>(jpeg.data()), jpeg.size());
  return jpeg_read_header(cinfo, TRUE) == JPEG_HEADER_OK;
}
void HeaderOnly(const std::string& jpeg) {
  jpeg_decompress_struct cinfo;
  LibjpegErrors err;
  if (!RunRawCreate(&cinfo, &err) || !ReadHeaderOnly(&cinfo, &err, jpeg)) std::abort();
  jpeg_destroy_decompress(&cinfo);
}

void BM_entropy_ours_fastlayout(benchmark::State& state, Subset subset) {
  const auto& set = Dataset();
  RawDecoder raw;
  image_internal::OwnHuffmanScratch scratch;
  image_internal::JpegCoefficients coefficients;
  image_internal::SubImage sub;
  double ours = 0, libjpeg = 0, libjpeg_rest = 0, ours_header = 0;
  uint64_t all_cycles = 0, mcu_cycles = 0;
  for (size_t k : Indices(subset)) {
    const Sample& s = set[k];
    const std::string segments = raw.Segments(s, s.train, &sub);
    if (!SameCoefficients(s.fast, &scratch) || !SameCoefficients(segments, &scratch)) {
      std::fprintf(stderr, "image %zu: our coefficients differ from libjpeg's\n", k);
      std::abort();
    }
    ours += BestOf3([&] {
      image_internal::DecodeCoefficientsOwn(raw.Segments(s, s.train, &sub), &scratch, &coefficients);
    });
    libjpeg += BestOf3([&] { raw.EntropyOnlySegments(s, s.train); });
    // Entropy time alone, two ways: libjpeg's floor less the same floor
    // with a decode_mcu that decodes nothing, and the share of the floor's
    // cycles spent inside decode_mcu. Ours less its header reading.
    libjpeg_rest += BestOf3([&] { raw.EntropyOnlySegments(s, s.train, RawRequest::Entropy::kNone); });
    for (int r = 0; r < 3; ++r) {
      const uint64_t before = decode_mcu_cycles, t0 = __rdtsc();
      raw.EntropyOnlySegments(s, s.train, RawRequest::Entropy::kTimed);
      all_cycles += __rdtsc() - t0;
      mcu_cycles += decode_mcu_cycles - before;
    }
    ours_header += BestOf3([&] { HeaderOnly(raw.Segments(s, s.train, &sub)); });
  }
  Cycle cycle(subset);
  for (auto _ : state) {
    const Sample& s = set[cycle.next()];
    benchmark::DoNotOptimize(
        image_internal::DecodeCoefficientsOwn(raw.Segments(s, s.train, &sub), &scratch, &coefficients));
  }
  SetRate(state, subset);
  state.counters["ours_over_libjpeg"] = ours / libjpeg;
  const double decode_mcu_share = double(mcu_cycles) / double(all_cycles);
  state.counters["libjpeg_entropy_share_by_none"] = (libjpeg - libjpeg_rest) / libjpeg;
  state.counters["libjpeg_entropy_share_timed"] = decode_mcu_share;
  state.counters["ours_header_share"] = ours_header / ours;
  state.counters["scan_over_entropy_by_none"] = (ours - ours_header) / (libjpeg - libjpeg_rest);
  state.counters["scan_over_entropy_timed"] = (ours - ours_header) / (libjpeg * decode_mcu_share);
}

// --------------------------------------------- approximate (fast) settings --

enum class FastCase { kFull, kCrop, kCropResize };

// Mean and max absolute difference of each image's fast output against the
// exact one (JpegDecoder, the same window), computed once per process.
struct PixelDiff {
  double sum = 0;
  double values = 0;
  int max = 0;
  void Add(const uint8_t* a, const uint8_t* b, size_t n) {
    for (size_t k = 0; k < n; ++k) {
      const int d = std::abs(int(a[k]) - int(b[k]));
      sum += d;
      max = std::max(max, d);
    }
    values += double(n);
  }
};

// One sample with the fast settings: the pixels are in raw->view(), or in
// `out` for kCropResize.
void FastOutput(RawDecoder* raw, const Sample& s, FastCase what,
                image_internal::ResampleScratch* scratch, uint8_t* out) {
  const CropWindow& w = s.train;
  if (what == FastCase::kFull) {
    raw->Full(s, true);
    return;
  }
  raw->Crop(s, w, true);
  if (what == FastCase::kCropResize) {
    image_internal::ResampleRgb(raw->view(), w.width, w.height, raw->stride(),
                                WholeBox(w.width, w.height), out, kOut, kOut, kOut * 3, w.flip,
                                scratch);
  }
}

const std::vector<PixelDiff>& FastDiffs(FastCase what) {
  static std::vector<std::vector<PixelDiff>> cache(3);
  std::vector<PixelDiff>& diffs = cache[static_cast<size_t>(what)];
  if (!diffs.empty()) return diffs;
  JpegDecoder exact;
  RawDecoder raw;
  image_internal::ResampleScratch scratch;
  std::vector<uint8_t> got(kOut * kOut * 3), want(kOut * kOut * 3);
  for (const Sample& s : Dataset()) {
    PixelDiff d;
    CropWindow w = s.train;
    if (what == FastCase::kCropResize) {
      if (!exact.DecodeCropResized(s.jpeg, w, kOut, kOut, want.data(), want.size()).ok()) {
        std::abort();
      }
      FastOutput(&raw, s, what, &scratch, got.data());
      d.Add(got.data(), want.data(), got.size());
    } else {
      if (what == FastCase::kFull) w = {0, 0, s.info.width, s.info.height, false};
      w.flip = false;
      const RgbImage image = *exact.DecodeCrop(s.jpeg, w);
      FastOutput(&raw, s, what, &scratch, got.data());
      for (int y = 0; y < w.height; ++y) {
        d.Add(raw.view() + y * raw.stride(), image.pixels.data() + size_t(y) * w.width * 3,
              size_t(w.width) * 3);
      }
    }
    diffs.push_back(d);
  }
  return diffs;
}

void Fast(benchmark::State& state, Subset subset, FastCase what) {
  const auto& set = Dataset();
  RawDecoder raw;
  image_internal::ResampleScratch scratch;
  std::vector<uint8_t> out(kOut * kOut * 3);
  Cycle cycle(subset);
  for (auto _ : state) {
    FastOutput(&raw, set[cycle.next()], what, &scratch, out.data());
    benchmark::DoNotOptimize(out.data());
  }
  SetRate(state, subset);
  PixelDiff total;
  double exact_s = 0, fast_s = 0;
  for (size_t k : Indices(subset)) {
    const PixelDiff& d = FastDiffs(what)[k];
    total.sum += d.sum;
    total.values += d.values;
    total.max = std::max(total.max, d.max);
    const ImageCost& c = Costs()[k];
    exact_s += what == FastCase::kFull ? c.raw_full[0] : c.raw_crop[0];
    fast_s += what == FastCase::kFull ? c.raw_full[1] : c.raw_crop[1];
  }
  state.counters["mean_abs_diff"] = total.sum / total.values;
  state.counters["max_abs_diff"] = total.max;
  // Exact over fast time of the same decode (for kCropResize: of its crop
  // decode), paired per image; see ImageCost.
  state.counters["paired_speedup"] = exact_s / fast_s;
}

void BM_a_full_decode_fast(benchmark::State& state, Subset subset) {
  Fast(state, subset, FastCase::kFull);
}
void BM_crop_decode_fast(benchmark::State& state, Subset subset) {
  Fast(state, subset, FastCase::kCrop);
}
void BM_c_crop_decode_resize_fast(benchmark::State& state, Subset subset) {
  Fast(state, subset, FastCase::kCropResize);
}

// ------------------------------------------------------------- validation --

void BM_val_full_decode_resize_crop(benchmark::State& state, Subset subset) {
  const auto& set = Dataset();
  JpegDecoder decoder;
  image_internal::ResampleScratch scratch;
  std::vector<uint8_t> resized, out(kOut * kOut * 3);
  Cycle cycle(subset);
  for (auto _ : state) {
    const Sample& s = set[cycle.next()];
    Result<RgbImage> image = decoder.Decode(s.jpeg);
    // torchvision Resize(256): shorter side 256, longer truncated.
    const bool portrait = image->width <= image->height;
    const int rw = portrait ? 256 : int(256.0 * image->width / image->height);
    const int rh = portrait ? int(256.0 * image->height / image->width) : 256;
    resized.resize(size_t(rw) * rh * 3);
    image_internal::ResampleRgb(image->pixels.data(), image->width, image->height,
                                size_t(image->width) * 3, WholeBox(image->width, image->height),
                                resized.data(), rw, rh, size_t(rw) * 3, false, &scratch);
    const int top = int(std::nearbyint((rh - kOut) / 2.0));
    const int left = int(std::nearbyint((rw - kOut) / 2.0));
    for (int y = 0; y < kOut; ++y) {
      std::memcpy(&out[size_t(y) * kOut * 3], &resized[(size_t(top + y) * rw + left) * 3], kOut * 3);
    }
    benchmark::DoNotOptimize(out.data());
  }
  SetRate(state, subset);
}

// exact: DecodeCenterCrop; else the planned window through DecodeCropResized.
void CenterCrop(benchmark::State& state, Subset subset, bool exact, bool fast_layout = false,
                bool own_entropy = true) {
  const auto& set = Dataset();
  DecodeOptions options;
  options.own_entropy_decoder = own_entropy;
  JpegDecoder decoder(options);
  std::vector<uint8_t> out(kOut * kOut * 3);
  Cycle cycle(subset);
  for (auto _ : state) {
    const Sample& s = set[cycle.next()];
    const std::string& bytes = Bytes(s, fast_layout);
    Status st = exact ? decoder.DecodeCenterCrop(bytes, kOut, 256, out.data(), out.size())
                      : decoder.DecodeCropResized(bytes, s.validation, kOut, kOut, out.data(),
                                                  out.size());
    benchmark::DoNotOptimize(st.ok());
  }
  SetRate(state, subset);
}

void BM_val_center_crop_exact(benchmark::State& state, Subset subset) {
  CenterCrop(state, subset, true);
}
void BM_val_center_window_decode(benchmark::State& state, Subset subset) {
  CenterCrop(state, subset, false);
}
void BM_val_center_crop_exact_fastlayout(benchmark::State& state, Subset subset) {
  CenterCrop(state, subset, true, true);
}
void BM_val_center_crop_exact_fastlayout_libjpeg_entropy(benchmark::State& state, Subset subset) {
  CenterCrop(state, subset, true, true, false);
}

// ------------------------------------------------------- resize candidates --

struct Crop {
  RgbImage pixels;
  bool flip;
};

const std::vector<Crop>& DecodedCrops() {
  static const std::vector<Crop> crops = [] {
    std::vector<Crop> out;
    JpegDecoder decoder;
    for (const Sample& s : Dataset()) {
      CropWindow w = s.train;
      w.flip = false;
      out.push_back({*decoder.DecodeCrop(s.jpeg, w), s.train.flip});
    }
    return out;
  }();
  return crops;
}

using ResizeFn = void (*)(const RgbImage& src, uint8_t* dst);

void ResizeOurs(const RgbImage& src, uint8_t* dst) {
  thread_local image_internal::ResampleScratch scratch;
  image_internal::ResampleRgb(src.pixels.data(), src.width, src.height, size_t(src.width) * 3,
                              WholeBox(src.width, src.height), dst, kOut, kOut, kOut * 3, false,
                              &scratch);
}

// The same resampler with a given kernel set (ours dispatches to the best the
// CPU has: AVX-512, else AVX2, else portable); max_abs_diff against
// ResizeOurs must be 0.
template <image_internal::ResampleKernels kKernels>
void ResizeOursWith(const RgbImage& src, uint8_t* dst) {
  thread_local image_internal::ResampleScratch scratch;
  scratch.kernels = kKernels;
  image_internal::ResampleRgb(src.pixels.data(), src.width, src.height, size_t(src.width) * 3,
                              WholeBox(src.width, src.height), dst, kOut, kOut, kOut * 3, false,
                              &scratch);
}

void ResizeStb(const RgbImage& src, uint8_t* dst) {
  stbir_resize_uint8_generic(src.pixels.data(), src.width, src.height, src.width * 3, dst, kOut,
                             kOut, kOut * 3, 3, STBIR_ALPHA_CHANNEL_NONE, 0, STBIR_EDGE_CLAMP,
                             STBIR_FILTER_TRIANGLE, STBIR_COLORSPACE_LINEAR, nullptr);
}

// libyuv (C symbols) through dlopen.
struct Libyuv {
  using ToArgb = int (*)(const uint8_t*, int, uint8_t*, int, int, int);
  using Scale = int (*)(const uint8_t*, int, int, int, uint8_t*, int, int, int, int);
  ToArgb raw_to_argb = nullptr;
  ToArgb argb_to_raw = nullptr;
  Scale argb_scale = nullptr;
  static const Libyuv& Get() {
    static const Libyuv lib = [] {
      Libyuv l;
      if (void* h = dlopen("libyuv.so.0", RTLD_NOW)) {
        l.raw_to_argb = reinterpret_cast<ToArgb>(dlsym(h, "RAWToARGB"));
        l.argb_to_raw = reinterpret_cast<ToArgb>(dlsym(h, "ARGBToRAW"));
        l.argb_scale = reinterpret_cast<Scale>(dlsym(h, "ARGBScale"));
      }
      return l;
    }();
    return lib;
  }
  bool ok() const { return raw_to_argb && argb_to_raw && argb_scale; }
};

template <int kFilter>  // libyuv FilterMode: 2 bilinear, 3 box
void ResizeLibyuv(const RgbImage& src, uint8_t* dst) {
  const Libyuv& y = Libyuv::Get();
  thread_local std::vector<uint8_t> argb_in, argb_out;
  argb_in.resize(size_t(src.width) * src.height * 4);
  argb_out.resize(size_t(kOut) * kOut * 4);
  y.raw_to_argb(src.pixels.data(), src.width * 3, argb_in.data(), src.width * 4, src.width,
                src.height);
  y.argb_scale(argb_in.data(), src.width * 4, src.width, src.height, argb_out.data(), kOut * 4,
               kOut, kOut, kFilter);
  y.argb_to_raw(argb_out.data(), kOut * 4, dst, kOut * 3, kOut, kOut);
}

struct Swscale {
  decltype(&sws_getContext) get_context = nullptr;
  decltype(&sws_scale) scale = nullptr;
  decltype(&sws_freeContext) free_context = nullptr;
  static const Swscale& Get() {
    static const Swscale lib = [] {
      Swscale l;
      if (void* h = dlopen("libswscale.so.6", RTLD_NOW)) {
        l.get_context = reinterpret_cast<decltype(&sws_getContext)>(dlsym(h, "sws_getContext"));
        l.scale = reinterpret_cast<decltype(&sws_scale)>(dlsym(h, "sws_scale"));
        l.free_context = reinterpret_cast<decltype(&sws_freeContext)>(dlsym(h, "sws_freeContext"));
      }
      return l;
    }();
    return lib;
  }
  bool ok() const { return get_context && scale && free_context; }
};

// A new context per call: crop sizes differ for every sample.
template <int kFlags>
void ResizeSwscale(const RgbImage& src, uint8_t* dst) {
  const Swscale& s = Swscale::Get();
  SwsContext* ctx = s.get_context(src.width, src.height, AV_PIX_FMT_RGB24, kOut, kOut,
                                  AV_PIX_FMT_RGB24, kFlags, nullptr, nullptr, nullptr);
  const uint8_t* in[1] = {src.pixels.data()};
  int in_stride[1] = {src.width * 3};
  uint8_t* out[1] = {dst};
  int out_stride[1] = {kOut * 3};
  s.scale(ctx, in, in_stride, 0, src.height, out, out_stride);
  s.free_context(ctx);
}

void BM_resize(benchmark::State& state, ResizeFn fn, bool available) {
  if (!available) {
    state.SkipWithError("library not installed");
    for (auto _ : state) {
    }
    return;
  }
  const auto& crops = DecodedCrops();
  // Quality against torchvision's antialiased bilinear (= ResizeOurs).
  std::vector<uint8_t> got(kOut * kOut * 3), want(kOut * kOut * 3);
  double sum = 0;
  int max_diff = 0;
  for (const Crop& c : crops) {
    fn(c.pixels, got.data());
    ResizeOurs(c.pixels, want.data());
    for (size_t k = 0; k < got.size(); ++k) {
      int d = std::abs(int(got[k]) - int(want[k]));
      sum += d;
      max_diff = std::max(max_diff, d);
    }
  }
  size_t i = 0;
  for (auto _ : state) fn(crops[i++ % crops.size()].pixels, got.data());
  state.SetItemsProcessed(state.iterations());
  state.counters["mean_abs_diff"] = sum / (double(crops.size()) * got.size());
  state.counters["max_abs_diff"] = max_diff;
}

// BM_resize reads each crop from memory (256 crops, ~77 MB, are cycled); in
// a decoder the crop was just written and is still in cache. Here each crop
// is resized 8 times in a row, so 7 of 8 calls find it in cache (no pause
// of the timers per call: reading the thread CPU clock costs several us here).
void BM_resize_warm(benchmark::State& state, ResizeFn fn) {
  constexpr size_t kRepeats = 8;
  const auto& crops = DecodedCrops();
  std::vector<uint8_t> got(kOut * kOut * 3);
  size_t i = 0;
  for (auto _ : state) fn(crops[(i++ / kRepeats) % crops.size()].pixels, got.data());
  state.SetItemsProcessed(state.iterations());
}

// Registered in this order (not with BENCHMARK macros) so that each decode
// case is followed by its /baseline and /progressive variants.
using SubsetCase = void (*)(benchmark::State&, Subset);

void RegisterAll() {
  const std::pair<const char*, SubsetCase> cases[] = {
      {"BM_a_full_decode", BM_a_full_decode},
      {"BM_b_full_decode_crop_resize", BM_b_full_decode_crop_resize},
      {"BM_c_crop_decode_resize", BM_c_crop_decode_resize},
      {"BM_d_crop_dct_decode_resize", BM_d_crop_dct_decode_resize},
      {"BM_crop_decode_only", BM_crop_decode_only},
      {"BM_entropy_floor", BM_entropy_floor},
      {"BM_entropy_full_image", BM_entropy_full_image},
      {"BM_a_full_decode_fast", BM_a_full_decode_fast},
      {"BM_crop_decode_fast", BM_crop_decode_fast},
      {"BM_c_crop_decode_resize_fast", BM_c_crop_decode_resize_fast},
      {"BM_val_full_decode_resize_crop", BM_val_full_decode_resize_crop},
      {"BM_val_center_window_decode", BM_val_center_window_decode},
      {"BM_val_center_crop_exact", BM_val_center_crop_exact},
      {"BM_a_full_decode_fastlayout", BM_a_full_decode_fastlayout},
      {"BM_d_crop_dct_decode_resize_fastlayout", BM_d_crop_dct_decode_resize_fastlayout},
      {"BM_crop_decode_only_fastlayout", BM_crop_decode_only_fastlayout},
      {"BM_entropy_floor_fastlayout", BM_entropy_floor_fastlayout},
      {"BM_entropy_ours_fastlayout", BM_entropy_ours_fastlayout},
      {"BM_val_center_crop_exact_fastlayout", BM_val_center_crop_exact_fastlayout},
      {"BM_d_crop_dct_decode_resize_fastlayout_libjpeg_entropy",
       BM_d_crop_dct_decode_resize_fastlayout_libjpeg_entropy},
      {"BM_val_center_crop_exact_fastlayout_libjpeg_entropy",
       BM_val_center_crop_exact_fastlayout_libjpeg_entropy},
  };
  for (const auto& [name, fn] : cases) {
    for (Subset subset : {Subset::kAll, Subset::kBaseline, Subset::kProgressive, Subset::k444}) {
      benchmark::RegisterBenchmark((std::string(name) + SubsetSuffix(subset)).c_str(), fn, subset)
          ->Unit(benchmark::kMicrosecond);
    }
  }
  const struct {
    const char* name;
    ResizeFn fn;
    bool available;
  } resizers[] = {
      {"ours", ResizeOurs, true},
      {"ours_avx2", ResizeOursWith<image_internal::ResampleKernels::kAvx2>, true},
      {"ours_portable", ResizeOursWith<image_internal::ResampleKernels::kPortable>, true},
      {"stb", ResizeStb, true},
      {"libyuv_box", ResizeLibyuv<3>, Libyuv::Get().ok()},
      {"libyuv_bilinear", ResizeLibyuv<2>, Libyuv::Get().ok()},
      {"swscale_bilinear", ResizeSwscale<SWS_BILINEAR | SWS_ACCURATE_RND>, Swscale::Get().ok()},
      {"swscale_area", ResizeSwscale<SWS_AREA | SWS_ACCURATE_RND>, Swscale::Get().ok()},
  };
  for (const auto& r : resizers) {
    benchmark::RegisterBenchmark((std::string("BM_resize/") + r.name).c_str(), BM_resize, r.fn,
                                 r.available)
        ->Unit(benchmark::kMicrosecond);
  }
  for (const auto& r : resizers) {
    if (std::string(r.name).rfind("ours", 0) != 0) continue;
    benchmark::RegisterBenchmark((std::string("BM_resize_warm/") + r.name).c_str(),
                                 BM_resize_warm, r.fn)
        ->Unit(benchmark::kMicrosecond);
  }
}

}  // namespace
}  // namespace unirecord

int main(int argc, char** argv) {
  unirecord::RegisterAll();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
