// Video and audio through FFmpeg (libavformat, libavcodec, libswscale,
// libswresample): containers demuxed into media values (the stored form of
// a `video` / `audio` field, unirecord/media_value.h), media values remuxed
// into a playable file, and decoders that decode only what is asked for.
// docs/video-audio.md says how to use them.
#ifndef UNIRECORD_MEDIA_H_
#define UNIRECORD_MEDIA_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "unirecord/media_value.h"
#include "unirecord/status.h"

namespace unirecord::media {

struct DemuxOptions {
  MediaKind kind = MediaKind::kVideo;
  // Which stream: -1 the container's best stream of `kind`
  // (av_find_best_stream); else the n-th stream of `kind` (0, 1, ...).
  int stream = -1;
  // Named in messages: the file or field the bytes came from.
  std::string name;
};

// The media value (SPEC.md 6.4) of one stream of a container FFmpeg reads
// (mp4, mov, mkv, webm, avi, ogg, flac, wav, mp3, m4a, ...), from bytes in
// memory or a file. The packets are kept as the container holds them; the
// container is not. InvalidArgument naming `name` and the problem: not a
// media file, no such stream, a codec this FFmpeg cannot decode, a stream
// cut short or corrupt (unreadable packets, no packets, the first keyframe
// not decodable, a duration far from the container's), or parameters
// outside SPEC.md section 12's limits (absurd dimensions or durations).
Result<std::string> Demux(std::string_view container, const DemuxOptions& options);
Result<std::string> DemuxFile(const std::string& path, const DemuxOptions& options);

// A playable file of a media value: its packets, byte for byte, in a
// container chosen from the codec (mp4: h264, hevc, av1, mpeg4, aac, mp3;
// webm: vp8, vp9, opus, vorbis; flac; wav: pcm; else matroska).
struct RemuxedFile {
  std::string bytes;
  std::string extension;  // ".mp4", ".webm", ".mkv", ".flac", ".wav"
};
Result<RemuxedFile> Remux(const MediaValueView& value, std::string_view what);

// RGB24 video frames, [count, height, width, 3] row-major.
struct VideoFrames {
  int64_t count = 0;
  int32_t width = 0;
  int32_t height = 0;
  std::vector<int64_t> pts;   // per frame, time-base units
  std::vector<uint8_t> rgb;
};

struct VideoDecodeOptions {
  // Rotate the frames upright by the stream's rotation (multiples of 90
  // degrees; frames are then height x width for 90 and 270).
  bool apply_rotation = false;
  // Decoder threads (FFmpeg's thread_count; 1 suits a loader thread).
  int threads = 1;
};

// Decodes the frames asked for, starting at the keyframe at or before the
// first one (found in the packet table, no container parse) and stopping
// after the last one. Frames are chosen by timestamp, so variable frame
// rates are right; pixels are those of PyAV's to_ndarray(format="rgb24")
// (swscale, SWS_BILINEAR, its default colour conversion). Reusable: one per
// thread; the codec is opened again only when the codec or extradata
// changes. Not thread-safe.
class VideoDecoder {
 public:
  explicit VideoDecoder(VideoDecodeOptions options = {});
  ~VideoDecoder();
  VideoDecoder(VideoDecoder&&) noexcept;
  VideoDecoder& operator=(VideoDecoder&&) noexcept;

  // Output size of one frame for `value` (width/height swapped by a 90 or
  // 270 degree rotation when applied).
  void OutputSize(const MediaValueView& value, int32_t* width, int32_t* height) const;

  // The frames whose pts are `pts` (each one of the value's presentation
  // timestamps), in that order, written to `out` (count x height x width x
  // 3 bytes; `out_size` checked). InvalidArgument naming `what` for a pts
  // the stream lacks; Corruption when the decoder fails or a frame never
  // comes.
  Status DecodeAtPts(const MediaValueView& value, const std::vector<int64_t>& pts, uint8_t* out,
                     size_t out_size, std::string_view what);
  // Frames by index in presentation order (0 .. frames() - 1).
  Result<VideoFrames> FramesAt(const MediaValueView& value, const std::vector<int64_t>& indices,
                               std::string_view what);
  // Every frame presented in [start_s, end_s) seconds from the stream's start.
  Result<VideoFrames> FramesIn(const MediaValueView& value, double start_s, double end_s, std::string_view what);

  // Frames the decoder has output since it was made (the ones asked for
  // and the ones decoded to reach them).
  int64_t frames_decoded() const;
  // How many times a codec was opened.
  int64_t codec_opens() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

enum class SampleType : uint8_t { kFloat32, kInt16 };

struct AudioWindowOptions {
  int32_t rate = 0;      // output sample rate; 0: the stream's
  int32_t channels = 0;  // output channels (FFmpeg's default layout of that count); 0: the stream's
  SampleType type = SampleType::kFloat32;
};

// Planar samples, [channels, frames] row-major.
struct AudioSamples {
  int32_t channels = 0;
  int32_t rate = 0;
  int64_t frames = 0;        // the window's length: round(seconds x rate)
  int64_t valid_frames = 0;  // those before the stream's end; the rest are zeros
  SampleType type = SampleType::kFloat32;
  std::vector<uint8_t> data;
};

// Decodes the window [start_s, start_s + seconds) from the packet holding
// its start (backed up by the codec's pre-roll, priming samples dropped as
// the container says), resampled with libswresample onto the sample grid
// of a decode from the stream's start (so a window equals the same samples
// of a whole-stream decode and resample). Reusable (its buffers are), but
// the codec is opened for each window: AAC's decoder keeps state across a
// flush, and a window must not depend on the one before.
class AudioDecoder {
 public:
  AudioDecoder();
  ~AudioDecoder();
  AudioDecoder(AudioDecoder&&) noexcept;
  AudioDecoder& operator=(AudioDecoder&&) noexcept;

  Result<AudioSamples> Window(const MediaValueView& value, double start_s, double seconds,
                              const AudioWindowOptions& options, std::string_view what);
  int64_t codec_opens() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace unirecord::media

#endif  // UNIRECORD_MEDIA_H_
