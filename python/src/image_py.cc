// unirecord._ImageReader: the native side of unirecord.ImageDataset. One call
// reads a record's JPEG zero-copy, plans the crop (image.h), decodes only the
// window resized to size x size, and returns uint8 CHW (PILToTensor layout).
// get_many does the same for a whole batch in one call (one GIL release).
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <mutex>

#include "common.h"
#include "unirecord/image.h"

namespace unirecord_py {

using unirecord::CropWindow;
using unirecord::DecodeOptions;
using unirecord::FieldType;
using unirecord::JpegDecoder;
using unirecord::JpegInfo;
using unirecord::RandomResizedCropParams;
using unirecord::Status;

namespace {

enum class Kind { kRandomResizedCrop = 0, kCenterCrop = 1 };

class ImageReader {
 public:
  ImageReader(std::shared_ptr<PyDataset> ds, const std::string& image_field, const std::string& label_field,
              int kind, int size, int resize, double scale_min, double scale_max, double ratio_min,
              double ratio_max, double flip_probability, uint64_t seed, bool strict, bool apply_exif,
              bool dct_scaling)
      : ds_(std::move(ds)), size_(size), resize_(resize), seed_(seed) {
    const auto& schema = ds_->dataset->schema();
    image_field_ = Unwrap(schema.FindField(image_field));
    if (schema.field(image_field_).type != FieldType::kBytes) {
      RaiseStatus(Status::InvalidArgument("image field '" + image_field + "' is not a bytes field"));
    }
    if (!label_field.empty()) {
      size_t l = Unwrap(schema.FindField(label_field));
      const auto& f = schema.field(l);
      if ((f.type != FieldType::kInt32 && f.type != FieldType::kInt64) || f.is_array()) {
        RaiseStatus(Status::InvalidArgument("label field '" + label_field + "' is not an int32/int64 scalar"));
      }
      label_field_ = static_cast<int>(l);
      label_indexed_ = f.indexed;
    }
    path_field_ = schema.FieldIndex("path");
    if (path_field_ >= 0 && schema.field(path_field_).type != FieldType::kString) path_field_ = -1;
    if (kind != 0 && kind != 1) RaiseStatus(Status::InvalidArgument("unknown transform kind"));
    kind_ = static_cast<Kind>(kind);
    Check(unirecord::CheckOutputSize(size, size, decode_.limits).WithContext("crop size"));
    if (kind_ == Kind::kCenterCrop && resize > 0 && resize < size) {
      RaiseStatus(Status::InvalidArgument("CenterCrop: resize (" + std::to_string(resize) +
                                          ") must be at least size (" + std::to_string(size) + ")"));
    }
    crop_.scale_min = scale_min;
    crop_.scale_max = scale_max;
    crop_.ratio_min = ratio_min;
    crop_.ratio_max = ratio_max;
    crop_.flip_probability = flip_probability;
    decode_.strict = strict;
    decode_.apply_exif = apply_exif;
    decode_.dct_scaling = dct_scaling;
  }

  size_t size() const { return ds_->dataset->size(); }

  // (uint8 array [3, size, size], label or -1).
  py::tuple Get(int64_t index, uint64_t epoch) {
    uint64_t id = RecordId(index);
    py::array_t<uint8_t> out({py::ssize_t{3}, py::ssize_t{size_}, py::ssize_t{size_}});
    uint8_t* dst = out.mutable_data();
    int64_t label = -1;
    Status st;
    {
      py::gil_scoped_release nogil;
      st = Decode(id, epoch, dst, &label);
    }
    if (!st.ok()) RaiseStatus(WithRecordContext(st, id));
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
    py::array_t<uint8_t> images({n, py::ssize_t{3}, py::ssize_t{size_}, py::ssize_t{size_}});
    py::array_t<int64_t> labels(n);
    uint8_t* dst = images.mutable_data();
    int64_t* label = labels.mutable_data();
    const size_t stride = 3 * static_cast<size_t>(size_) * static_cast<size_t>(size_);
    Status st;
    size_t k = 0;
    {
      py::gil_scoped_release nogil;
      for (; k < ids.size(); ++k) {
        label[k] = -1;
        st = Decode(ids[k], epoch, dst + k * stride, &label[k]);
        if (!st.ok()) break;
      }
    }
    if (!st.ok()) RaiseStatus(WithRecordContext(st, ids[k]));
    return py::make_tuple(std::move(images), std::move(labels));
  }

