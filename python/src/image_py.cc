// unirecord._ImageReader: the native side of unirecord.ImageDataset. One call
// reads a record's JPEG zero-copy and decodes it through a SampleDecoder
// (sample_decoder.h, the native Loader's per-sample path): the crop planned
// on its header, only the window decoded, resized to size x size and written
// as uint8 CHW (PILToTensor layout) by the resizer itself.
// get_many does the same for a whole batch in one call (one GIL release).
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <mutex>

#include "common.h"
#include "unirecord/sample_decoder.h"

namespace unirecord_py {

using unirecord::Blob;
using unirecord::CropWindow;
using unirecord::ImageInfo;
using unirecord::Result;
using unirecord::SampleDecoder;
using unirecord::SampleDecoderOptions;
using unirecord::SampleSource;
using unirecord::Status;

namespace {

// The options of _Loader (the same keys, the same parsing), of which the
// per-sample ones apply; the output is torchvision's PILToTensor layout.
unirecord::LoaderOptions ReaderOptions(const py::dict& options) {
  unirecord::LoaderOptions o = ParseLoaderOptions(options);
  o.layout = unirecord::ImageLayout::kNCHW;
  return o;
}

SampleDecoderOptions CheckedSampleOptions(const unirecord::LoaderOptions& o) {
  SampleDecoderOptions sample = unirecord::SampleOptionsOf(o);
  Check(sample.Check());
  return sample;
}

class ImageReader {
 public:
  ImageReader(std::shared_ptr<PyDataset> ds, const py::dict& options) : ImageReader(std::move(ds), ReaderOptions(options)) {}

  ImageReader(std::shared_ptr<PyDataset> ds, const unirecord::LoaderOptions& o)
      : ds_(std::move(ds)),
        source_(Unwrap(SampleSource::Create(ds_->dataset, {o.image_field, o.label_field, o.path_field}, ds_->paths[0]))),
        options_(CheckedSampleOptions(o)),
        seed_(o.sampler.seed) {}

  size_t size() const { return ds_->dataset->size(); }

  // (uint8 array [3, size, size], label or -1).
  py::tuple Get(const py::handle& index, uint64_t epoch) {
    uint64_t id = RecordId(index);
    const py::ssize_t side = options_.image_size;
    py::array_t<uint8_t> out({py::ssize_t{3}, side, side});
    uint8_t* dst = out.mutable_data();
    int64_t label = -1;
    Status st;
    {
      py::gil_scoped_release nogil;
      st = Decode(id, epoch, dst, &label);
    }
    Check(st);
    return py::make_tuple(std::move(out), label);
  }

  // A batch: (uint8 array [N, 3, size, size], int64 array [N] of labels or -1),
  // row k = Get(indices[k]). Every index is checked before any decoding; the
  // records are decoded in order with the GIL released once, and the first
  // failure raises as Get would for that record.
  py::tuple GetMany(const py::sequence& indices, uint64_t epoch) {
    std::vector<uint64_t> ids(indices.size());
    for (size_t k = 0; k < ids.size(); ++k) ids[k] = RecordId(indices[k]);
    const py::ssize_t n = static_cast<py::ssize_t>(ids.size());
    const py::ssize_t side = options_.image_size;
    py::array_t<uint8_t> images({n, py::ssize_t{3}, side, side});
    py::array_t<int64_t> labels(n);
    uint8_t* dst = images.mutable_data();
    int64_t* label = labels.mutable_data();
    const size_t stride = options_.output_bytes();
    Status st;
    {
      py::gil_scoped_release nogil;
      for (size_t k = 0; k < ids.size() && st.ok(); ++k) {
        label[k] = -1;
        st = Decode(ids[k], epoch, dst + k * stride, &label[k]);
      }
    }
    Check(st);
    return py::make_tuple(std::move(images), std::move(labels));
  }

  // The crop window planned for a record: (x, y, width, height, flip), in the
  // stored orientation (display orientation with apply_exif).
  py::tuple Window(const py::handle& index, uint64_t epoch) {
    uint64_t id = RecordId(index);
    Blob blob;
    int64_t label = -1;
    Status st = source_.Read(id, &blob, &label);
    Result<ImageInfo> info = st.ok() ? unirecord::ProbeImage(blob.data()) : Result<ImageInfo>(st);
    if (!info.ok()) RaiseStatus(info.status().WithContext(source_.Describe(id)));
    std::unique_ptr<SampleDecoder> decoder = Unwrap(TakeDecoder());
    CropWindow w = decoder->Plan(*info, seed_, epoch, id);
    GiveBack(std::move(decoder));
    return py::make_tuple(w.x, w.y, w.width, w.height, w.flip);
  }

  uint64_t seed() const { return seed_; }

 private:
  uint64_t RecordId(const py::handle& index) const { return IndexArg(index, ds_->dataset->size()); }

  // Record `id` into `chw` (errors name the dataset, the record and its path).
  Status Decode(uint64_t id, uint64_t epoch, uint8_t* chw, int64_t* label) {
    Result<std::unique_ptr<SampleDecoder>> decoder = TakeDecoder();
    if (!decoder.ok()) return decoder.status();
    Status st = (*decoder)->DecodeRecord(source_, id, seed_, epoch, chw, options_.output_bytes(), label);
    GiveBack(std::move(decoder).value());
    return st;
  }

  Result<std::unique_ptr<SampleDecoder>> TakeDecoder() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!free_.empty()) {
        auto d = std::move(free_.back());
        free_.pop_back();
        return d;
      }
    }
    return SampleDecoder::Create(options_);
  }
  void GiveBack(std::unique_ptr<SampleDecoder> d) {
    std::lock_guard<std::mutex> lock(mu_);
    free_.push_back(std::move(d));
  }

  std::shared_ptr<PyDataset> ds_;
  SampleSource source_;
  SampleDecoderOptions options_;
  uint64_t seed_ = 0;
  std::mutex mu_;
  std::vector<std::unique_ptr<SampleDecoder>> free_;  // reused libjpeg state, one per concurrent caller
};

}  // namespace

void RegisterImage(py::module_& m) {
  py::class_<ImageReader>(m, "_ImageReader", "Native decoder behind unirecord.ImageDataset (internal).")
      .def(py::init<std::shared_ptr<PyDataset>, const py::dict&>(), py::arg("dataset"), py::arg("options"))
      .def("__len__", &ImageReader::size)
      .def("get", &ImageReader::Get, py::arg("index"), py::arg("epoch"))
      .def("get_many", &ImageReader::GetMany, py::arg("indices"), py::arg("epoch"))
      .def("window", &ImageReader::Window, py::arg("index"), py::arg("epoch"));
}

}  // namespace unirecord_py
