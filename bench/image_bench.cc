// Image decode benchmarks on one core (see bench/README.md, "Image decode").
//
// Dataset: an ImageNet-like set (~500x375 photos, quality 85-95, mostly
// 4:2:0, some progressive) cut from the real photos of the conformance corpus,
// resized and re-encoded here. It is also written to $UREC_IMAGE_BENCH_DIR
// (default /tmp/unirecord-imagenet-like) for bench/image_peer.py.
//
// Training transform RandomResizedCrop(224) + flip, four ways:
//   a_full_decode                 full decode only
//   b_full_decode_crop_resize     full decode, then crop + resize
//   c_crop_decode_resize          crop-before-decode + resize
//   d_crop_dct_decode_resize      crop-before-decode with DCT scaling + resize
//   crop_decode_only              the exact window, no resize (vs the floor)
// Validation Resize(256) + CenterCrop(224), two ways:
//   val_full_decode_resize_crop   full decode, resize whole image, crop
//   val_center_window_decode      planned window, crop decode + resize
//   val_center_crop_exact         DecodeCenterCrop: torchvision's result exactly
// Resize candidates on the same decoded crops -> 224x224:
//   resize/ours, resize/stb, resize/libyuv_box, resize/libyuv_bilinear,
//   resize/swscale_bilinear, resize/swscale_area (libyuv and swscale are
//   loaded with dlopen when installed, so the build needs no extra link
//   flags), with quality counters against torchvision's result (= ours,
//   byte for byte, see tests/cli/test_decode.py).
#include <dlfcn.h>
#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#define STB_IMAGE_RESIZE_IMPLEMENTATION
#define STB_IMAGE_RESIZE_STATIC
#include <stb/stb_image_resize.h>
extern "C" {
#include <libswscale/swscale.h>
}

#include "image/jpeg_encoder.h"
#include "image/resample.h"
#include "unirecord/image.h"

