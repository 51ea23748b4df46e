// Converters from common on-disk layouts to unirecord datasets.
//
//   ConvertOptions options;
//   options.name = "train";
//   UREC_ASSIGN_OR_RETURN(ConvertReport report,
//                         ConvertImageFolder("imagenet/train", "records/", options));
//
// This is the code behind `urec convert imagefolder`; the Python binding calls
// the same function. The same conversions cut into parts that many processes
// run (Dask: unirecord.distributed) are in convert_parts.h.
#ifndef UNIRECORD_CONVERT_H_
#define UNIRECORD_CONVERT_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "unirecord/fields.h"
#include "unirecord/image.h"
#include "unirecord/status.h"

namespace unirecord {

// Progress of a running conversion, reported from the calling thread.
struct ConvertProgress {
  uint64_t files_done = 0;   // image-extension files processed (written or rejected)
  uint64_t files_total = 0;  // image-extension files found
  uint64_t written = 0;
  uint64_t rejected = 0;
  uint64_t bytes = 0;        // image bytes written so far
  double seconds = 0;
};

struct ConvertOptions {
  // Dataset name: shards are OUT/NAME-SSSSS-of-NNNNN.gGGGGGG.urec, committed
  // by the manifest OUT/NAME.uset (format/SPEC.md section 1.1). Empty: the last
  // component of the source folder ("train" for imagenet/train).
  std::string name;

  // At most one of these. num_shards = N splits the records into N
  // contiguous shards (ids keep the folder order; shard s holds what was
  // written of candidates [s*n/N, (s+1)*n/N) of the n image files, so a
  // rejected file leaves its own shard one short; N over the number of
  // image files is refused: shards would be empty). target_shard_bytes = B starts a new shard
  // once one reaches B bytes. Neither: shards of about 1 GiB.
  uint32_t num_shards = 0;
  uint64_t target_shard_bytes = 0;

  // Threads that read and check files; 0 = one per usable core; at most
  // 1024. The output never depends on it.
  int threads = 0;

  // Fail on the first rejected file instead of listing it and going on.
  bool strict = false;
  // JPEGs over these sizes are rejected ("unsupported: JPEG is WxH, over the
  // limit of ..."); the Loader's default DecodeLimits are the same.
  DecodeLimits limits;

  // Store every JPEG's source bytes untouched instead of rewriting it into
  // the fast layout (see ConvertImageFolder).
  bool keep_original = false;

  // fsync the output at the end (tests may turn it off for speed).
  bool sync = true;

  // Source paths (a file of the image folder, a COCO file_name, a manifest's
  // image path) are resolved, symbolic links included, and a file that
  // resolves outside its root (the image folder, COCO's images folder, the
  // manifest's folder) is rejected with the reason ("leaves the source
  // folder: resolves to ..."). True: symbolic links may lead anywhere (a
  // class folder linked from another disk); a ".." that climbs above the
  // root in a path given as text is refused either way.
  bool follow_links_outside = false;

  // A conversion that writes no record (every input rejected) fails with
  // InvalidArgument naming the count, the first reasons and the rejects
  // report, OUT/NAME.rejected.tsv (removed by the next conversion of NAME
  // that commits), and commits nothing (an earlier dataset NAME stays). True: commit the empty dataset, as any other. Checked by
  // the local conversions (ConvertImageFolder, ConvertCoco, ConvertJsonl,
  // ConvertCsv); a conversion in parts (CommitImageFolder, CommitSource)
  // commits what its parts wrote.
  bool allow_empty = false;

  // Add the records to dataset NAME in OUT instead of replacing it: the new
  // generation keeps the committed shards where they are (ids 0..n-1
  // unchanged) and adds the new records as one more segment (ids from n on;
  // format/SPEC.md 1.2). The schema and metadata must be the dataset's
  // (InvalidArgument naming what differs), but for fields added to the
  // dataset later (AddFields), which the new records get from `defaults`.
  // An image folder's class folders
  // are mapped onto the dataset's classes by name; a class the dataset lacks
  // is refused, naming it, unless `extend_classes`. Readers of the old
  // generation keep reading it; a second writer waits for nothing: it is
  // refused while this one holds the lock. No dataset NAME yet: a plain
  // conversion. The rejects report is the new records'.
  bool append = false;
  // With `append` of an image folder: the folder's classes the dataset lacks
  // are added at the end of its class list (in sorted order), so every
  // earlier label keeps its meaning; the new segment carries the longer list,
  // which is then the dataset's (older versions keep theirs).
  bool extend_classes = false;
  // With `append`: the values of the fields the dataset has and the new
  // records lack (fields added to it later: FieldDefaults in writer.h;
  // JsonFieldDefaults reads them as urec's --default does). Without them such
  // an append is refused naming the fields; defaults without `append` are
  // refused.
  FieldDefaults defaults;

