// How a commit gives a dataset the files of another (or of its own layout
// before manifests) without writing their bytes: hard links, else copies;
// and the token under which a commit stages its own files. StagedWrite
// (KeepCommitted) and MergeDatasets share them.
#ifndef UNIRECORD_DATASET_SEGMENT_LINKS_H_
#define UNIRECORD_DATASET_SEGMENT_LINKS_H_

#include <cstdint>
#include <string>

#include "format/manifest.h"
#include "unirecord/dataset.h"
#include "unirecord/status.h"

namespace unirecord::dataset {

// 18 decimal digits from the system's random source.
std::string NewToken();

// Gives segment `segment` of `dataset` the names of `named` (its generation)
// in `out_dir` without writing its bytes: hard links, or a copy where the
// file system makes no link (another device); its field groups' column files
// likewise, each group at generation (*next_generation)++ (set in `named`).
// Adds the bytes copied to `*copied`.
Status LinkSegment(const Dataset& dataset, const SegmentInfo& segment, const std::string& out_dir,
                   const std::string& name, format::Segment* named, uint64_t* next_generation, bool sync,
                   uint64_t* copied);

// Whether the files of `segment` already have generation-`generation` names of dataset `name` in
// `out_dir` (a dataset appended to or merged into itself): kept in place.
bool NamedInPlace(const Dataset& dataset, const SegmentInfo& segment, const std::string& out_dir,
                  const std::string& name);

}  // namespace unirecord::dataset

#endif  // UNIRECORD_DATASET_SEGMENT_LINKS_H_
