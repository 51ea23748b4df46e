// `urec decode`: the image layer from a shell, for debugging and for checks
// against other decoders (JPEG and PNG). Writes binary PPM (P6), always RGB.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "command.h"
#include "dataset_json.h"
#include "convert/tool_files.h"
#include "unirecord/image.h"
#include "unirecord/sample_decoder.h"

namespace unirecord::cli {
namespace {

struct DecodeCommandOptions {
  std::string input;
  std::string output;
  std::string crop;    // "X,Y,W,H"
  std::string resize;  // "WxH"
  std::string random_resized_crop;  // "SEED,EPOCH,RECORD"
  std::string center_crop;          // "SIZE,RESIZE"
  int print_plans = 0;
  bool flip = false;
  bool apply_exif = false;
  bool strict = false;
  bool no_dct_scaling = false;
  int64_t max_pixels = 0;  // 0: DecodeLimits' default
};

Status ParseInts(const std::string& text, char sep, int count, const char* what, int* out) {
  size_t pos = 0;
  for (int i = 0; i < count; ++i) {
    size_t end = i + 1 < count ? text.find(sep, pos) : text.size();
    if (end == std::string::npos) break;
    std::string part = text.substr(pos, end - pos);
    char* stop = nullptr;
    long v = std::strtol(part.c_str(), &stop, 10);
    if (part.empty() || *stop != '\0' || v < -2147483647L || v > 2147483647L) break;
    out[i] = static_cast<int>(v);
    if (i + 1 == count) return Status::OK();
    pos = end + 1;
  }
  return Status::InvalidArgument(std::string("bad ") + what + " '" + text + "': want " + std::to_string(count) +
                                 " whole numbers in -2147483647..2147483647 separated by '" + sep + "'");
}

// Errors name the file and the reason (the io layer's messages).
Status WritePpm(const std::string& path, const uint8_t* rgb, int width, int height) {
  const std::string header = "P6\n" + std::to_string(width) + " " + std::to_string(height) + "\n255\n";
  const size_t size = static_cast<size_t>(width) * height * 3;
  if (path == "-") {
    UREC_RETURN_IF_ERROR(WriteStdout(header));
    return WriteStdout(std::string_view(reinterpret_cast<const char*>(rgb), size));
  }
  return WriteWholeFile(path, {header, std::string_view(reinterpret_cast<const char*>(rgb), size)});
}

Status RunDecode(const DecodeCommandOptions& o) {
  std::string bytes;
  UREC_RETURN_IF_ERROR(ReadImageFile(o.input, &bytes));

  DecodeOptions options;
  if (o.max_pixels > 0) options.limits.max_pixels = o.max_pixels;
  options.apply_exif = o.apply_exif;
  options.strict = o.strict;
  options.dct_scaling = !o.no_dct_scaling;
  ImageDecoder decoder(options);

  auto context = [&](const Status& s) { return s.WithContext(o.input); };
  Result<ImageInfo> info = ProbeImage(bytes);
  if (!info.ok()) return context(info.status());
  CropWindow window{0, 0, info->window_width(options.apply_exif), info->window_height(options.apply_exif),
                    o.flip};
  if (!o.crop.empty()) {
    int v[4];
    UREC_RETURN_IF_ERROR(ParseInts(o.crop, ',', 4, "--crop (want X,Y,W,H)", v));
    window = {v[0], v[1], v[2], v[3], o.flip};
  } else if (!o.center_crop.empty()) {
    int v[2];
    UREC_RETURN_IF_ERROR(ParseInts(o.center_crop, ',', 2, "--center-crop (want SIZE,RESIZE)", v));
    // The Loader's and ImageDataset's per-sample decoder, and its checks.
    SampleDecoderOptions sample;
    sample.transform = SampleTransform::kCenterCrop;
    sample.image_size = v[0];
    sample.resize_shorter = v[1];
    sample.decode = options;
    UREC_RETURN_IF_ERROR(CheckOutputSize(v[0], v[0], options.limits).WithContext("--center-crop SIZE"));
    Result<std::unique_ptr<SampleDecoder>> sample_decoder = SampleDecoder::Create(sample);
    if (!sample_decoder.ok()) return sample_decoder.status().WithContext("--center-crop " + o.center_crop);
    if (o.resize.empty() && !o.flip && !o.output.empty()) {
      // torchvision's two steps exactly; with --resize, the planned window.
      std::vector<uint8_t> out(sample.output_bytes());
      Status s = (*sample_decoder)->Decode(bytes, 0, 0, 0, out.data(), out.size());
      if (!s.ok()) return context(s);
      return WritePpm(o.output, out.data(), v[0], v[0]);
    }
    window = (*sample_decoder)->Plan(*info, 0, 0, 0);
    window.flip = o.flip;
  } else if (!o.random_resized_crop.empty()) {
    int v[3];
    UREC_RETURN_IF_ERROR(ParseInts(o.random_resized_crop, ',', 3,
                                   "--random-resized-crop (want SEED,EPOCH,RECORD)", v));
    SampleDecoderOptions sample;  // torchvision's default scale and ratio, flip probability 0.5
    sample.image_size = 1;        // only planned here: the output size is --resize's
    sample.decode = options;
    UREC_ASSIGN_OR_RETURN(std::unique_ptr<SampleDecoder> sample_decoder, SampleDecoder::Create(sample));
    if (o.print_plans > 0) {
      for (int i = 0; i < o.print_plans; ++i) {
        CropWindow w = sample_decoder->Plan(*info, v[0], v[1], static_cast<uint64_t>(v[2]) + i);
        std::printf("%d %d %d %d %d\n", w.x, w.y, w.width, w.height, w.flip ? 1 : 0);
      }
      return Status::OK();
    }
    window = sample_decoder->Plan(*info, v[0], v[1], v[2]);
    window.flip = window.flip != o.flip;
  }
  if (o.print_plans > 0) {
    return Status::InvalidArgument("--print-plans needs --random-resized-crop");
  }
  if (o.output.empty()) return Status::InvalidArgument("-o OUT.ppm (or -o - for stdout) is required");
  if (!o.resize.empty()) {
    int size[2];
    UREC_RETURN_IF_ERROR(ParseInts(o.resize, 'x', 2, "--resize (want WxH)", size));
    UREC_RETURN_IF_ERROR(CheckOutputSize(size[0], size[1], options.limits).WithContext("--resize " + o.resize));
    std::vector<uint8_t> out(static_cast<size_t>(size[0]) * size[1] * 3);
    Status s = decoder.DecodeCropResized(bytes, window, size[0], size[1], out.data(), out.size());
    if (!s.ok()) return context(s);
    return WritePpm(o.output, out.data(), size[0], size[1]);
  }
  Result<RgbImage> image = decoder.DecodeCrop(bytes, window);
  if (!image.ok()) return context(image.status());
  return WritePpm(o.output, image->pixels.data(), image->width, image->height);
}

CommandRunner SetupDecode(CLI::App* cmd) {
  auto o = std::make_shared<DecodeCommandOptions>();
  cmd->add_option("IMAGE", o->input, "JPEG or PNG file (told by its first bytes)")->required();
  cmd->add_option("-o,--output", o->output, "output PPM file, - for stdout");
  cmd->add_option("--crop", o->crop, "window X,Y,W,H (display orientation with --apply-exif)");
  cmd->add_option("--resize", o->resize, "resize the window to WxH (antialiased bilinear)");
  cmd->add_option("--center-crop", o->center_crop,
                  "torchvision Resize(RESIZE)+CenterCrop(SIZE), SIZE,RESIZE (RESIZE >= SIZE, or 0 "
                  "for CenterCrop alone): exact, or with --resize/--flip the planned window resized");
  cmd->add_option("--random-resized-crop", o->random_resized_crop,
                  "window (and flip) of RandomResizedCrop planned for SEED,EPOCH,RECORD");
  cmd->add_option("--print-plans", o->print_plans,
                  "with --random-resized-crop: print N windows (records RECORD..) as "
                  "'x y w h flip' lines instead of decoding")
      ->check(IntegerIn(0, 1000000));
  cmd->add_flag("--flip", o->flip, "mirror left-right");
  cmd->add_flag("--apply-exif", o->apply_exif, "apply the EXIF orientation");
  cmd->add_flag("--strict", o->strict, "fail on any libjpeg or libpng warning (corrupt/truncated data)");
  cmd->add_flag("--no-dct-scaling", o->no_dct_scaling, "never decode at a reduced DCT scale");
  cmd->add_option("--max-pixels", o->max_pixels,
                  "refuse images and outputs over N pixels (default: DecodeLimits, 134217728)")
      ->check(IntegerIn(1, uint64_t{1} << 40));
  return [o] { return RunDecode(*o); };
}

}  // namespace

UREC_REGISTER_COMMAND("decode", "Decode a JPEG or PNG (optionally a crop, resized) to a PPM", SetupDecode);

}  // namespace unirecord::cli
