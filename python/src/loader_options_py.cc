// The options of unirecord.Loader and ImageDataset as the binding takes
// them: the one table of LoaderOptions' members by their Python names, which
// gives _core._loader_defaults, parses the options dict of _Loader and
// _ImageReader, and checks each value of the Python option groups
// (_core._check_loader_option).
#include <pybind11/stl.h>

#include <algorithm>
#include <array>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "common.h"
#include "unirecord/loader.h"

namespace unirecord_py {

using unirecord::DeviceDType;
using unirecord::ImageLayout;
using unirecord::LoaderOptions;
using unirecord::LoaderTransform;
using unirecord::OnBadRecord;
using unirecord::Status;

namespace {

// Values of LoaderOptions to and from Python: numbers as int/float (ints
// checked by IntArg: the name, the type, the range), enums by their library
// names (ImageLayoutName / ParseImageLayout, ...).
template <typename T>
py::object ToPython(const T& value) {
  return py::cast(value);
}
py::object ToPython(ImageLayout v) { return py::str(unirecord::ImageLayoutName(v)); }
py::object ToPython(OnBadRecord v) { return py::str(unirecord::OnBadRecordName(v)); }
py::object ToPython(DeviceDType v) { return py::str(unirecord::DeviceDTypeName(v)); }
py::object ToPython(LoaderTransform v) { return py::str(unirecord::SampleTransformName(v)); }
py::object ToPython(unirecord::SampleOrder v) { return py::str(unirecord::SampleOrderName(v)); }
py::object ToPython(void* v) { return py::int_(reinterpret_cast<uintptr_t>(v)); }
py::object ToPython(const std::optional<std::vector<uint64_t>>& v) { return v ? py::cast(*v) : py::none(); }
py::object ToPython(unirecord::RaggedLayout v) { return py::str(unirecord::RaggedLayoutName(v)); }
py::object ToPython(unirecord::BoxFormat v) { return py::str(unirecord::BoxFormatName(v)); }
py::object ToPython(unirecord::CoverageDetail v) { return py::str(unirecord::CoverageDetailName(v)); }
py::object ToPython(const std::optional<unirecord::PackOptions>& v) {
  if (!v) return py::none();
  py::dict d;
  d["seq_len"] = v->seq_len;
  d["strategy"] = unirecord::PackStrategyName(v->strategy);
  d["window"] = v->window;
  d["overlong"] = unirecord::PackOverlongName(v->overlong);
  d["fields"] = v->fields;
  d["pad_value"] = v->pad_value;
  d["eos"] = v->eos ? py::cast(*v->eos) : py::none();
  d["weight_unit"] = unirecord::WeightUnitName(v->weight_unit);
  return d;
}

// unirecord.Pack's options as a dict (Pack._native()), or None.
void PackFromPython(const std::string& name, const py::handle& value, std::optional<unirecord::PackOptions>* out) {
  out->reset();
  if (value.is_none()) return;
  if (!PyDict_Check(value.ptr())) {
    throw py::type_error(name + " must be a unirecord.Pack, not " + py::repr(value).cast<std::string>());
  }
  unirecord::PackOptions pack;
  for (auto item : py::reinterpret_borrow<py::dict>(value)) {
    const std::string key = py::str(item.first).cast<std::string>();
    const std::string what = name + "." + key;
    const auto named = [&](auto parsed) {  // an enum's parse error names the option
      if (!parsed.ok()) RaiseStatus(parsed.status().WithContext(what));
      return *parsed;
    };
    if (key == "seq_len") {
      pack.seq_len = IntArgAs<size_t>(what, item.second, 1);
    } else if (key == "window") {
      pack.window = IntArgAs<size_t>(what, item.second, 1);
    } else if (key == "strategy") {
      pack.strategy = named(unirecord::ParsePackStrategy(StrArg(what, item.second)));
    } else if (key == "overlong") {
      pack.overlong = named(unirecord::ParsePackOverlong(StrArg(what, item.second)));
    } else if (key == "weight_unit") {
      pack.weight_unit = named(unirecord::ParseWeightUnit(StrArg(what, item.second)));
    } else if (key == "fields") {
      if (!item.second.is_none()) {
        if (PyUnicode_Check(item.second.ptr()) || !PySequence_Check(item.second.ptr())) {
          throw py::type_error(what + " must be a list of field names, not " +
                               py::repr(item.second).cast<std::string>());
        }
        for (const py::handle f : item.second) pack.fields.push_back(StrArg(what, f));
      }
    } else if (key == "pad_value") {
      if (PyBool_Check(item.second.ptr()) || !PyNumber_Check(item.second.ptr())) {
        throw py::type_error(what + " must be a number, not " + py::repr(item.second).cast<std::string>());
      }
      pack.pad_value = item.second.cast<double>();
    } else if (key == "eos") {
      if (!item.second.is_none()) {
        pack.eos = IntArgAs<int64_t>(what, item.second, std::numeric_limits<int64_t>::min());
      }
    } else {
      RaiseStatus(Status::InvalidArgument("unknown packing option '" + key + "'"));
    }
  }
  *out = pack;
}

py::object ToPython(const std::optional<unirecord::ClipOptions>& v) {
  if (!v) return py::none();
  py::dict d;
  d["field"] = v->field;
  d["frames"] = v->frames;
  d["stride"] = v->stride;
  d["fps"] = v->fps;
  d["clips_per_video"] = v->clips_per_video;
  d["centre"] = v->centre;
  d["apply_rotation"] = v->apply_rotation;
  return d;
}
py::object ToPython(const std::optional<unirecord::AudioClipOptions>& v) {
  if (!v) return py::none();
  py::dict d;
  d["field"] = v->field;
  d["seconds"] = v->seconds;
  d["rate"] = v->rate;
  d["channels"] = v->channels;
  d["dtype"] = unirecord::AudioDTypeName(v->dtype);
  d["centre"] = v->centre;
  return d;
}

// unirecord.Clip's / AudioClip's options as a dict (their _native()), or
// None: each key through `set` (key, its shown name, the value), then the
// options' own Check (a ValueError naming the option).
template <typename Options, typename Set>
void ClipGroupFromPython(const std::string& name, const char* group, const py::handle& value,
                         std::optional<Options>* out, const Set& set) {
  out->reset();
  if (value.is_none()) return;
  if (!PyDict_Check(value.ptr())) {
    throw py::type_error(name + " must be a unirecord." + group + ", not " + py::repr(value).cast<std::string>());
  }
  Options options;
  for (auto item : py::reinterpret_borrow<py::dict>(value)) {
    const std::string key = py::str(item.first).cast<std::string>();
    if (!set(key, name + "." + key, item.second, options)) {
      RaiseStatus(Status::InvalidArgument("unknown " + std::string(group) + " option '" + key + "'"));
    }
  }
  const Status checked = options.Check();
  if (!checked.ok()) RaiseStatus(checked.WithContext(name));
  *out = options;
}

double NumberArg(const std::string& name, const py::handle& value) {
  if (PyBool_Check(value.ptr()) || !PyNumber_Check(value.ptr()) || PyUnicode_Check(value.ptr())) {
    throw py::type_error(name + " must be a number, not " + py::repr(value).cast<std::string>());
  }
  return value.cast<double>();
}

bool SetClipOption(const std::string& key, const std::string& what, const py::handle& v, unirecord::ClipOptions& o) {
  if (key == "field") o.field = StrArg(what, v);
  else if (key == "frames") o.frames = IntArgAs<int>(what, v, 1);
  else if (key == "stride") o.stride = IntArgAs<int>(what, v, 1);
  else if (key == "fps") o.fps = NumberArg(what, v);
  else if (key == "clips_per_video") o.clips_per_video = IntArgAs<int>(what, v, 1);
  else if (key == "centre") o.centre = BoolArg(what, v);
  else if (key == "apply_rotation") o.apply_rotation = BoolArg(what, v);
  else return false;
  return true;
}

bool SetAudioOption(const std::string& key, const std::string& what, const py::handle& v,
                    unirecord::AudioClipOptions& o) {
  if (key == "field") {
    o.field = StrArg(what, v);
  } else if (key == "seconds") {
    o.seconds = NumberArg(what, v);
  } else if (key == "rate") {
    o.rate = IntArgAs<int>(what, v, 1);
  } else if (key == "channels") {
    o.channels = IntArgAs<int>(what, v, 1);
  } else if (key == "dtype") {
    unirecord::Result<unirecord::media::SampleType> dtype = unirecord::ParseAudioDType(StrArg(what, v));
    if (!dtype.ok()) RaiseStatus(dtype.status().WithContext(what));
    o.dtype = *dtype;
  } else if (key == "centre") {
    o.centre = BoolArg(what, v);
  } else {
    return false;
  }
  return true;
}

template <typename T>
void FromPython(const std::string& name, const py::handle& value, int64_t minimum, T* out) {
  if constexpr (std::is_same_v<T, bool>) {
    *out = BoolArg(name, value);
  } else if constexpr (std::is_integral_v<T>) {
    *out = IntArgAs<T>(name, value, static_cast<T>(std::max<int64_t>(minimum, std::numeric_limits<T>::min())));
  } else if constexpr (std::is_floating_point_v<T>) {
    if (PyBool_Check(value.ptr()) || !PyNumber_Check(value.ptr()) || PyUnicode_Check(value.ptr())) {
      throw py::type_error(name + " must be a number, not " + py::repr(value).cast<std::string>());
    }
    *out = value.cast<T>();
  } else if constexpr (std::is_same_v<T, std::string>) {
    *out = StrArg(name, value);
  } else if constexpr (std::is_same_v<T, std::array<float, 3>>) {
    std::vector<float> v = value.cast<std::vector<float>>();
    if (v.size() != 3) throw py::value_error(name + " must hold 3 values (one per channel)");
    std::copy(v.begin(), v.end(), out->begin());
  } else if constexpr (std::is_same_v<T, void*>) {
    *out = reinterpret_cast<void*>(IntArgAs<uintptr_t>(name, value));
  } else if constexpr (std::is_same_v<T, std::optional<std::vector<uint64_t>>>) {
    if (value.is_none()) out->reset();
    else *out = value.cast<std::vector<uint64_t>>();  // checked by unirecord.Loader
  } else if constexpr (std::is_same_v<T, std::vector<double>>) {
    // None: none given. The values themselves are checked by the sampler.
    out->clear();
    if (value.is_none()) return;
    if (PyUnicode_Check(value.ptr()) || PyBytes_Check(value.ptr()) || !py::isinstance<py::sequence>(value)) {
      throw py::type_error(name + " must be a sequence of numbers, not " +
                           py::repr(value).cast<std::string>());
    }
    for (const py::handle item : py::reinterpret_borrow<py::sequence>(value)) {
      double v = 0;
      FromPython(name, item, 0, &v);
      out->push_back(v);
    }
  } else if constexpr (std::is_same_v<T, std::optional<unirecord::PackOptions>>) {
    PackFromPython(name, value, out);
  } else if constexpr (std::is_same_v<T, std::optional<unirecord::ClipOptions>>) {
    ClipGroupFromPython(name, "Clip", value, out, SetClipOption);
  } else if constexpr (std::is_same_v<T, std::optional<unirecord::AudioClipOptions>>) {
    ClipGroupFromPython(name, "AudioClip", value, out, SetAudioOption);
  } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
    out->clear();
    if (value.is_none()) return;
    if (PyUnicode_Check(value.ptr()) || !PySequence_Check(value.ptr())) {
      throw py::type_error(name + " must be a list of field names, not " +
                           py::repr(value).cast<std::string>());
    }
    for (const py::handle item : value) out->push_back(StrArg(name, item));
  } else {
    // An enum: its name, parsed by the library.
    const std::string text = StrArg(name, value);
    unirecord::Result<T> parsed = [&] {
      if constexpr (std::is_same_v<T, ImageLayout>) return unirecord::ParseImageLayout(text);
      else if constexpr (std::is_same_v<T, OnBadRecord>) return unirecord::ParseOnBadRecord(text);
      else if constexpr (std::is_same_v<T, DeviceDType>) return unirecord::ParseDeviceDType(text);
      else if constexpr (std::is_same_v<T, LoaderTransform>) return unirecord::ParseSampleTransform(text);
      else if constexpr (std::is_same_v<T, unirecord::RaggedLayout>) return unirecord::ParseRaggedLayout(text);
      else if constexpr (std::is_same_v<T, unirecord::BoxFormat>) return unirecord::ParseBoxFormat(text);
      else if constexpr (std::is_same_v<T, unirecord::CoverageDetail>) return unirecord::ParseCoverageDetail(text);
      else return unirecord::ParseSampleOrder(text);
    }();
    if (!parsed.ok()) RaiseStatus(parsed.status().WithContext(name));
    *out = *parsed;
  }
}

// One option of unirecord.Loader / ImageDataset as the binding sees it: its
// name (the key the Python side passes: an option group's, or derived from a
// transform or a device), its value in a LoaderOptions, and how a Python
// value is checked and stored there (errors name it as `shown_as`: the
// option's name, or the attribute of the group that holds it).
struct LoaderOption {
  const char* name;
  py::object (*get)(const LoaderOptions&);
  void (*set)(const std::string& shown_as, const py::handle&, LoaderOptions&);
};

#define UREC_LOADER_OPTION(NAME, MEMBER, MINIMUM)                                                         \
  LoaderOption {                                                                                           \
    NAME, [](const LoaderOptions& o) { return ToPython(o.MEMBER); },                                       \
        [](const std::string& shown_as, const py::handle& v, LoaderOptions& o) {                           \
          FromPython(shown_as, v, MINIMUM, &o.MEMBER);                                                     \
        }                                                                                                  \
  }

// The one list of the options: _core._loader_defaults (the defaults of the
// Python signatures) and the parsing of _Loader's and _ImageReader's options
// both come from it; python/tests/test_defaults.py checks that unirecord.Loader
// (as a keyword or an attribute of its option groups) and ImageDataset take
// each one (or derive it: transform, device).
const std::vector<LoaderOption>& LoaderOptionTable() {
  static const std::vector<LoaderOption> table = {
      UREC_LOADER_OPTION("batch_size", batch_size, 1),
      UREC_LOADER_OPTION("drop_last", drop_last, 0),
      UREC_LOADER_OPTION("subset", subset, 0),
      UREC_LOADER_OPTION("order", sampler.order, 0),
      UREC_LOADER_OPTION("seed", sampler.seed, 0),
      UREC_LOADER_OPTION("num_shards", sampler.num_shards, 1),
      UREC_LOADER_OPTION("shard_id", sampler.shard_id, 0),
      UREC_LOADER_OPTION("block_size", sampler.block_size, 1),
      UREC_LOADER_OPTION("window", sampler.window, 0),
      UREC_LOADER_OPTION("sampler_drop_last", sampler.drop_last, 0),
      UREC_LOADER_OPTION("weights", sampler.weights, 0),
      UREC_LOADER_OPTION("epoch_size", sampler.epoch_size, 0),
      // From the transform (unirecord.RandomResizedCrop / CenterCrop).
      UREC_LOADER_OPTION("transform", transform, 0),
      UREC_LOADER_OPTION("size", image_size, 1),
      UREC_LOADER_OPTION("resize", resize_shorter, 0),
      UREC_LOADER_OPTION("scale_min", crop.scale_min, 0),
      UREC_LOADER_OPTION("scale_max", crop.scale_max, 0),
      UREC_LOADER_OPTION("ratio_min", crop.ratio_min, 0),
      UREC_LOADER_OPTION("ratio_max", crop.ratio_max, 0),
      UREC_LOADER_OPTION("flip_probability", crop.flip_probability, 0),
      UREC_LOADER_OPTION("strict", decode.strict, 0),
      UREC_LOADER_OPTION("apply_exif", decode.apply_exif, 0),
      UREC_LOADER_OPTION("dct_scaling", decode.dct_scaling, 0),
      UREC_LOADER_OPTION("max_pixels", decode.limits.max_pixels, 1),
      UREC_LOADER_OPTION("layout", layout, 0),
      UREC_LOADER_OPTION("image_field", image_field, 0),
      UREC_LOADER_OPTION("label_field", label_field, 0),
      UREC_LOADER_OPTION("path_field", path_field, 0),
      UREC_LOADER_OPTION("fields", fields, 0),
      UREC_LOADER_OPTION("ragged", ragged, 0),
      UREC_LOADER_OPTION("pad_value", pad_value, 0),
      UREC_LOADER_OPTION("boxes", boxes_field, 0),
      UREC_LOADER_OPTION("box_format", box_format, 0),
      UREC_LOADER_OPTION("box_aligned", box_aligned, 0),
      UREC_LOADER_OPTION("masks", masks, 0),
      UREC_LOADER_OPTION("threads", threads, 0),
      UREC_LOADER_OPTION("prefetch", prefetch, 1),
      UREC_LOADER_OPTION("on_bad_record", on_bad_record, 0),
      UREC_LOADER_OPTION("max_consecutive_bad", max_consecutive_bad, 1),
      UREC_LOADER_OPTION("pack", pack, 0),
      UREC_LOADER_OPTION("clip", clip, 0),
      UREC_LOADER_OPTION("audio", audio, 0),
      UREC_LOADER_OPTION("coverage", coverage, 0),
      // From device, dtype, mean and std.
      UREC_LOADER_OPTION("cuda_device", cuda.device, -1),
      UREC_LOADER_OPTION("cuda_dtype", cuda.dtype, 0),
      UREC_LOADER_OPTION("cuda_normalize", cuda.normalize, 0),
      UREC_LOADER_OPTION("cuda_mean", cuda.mean, 0),
      UREC_LOADER_OPTION("cuda_std", cuda.std, 0),
      UREC_LOADER_OPTION("cuda_stream", cuda.consumer_stream, 0),
      UREC_LOADER_OPTION("cuda_host_emulation", cuda.host_emulation, 0),
  };
  return table;
}

#undef UREC_LOADER_OPTION

py::dict LoaderDefaults() {
  const LoaderOptions defaults;
  py::dict d;
  for (const LoaderOption& option : LoaderOptionTable()) d[option.name] = option.get(defaults);
  return d;
}

const LoaderOption* FindLoaderOption(const std::string& key) {
  const auto& table = LoaderOptionTable();
  auto it = std::find_if(table.begin(), table.end(), [&](const LoaderOption& e) { return key == e.name; });
  return it == table.end() ? nullptr : &*it;
}

// _core._check_loader_option: the check of one option, for the Python
// option groups (unirecord.Sampler, ...), which check themselves when made.
void CheckLoaderOption(const std::string& key, const py::handle& value, const std::string& shown_as) {
  const LoaderOption* option = FindLoaderOption(key);
  if (option == nullptr) RaiseStatus(Status::InvalidArgument("unknown loader option '" + key + "'"));
  LoaderOptions scratch;
  option->set(shown_as, value, scratch);
}

}  // namespace

LoaderOptions ParseLoaderOptions(const py::dict& options) {
  LoaderOptions o;
  std::string unknown;
  for (auto item : options) {
    const std::string key = py::str(item.first).cast<std::string>();
    const LoaderOption* option = FindLoaderOption(key);
    if (option == nullptr) unknown += (unknown.empty() ? "" : ", ") + key;
    else option->set(key, item.second, o);
  }
  if (!unknown.empty()) RaiseStatus(Status::InvalidArgument("unknown loader option(s): " + unknown));
  o.cuda.layout = o.layout;  // on a device the kernel makes the layout (the host batch stays NHWC)
  return o;
}

void RegisterLoaderOptions(py::module_& m) {
  // The defaults of LoaderOptions under the option names of _Loader.
  m.attr("_loader_defaults") = LoaderDefaults();
  m.def("_check_loader_option", &CheckLoaderOption, py::arg("key"), py::arg("value"), py::arg("shown_as"),
        "Checks value as the loader option `key` (a key of _loader_defaults); the error names it `shown_as`.");
}

}  // namespace unirecord_py
