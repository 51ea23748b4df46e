// Loader: shuffled records in, decoded and augmented image batches out, on
// the CPU or uploaded to a CUDA device — with no Python, no worker processes.
//
//   LoaderOptions options;
//   options.batch_size = 256;
//   options.sampler.seed = 1;
//   UREC_ASSIGN_OR_RETURN(auto loader, Loader::Create(dataset, options));
//   for (uint64_t epoch = 0; epoch < 90; ++epoch) {
//     loader->SetEpoch(epoch);
//     for (;;) {
//       UREC_ASSIGN_OR_RETURN(Batch batch, loader->Next());
//       if (batch.empty()) break;  // end of the epoch
//       Train(batch.images(), batch.labels(), batch.size());
//     }  // a Batch gives its buffer back to the loader when destroyed
//   }
//
// Execution: a pool of worker threads takes samples in sampler order; each
// sample's JPEG is read zero-copy from the mapped shard, decoded (only the
// crop window) and resized straight into its slot of a preallocated batch
// buffer. Batches are handed out strictly in sampler order while up to the
// next `prefetch` batches are being filled. Buffers come from a fixed pool of
// prefetch + 1 batches; a batch is filled into whichever buffer is free, so a
// Batch the consumer keeps simply keeps its buffer (for as long as it likes,
// across SetEpoch/Restore too) and the others keep circulating. Nothing is
// allocated per sample in steady state.
//
// Any other field (LoaderOptions::fields: numbers, arrays of any shape,
// strings, bytes; boxes mapped through each sample's crop; masks cropped with
// the image; datasets without images) is batched by the same threads:
// Batch::fields(), docs/loader.md "Batching any field".
//
// Determinism: a sample's pixels depend only on (seed, epoch, record id) —
// each sample goes through a SampleDecoder (sample_decoder.h, the same path
// as unirecord.ImageDataset's) keyed with the sampler's seed — so
// batches are identical for any thread count, and a loader restored from a
// saved state yields exactly the batches the uninterrupted one would have.
//
// A Loader is driven from one thread (Next, SetEpoch, Restore, state). A
// Batch may outlive its Loader: it shares the buffer pool, which goes when
// the Loader and the last Batch it handed out are gone.
#ifndef UNIRECORD_LOADER_H_
#define UNIRECORD_LOADER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "unirecord/coverage.h"
#include "unirecord/cuda.h"
#include "unirecord/dataset.h"
#include "unirecord/image.h"
#include "unirecord/media.h"
#include "unirecord/sample_decoder.h"
#include "unirecord/sampler.h"
#include "unirecord/packing.h"
#include "unirecord/status.h"

namespace unirecord {

// kRandomResizedCrop (training) or kCenterCrop (evaluation); see
// SampleTransform.
using LoaderTransform = SampleTransform;

enum class OnBadRecord : uint8_t {
  kRaise,  // Next() fails with an error naming the record id and its path
  kSkip,   // the sample is replaced by the next id of the sampler's sequence
           // (which then appears twice this epoch) and counted in the stats
};

// "raise" | "skip": the names of Python's Loader(on_bad_record=...) and of
// urec bench --on-bad-record; parse returns InvalidArgument for another name.
const char* OnBadRecordName(OnBadRecord on_bad_record);
Result<OnBadRecord> ParseOnBadRecord(std::string_view name);

// How a batch holds a variable-shape array field (LoaderOptions::ragged).
enum class RaggedLayout : uint8_t {
  kPad,     // [B, max extents...] filled with pad_value, plus the extents per sample
  kJagged,  // the samples' values one after the other, plus offsets [B + 1]
};

// "pad" | "jagged"; parse returns InvalidArgument for another name.
const char* RaggedLayoutName(RaggedLayout layout);
Result<RaggedLayout> ParseRaggedLayout(std::string_view name);

// Video clips (LoaderOptions::clip; docs/video-audio.md, "Loading clips"):
// each sample is `clips_per_video` clips of `frames` frames of a video field,
// decoded from the keyframe before a clip's first frame to its last, each
// frame cropped and resized as images are (one RandomResizedCrop window and
// flip per sample, planned on the upright frame, applied to all of its
// frames; or the centre crop), into uint8 [B, T, H, W, 3] (NHWC) or
// [B, 3, T, H, W] (NCHW); with clips_per_video K > 1, [B, K, T, ...].
struct ClipOptions {
  std::string field = "video";  // a video field
  int frames = 16;              // frames per clip (T), 1..1024
  // Sampled frames are `stride` frames apart in presentation order (1: every
  // frame) ...
  int stride = 2;
  // ... or, when > 0, 1/fps seconds apart: each sampled time takes the frame
  // shown at that time (the last one whose timestamp is not after it), so a
  // variable frame rate is sampled evenly in time.
  double fps = 0;
  // Clips per sample (1..64). They share the sample's crop; their starts are
  // drawn each (random) or spread evenly over the video (centre).
  int clips_per_video = 1;
  // Evaluation: the clip centred in the video (K clips: evenly spaced). Else
  // its start is drawn uniformly, keyed by (seed, epoch, record) as crops are.
  bool centre = false;
  // Rotation metadata applied (frames turned upright before the crop).
  bool apply_rotation = true;

