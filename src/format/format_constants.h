// Every value frozen in the unirecord file format, in one place: magics,
// versions, offsets, sizes, alignments, limits, file extensions and the
// manifest's first line. What is a layout rather than a value is spelled
// once beside the code that reads and writes it: the FlatBuffers tables in
// format/unirecord.fbs, the file-name patterns in file_names.cc, the
// manifest's keys in src/format/manifest.cc, the dataset UUID's derivation
// in dataset_uuid.cc.
//
// Changing any of these changes the format: bump kFormatMajor (incompatible)
// or kFormatMinor (readable by older readers) and add a line to the version
// history in format/SPEC.md. Section names below refer to format/SPEC.md.
#ifndef UNIRECORD_FORMAT_FORMAT_CONSTANTS_H_
#define UNIRECORD_FORMAT_FORMAT_CONSTANTS_H_

#include <cstddef>
#include <cstdint>

namespace unirecord::format {

// SPEC.md "Versioning and history". Readers refuse files whose major version differs.
inline constexpr uint16_t kFormatMajor = 1;
// kFormatMinor is the newest minor version this library reads and writes; a
// writer stamps a file with the lowest one its schema needs
// (Schema::RequiredMinorVersion), so files without 1.1 types stay 1.0 and
// files without a list index stay 1.0 or 1.1.
inline constexpr uint16_t kFormatMinor = 3;

// SPEC.md "Preamble" / "Trailer": 8-byte magics at the start and end of files.
inline constexpr char kShardMagic[8] = {'\x89', 'U', 'R', 'E', 'C', '\r', '\n', '\x1a'};
inline constexpr char kIndexMagic[8] = {'\x89', 'U', 'I', 'D', 'X', '\r', '\n', '\x1a'};
inline constexpr char kShardTrailerMagic[8] = {'U', 'R', 'E', 'C', '-', 'E', 'N', 'D'};
inline constexpr char kIndexTrailerMagic[8] = {'U', 'I', 'D', 'X', '-', 'E', 'N', 'D'};
inline constexpr size_t kMagicSize = 8;

// SPEC.md "Preamble": fixed 48 bytes at offset 0 of shard and index files.
inline constexpr size_t kPreambleSize = 48;
inline constexpr size_t kPreambleMagicOffset = 0;
inline constexpr size_t kPreambleMajorOffset = 8;     // u16
inline constexpr size_t kPreambleMinorOffset = 10;    // u16
inline constexpr size_t kPreambleFlagsOffset = 12;    // u32, 0 in v1
inline constexpr size_t kPreambleHeaderOffsetOffset = 16;    // u64
inline constexpr size_t kPreambleHeaderLengthOffset = 24;    // u64
inline constexpr size_t kPreambleHeaderChecksumOffset = 32;  // u64
inline constexpr size_t kPreambleChecksumOffset = 40;        // u64 over [0, 40)

// SPEC.md "Trailer": fixed 48 bytes at the end of shard and index files.
inline constexpr size_t kTrailerSize = 48;
inline constexpr size_t kTrailerDirectoryOffsetOffset = 0;     // u64
inline constexpr size_t kTrailerDirectoryLengthOffset = 8;     // u64
inline constexpr size_t kTrailerDirectoryChecksumOffset = 16;  // u64
inline constexpr size_t kTrailerMajorOffset = 24;              // u16
inline constexpr size_t kTrailerMinorOffset = 26;              // u16
inline constexpr size_t kTrailerFlagsOffset = 28;              // u32, 0 in v1
inline constexpr size_t kTrailerChecksumOffset = 32;           // u64 over [0, 32)
inline constexpr size_t kTrailerMagicOffset = 40;

// SPEC.md "Shard layout": the header follows the preamble; every page starts
// at a multiple of kPageAlignment; the footer starts 8-byte aligned.
inline constexpr uint64_t kHeaderOffset = kPreambleSize;
inline constexpr uint64_t kPageAlignment = 4096;
inline constexpr uint64_t kFlatBufferAlignment = 8;

// SPEC.md "Index layout": sections start at multiples of kSectionAlignment.
inline constexpr uint64_t kSectionAlignment = 64;

// SPEC.md "Record table": entry = scalar locator, blob locators, inline
// indexed values, entry checksum.
inline constexpr size_t kEntryScalarPageOffset = 0;  // u32
inline constexpr size_t kEntryScalarRowOffset = 4;   // u32
inline constexpr size_t kEntryScalarLocatorSize = 8;
inline constexpr size_t kBlobLocatorSize = 24;  // u64 offset, u32 stored, u32 raw, u64 xxh3
inline constexpr size_t kBlobLocatorOffsetOffset = 0;
inline constexpr size_t kBlobLocatorStoredOffset = 8;
inline constexpr size_t kBlobLocatorRawOffset = 12;
inline constexpr size_t kBlobLocatorChecksumOffset = 16;
inline constexpr size_t kIndexedValueSize = 8;  // int64 or float64 bits
inline constexpr size_t kEntryChecksumSize = 8;  // XXH3-64, seed = shard-local row
// Scalar page number of records whose schema has no scalar-page column.
inline constexpr uint32_t kNoScalarPage = 0xFFFFFFFFu;
// SPEC.md "Shards without a record table" (section 8.5, format 1.2): an
// index header's entry_stride of 0 says the shard has none (its record table
// section is empty); such an index says this minor version.
inline constexpr uint32_t kNoRecordTableStride = 0;
inline constexpr uint16_t kFormatMinorNoRecordTable = 2;

// SPEC.md "Sorted index": u32 rows ordered by (value, row).
inline constexpr size_t kSortedEntrySize = 4;

// SPEC.md "List index" (section 8.4, format 1.2): u64 value count D, u64
// pair count P, u32 length per row (padded to 8), D i64 values, D + 1 u64
// starts, P u32 rows.
inline constexpr size_t kListIndexValueCountOffset = 0;  // u64
inline constexpr size_t kListIndexPairCountOffset = 8;   // u64
inline constexpr size_t kListIndexFixedSize = 16;
inline constexpr size_t kListLengthSize = 4;
inline constexpr size_t kListLengthsAlignment = 8;
inline constexpr size_t kListValueSize = 8;
inline constexpr size_t kListStartSize = 8;
inline constexpr size_t kListRowSize = 4;
// First minor version with list indexes (`indexed` on a [-1] integer array).
inline constexpr uint16_t kFormatMinorListIndex = 2;

// SPEC.md "Scalar page": u32 row count, u32 column count, u64 offsets.
inline constexpr size_t kScalarPageFixedSize = 8;
inline constexpr size_t kScalarColumnAlignment = 8;

// SPEC.md "Variable-shape arrays" (format 1.1): a value is a u32 extent per
// variable dimension, zero-padded to 8 bytes, then the elements; its blob
// starts at a multiple of kArrayBlobAlignment in the file.
inline constexpr size_t kShapeExtentSize = 4;
inline constexpr size_t kShapePrefixAlignment = 8;
inline constexpr uint64_t kArrayBlobAlignment = 8;
// First minor version with the types and kinds of SPEC.md section 6.3.
inline constexpr uint16_t kFormatMinorArrays = 1;

// SPEC.md "Media values" (section 6.4, format 1.3): a video or audio
// field's value is one stream: a fixed header, the packet table (fixed-size
// entries in decode order), the codec's extradata, then the packets' bytes.
inline constexpr uint16_t kFormatMinorMedia = 3;
inline constexpr char kMediaMagic[4] = {'U', 'R', 'M', 'V'};
inline constexpr size_t kMediaMagicSize = 4;
inline constexpr uint16_t kMediaLayoutVersion = 1;
inline constexpr uint8_t kMediaStreamVideo = 1;
inline constexpr uint8_t kMediaStreamAudio = 2;
inline constexpr size_t kMediaHeaderSize = 176;
inline constexpr size_t kMediaVersionOffset = 4;         // u16
inline constexpr size_t kMediaStreamKindOffset = 6;      // u8 (7: a zero byte)
inline constexpr size_t kMediaTimeBaseNumOffset = 8;     // i32
inline constexpr size_t kMediaTimeBaseDenOffset = 12;    // i32
inline constexpr size_t kMediaWidthOffset = 16;          // i32
inline constexpr size_t kMediaHeightOffset = 20;         // i32
inline constexpr size_t kMediaRotationOffset = 24;       // i32, degrees, [0, 360)
inline constexpr size_t kMediaSampleRateOffset = 28;     // i32
inline constexpr size_t kMediaChannelsOffset = 32;       // i32
inline constexpr size_t kMediaExtradataSizeOffset = 36;  // u32
inline constexpr size_t kMediaChannelLayoutOffset = 40;  // u64: FFmpeg's channel mask, 0 unknown
inline constexpr size_t kMediaPacketCountOffset = 48;    // u64
inline constexpr size_t kMediaDurationOffset = 56;       // i64, time-base units
inline constexpr size_t kMediaStartPtsOffset = 64;       // i64, time-base units
inline constexpr size_t kMediaCodecOffset = 72;          // char[32], NUL-padded
inline constexpr size_t kMediaPixelFormatOffset = 104;   // char[32], NUL-padded
inline constexpr size_t kMediaSampleFormatOffset = 136;  // char[32], NUL-padded
inline constexpr size_t kMediaNameSize = 32;             // at most 31 bytes and a NUL
// u64: XXH3-64 of bytes [0, 168) and then of the packet table and extradata.
inline constexpr size_t kMediaTableChecksumOffset = 168;
// A packet table entry: pts, dts, duration (i64), offset in the packet area
// (u64), size (u32), flags (u32), samples to skip at start / end (u32 each),
// XXH3-64 of the packet's bytes (u64).
inline constexpr size_t kMediaPacketEntrySize = 56;
inline constexpr size_t kMediaPacketPtsOffset = 0;
inline constexpr size_t kMediaPacketDtsOffset = 8;
inline constexpr size_t kMediaPacketDurationOffset = 16;
inline constexpr size_t kMediaPacketDataOffset = 24;
inline constexpr size_t kMediaPacketSizeOffset = 32;
inline constexpr size_t kMediaPacketFlagsOffset = 36;
inline constexpr size_t kMediaPacketSkipStartOffset = 40;
inline constexpr size_t kMediaPacketSkipEndOffset = 44;
inline constexpr size_t kMediaPacketChecksumOffset = 48;
inline constexpr uint32_t kMediaPacketKeyframe = 1;  // flags bit 0; the other bits are 0
// A pts or dts the container did not give (FFmpeg's AV_NOPTS_VALUE).
inline constexpr int64_t kMediaNoTimestamp = INT64_MIN;
// SPEC.md section 12: the limits of a media value.
inline constexpr int32_t kMaxMediaDimension = 16384;       // width, height
inline constexpr int32_t kMaxMediaSampleRate = 768000;
inline constexpr int32_t kMaxMediaChannels = 64;
inline constexpr uint64_t kMaxMediaPackets = 1u << 24;
inline constexpr uint32_t kMaxMediaExtradataBytes = 1u << 20;
inline constexpr double kMaxMediaSeconds = 48.0 * 3600.0;  // two days
// |start_pts| at most 2^53; every pts and dts within kMaxMediaSeconds (and
// a second) of start_pts: sums and differences of timestamps never overflow.
inline constexpr int64_t kMaxMediaStartPts = int64_t{1} << 53;

// SPEC.md "Limits".
inline constexpr uint64_t kMaxBlobBytes = 0xFFFFFFFFull;  // stored in a u32
inline constexpr uint64_t kMaxScalarPageBytes = 0xFFFFFFFFull;  // raw size; u32 string offsets
inline constexpr uint32_t kMaxShards = 99999;             // five digits in file names
inline constexpr size_t kMaxFields = 65535;
inline constexpr size_t kMaxFieldNameBytes = 255;
inline constexpr size_t kMaxArrayDims = 8;
inline constexpr int64_t kMaxArrayElements = int64_t{1} << 28;

// SPEC.md "Dataset and file names": NAME-SSSSS-of-NNNNN.gGGGGGG.urec / .uidx,
// reports NAME.LABEL.gGGGGGG.tsv, writers' temporaries .NAME.tmp-PID-TAG.partial
// (spelled and parsed in file_names.cc).
inline constexpr const char* kShardExtension = ".urec";
inline constexpr const char* kIndexExtension = ".uidx";
inline constexpr const char* kReportExtension = ".tsv";
inline constexpr const char* kPartialSuffix = ".partial";
// Generation numbers have at most 18 decimal digits.
inline constexpr uint64_t kMaxGeneration = 999999999999999999ull;

// SPEC.md "Generations and the manifest": NAME.uset, a text file whose first
// line is kManifestFirstLine (one segment whose files carry the manifest's
// generation: every dataset before format 1.2) or kSegmentedManifestFirstLine
// (section 1.2: segment lines), at most kMaxManifestBytes long.
inline constexpr const char* kManifestExtension = ".uset";
inline constexpr const char* kManifestFirstLine = "unirecord-manifest 1";
inline constexpr const char* kSegmentedManifestFirstLine = "unirecord-manifest 2";
// SPEC.md "Versions and tags" (section 1.3): the kept manifest of each committed
// generation, NAME.gGGGGGG.uver (the bytes NAME.uset had when it committed),
// and the tags, NAME.utag (first line kTagsFirstLine).
inline constexpr const char* kVersionExtension = ".uver";
inline constexpr const char* kTagsExtension = ".utag";
inline constexpr const char* kTagsFirstLine = "unirecord-tags 1";
inline constexpr size_t kMaxTagBytes = 64;
// First line of a staged part's completion file (a temporary, never
// committed; format/file_names.h StagedPartFileName).
inline constexpr const char* kPartFileFirstLine = "unirecord-part 1";
inline constexpr uint64_t kMaxManifestBytes = 1 << 20;  // 64 KiB before format 1.2
inline constexpr uint64_t kMaxTagsBytes = 1 << 20;
// SPEC.md "Field groups" (section 1.4): the column files of a field group,
// NAME-SSSSS-of-NNNNN.gGGGGGG.fFFFFFF.urec / .uidx (G the segment's
// generation, F the group's), named in manifest 2 by kFieldGroupKey lines
// "fields G F UUID NAMES"; kDroppedFieldsKey "drop G NAMES" hides fields of
// segment G's own shards. NAMES: comma-separated, each byte of
// kEscapedNameBytes (and below 0x21 or 0x7f and up) written %XX.
inline constexpr char kColumnGenerationTag = 'f';
inline constexpr const char* kFieldGroupKey = "fields";
inline constexpr const char* kDroppedFieldsKey = "drop";
inline constexpr const char* kEscapedNameBytes = "%,";

// SPEC.md "Dataset UUID": domain separator of the content digest.
inline constexpr const char* kUuidDomain = "unirecord-dataset-uuid-v1";
// ... and of a dataset of several segments (section 1.2): a digest of theirs.
inline constexpr const char* kSegmentsUuidDomain = "unirecord-segments-uuid-v1";
// ... and of a dataset with field groups or dropped fields (SPEC section 1.4).
inline constexpr const char* kFieldGroupsUuidDomain = "unirecord-fields-uuid-v1";

// SPEC.md section 13: the sampler state, 40 bytes a training job saves to
// resume its sample order.
inline constexpr char kSamplerStateMagic[4] = {'U', 'R', 'S', 'S'};
inline constexpr size_t kSamplerStateMagicSize = 4;
// Version 2 (written): position global to the epoch, fingerprint of the
// order only. Version 1 (still read): position of one rank and worker,
// fingerprint of every option.
inline constexpr uint32_t kSamplerStateVersion = 2;
inline constexpr uint32_t kSamplerStateVersionRankPosition = 1;
inline constexpr size_t kSamplerStateSize = 40;
inline constexpr size_t kSamplerStateVersionOffset = 4;       // u32
inline constexpr size_t kSamplerStateSeedOffset = 8;          // u64
inline constexpr size_t kSamplerStateEpochOffset = 16;        // u64
inline constexpr size_t kSamplerStatePositionOffset = 24;     // u64
inline constexpr size_t kSamplerStateFingerprintOffset = 32;  // u64

// The pack state (SPEC.md section 13.1): a packing loader's position.
inline constexpr char kPackStateMagic[4] = {'U', 'R', 'P', 'S'};
inline constexpr uint32_t kPackStateVersion = 1;
inline constexpr size_t kPackStateSize = 88;
inline constexpr size_t kPackStateVersionOffset = 4;      // u32
inline constexpr size_t kPackStateWindowOffset = 8;       // 40 bytes: a sampler state
inline constexpr size_t kPackStateNumShardsOffset = 48;   // u32
inline constexpr size_t kPackStateShardIdOffset = 52;     // u32
inline constexpr size_t kPackStateRowsOffset = 56;        // u64
inline constexpr size_t kPackStateDocumentOffset = 64;    // u64
inline constexpr size_t kPackStateTokenOffset = 72;       // u64
inline constexpr size_t kPackStateFingerprintOffset = 80;  // u64
// Version 2 (section 13.2): the version-1 bytes, then what an elastic resume
// carries (consumed positions, remaining spans) and a checksum.
inline constexpr uint32_t kPackStateVersionCarried = 2;
inline constexpr size_t kPackStateConsumedCountOffset = 88;  // u64
inline constexpr size_t kPackStateSpanCountOffset = 96;      // u64
inline constexpr size_t kPackStateCarriedOffset = 104;       // consumed positions, then spans
inline constexpr size_t kPackStatePositionSize = 8;          // a consumed position (u64)
inline constexpr size_t kPackStateSpanSize = 24;             // a span: position, begin, end (u64 each)
inline constexpr size_t kPackStateSpanBeginOffset = 8;       // within a span
inline constexpr size_t kPackStateSpanEndOffset = 16;
inline constexpr size_t kPackStateChecksumSize = 8;          // XXH3-64 (seed 0) of every byte before it

// The coverage digest (SPEC.md section 13.3): what a loader delivered of an
// epoch, kept beside its state in a checkpoint and gathered across ranks.
inline constexpr char kCoverageMagic[4] = {'U', 'R', 'C', 'D'};
inline constexpr uint32_t kCoverageVersion = 1;
inline constexpr size_t kCoverageVersionOffset = 4;      // u32
inline constexpr size_t kCoverageSeedOffset = 8;         // u64
inline constexpr size_t kCoverageEpochOffset = 16;       // u64
inline constexpr size_t kCoverageFingerprintOffset = 24;  // u64
inline constexpr size_t kCoverageNumShardsOffset = 32;   // u32
inline constexpr size_t kCoverageShardIdOffset = 36;     // u32
inline constexpr size_t kCoverageNumWorkersOffset = 40;  // u32
inline constexpr size_t kCoverageWorkerIdOffset = 44;    // u32
inline constexpr size_t kCoverageFlagsOffset = 48;       // u32: bit 0 complete, bit 1 ids
inline constexpr uint32_t kCoverageFlagComplete = 1;
inline constexpr uint32_t kCoverageFlagIds = 2;
inline constexpr size_t kCoverageSkippedOffset = 56;     // u64 (52..56: zero)
inline constexpr size_t kCoverageUncarriedOffset = 64;   // u64
inline constexpr size_t kCoveragePartsOffset = 72;       // 5 parts: count, sum1, sum2 (u64 each)
inline constexpr size_t kCoveragePartCount = 5;          // expected, delivered, padding, dropped, cut
inline constexpr size_t kCoveragePartSize = 24;
inline constexpr size_t kCoverageIdsOffset = 192;        // with ids: per part [u64 length][id bitmap]
inline constexpr size_t kCoverageChecksumSize = 8;       // XXH3-64 (seed 0) of every byte before it
inline constexpr size_t kCoverageMinSize = kCoverageIdsOffset + kCoverageChecksumSize;
// An id bitmap's layers (ids held more than m times, m = 0, 1, ...): at most this many.
inline constexpr uint32_t kCoverageMaxLayers = 1024;

}  // namespace unirecord::format

#endif  // UNIRECORD_FORMAT_FORMAT_CONSTANTS_H_
