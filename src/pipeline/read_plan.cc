// Remote datasets download ahead in the order the loader will read them.
#include "pipeline/loader_impl.h"

namespace unirecord {

// A remote dataset downloads shards ahead in this run's order (a pure
// function of seed and epoch, known before the first read), followed by the
// next epoch's: the next epoch's first shards download while this one ends
// instead of stalling its first batch (a plan of an epoch that never comes
// costs prefetch_shards downloads at most). A mixture plans each remote
// dataset's own records.
void Loader::Impl::PlanRemoteReads() {
  bool any_remote = false;
  for (const SampleSource& source : sources) any_remote = any_remote || source.dataset().is_remote();
  if (!any_remote) return;
  std::vector<std::vector<uint64_t>> ids(sources.size());
  auto add = [&](const Sampler& order, uint64_t begin, uint64_t end) {
    for (uint64_t p = begin; p < end; ++p) {
      const uint64_t id = RecordAt(order, p);
      const size_t k = SourceOf(id);
      if (sources[k].dataset().is_remote()) ids[k].push_back(id - first_ids[k]);
    }
  };
  add(sampler, start_position, end_position);
  Sampler next_epoch = sampler;
  next_epoch.SetEpoch(sampler.epoch() + 1);
  add(next_epoch, 0, EpochEnd());
  for (size_t k = 0; k < sources.size(); ++k) {
    if (sources[k].dataset().is_remote()) sources[k].dataset().PlanReads(ids[k]);
  }
}

}  // namespace unirecord