  // InvalidArgument naming the option out of range.
  Status Check() const;
  // Frames of one sample: clips_per_video * frames.
  size_t sample_frames() const { return size_t(clips_per_video) * size_t(frames); }
};

// Audio windows (LoaderOptions::audio): `seconds` of an audio field from a
// random (keyed by seed, epoch and record) or centred offset; with a video
// clip, from the clip's first frame's time. Resampled (libswresample) to
// `rate` and `channels`, batched as a field named after `field` of `dtype`,
// [B, channels, round(seconds * rate)] ([B, K, channels, N] with K clips),
// zeros past the stream's end, with FIELD_lengths [B] (or [B, K]): the
// frames before the end.
struct AudioClipOptions {
  std::string field = "audio";  // an audio field
  double seconds = 2.0;         // window length, > 0 and at most 3600
  int rate = 16000;             // output sample rate, 1000..384000
  int channels = 1;             // output channels (FFmpeg's default layout), 1..8
  media::SampleType dtype = media::SampleType::kFloat32;  // or kInt16
  bool centre = false;          // evaluation: the window centred in the stream

  // InvalidArgument naming the option out of range.
  Status Check() const;
  size_t window_frames() const;   // round(seconds * rate)
  size_t sample_bytes() const;    // channels * window_frames * the dtype's width
};

// "float32" | "int16"; parse returns InvalidArgument for another name.
const char* AudioDTypeName(media::SampleType dtype);
Result<media::SampleType> ParseAudioDType(std::string_view name);

struct LoaderOptions {
  size_t batch_size = 256;
  bool drop_last = false;  // drop the epoch's last, partial batch
  // Order, seed, num_shards/shard_id (one loader per rank), padding; with
  // several datasets, their weights and the epoch's length. The seed also
  // keys the random crops and flips.
  SamplerOptions sampler;
  // Load only these record ids (in this order for kSequential); unset: all.
  // An empty list is an empty epoch (no batches), as an empty query result.
  std::optional<std::vector<uint64_t>> subset;

  // The per-sample decode, as SampleDecoderOptions (checked by its Check()).
  LoaderTransform transform = LoaderTransform::kRandomResizedCrop;
  int image_size = 224;      // output height and width
  int resize_shorter = 256;  // kCenterCrop: shorter side before the center crop; 0: no resize
  RandomResizedCropParams crop;  // kRandomResizedCrop: scale, ratio, flip probability
  DecodeOptions decode;          // strict, apply_exif, dct_scaling, limits (its
                                 // layout is set to `layout` below)
  // Of the host (uint8) images. With a CUDA device the host batch is always
  // NHWC (that is what is uploaded) and CudaOptions::layout applies instead.
  ImageLayout layout = ImageLayout::kNHWC;

  std::string image_field = "image";  // a bytes field holding JPEGs or PNGs; "" for no image
  // Set: samples are clips of a video field (ClipOptions, which name it;
  // image_field is then ignored), cropped and resized by the options above
  // (transform, image_size, resize_shorter, crop, layout).
  std::optional<ClipOptions> clip;
  // Set: each sample also gets a window of an audio field (AudioClipOptions).
  std::optional<AudioClipOptions> audio;
  // An int32/int64 field; "" for no labels. The default, "label", is used
  // when the dataset has it (no labels otherwise); a name given must exist.
  std::string label_field = "label";
  std::string path_field = "path";    // named in error messages when present

