// The loader's read plan: what is read of each record and in which order.
// What: the fields the later stages use (the image and label, the batched
// fields), resolved once per dataset into the sources, blobs and pages to
// read (dataset/field_reads.h), so that a record read for them touches and
// verifies no byte of another field. Order: a remote dataset downloads its
// shards ahead in the order the run reads them. A mixture's datasets
// number their records one after another (mixture ids). Not public API.
#ifndef UNIRECORD_SRC_PIPELINE_READ_PLAN_H_
#define UNIRECORD_SRC_PIPELINE_READ_PLAN_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "dataset/shard_access.h"
#include "unirecord/dataset.h"
#include "unirecord/sample_decoder.h"
#include "unirecord/status.h"

namespace unirecord::pipeline {

// "dataset 1 (path/of/its/first.urec)": how a mixture's errors name a dataset.
std::string DatasetName(size_t k, const Dataset& dataset);

class ReadPlan {
 public:
  // The datasets of `sources`, whose records are read as Records of the
  // fields `record_fields` (indexes into their schema, one schema for all:
  // the caller checks); empty: samples are not read as Records.
  static Result<ReadPlan> Create(std::vector<SampleSource> sources, const std::vector<size_t>& record_fields);

  size_t size() const { return sources_.size(); }
  const SampleSource& source(size_t k) const { return sources_[k]; }
  // The dataset of mixture id `id` and its record there.
  std::pair<size_t, uint64_t> Locate(uint64_t id) const;
  // Mixture id `id`, only the planned fields (the others' getters fail).
  Result<Record> Read(uint64_t id) const;
  // Starts loading what Read(id) reads (ShardPages::Prefetch).
  void Prefetch(uint64_t id, ShardPages::PrefetchStage stage) const;

  // Some remote dataset downloads shards for these reads (none does where
  // only indexed values are read: the indexes hold them).
  bool downloads() const { return any_downloads_; }
  // Those remote datasets download their shards ahead in the order of
  // `ids` (mixture ids: each dataset its own records).
  void PlanRemote(const std::vector<uint64_t>& ids) const;

 private:
  std::vector<SampleSource> sources_;
  std::vector<uint64_t> first_ids_;  // by dataset: its records' first mixture id
  std::vector<std::shared_ptr<const dataset_internal::FieldReads>> reads_;  // by dataset; none without record fields
  std::vector<bool> downloads_;  // by dataset
  bool any_downloads_ = false;
};

}  // namespace unirecord::pipeline

#endif  // UNIRECORD_SRC_PIPELINE_READ_PLAN_H_