  // Called every ~100 ms and once at the end, from the calling thread.
  std::function<void(const ConvertProgress&)> on_progress;
};

// A source file that is not in the dataset, and why.
struct ConvertRejection {
  std::string path;    // relative to the source folder, '/'-separated
  std::string reason;  // "not a JPEG or PNG: GIF image", "truncated: ...", "empty file", ...
};

struct ConvertReport {
  std::string name;                  // the dataset name used
  std::vector<std::string> classes;  // label i is classes[i]
  uint64_t written = 0;              // records in the dataset
  uint64_t rejected = 0;             // image-extension files that are not usable JPEGs or PNGs
  uint64_t skipped = 0;              // files without an image extension, or outside class folders
  uint64_t image_bytes = 0;          // bytes of the images written (as stored)
  uint64_t source_bytes = 0;         // bytes of their source files
  uint64_t transcoded = 0;           // JPEG records stored in the fast layout (jpeg_layout 1)
  uint64_t kept_original = 0;        // JPEG records stored as their source bytes (jpeg_layout 0)
  // PNG records (stored as their source bytes, jpeg_layout 0), told by their
  // magic bytes: ImageNet's PNG named .JPEG is one.
  uint64_t png = 0;
  // Why the transcode was refused, and how often (the records kept as they
  // were although keep_original was off): "libjpeg warning", "data after
  // EOI", ... (empty with keep_original).
  std::map<std::string, uint64_t> kept_original_reasons;
  // ConvertCoco: annotations written (with their images), and annotations
  // left out (rows in not_written).
  uint64_t annotations = 0;
  uint64_t annotations_rejected = 0;
  uint64_t output_bytes = 0;         // shard and index files together
  uint32_t shards = 0;
  double seconds = 0;
  std::string uuid;
  std::vector<std::string> shard_paths;
  // Every rejected and skipped file, in folder order; also written to
  // rejects_path, OUT/NAME.rejects.gGGGGGG.tsv, committed together with the
  // shards (skipped ones with a reason that starts "skipped:").
  std::vector<ConvertRejection> not_written;
  std::string rejects_path;
};

// Converts a torchvision-style ImageFolder: SRC/<class>/**/<image>.
//
// Semantics match torchvision.datasets.ImageFolder: classes are the sorted
// names of SRC's sub-folders (symlinks followed), label = index in that list,
// class folders are walked recursively, and a file is a candidate when its
// lower-cased name ends with .jpg .jpeg .png .ppm .bmp .pgm .tif .tiff or
// .webp. Records come in ImageFolder's sample order (by class, then by
// folder, then by file name, comparing bytes), so record i is the i-th
// sample of ImageFolder among the files that were written.
//
// A class folder whose name holds a newline (which the "classes" list, one
// name a line, cannot store) is left out: its files go to not_written with
// that reason (its image files counted as rejected), labels are numbered
// over the other classes, and the rest converts.
//
// Every candidate is read and its header checked, the format told by its
// first bytes whatever its name: JPEGs unirecord can decode (8-bit;
// grayscale, YCbCr, RGB, CMYK and YCCK) and PNGs (every colour type and bit
// depth; stored as they are, counted in `png`) are written, anything else is
// rejected with a reason. A written JPEG is rewritten losslessly into
// the fast layout (docs/image.md): the same quantized DCT coefficients, so
// every decoder gives the same pixels, re-coded as baseline with optimized
// Huffman tables, one interleaved scan and restart markers that let the
// decoder entropy-decode only a crop's part; its APPn/COM segments (EXIF,
// ICC, Adobe, JFIF) are kept. A JPEG the rewrite cannot reproduce exactly
// (libjpeg warns while reading it, data follows its EOI marker, ...) is
// stored as it was and counted in kept_original_reasons; with keep_original
// every JPEG is. Records have the fields image (bytes), label (int64,
// indexed), path (string, relative to SRC), width and height (int32, indexed;
// as stored, EXIF ignored), jpeg_layout (int32: 0 = the source bytes, 1 = the
// fast layout), source_size (int64: the source file's bytes) and source_xxh3
// (int64: XXH3-64, seed 0, of the source file, its 64 bits read as signed);
// metadata "classes" holds the class names (EncodeNameList).
//
// The output is byte-identical for the same folder and options, whatever
// `threads` is. Errors: NotFound / InvalidArgument for a bad SRC, OUT inside
// SRC, or no candidate files; Corruption naming the file in strict mode;
// FailedPrecondition while another writer writes dataset NAME in OUT; any
// Writer error. An earlier dataset NAME in OUT is replaced whole, by one
// rename, or kept whole: on error, or if the process is killed at any point,
// OUT holds the old dataset or the new one, never a mix (Writer, writer.h).
Result<ConvertReport> ConvertImageFolder(const std::string& src, const std::string& out,
                                         const ConvertOptions& options = {});

// Converts class folders of videos (SRC/CLASS/**/*.mp4 .avi .mkv .webm .mov
// .m4v .mpg .mpeg .ogv, listed as ConvertImageFolder lists images: Kinetics'
// and UCF-101's layout) into dataset NAME in OUT: one record per file with
// fields video (the file's best video stream as a media value: its packets
// and packet table, SPEC.md 6.4; the container is not kept, `urec cat
// --field video` remuxes one) and its parameter fields (video.width,
// video.duration, ...), label (int64, indexed) and path (string, relative
// to SRC); metadata "classes". A file that FFmpeg cannot read, without a
// video stream, with a codec it cannot decode, cut short, corrupt, or with
// absurd dimensions or duration is a row of the rejects report naming it
// and the reason. The guarantees are ConvertImageFolder's (deterministic
// bytes whatever `threads` is, one atomic commit, strict, append, progress;
// parts on Dask through PlanSource with SourceFormat::kVideoFolder).
// Not used: keep_original, limits (the media value's own limits apply),
// extend_classes (refused).
Result<ConvertReport> ConvertVideoFolder(const std::string& src, const std::string& out,
                                         const ConvertOptions& options = {});
// The same for audio files (.wav .flac .mp3 .ogg .opus .m4a .aac): fields
// audio (the best audio stream) and its parameter fields, label, path and
// transcript (string): LibriSpeech's, from the *.trans.txt files in the
// class folders (lines "UTTERANCE-ID TEXT", UTTERANCE-ID the audio file's
// name without extension, in the same folder), "" for a file none names.
Result<ConvertReport> ConvertAudioFolder(const std::string& src, const std::string& out,
                                         const ConvertOptions& options = {});

// Converts a COCO instances file (ANNOTATIONS, e.g.
// annotations/instances_val2017.json) and its images (IMAGES_DIR, where each
// image's "file_name" is) into dataset NAME (default: ANNOTATIONS' file name
// without .json) in OUT: one record per image, in image id order, with
// fields image (bytes; stored as ConvertImageFolder stores it: JPEGs in the
// fast layout unless keep_original, PNGs as they are), path (the file_name),
// image_id (int64, indexed), width and height (int32, indexed; of the file),
// boxes (float32 (-1, 4): COCO's x, y, width, height in pixels),
// category_id (int64 (-1,)), iscrowd (uint8 (-1,)), area (float32 (-1,)),
// annotation_id (int64 (-1,)) -- row k of each is the image's k-th
// annotation by id -- segmentation (string: a JSON array of the
// annotations' segmentations, polygons or RLE as given, null where none),
// jpeg_layout, source_size and source_xxh3 (as ConvertImageFolder's).
// Metadata "categories": a JSON array of {"id", "name", "supercategory"}
// by id. An image without annotations is kept with empty arrays.
//
// Nothing is dropped silently: every image, annotation and category that
// cannot be used is a row of the rejects report with the reason (a missing
// or mistyped key, a duplicate id, an annotation of an unlisted image or
// category, a box with NaN, infinite or negative size, a file_name outside
// IMAGES_DIR, a file missing or not a usable JPEG or PNG, a file whose size
// is not the one the annotations give); `rejected` counts images and
// `annotations_rejected` annotations. The conversion's other guarantees are
// ConvertImageFolder's: deterministic bytes whatever `threads` is, one
// atomic commit under the writers' lock, `append`, `strict`, progress.
// Errors: Corruption naming ANNOTATIONS and the place when it is not JSON
// or has no "images" array; NotFound / InvalidArgument for a missing file or
// folder, OUT inside IMAGES_DIR, no usable image, num_shards over the images.
Result<ConvertReport> ConvertCoco(const std::string& annotations, const std::string& images_dir,
                                  const std::string& out, const ConvertOptions& options = {});

// Converts a manifest, one sample a line, into dataset NAME in OUT (NAME
// defaults to the manifest's name without its extension): ConvertJsonl
// reads JSON Lines (one object a line, a key per field), ConvertCsv a CSV
// file with a header row naming the fields (string and image cells as they
// are, the others parsed as JSON: 3, 0.5, true, [1, 2, 3]). Records keep
// the manifest's order. SCHEMA is a JSON file:
//
//   {"fields": [{"name": "image", "type": "image"},
//               {"name": "caption", "type": "string"},
//               {"name": "tokens", "type": "int32", "shape": [-1]},
//               {"name": "label", "type": "int64", "indexed": true}]}
//
// "type": a numeric type of schema.h (not float16; "shape" with -1 for a
// dimension that varies per line, "indexed" for a scalar), "string", or
// "image": a path relative to the manifest's folder, read, checked and
// stored as ConvertImageFolder stores images (transcoded unless
// keep_original), which adds the fields path (the value), width, height,
// jpeg_layout, source_size and source_xxh3; at most one image field.
//
// A line that cannot be used is a row of the rejects report ("line N" and
// the reason: not valid JSON, a missing field, a key or column not in the
// schema, a wrong type, shape or range, a wrong cell count; for an image,
// its path and the reason of ConvertImageFolder's rejects, after "line
// N: "); strict: the first one is an error. Blank lines are no samples.
// Errors: InvalidArgument naming the file for a bad schema, a CSV header
// that does not name each field once, an unclosed quote, or no sample
// line; the rest as ConvertImageFolder. A manifest over 1 GiB is refused.
Result<ConvertReport> ConvertJsonl(const std::string& manifest, const std::string& schema, const std::string& out,
                                   const ConvertOptions& options = {});
Result<ConvertReport> ConvertCsv(const std::string& manifest, const std::string& schema, const std::string& out,
                                 const ConvertOptions& options = {});

// Adds the fields of a JSON Lines file to the dataset at `path` (a folder
// holding one dataset with a manifest, DIR/NAME or DIR/NAME.uset) as a new
// version, without rewriting it (unirecord/fields.h, format/SPEC.md section
// 1.4). Each line is {"id": RECORD_ID, "FIELD": value, ...}: one line per
// record id of the dataset, in any order, every field of SCHEMA (as for
// ConvertJsonl, without image fields or a field named "id") and no other
// key. A field named as one the dataset has replaces it. Errors:
// InvalidArgument naming the file and line for a line that cannot be used
// (the reasons of ConvertJsonl's rejects), an id outside the dataset or
// repeated (naming both lines), and naming the first id without a line; the
// rest as ConvertJsonl and AddFields. Nothing is committed on an error.
// `defaults`: "" or one JSON object with a value for every field of SCHEMA
// ({"score": 0.0}), which the records of segments the file has no line for
// get (new data: lines for the appended segment only); a segment left
// without lines and no defaults is refused naming it (AddFieldsOptions::
// segments, which this sets).
Result<WriterSummary> AddFieldsFromJsonl(const std::string& path, const std::string& jsonl, const std::string& schema,
                                         const AddFieldsOptions& options = {}, const std::string& defaults = "");

// The FieldDefaults of one JSON object, {"score": 0.0, "tag": "none"}
// (urec's --default FIELD=VALUE): a key for every field asked for and no
// other, each value checked and stored as a JSON Lines manifest's (the
// policy of ConvertJsonl: numbers of the field's type and shape, strings);
// the values of a field of bytes or float16 cannot be given so
// (InvalidArgument naming the field). AddFieldsFromJsonl's `defaults` are
// read so too.
FieldDefaults JsonFieldDefaults(std::string object);

}  // namespace unirecord

#endif  // UNIRECORD_CONVERT_H_
