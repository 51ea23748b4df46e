// unirecord.Dataset's options (dataset_options_py.cc): the one table of its
// keywords, through which it opens, pickles and checks unirecord.Remote.
#ifndef UNIRECORD_PYTHON_DATASET_OPTIONS_PY_H_
#define UNIRECORD_PYTHON_DATASET_OPTIONS_PY_H_

#include <memory>
#include <string>

#include "common.h"

namespace unirecord_py {

// Dataset(path, fields=None, *, verify_checksums, ...): its parameters are
// the table's, in the table's order; opens the dataset.
std::shared_ptr<PyDataset> NewDataset(const py::object& path, const py::object& fields,
                                      const py::object& verify_checksums, const py::object& allow_partial,
                                      const py::object& bytes_as, const py::object& cache_dir,
                                      const py::object& cache_limit, const py::object& remote_options,
                                      const py::object& version, const py::object& tag,
                                      const py::object& page_cache_bytes);

// A Dataset's pickle: {keyword: value} of every option, the values that open
// the same version again.
py::dict DatasetState(const PyDataset& d);

// The Dataset a pickle holds: that dict, or the positional tuple of earlier builds.
std::shared_ptr<PyDataset> DatasetFromState(const py::object& state);

// _core._check_dataset_option: one Dataset keyword or remote option checked
// as Dataset(...) checks it, the error naming it `shown_as` (unirecord.Remote).
void CheckDatasetOption(const std::string& key, const py::handle& value, const std::string& shown_as);

// RemoteOptions' defaults besides cache_dir and cache_limit, by name (_core._remote_defaults).
py::dict RemoteDefaults();

}  // namespace unirecord_py

#endif  // UNIRECORD_PYTHON_DATASET_OPTIONS_PY_H_