  // More fields batched beside the image and label (Batch::fields(),
  // docs/loader.md "Batching any field"): numeric scalars and arrays of any
  // shape, strings, bytes. Empty (default): images and labels only.
  std::vector<std::string> fields;
  RaggedLayout ragged = RaggedLayout::kPad;  // variable-shape arrays
  double pad_value = 0;                      // kPad: the value past a sample's extents
  // A float32 (-1, 4) field of boxes in the source image's pixels, mapped
  // onto the output image (MapBoxes); boxes left empty are dropped with the
  // values of `box_aligned` at the same position. "" (default): none.
  std::string boxes_field;
  BoxFormat box_format = BoxFormat::kXYWH;
  // Variable-shape fields with one value (row) per box, e.g. "category_id".
  std::vector<std::string> box_aligned;
  // Segmentation masks: uint8 (height, width) fields, or bytes fields of
  // palette or 8-bit gray PNGs (their indices/values), the size of the image,
  // cropped with the image's window, resized nearest-neighbour (torch's
  // interpolate "nearest") and flipped with it: [B, image_size, image_size].
  std::vector<std::string> masks;

  int threads = 0;   // decode threads; 0: every core this process may run on; at most 1024
  // Batches being filled ahead of the one being consumed (at most). The pool
  // has prefetch + 1 buffers; buffers the consumer holds are not refilled,
  // so holding more than one batch leaves fewer for filling ahead.
  int prefetch = 2;
  OnBadRecord on_bad_record = OnBadRecord::kRaise;
  // kSkip: this many bad records in a row is an error (the data is not usable).
  int max_consecutive_bad = 64;

  CudaOptions cuda;  // cuda.h

  // Set: documents are packed into rows (packing.h; docs/loader.md,
  // "Packing sequences"): each batch is batch_size rows of pack->seq_len
  // tokens, its fields the packed fields [rows, seq_len] and segment_ids
  // [rows, seq_len] (int32: 1, 2, ... per segment of a row, 0 in padding),
  // positions [rows, seq_len] (int32, from 0 in each segment), cu_seqlens
  // [segments + 1] (int32: the segments' cumulative lengths over the batch,
  // padding left out: flash-attention's varlen layout), max_seqlen (int32
  // scalar) and id [segments] (int64: each segment's record). Only the
  // packed fields are read (no image, label, boxes or masks); rows are cut
  // on the host, and with cuda.device >= 0 every output goes up to the
  // device (BatchField::device_data) as other batched fields do; the
  // consumer may then hold at most prefetch + 1 batches at once.
  // Unset (default): no packing.
  std::optional<PackOptions> pack;

