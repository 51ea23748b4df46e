// The checks and names of the clip loader's options (loader.h: ClipOptions,
// AudioClipOptions).
#include <cmath>
#include <string>

#include "unirecord/loader.h"

namespace unirecord {
namespace {

Status OutOfRange(const char* option, const std::string& value, const char* range) {
  return Status::InvalidArgument(std::string(option) + " " + value + " is out of range " + range);
}

}  // namespace

Status ClipOptions::Check() const {
  if (field.empty()) return Status::InvalidArgument("clip field: a video field's name is needed");
  if (frames < 1 || frames > 1024) return OutOfRange("clip frames", std::to_string(frames), "1..1024");
  if (stride < 1 || stride > 1024) return OutOfRange("clip stride", std::to_string(stride), "1..1024");
  if (!(fps >= 0 && fps <= 1000)) return OutOfRange("clip fps", std::to_string(fps), "0..1000 (0: use stride)");
  if (clips_per_video < 1 || clips_per_video > 64) {
    return OutOfRange("clips_per_video", std::to_string(clips_per_video), "1..64");
  }
  return Status::OK();
}

Status AudioClipOptions::Check() const {
  if (field.empty()) return Status::InvalidArgument("audio field: an audio field's name is needed");
  if (!(seconds > 0 && seconds <= 3600)) return OutOfRange("audio seconds", std::to_string(seconds), "(0, 3600]");
  if (rate < 1000 || rate > 384000) return OutOfRange("audio rate", std::to_string(rate), "1000..384000");
  if (channels < 1 || channels > 8) return OutOfRange("audio channels", std::to_string(channels), "1..8");
  if (window_frames() == 0) return Status::InvalidArgument("audio seconds x rate rounds to no sample");
  if (dtype != media::SampleType::kFloat32 && dtype != media::SampleType::kInt16) {
    return Status::InvalidArgument("audio dtype " + std::to_string(static_cast<int>(dtype)) + " is unknown");
  }
  return Status::OK();
}

size_t AudioClipOptions::window_frames() const { return static_cast<size_t>(std::llround(seconds * rate)); }

size_t AudioClipOptions::sample_bytes() const {
  return size_t(channels) * window_frames() * (dtype == media::SampleType::kInt16 ? 2 : 4);
}

const char* AudioDTypeName(media::SampleType dtype) {
  return dtype == media::SampleType::kInt16 ? "int16" : "float32";
}

Result<media::SampleType> ParseAudioDType(std::string_view name) {
  if (name == "float32") return media::SampleType::kFloat32;
  if (name == "int16") return media::SampleType::kInt16;
  return Status::InvalidArgument("unknown audio dtype '" + std::string(name) + "' (expected float32 or int16)");
}

}  // namespace unirecord
