"""Argument checks shared by the transforms, ImageDataset and Loader.

The integer, bool and index checks are the native module's (``_core``), so a
value refused in Python reads the same as one refused by the binding: the
argument's name, the type expected and the value given (TypeError), or the
allowed range (ValueError; IndexError for an index).
"""

from __future__ import annotations

import math
import operator
import os
from typing import TYPE_CHECKING, Any, Dict, Optional, Sequence, Tuple, Union

from . import _core
from ._core import Dataset

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

int_arg = _core._int_arg
bool_arg = _core._bool_arg
index_arg = _core._index_arg

# The defaults of C++'s LoaderOptions (with its sampler, crop and decode
# options) under the option names of _Loader and _ImageReader, read from a
# default-constructed one (python/src/loader_options_py.cc has the one table of the
# options): the one source of the defaults of Loader, ImageDataset and the
# transforms.
DEFAULTS: Dict[str, Any] = dict(_core._loader_defaults)

PathLike = Union[str, bytes, "os.PathLike[str]", "os.PathLike[bytes]"]


def import_torch():
    import torch  # imported lazily: Dataset and Writer do not need torch

    return torch


def open_dataset(path: Union[PathLike, Dataset], verify_checksums: bool, cache_dir: Optional[PathLike] = None,
                 cache_limit: int = 0, remote_options: Optional[Dict[str, Any]] = None) -> Dataset:
    if isinstance(path, Dataset):
        return path
    return Dataset(path, verify_checksums=verify_checksums, cache_dir=cache_dir, cache_limit=cache_limit,
                   remote_options=remote_options)


def channel_values(name: str, values: Sequence[float], positive: bool) -> Tuple[float, float, float]:
    """``values`` as 3 finite floats (one per RGB channel; ``positive``: each > 0)."""
    try:
        floats = tuple(float(v) for v in values)
    except TypeError:
        raise TypeError(f"{name} must be a sequence of 3 numbers (one per channel), not {values!r}") from None
    ok = len(floats) == 3 and all(math.isfinite(v) and (v > 0 or not positive) for v in floats)
    if not ok:
        what = "finite values > 0" if positive else "finite values"
        raise ValueError(f"{name} must be 3 {what} (one per channel), got {values!r}")
    return floats  # type: ignore[return-value]


def record_ids(dataset: Dataset, where: Optional[str], subset: Optional[Sequence[int]]) -> Optional["npt.NDArray[np.int64]"]:
    """The records ``where`` matches or ``subset`` lists, as int64 ids in that
    order; None for all records. The one check of a subset: TypeError for what
    is not a sequence of ints, IndexError for an id outside the dataset."""
    import numpy as np

    if where is not None and subset is not None:
        raise ValueError("give where= or subset=, not both")
    if where is not None:
        return dataset.query(where).astype(np.int64)
    if subset is None:
        return None
    records = len(dataset)
    if isinstance(subset, (str, bytes)) or not hasattr(subset, "__len__"):
        raise TypeError(f"subset must be a sequence of ints (record ids), not {type(subset).__name__}")
    ids = np.asarray(subset)
    if ids.size == 0:
        return np.zeros(0, dtype=np.int64)
    if ids.dtype == object and ids.ndim == 1:  # ints too large for int64/uint64, or mixed
        ids = np.array([operator.index(v) if hasattr(type(v), "__index__") else v for v in subset], dtype=object)
        out = [v for v in ids if isinstance(v, int) and not isinstance(v, bool) and not 0 <= v < records]
        if out:
            raise IndexError(f"subset id {out[0]} is out of range for a dataset of {records} records (0..{records - 1})")
    if ids.ndim != 1 or ids.dtype.kind not in "iu":
        raise TypeError(f"subset must be a sequence of ints (record ids), got an array of {ids.dtype} with shape {ids.shape}")
    outside = (ids < 0) | (ids >= records) if ids.dtype.kind == "i" else ids >= records
    if outside.any():
        first = ids[outside][0]
        raise IndexError(f"subset id {first} is out of range for a dataset of {records} records (0..{records - 1})")
    return ids.astype(np.int64)