  // What coverage() records of the ids handed out (coverage.h): a digest
  // (default), the ids too, or nothing.
  CoverageDetail coverage = CoverageDetail::kDigest;
};

// The per-sample part of `options` (transform, size, crop, decode), with the
// decoder writing `layout` itself: what each sample of the Loader goes through
// (and what unirecord.ImageDataset decodes with).
SampleDecoderOptions SampleOptionsOf(const LoaderOptions& options);

// Cumulative since Create or ResetStats. Stage times are summed over the
// worker threads (thread-seconds); wait is the consumer's blocked time in
// Next() (wall seconds).
struct LoaderStats {
  uint64_t batches = 0;  // handed out by Next()
  uint64_t samples = 0;  // in those batches
  uint64_t skipped = 0;  // bad records replaced (kSkip)
  double read_s = 0;     // fetching blob and label from the mapped files
  double decode_s = 0;   // probe, crop planning, partial decode and resize into the slot
                         // (in the batch's layout: the resizer writes NCHW itself)
  // Video frames decoded (clips: those sampled and those decoded to reach
  // them, from the keyframe before each clip's first frame).
  uint64_t frames_decoded = 0;
  double upload_s = 0;   // queueing copy and conversion on the CUDA stream
  uint64_t uploads = 0;  // batches queued on the device (device loaders; prefetched ones included)
  double wait_s = 0;     // consumer waiting in Next()
  double wall_s = 0;     // since Create or ResetStats
  double images_per_s = 0;
  double batches_per_s = 0;
  std::string last_bad_record;  // the last skipped record's error message
  // A packing loader (LoaderOptions::pack): `samples` counts rows, and
  uint64_t documents = 0;   // documents read
  uint64_t tokens = 0;      // tokens in the rows handed out (EOS included)
  uint64_t padding = 0;     // padding in those rows
  uint64_t overlong = 0;    // documents longer than seq_len (first_fit, best_fit)
  uint64_t cut_tokens = 0;  // tokens left out (overlong kTruncate, kDrop)
  uint64_t dropped = 0;     // documents left out (overlong kDrop)
  uint64_t empty = 0;       // documents without a token
};

class Loader;

// One field of a batch (LoaderOptions::fields). Numeric values are
// row-major, little-endian elements of `type` in `shape`:
//   scalar: [B]; fixed-shape array: [B, d...];
//   variable-shape, kPad: [B, max d...] (pad_value past each sample's
//     extents) with `lengths` the extents: [B] when one dimension varies,
//     [B, ndim] when several do;
//   variable-shape, kJagged: the samples' values one after the other,
//     [total rows, d...] when only the first dimension varies (`offsets`
//     [B + 1] in rows), else [total elements] (`offsets` in elements,
//     `lengths` [B, ndim] the shapes).
// Strings and bytes: `values`, one per sample (views into the batch).
// With CudaOptions::device >= 0, numeric fields are also on the device:
// `device_data`, `device_lengths` and `device_offsets` hold the same values
// (nullptr where the host pointer is), uploaded with the images and ready
// with them (Batch::ready_event); strings and bytes stay on the host.
struct BatchField {
  std::string name;
  FieldType type = FieldType::kInt64;
  FieldKind kind = FieldKind::kScalar;
  const void* data = nullptr;
  std::vector<int64_t> shape;
  const int64_t* lengths = nullptr;
  std::vector<int64_t> lengths_shape;
  const int64_t* offsets = nullptr;  // B + 1 values
  std::vector<std::string_view> values;
  const void* device_data = nullptr;
  const int64_t* device_lengths = nullptr;
  const int64_t* device_offsets = nullptr;
};

// One batch, owned by the consumer until destroyed or Released; then its
// buffer goes back to the loader's pool. Until then its buffer (host and, on
// a CUDA device, device) is never rewritten, however many batches the loader
// hands out meanwhile, and it stays valid after the Loader is destroyed (the
// batch shares ownership of the buffer pool). Move-only.
class Batch {
 public:
  Batch() = default;
  Batch(Batch&& other) noexcept;
  Batch& operator=(Batch&& other) noexcept;
  Batch(const Batch&) = delete;
  Batch& operator=(const Batch&) = delete;
  ~Batch();

  // True for the end-of-epoch marker that Next() returns.
  bool empty() const { return c_.size == 0; }
  size_t size() const { return c_.size; }  // samples; < batch_size only for the last batch
  uint64_t epoch() const { return c_.epoch; }
  uint64_t index() const { return c_.index; }  // batch number within the epoch (packing: since SetEpoch or Restore)

  int height() const { return c_.height; }
  int width() const { return c_.width; }
  int channels() const { return 3; }
  // A clip loader's (LoaderOptions::clip): frames per clip (T) and clips per
  // sample (K); images() then holds size() * K * T frames, [B, (K,) T, H, W,
  // 3] or [B, (K,) 3, T, H, W]. 0 and 1 for images.
  int clip_frames() const { return c_.clip_frames; }
  int clips() const { return c_.clips; }
  // size() * K * T: each sampled frame's presentation timestamp, in its
  // stream's time base; size() * K: each clip's first frame's time in
  // seconds from the stream's start (the audio window's start). nullptr
  // without clips.
  const int64_t* frame_pts() const { return c_.frame_pts; }
  const double* clip_starts() const { return c_.clip_starts; }
  ImageLayout layout() const { return c_.layout; }
  // size() * 3 * height() * width() uint8 values in layout().
  const uint8_t* images() const { return c_.images; }
  // size() labels (int32 fields widened); nullptr without a label field.
  const int64_t* labels() const { return c_.labels; }
  // The record decoded into each slot, replacements (kSkip) included.
  const uint64_t* record_ids() const { return c_.record_ids; }
  // size() x 5: each sample's window (x, y, width, height) in the pixels its
  // crop was planned on (the stored image; the displayed one with
  // apply_exif), whatever DCT scale decoded it, and the flip (0/1);
  // nullptr without an image field.
  const int32_t* crops() const { return c_.crops; }
  // The fields of LoaderOptions::fields, boxes_field, box_aligned and
  // masks, in that order (empty without them); field(name): nullptr when not batched.
  const std::vector<BatchField>& fields() const;
  const BatchField* field(std::string_view name) const;