  // The crop window planned for a record: (x, y, width, height, flip), in the
  // stored orientation (display orientation with apply_exif).
  py::tuple Window(int64_t index, uint64_t epoch) {
    uint64_t id = RecordId(index);
    auto blob = ds_->dataset->GetBlob(id, image_field_);
    if (!blob.ok()) RaiseStatus(blob.status());
    JpegInfo info = Unwrap(unirecord::ProbeJpeg(blob->data()));
    CropWindow w = Plan(info, id, epoch);
    return py::make_tuple(w.x, w.y, w.width, w.height, w.flip);
  }

  uint64_t seed() const { return seed_; }

 private:
  uint64_t RecordId(int64_t index) const { return CheckIndex(*ds_, index); }

  CropWindow Plan(const JpegInfo& info, uint64_t id, uint64_t epoch) const {
    int w = info.window_width(decode_.apply_exif);
    int h = info.window_height(decode_.apply_exif);
    if (kind_ == Kind::kRandomResizedCrop) {
      return unirecord::PlanRandomResizedCrop(w, h, crop_, seed_, epoch, id);
    }
    // resize <= 0: no resize first (torchvision's CenterCrop alone); an image
    // smaller than the crop is scaled up (torchvision would pad it).
    int shorter = resize_ > 0 ? resize_ : std::max(std::min(w, h), size_);
    return unirecord::PlanCenterCrop(w, h, size_, shorter);
  }

  Status Decode(uint64_t id, uint64_t epoch, uint8_t* chw, int64_t* label) {
    const unirecord::Dataset& ds = *ds_->dataset;
    if (label_field_ >= 0) {
      if (label_indexed_) {
        auto r = ds.GetIndexedInt64(id, static_cast<size_t>(label_field_));
        if (!r.ok()) return r.status();
        *label = *r;
      } else {
        auto rec = ds.Get(id);
        if (!rec.ok()) return rec.status();
        auto r = rec->GetInt64(static_cast<size_t>(label_field_));
        if (!r.ok()) return r.status();
        *label = *r;
      }
    }
    auto blob = ds.GetBlob(id, image_field_);
    if (!blob.ok()) return blob.status();
    auto info = unirecord::ProbeJpeg(blob->data());
    if (!info.ok()) return info.status();
    UREC_RETURN_IF_ERROR(unirecord::CheckDecodable(*info, decode_.limits));
    std::unique_ptr<JpegDecoder> decoder = TakeDecoder();
    thread_local std::vector<uint8_t> hwc;
    const size_t plane = static_cast<size_t>(size_) * static_cast<size_t>(size_);
    hwc.resize(plane * 3);
    Status st;
    if (kind_ == Kind::kCenterCrop && resize_ > 0) {
      // torchvision's Resize + CenterCrop, byte for byte unless DCT scaling applies.
      st = decoder->DecodeCenterCrop(blob->data(), size_, resize_, hwc.data(), hwc.size());
    } else {
      st = decoder->DecodeCropResized(blob->data(), Plan(*info, id, epoch), size_, size_, hwc.data(), hwc.size());
    }
    GiveBack(std::move(decoder));
    if (!st.ok()) return st;
    unirecord::HwcToChw(hwc.data(), plane, chw);  // torchvision's PILToTensor layout
    return Status::OK();
  }

  Status WithRecordContext(const Status& st, uint64_t id) const {
    std::string where = "dataset " + ds_->paths[0] + ": record " + std::to_string(id);
    if (path_field_ >= 0) {
      auto rec = ds_->dataset->Get(id);
      if (rec.ok()) {
        auto p = rec->GetString(static_cast<size_t>(path_field_));
        if (p.ok()) where += " (" + std::string(*p) + ")";
      }
    }
    return st.WithContext(where);
  }

  std::unique_ptr<JpegDecoder> TakeDecoder() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!free_.empty()) {
        auto d = std::move(free_.back());
        free_.pop_back();
        return d;
      }
    }
    return std::make_unique<JpegDecoder>(decode_);
  }
  void GiveBack(std::unique_ptr<JpegDecoder> d) {
    std::lock_guard<std::mutex> lock(mu_);
    free_.push_back(std::move(d));
  }

  std::shared_ptr<PyDataset> ds_;
  size_t image_field_ = 0;
  int label_field_ = -1;
  bool label_indexed_ = false;
  int path_field_ = -1;
  Kind kind_ = Kind::kRandomResizedCrop;
  int size_ = 224;
  int resize_ = 0;
  uint64_t seed_ = 0;
  RandomResizedCropParams crop_;
  DecodeOptions decode_;
  std::mutex mu_;
  std::vector<std::unique_ptr<JpegDecoder>> free_;  // reused libjpeg state, one per concurrent caller
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
