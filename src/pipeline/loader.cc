// The Loader: the stages a batch lives through (docs/DEVELOPING.md draws
// them), put together at Create, and the consumer's calls, which the last
// stage answers (pipeline/batch_stream.h).
#include "unirecord/loader.h"

#include <utility>

#include "pipeline/pack_stage.h"
#include "pipeline/sample_batches.h"
#include "util/enum_names.h"

namespace unirecord {

SampleDecoderOptions SampleOptionsOf(const LoaderOptions& o) {
  SampleDecoderOptions sample;
  sample.transform = o.transform;
  sample.image_size = o.image_size;
  sample.resize_shorter = o.resize_shorter;
  sample.crop = o.crop;
  sample.decode = o.decode;
  sample.decode.layout = o.layout;
  return sample;
}

constexpr EnumName<RaggedLayout> kRaggedLayoutNames[] = {{RaggedLayout::kPad, "pad"}, {RaggedLayout::kJagged, "jagged"}};
constexpr EnumName<OnBadRecord> kOnBadRecordNames[] = {{OnBadRecord::kRaise, "raise"}, {OnBadRecord::kSkip, "skip"}};

const char* RaggedLayoutName(RaggedLayout layout) { return EnumNameOf(kRaggedLayoutNames, layout); }

Result<RaggedLayout> ParseRaggedLayout(std::string_view name) {
  return ParseEnumName(kRaggedLayoutNames, name, "ragged layout");
}

const char* OnBadRecordName(OnBadRecord on_bad_record) { return EnumNameOf(kOnBadRecordNames, on_bad_record); }

Result<OnBadRecord> ParseOnBadRecord(std::string_view name) {
  return ParseEnumName(kOnBadRecordNames, name, "bad-record policy");
}

Result<std::unique_ptr<Loader>> Loader::Create(std::shared_ptr<const Dataset> dataset,
                                               const LoaderOptions& options) {
  return Create(std::vector<std::shared_ptr<const Dataset>>{std::move(dataset)}, options);
}

Result<std::unique_ptr<Loader>> Loader::Create(std::vector<std::shared_ptr<const Dataset>> datasets,
                                               const LoaderOptions& options) {
  std::shared_ptr<pipeline::BatchStream> stream;
  if (options.pack) {
    UREC_ASSIGN_OR_RETURN(stream, pipeline::PackStage::Create(std::move(datasets), options));
  } else {
    UREC_ASSIGN_OR_RETURN(stream, pipeline::SampleBatches::Create(std::move(datasets), options));
  }
  return std::unique_ptr<Loader>(new Loader(std::move(stream)));
}

Loader::Loader(std::shared_ptr<pipeline::BatchStream> stream) : stream_(std::move(stream)) {}
Loader::~Loader() { stream_->Stop(); }

const LoaderOptions& Loader::options() const { return stream_->options(); }
int Loader::threads() const { return stream_->threads(); }
uint64_t Loader::batches_per_epoch() const { return stream_->batches_per_epoch(); }
Result<Batch> Loader::Next() { return stream_->Next(); }
void Loader::SetEpoch(uint64_t epoch) { stream_->SetEpoch(epoch); }
uint64_t Loader::epoch() const { return stream_->epoch(); }
SamplerState Loader::state() const { return stream_->state(); }
Status Loader::Restore(const SamplerState& state) { return stream_->Restore(state); }
Result<PackState> Loader::pack_state() const { return stream_->pack_state(); }
Status Loader::Restore(const PackState& state) { return stream_->Restore(state); }
LoaderStats Loader::stats() const { return stream_->stats(); }
void Loader::ResetStats() { stream_->ResetStats(); }
CoverageDigest Loader::coverage() const { return stream_->coverage(); }
Status Loader::ResumeCoverage(const CoverageDigest& before) { return stream_->ResumeCoverage(before); }

}  // namespace unirecord