  // With CudaOptions::device >= 0: the converted images on the device,
  // size() * 3 * height() * width() values of CudaOptions::dtype in
  // CudaOptions::layout, and the cudaEvent_t recorded once they are there.
  const void* device_images() const { return c_.device_images; }
  void* ready_event() const { return c_.ready_event; }
  // Makes `cuda_stream` (a cudaStream_t; nullptr: the default stream) wait
  // for this batch on the device, without blocking the host.
  Status WaitOn(void* cuda_stream) const;
  // Blocks the host until the device images are ready (for consumers that
  // do not use streams).
  Status Synchronize() const;

  // Gives the buffer back now (as the destructor does).
  void Release();

  // The loader's stage that handed the batch out and gets its buffer back
  // (internal: src/pipeline/batch_stream.h).
  struct Pool;

 private:
  // What the accessors show, set by the stage that hands the batch out
  // (Pool::Make).
  struct Contents {
    size_t size = 0;  // 0: the end-of-epoch marker
    uint64_t epoch = 0;
    uint64_t index = 0;
    int height = 0;
    int width = 0;
    ImageLayout layout = ImageLayout::kNHWC;
    const uint8_t* images = nullptr;
    const int64_t* labels = nullptr;
    const uint64_t* record_ids = nullptr;
    const int32_t* crops = nullptr;
    int clip_frames = 0;
    int clips = 1;
    const int64_t* frame_pts = nullptr;
    const double* clip_starts = nullptr;
    const std::vector<BatchField>* fields = nullptr;
    const void* device_images = nullptr;
    void* ready_event = nullptr;
  };
  // Empties it (size 0, no buffers), keeping its epoch, index and image shape.
  void Clear() { c_ = Contents{0, c_.epoch, c_.index, c_.height, c_.width, c_.layout}; }

  std::shared_ptr<Pool> pool_;
  size_t slot_ = 0;
  Contents c_;
};

namespace pipeline {
class BatchStream;  // src/pipeline/batch_stream.h
}  // namespace pipeline

class Loader {
 public:
  // Checks the options against the dataset (fields exist and have the right
  // types, sizes are positive, CUDA was built in when asked for), allocates
  // the batch pool and starts filling epoch 0.
  static Result<std::unique_ptr<Loader>> Create(std::shared_ptr<const Dataset> dataset,
                                                const LoaderOptions& options);
  // A mixture: samples drawn from the datasets in the proportions of
  // options.sampler.weights (empty: their sizes; a packing loader with
  // pack->weight_unit = kTokens takes them as shares of the tokens) over an
  // epoch of options.sampler.epoch_size samples (0: their total), as
  // Sampler::Create(source_sizes, ...) orders them. Batch::record_ids()
  // number the datasets' records one after another (dataset k's record r is
  // the sum of the sizes before k, plus r). The image and label fields must
  // have one type and shape in every dataset; `subset` is refused with more
  // than one.
  static Result<std::unique_ptr<Loader>> Create(std::vector<std::shared_ptr<const Dataset>> datasets,
                                                const LoaderOptions& options);
  // Stops the workers; host and device buffers go when the last Batch
  // handed out is released too.
  ~Loader();
  Loader(const Loader&) = delete;
  Loader& operator=(const Loader&) = delete;

  const LoaderOptions& options() const;
  int threads() const;  // worker threads actually running
  // Batches in one epoch (equal on every rank; 0 when packing: the rows
  // depend on the documents' lengths). After Restore: the batches
  // all ranks needed for the part of the epoch consumed before the state,
  // rounded up (exact with the ranks and batch size that took it), plus
  // those of the rest; Batch::index() counts on from there.
  uint64_t batches_per_epoch() const;