namespace unirecord {
namespace {

constexpr int kImages = 256;
constexpr int kOut = 224;

struct Sample {
  std::string jpeg;
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
  // CMake compiles this file by absolute path: the corpus is beside bench/.
  std::string root = __FILE__;
  root = root.substr(0, root.rfind("/bench/"));
  const std::string dir = root + "/tests/data/jpeg-conformance/";
  std::vector<RgbImage> photos;
  JpegDecoder decoder;
  for (const char* name : {"pillow__flower.jpg", "pillow__sugarshack_bad_mpo_header.jpg",
                           "pillow__iptc.jpg", "jpeg-decoder__progressive3.jpg",
                           "zune-image__fox410.jpg", "zune-image__large_vertical_samp_7680_4320.jpg"}) {
    Result<RgbImage> image = decoder.Decode(ReadFile(dir + name));
    if (image.ok()) photos.push_back(std::move(*image));
  }
  return photos;
}

const std::vector<Sample>& Dataset() {
  static const std::vector<Sample> samples = [] {
    std::vector<RgbImage> photos = SourcePhotos();
    std::mt19937 rng(2024);
    const char* env = std::getenv("UREC_IMAGE_BENCH_DIR");
    const std::string out_dir = env ? env : "/tmp/unirecord-imagenet-like";
    std::system(("mkdir -p '" + out_dir + "'").c_str());
    std::vector<Sample> set;
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
      if (!ResizeRgb(src.pixels.data() + (size_t(ry) * src.width + rx) * 3, rw, rh,
                     size_t(src.width) * 3, rgb.data(), w, h, rng() % 2).ok()) {
        std::abort();
      }
      // Sensor-like noise: the small corpus photos are smoother than camera
      // pictures; this brings the files to ImageNet's ~110 KB at this size.
      std::normal_distribution<double> grain(0.0, 8.0);
      for (uint8_t& v : rgb) v = uint8_t(std::clamp(v + grain(rng), 0.0, 255.0));
      image_internal::EncodeSpec spec;
      spec.width = w;
      spec.height = h;
      spec.quality = 85 + int(rng() % 11);
      const int s = rng() % 10;
      spec.sampling = s < 8 ? image_internal::Sampling::k420
                            : s < 9 ? image_internal::Sampling::k422 : image_internal::Sampling::k444;
      spec.progressive = rng() % 10 == 0;
      Sample sample;
      sample.jpeg = image_internal::EncodeJpeg(rgb, spec);
      sample.info = *ProbeJpeg(sample.jpeg);
      sample.train = PlanRandomResizedCrop(sample.info, RandomResizedCropParams{}, 1, 0, i);
      sample.validation = PlanCenterCrop(sample.info, kOut, 256);
      char name[64];
      std::snprintf(name, sizeof name, "/%03d.jpg", i);
      std::ofstream(out_dir + name, std::ios::binary) << sample.jpeg;
      set.push_back(std::move(sample));
    }
    return set;
  }();
  return samples;
}

void SetRate(benchmark::State& state) {
  state.SetItemsProcessed(state.iterations());
  const auto& set = Dataset();
  size_t bytes = 0;
  for (const Sample& s : set) bytes += s.jpeg.size();
  state.counters["avg_jpeg_kb"] = double(bytes) / set.size() / 1024;
}

void BM_a_full_decode(benchmark::State& state) {
  const auto& set = Dataset();
  JpegDecoder decoder;
  size_t i = 0;
  for (auto _ : state) {
    Result<RgbImage> image = decoder.Decode(set[i++ % set.size()].jpeg);
    benchmark::DoNotOptimize(image.ok());
  }
  SetRate(state);
}

// The resampler with scratch buffers kept across images, as JpegDecoder
// keeps them (ResizeRgb allocates per call).
image_internal::SourceBox WholeBox(int width, int height) {
  return {0, 0, double(width), double(height)};
}

void BM_b_full_decode_crop_resize(benchmark::State& state) {
  const auto& set = Dataset();
  JpegDecoder decoder;
  image_internal::ResampleScratch scratch;
  std::vector<uint8_t> out(kOut * kOut * 3);
  size_t i = 0;
  for (auto _ : state) {
    const Sample& s = set[i++ % set.size()];
    Result<RgbImage> image = decoder.Decode(s.jpeg);
    const CropWindow& w = s.train;
    const size_t stride = size_t(image->width) * 3;
    image_internal::ResampleRgb(image->pixels.data() + w.y * stride + w.x * 3, w.width, w.height,
                                stride, WholeBox(w.width, w.height), out.data(), kOut, kOut,
                                kOut * 3, w.flip, &scratch);
    benchmark::DoNotOptimize(out.data());
  }
  SetRate(state);
}

// CPU time of this thread: the machine is shared, so wall time is noisy;
// Google Benchmark's rates use CPU time too.
double ThreadSeconds() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

// CPU time of one full decode of each image (best of 3), for the floor.
std::vector<double> FullDecodeSeconds() {
  const auto& set = Dataset();
  JpegDecoder decoder;
  std::vector<double> seconds;
  for (const Sample& s : set) {
    double best = 1e9;
    for (int r = 0; r < 3; ++r) {
      const double t0 = ThreadSeconds();
      benchmark::DoNotOptimize(decoder.Decode(s.jpeg).ok());
      best = std::min(best, ThreadSeconds() - t0);
    }
    seconds.push_back(best);
  }
  return seconds;
}

// The floor for a crop of a baseline JPEG: entropy decoding (55%)
// down to the crop's bottom row, the rest (45%) only for the crop's pixels.
double FloorSeconds(const Sample& s, double full) {
  const CropWindow& w = s.train;
  const double rows = double(w.y + w.height) / s.info.height;
  const double area = double(w.width) * w.height / (double(s.info.width) * s.info.height);
  return 0.55 * full * rows + 0.45 * full * area;
}

// resize = false: the exact window only (DecodeCrop), to compare the
// decode itself with the floor.
void CropDecode(benchmark::State& state, bool dct_scaling, bool resize) {
  const auto& set = Dataset();
  DecodeOptions options;
  options.dct_scaling = dct_scaling;
  JpegDecoder decoder(options);
  std::vector<uint8_t> out(kOut * kOut * 3);
  const std::vector<double> full = FullDecodeSeconds();
  double floor_total = 0, full_total = 0;
  size_t i = 0;
  const double t0 = ThreadSeconds();
  for (auto _ : state) {
    const size_t k = i++ % set.size();
    const Sample& s = set[k];
    if (resize) {
      Status st = decoder.DecodeCropResized(s.jpeg, s.train, kOut, kOut, out.data(), out.size());
      benchmark::DoNotOptimize(st.ok());
    } else {
      benchmark::DoNotOptimize(decoder.DecodeCrop(s.jpeg, s.train).ok());
    }
    floor_total += FloorSeconds(s, full[k]);
    full_total += full[k];
  }
  const double elapsed = ThreadSeconds() - t0;
  SetRate(state);
  state.counters["floor_us"] = floor_total / state.iterations() * 1e6;
  state.counters["vs_floor"] = elapsed / floor_total;
  state.counters["vs_full_decode"] = elapsed / full_total;
}

void BM_c_crop_decode_resize(benchmark::State& state) { CropDecode(state, false, true); }
void BM_d_crop_dct_decode_resize(benchmark::State& state) { CropDecode(state, true, true); }
void BM_crop_decode_only(benchmark::State& state) { CropDecode(state, false, false); }

void BM_val_full_decode_resize_crop(benchmark::State& state) {
  const auto& set = Dataset();
  JpegDecoder decoder;
  image_internal::ResampleScratch scratch;
  std::vector<uint8_t> resized, out(kOut * kOut * 3);
  size_t i = 0;
  for (auto _ : state) {
    const Sample& s = set[i++ % set.size()];
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
  SetRate(state);
}

// exact: DecodeCenterCrop; else the planned window through DecodeCropResized.
void CenterCrop(benchmark::State& state, bool exact) {
  const auto& set = Dataset();
  JpegDecoder decoder;
  std::vector<uint8_t> out(kOut * kOut * 3);
  size_t i = 0;
  for (auto _ : state) {
    const Sample& s = set[i++ % set.size()];
    Status st = exact ? decoder.DecodeCenterCrop(s.jpeg, kOut, 256, out.data(), out.size())
                      : decoder.DecodeCropResized(s.jpeg, s.validation, kOut, kOut, out.data(),
                                                  out.size());
    benchmark::DoNotOptimize(st.ok());
  }
  SetRate(state);
}

void BM_val_center_crop_exact(benchmark::State& state) { CenterCrop(state, true); }
void BM_val_center_window_decode(benchmark::State& state) { CenterCrop(state, false); }

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

BENCHMARK(BM_a_full_decode)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_b_full_decode_crop_resize)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_c_crop_decode_resize)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_d_crop_dct_decode_resize)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_crop_decode_only)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_val_full_decode_resize_crop)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_val_center_window_decode)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_val_center_crop_exact)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_resize, ours, ResizeOurs, true)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_resize, stb, ResizeStb, true)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_resize, libyuv_box, ResizeLibyuv<3>, Libyuv::Get().ok())
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_resize, libyuv_bilinear, ResizeLibyuv<2>, Libyuv::Get().ok())
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_resize, swscale_bilinear, ResizeSwscale<SWS_BILINEAR | SWS_ACCURATE_RND>,
                  Swscale::Get().ok())
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_resize, swscale_area, ResizeSwscale<SWS_AREA | SWS_ACCURATE_RND>,
                  Swscale::Get().ok())
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace unirecord

BENCHMARK_MAIN();
