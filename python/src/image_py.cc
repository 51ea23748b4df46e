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
using unirecord::SampleTransform;
using unirecord::Status;

namespace {

SampleDecoderOptions MakeOptions(int kind, int size, int resize, double scale_min, double scale_max,
                                 double ratio_min, double ratio_max, double flip_probability, bool strict,
                                 bool apply_exif, bool dct_scaling) {
  if (kind != 0 && kind != 1) RaiseStatus(Status::InvalidArgument("unknown transform kind"));
  SampleDecoderOptions o;
  o.transform = kind == 0 ? SampleTransform::kRandomResizedCrop : SampleTransform::kCenterCrop;
  o.image_size = size;
  o.resize_shorter = resize;  // 0: CenterCrop alone
  o.crop.scale_min = scale_min;
  o.crop.scale_max = scale_max;
  o.crop.ratio_min = ratio_min;
  o.crop.ratio_max = ratio_max;
  o.crop.flip_probability = flip_probability;
  o.decode.strict = strict;
  o.decode.apply_exif = apply_exif;
  o.decode.dct_scaling = dct_scaling;
  o.decode.layout = unirecord::ImageLayout::kNCHW;  // torchvision's PILToTensor layout
  Check(o.Check());
  return o;
}

class ImageReader {
 public:
  ImageReader(std::shared_ptr<PyDataset> ds, const std::string& image_field, const std::string& label_field,
              int kind, int size, int resize, double scale_min, double scale_max, double ratio_min,
              double ratio_max, double flip_probability, uint64_t seed, bool strict, bool apply_exif,
              bool dct_scaling)
      : ds_(std::move(ds)),
        source_(Unwrap(SampleSource::Create(ds_->dataset, {image_field, label_field, "path"}, ds_->paths[0]))),
        options_(MakeOptions(kind, size, resize, scale_min, scale_max, ratio_min, ratio_max, flip_probability,
                             strict, apply_exif, dct_scaling)),
        seed_(seed) {}

  size_t size() const { return ds_->dataset->size(); }

  // (uint8 array [3, size, size], label or -1).
  py::tuple Get(int64_t index, uint64_t epoch) {
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
  py::tuple GetMany(const std::vector<int64_t>& indices, uint64_t epoch) {
    std::vector<uint64_t> ids(indices.size());
    for (size_t k = 0; k < indices.size(); ++k) ids[k] = RecordId(indices[k]);
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
  py::tuple Window(int64_t index, uint64_t epoch) {
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
  uint64_t RecordId(int64_t index) const { return CheckIndex(*ds_, index); }

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
      .def(py::init<std::shared_ptr<PyDataset>, const std::string&, const std::string&, int, int, int, double, double,
                    double, double, double, uint64_t, bool, bool, bool>(),
           py::arg("dataset"), py::arg("image_field"), py::arg("label_field"), py::arg("kind"), py::arg("size"),
           py::arg("resize"), py::arg("scale_min"), py::arg("scale_max"), py::arg("ratio_min"), py::arg("ratio_max"),
           py::arg("flip_probability"), py::arg("seed"), py::arg("strict"), py::arg("apply_exif"),
           py::arg("dct_scaling"))
      .def("__len__", &ImageReader::size)
      .def("get", &ImageReader::Get, py::arg("index"), py::arg("epoch"))
      .def("get_many", &ImageReader::GetMany, py::arg("indices"), py::arg("epoch"))
      .def("window", &ImageReader::Window, py::arg("index"), py::arg("epoch"));
}

}  // namespace unirecord_py