  // The next batch in sampler order; an empty Batch at the end of the epoch
  // (and after, until SetEpoch). With kRaise, a bad record's error (naming
  // its id and path) is returned in its batch's turn and again on later
  // calls until SetEpoch or Restore. FailedPrecondition (naming how many
  // buffers the consumer holds) when the consumer holds every buffer of the
  // pool, batches of earlier epochs included; holding fewer never fails.
  Result<Batch> Next();

  // Starts `epoch` from its first batch; batches of the old epoch still
  // held by the consumer stay valid and keep their buffers until released
  // (the new epoch fills the other buffers meanwhile).
  void SetEpoch(uint64_t epoch);
  uint64_t epoch() const;

  // Where the consumer is: (seed, epoch, positions of the epoch's order
  // consumed by all ranks, fingerprint). Ranks step in lockstep (each has
  // handed out the same number of batches), so every rank returns the same
  // state: rank r's first k samples are the order's positions r, r + W, ...
  // below k * W for W ranks, together the first min(k * W, epoch) positions.
  // Take it between batches; SamplerState::Serialize() makes it bytes.
  SamplerState state() const;
  // Continues from `state`, taken on any rank of a loader over the same
  // dataset(s) with the same order options; the number of ranks, the batch
  // size and drop_last may differ. The epoch's positions before the state's
  // are done; the rest is partitioned across this loader's ranks as
  // DistributedSampler would partition it (padded by wrapping around to the
  // start of the epoch). With the same ranks and batch size the next batches
  // are exactly those that followed when the state was taken. A version-1
  // state (older builds) restores only into the same ranks and options. Held
  // batches stay valid, as with SetEpoch.
  // A packing loader refuses a SamplerState (its state() is the current
  // window's start): it takes the PackState of pack_state().
  Status Restore(const SamplerState& state);

  // A packing loader's position (FailedPrecondition without packing): taken
  // between batches on one rank, Restore(PackState) on that rank of a loader
  // with the same options continues with exactly the rows that followed. A
  // combined state (CombinePackStates) restores into any rank of any number
  // of ranks.
  Result<PackState> pack_state() const;
  Status Restore(const PackState& state);

  // What this loader (rank) has delivered of the current epoch so far
  // (coverage.h; docs/loader.md, "Coverage"): every id handed out since
  // SetEpoch (or Create), and after a restore what ResumeCoverage carried
  // in; complete once the epoch's last batch is out. Take it after the
  // epoch's last batch and before SetEpoch, which starts the next one. A
  // packing loader's ids are documents, each counted when its last token
  // goes out in a row. The first call of an epoch computes its expected
  // multiset (one pass over its positions).
  CoverageDigest coverage() const;
  // After Restore (either), what the run that took the state delivered
  // before it: this rank's own coverage() when resuming on the same ranks,
  // or MergeCoverage of every rank's, which every new rank of any number of
  // ranks is given (rank 0 adds it, the others only note it is carried).
  // Until then coverage() counts the restore as uncarried. InvalidArgument
  // for a digest of another epoch, seed or order, or another rank's alone;
  // FailedPrecondition when there is nothing to carry (no restore mid-epoch
  // since SetEpoch, or carried already).
  Status ResumeCoverage(const CoverageDigest& before);

  LoaderStats stats() const;
  void ResetStats();

 private:
  explicit Loader(std::shared_ptr<pipeline::BatchStream> stream);
  // The last of the stages a batch goes through, which hands the batches
  // out (shared with them): the batches of samples, or the pack stage.
  std::shared_ptr<pipeline::BatchStream> stream_;
};

// Elastic resume of a packing loader (docs/loader.md, "Packing sequences"):
// the pack states of every rank of a run of W ranks, taken at one step, as
// one state that restores into every rank of a run of any number of ranks
// (Loader::Restore(PackState)). Across both runs every token of the epoch is
// delivered once (but DistributedSampler's padding): the rest of the epoch's
// order from the earliest rank's window is partitioned across the new ranks,
// and the documents consumed past it, in whole or in part, are carried over.
// `datasets` and `options` are the loaders' (the ranks are the states'); each
// rank's window is read again. InvalidArgument for states of other options,
// seeds or epochs, a missing or repeated rank, or a combined state.
Result<PackState> CombinePackStates(const std::vector<std::shared_ptr<const Dataset>>& datasets,
                                    const LoaderOptions& options, const std::vector<PackState>& states);

}  // namespace unirecord

#endif  // UNIRECORD_LOADER_H_
