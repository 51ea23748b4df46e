"""unirecord: record files for deep-learning training, from Python.

* :class:`Dataset` - map-style access to any unirecord dataset (picklable,
  zero-copy ``bytes`` fields), usable in ``torch.utils.data.DataLoader``.
* :class:`ImageDataset` - ``(uint8 CHW tensor, label)`` samples decoded by the
  native crop-before-decode JPEG decoder; a drop-in for torchvision's
  ``ImageFolder`` + ``RandomResizedCrop``/``Resize``+``CenterCrop`` + ``PILToTensor``.
* :class:`Loader` - the native multi-threaded loader: whole batches as torch
  tensors that share the loader's buffers (DLPack, no copy), no worker processes.
* :class:`Writer`, :func:`convert_imagefolder` - create datasets.

Everything is a thin layer over the C++ library (``unirecord._core``).
See docs/python.md for the full guide.
"""

from __future__ import annotations

import math
import mmap
import operator
import os
import struct
import warnings
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple, Union

from . import _core
from ._core import (
    CorruptRecordError,
    Dataset,
    Field,
    NotSupportedError,
    Schema,
    Writer,
    convert_imagefolder,
)

__version__ = "0.1.0"

__all__ = [
    "CenterCrop",
    "CorruptRecordError",
    "Dataset",
    "Field",
    "IMAGENET_MEAN",
    "IMAGENET_STD",
    "ImageDataset",
    "Loader",
    "NotSupportedError",
    "RandomResizedCrop",
    "Schema",
    "Writer",
    "convert_imagefolder",
    "cuda_available",
]

# ImageNet statistics on the 0..1 scale, as torchvision's Normalize uses them
# (LoaderOptions' CUDA defaults are these times 255).
IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)

# The defaults of C++'s LoaderOptions (with its sampler, crop and decode
# options), read from a default-constructed one: the one source of the
# defaults of Loader, ImageDataset and the transforms below.
_DEFAULTS: Dict[str, Any] = dict(_core._loader_defaults)


def _torch():
    import torch  # imported lazily: Dataset and Writer do not need torch

    return torch


# ------------------------------------------------------------- transforms ---


class RandomResizedCrop:
    """torchvision's ``RandomResizedCrop(size, scale, ratio)`` (+ ``RandomHorizontalFlip``
    when ``flip``), planned by the native crop planner and decoded crop-first.

    ``flip``: ``False`` (no flip), ``True`` (probability 0.5) or a probability.
    The random numbers are keyed by ``(seed, epoch, record id)``: the same
    triple gives the same crop in every process, thread and run.
    """

    def __init__(
        self,
        size: Union[int, Tuple[int, int]],
        scale: Tuple[float, float] = (_DEFAULTS["scale_min"], _DEFAULTS["scale_max"]),
        ratio: Tuple[float, float] = (_DEFAULTS["ratio_min"], _DEFAULTS["ratio_max"]),
        flip: Union[bool, float] = False,
    ) -> None:
        self.size = _check_size(size)
        self.scale = (float(scale[0]), float(scale[1]))
        self.ratio = (float(ratio[0]), float(ratio[1]))
        if not (0.0 < self.scale[0] <= self.scale[1] <= 1.0):
            raise ValueError(f"RandomResizedCrop: scale must satisfy 0 < min <= max <= 1, got {scale}")
        if not (0.0 < self.ratio[0] <= self.ratio[1]):
            raise ValueError(f"RandomResizedCrop: ratio must satisfy 0 < min <= max, got {ratio}")
        p = 0.5 if flip is True else 0.0 if flip is False else float(flip)
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"RandomResizedCrop: flip probability must be in [0, 1], got {flip}")
        self.flip = flip
        self.flip_probability = p

    def _params(self) -> Dict[str, Any]:
        return dict(
            kind=0,
            size=self.size,
            resize=0,
            scale_min=self.scale[0],
            scale_max=self.scale[1],
            ratio_min=self.ratio[0],
            ratio_max=self.ratio[1],
            flip_probability=self.flip_probability,
        )

    def __repr__(self) -> str:
        return (
            f"unirecord.RandomResizedCrop({self.size}, scale={self.scale}, "
            f"ratio=({self.ratio[0]:.4g}, {self.ratio[1]:.4g}), flip={self.flip!r})"
        )


class CenterCrop:
    """torchvision's ``Resize(resize)`` + ``CenterCrop(size)`` (``resize`` = the
    shorter side after resizing, antialiased bilinear as ``Resize`` on PIL images),
    computed as one crop window of the original and decoded crop-first.

    ``resize=None``: no resize, only the center crop (as ``CenterCrop`` alone;
    an image smaller than ``size`` is scaled up instead of zero-padded).
    The evaluation transform for ImageNet is ``CenterCrop(224, resize=256)``.
    """

    def __init__(self, size: Union[int, Tuple[int, int]], resize: Optional[int] = None) -> None:
        self.size = _check_size(size)
        if resize is not None:
            resize = int(resize)
            if resize < self.size:
                raise ValueError(f"CenterCrop: resize ({resize}) must be at least size ({self.size})")
        self.resize = resize

    def _params(self) -> Dict[str, Any]:
        return dict(
            kind=1,
            size=self.size,
            resize=self.resize or 0,
            scale_min=_DEFAULTS["scale_min"],  # unused by a center crop
            scale_max=_DEFAULTS["scale_max"],
            ratio_min=_DEFAULTS["ratio_min"],
            ratio_max=_DEFAULTS["ratio_max"],
            flip_probability=0.0,
        )

    def __repr__(self) -> str:
        return f"unirecord.CenterCrop({self.size}, resize={self.resize})"


def _int_arg(name: str, value: Any, minimum: int, maximum: Optional[int] = None) -> int:
    """``value`` as an int (an int or numpy integer; not a str, float or bool)
    within ``[minimum, maximum]``; the errors name the argument and the range."""
    if isinstance(value, bool) or not hasattr(type(value), "__index__"):
        raise TypeError(f"{name} must be an int, not {type(value).__name__} ({value!r})")
    v = operator.index(value)
    if v < minimum or (maximum is not None and v > maximum):
        allowed = f"{minimum}..{maximum}" if maximum is not None else f">= {minimum}"
        raise ValueError(f"{name}={v} is out of range ({allowed})")
    return v


def _subset_ids(subset: Sequence[int]) -> List[int]:
    """Record ids as a list of ints >= 0 (the Loader checks the upper bound)."""
    import numpy as np

    ids = np.asarray(subset)
    if ids.size == 0:
        return []
    if ids.ndim != 1 or ids.dtype.kind not in "iu":
        raise TypeError(f"subset must be a sequence of ints, got an array of {ids.dtype} with shape {ids.shape}")
    if ids.dtype.kind == "i" and ids.min() < 0:
        raise ValueError(f"subset id {int(ids.min())} is out of range (record ids are >= 0)")
    return ids.tolist()


def _std_arg(std: Sequence[float]) -> Tuple[float, ...]:
    values = tuple(float(v) for v in std)
    if len(values) != 3 or not all(math.isfinite(v) and v > 0 for v in values):
        raise ValueError(f"std must be 3 finite values > 0 (one per channel), got {std!r}")
    return values


def _check_size(size: Any) -> int:
    if isinstance(size, (tuple, list)):
        if len(size) == 2 and size[0] == size[1]:
            size = size[0]
        else:
            raise ValueError(f"only square outputs are supported, got size={size!r}")
    return _int_arg("size", size, 1)


_NativeCrop = Union[RandomResizedCrop, CenterCrop]


def _default_crop() -> RandomResizedCrop:
    """LoaderOptions' default: RandomResizedCrop(224) + RandomHorizontalFlip(0.5)."""
    return RandomResizedCrop(_DEFAULTS["size"], flip=_DEFAULTS["flip_probability"])


def _is_torchvision(t: Any, name: str) -> bool:
    cls = type(t)
    return cls.__name__ == name and cls.__module__.startswith("torchvision.transforms")


def _shorter_side(t: Any) -> Optional[int]:
    """The shorter side of a torchvision Resize(int) or Resize([int]); None for an exact (h, w) size."""
    size = t.size
    if isinstance(size, (list, tuple)):
        if len(size) != 1:
            return None
        size = size[0]
    return int(size)


def _check_bilinear(t: Any) -> None:
    mode = getattr(t.interpolation, "value", t.interpolation)
    if mode not in ("bilinear", 2):  # 2: PIL.Image.BILINEAR in older torchvision
        raise ValueError(f"{type(t).__name__} runs natively with bilinear interpolation only, not {mode!r}")
    if getattr(t, "antialias", None) is False:
        raise ValueError(f"{type(t).__name__} runs natively antialiased (as on PIL images), not antialias=False")
    if getattr(t, "max_size", None) is not None:
        raise ValueError("Resize(max_size=...) does not run natively")


def _split_transform(transform: Any) -> Tuple[Optional[_NativeCrop], Optional[Callable[[Any], Any]]]:
    """``transform`` as (the native crop it starts with, the callable for the rest).

    A unirecord crop is all native. A torchvision transform (or ``Compose``) has
    its leading ``RandomResizedCrop`` [+ ``RandomHorizontalFlip``], or
    ``Resize(int)`` + ``CenterCrop``, or ``CenterCrop`` taken over by the native
    decoder, then a ``PILToTensor`` (nothing left to do: the native output is
    its layout) or ``ToTensor`` (becomes ``ConvertImageDtype(float32)``, the same
    values), also without a crop before them; what follows runs on the uint8 CHW
    tensor. Any other callable runs whole on the native output."""
    if transform is None:
        return None, None
    if isinstance(transform, (RandomResizedCrop, CenterCrop)):
        return transform, None
    if not callable(transform):
        raise TypeError(f"transform must be a unirecord crop or a callable, not {type(transform).__name__}")
    steps = list(transform.transforms) if _is_torchvision(transform, "Compose") else [transform]
    crop: Optional[_NativeCrop] = None
    k = 0
    if k < len(steps) and _is_torchvision(steps[k], "RandomResizedCrop"):
        t = steps[k]
        _check_bilinear(t)
        flip: Union[bool, float] = False
        k += 1
        if k < len(steps) and _is_torchvision(steps[k], "RandomHorizontalFlip"):
            flip = float(steps[k].p)
            k += 1
        crop = RandomResizedCrop(tuple(t.size), scale=tuple(t.scale), ratio=tuple(t.ratio), flip=flip)
    elif k < len(steps) and _is_torchvision(steps[k], "Resize"):
        t = steps[k]
        _check_bilinear(t)
        shorter = _shorter_side(t)
        if shorter is None or k + 1 >= len(steps) or not _is_torchvision(steps[k + 1], "CenterCrop"):
            raise ValueError("a leading torchvision Resize runs natively as Resize(int) followed by CenterCrop only")
        crop = CenterCrop(tuple(steps[k + 1].size), resize=shorter)
        k += 2
    elif k < len(steps) and _is_torchvision(steps[k], "CenterCrop"):
        crop = CenterCrop(tuple(steps[k].size))
        k += 1
    if k < len(steps):
        if _is_torchvision(steps[k], "PILToTensor"):
            k += 1
        elif _is_torchvision(steps[k], "ToTensor"):
            import torchvision.transforms as T

            steps[k] = T.ConvertImageDtype(_torch().float32)
    rest = steps[k:]
    if not rest:
        return crop, None
    return crop, rest[0] if len(rest) == 1 else type(transform)(rest)


def _transform_params(crop: _NativeCrop) -> Dict[str, Any]:
    if not isinstance(crop, (RandomResizedCrop, CenterCrop)):
        raise TypeError(
            "the native crop must be unirecord.RandomResizedCrop or unirecord.CenterCrop, "
            f"not {type(crop).__name__}"
        )
    return crop._params()


def _open(path: Any, verify_checksums: bool = True) -> Dataset:
    if isinstance(path, Dataset):
        return path
    return Dataset(path, verify_checksums=verify_checksums)


# ----------------------------------------------------------- ImageDataset ---


class ImageDataset:
    """Map-style dataset of ``(image, label)`` over a dataset of JPEG records
    (e.g. one made by :func:`convert_imagefolder`): a drop-in for torchvision's
    ``ImageFolder``, with the same ``classes``, ``class_to_idx``, ``samples``,
    ``targets``, ``transform`` and ``target_transform``.

    ``ds[i]`` reads record ``i``'s JPEG zero-copy, plans the native crop on its
    header, decodes only that window (libjpeg-turbo, DCT-scaled when much larger
    than the output), resizes it to ``size x size`` (antialiased bilinear, as
    torchvision's ``Resize`` on PIL images) and makes torchvision's
    ``PILToTensor`` layout (uint8 RGB, CHW). Then ``transform`` (if any) is
    called on that tensor and ``target_transform`` (if any) on the label.

    ``transform``: a unirecord crop (``RandomResizedCrop`` / ``CenterCrop``,
    all native), or a torchvision transform / ``Compose``: its leading
    ``RandomResizedCrop`` [+ ``RandomHorizontalFlip``], ``Resize(int)`` +
    ``CenterCrop`` or ``CenterCrop``, then ``PILToTensor`` / ``ToTensor``, run
    natively (bilinear, antialiased; ``ToTensor`` becomes a uint8 -> float32
    conversion, the same values); the rest runs on the uint8 CHW tensor, as
    after ``PILToTensor`` in ``ImageFolder``. Any other callable runs whole on
    that tensor, after the native ``crop`` (default
    ``RandomResizedCrop(224, flip=True)``). Random flips and crops of the
    native part are drawn from ``(seed, epoch, record id)``, not torch's RNG.

    Epochs: random crops are keyed by ``(seed, epoch, record id)``. Call
    :meth:`set_epoch` before each epoch (as with ``DistributedSampler``). The
    epoch lives in a small shared memory page, so DataLoader workers forked
    before the call (``persistent_workers=True``) see it too; with the
    ``spawn`` start method the epoch is copied when workers start.

    ``label_field=None``: no labels (the label is then -1). ``root``: the
    folder the dataset was converted from; ``samples`` paths are joined to it
    (as ImageFolder's), else they are relative. The object is picklable
    (path + options); each worker re-maps the files.

    ``where=expression``: only the records matching it (``Dataset.query``,
    docs/query.md); item ``i`` is then record ``ids[i]`` of the ascending
    ``ids`` it matched. ``subset=ids``: those records, in that order.
    """

    def __init__(
        self,
        path: Any,
        transform: Optional[Union[_NativeCrop, Callable[[Any], Any]]] = None,
        target_transform: Optional[Callable[[int], Any]] = None,
        *,
        crop: Optional[_NativeCrop] = None,
        seed: int = _DEFAULTS["seed"],
        root: Optional[Union[str, "os.PathLike[str]"]] = None,
        image_field: str = _DEFAULTS["image_field"],
        label_field: Optional[str] = _DEFAULTS["label_field"],
        path_field: str = _DEFAULTS["path_field"],
        strict: bool = _DEFAULTS["strict"],
        apply_exif: bool = _DEFAULTS["apply_exif"],
        dct_scaling: bool = _DEFAULTS["dct_scaling"],
        verify_checksums: bool = True,
        where: Optional[str] = None,
        subset: Optional[Sequence[int]] = None,
    ) -> None:
        native, self.transform = _split_transform(transform)
        if native is not None and crop is not None:
            raise ValueError("transform starts with a crop and crop= is given too: give the crop once")
        self.crop: _NativeCrop = native or crop or _default_crop()
        self.target_transform = target_transform
        self.seed = _int_arg("seed", seed, 0, 2**64 - 1)
        self.root = None if root is None else os.fspath(root)
        self.image_field = image_field
        self.label_field = label_field
        self.path_field = path_field
        self.strict = bool(strict)
        self.apply_exif = bool(apply_exif)
        self.dct_scaling = bool(dct_scaling)
        self.dataset = _open(path, verify_checksums)
        # where= / subset=: item i is record ids[i].
        self.where = where
        self.ids = None if where is None else self.dataset.query(where)
        if subset is not None:
            if where is not None:
                raise ValueError("give where= or subset=, not both")
            import numpy as np

            self.ids = np.asarray(subset, dtype=np.int64)
            if self.ids.ndim != 1 or ((self.ids < 0) | (self.ids >= len(self.dataset))).any():
                raise ValueError(f"subset must be a list of record ids in [0, {len(self.dataset)})")
        self._epoch = mmap.mmap(-1, 8)  # MAP_SHARED|MAP_ANONYMOUS: shared with forked workers
        self._make_reader()

    def _make_reader(self) -> None:
        self._reader = _core._ImageReader(
            self.dataset,
            self.image_field,
            self.label_field or "",
            seed=self.seed,
            strict=self.strict,
            apply_exif=self.apply_exif,
            dct_scaling=self.dct_scaling,
            **_transform_params(self.crop),
        )

    def __len__(self) -> int:
        return len(self._reader) if self.ids is None else len(self.ids)

    def _record(self, index: int) -> int:
        """The record id of item ``index`` (the index itself without ``where``)."""
        if self.ids is None:
            return index
        n = len(self.ids)
        i = int(index)
        if not -n <= i < n:
            raise IndexError(f"index {i} out of range ({n} records match {self.where!r})")
        return int(self.ids[i])

    def _finish(self, image: Any, label: int) -> Tuple[Any, Any]:
        if self.transform is not None:
            image = self.transform(image)
        if self.target_transform is not None:
            label = self.target_transform(label)
        return image, label

    def __getitem__(self, index: int) -> Tuple[Any, Any]:
        image, label = self._reader.get(self._record(index), self.epoch)
        return self._finish(_torch().from_numpy(image), label)

    def __getitems__(self, indices: Sequence[int]) -> List[Tuple[Any, Any]]:
        """``[self[i] for i in indices]``, decoded in one native call (the GIL released
        once for the batch). torch's DataLoader calls it with each batch's indices
        when it is defined, then ``collate_fn``; ``default_collate`` gives the same
        batch as from per-item fetching. Without ``transform``, the images are views
        of one uint8 tensor ``[len(indices), 3, size, size]``, which each of them
        keeps alive."""
        images, labels = self._reader.get_many([self._record(i) for i in indices], self.epoch)
        pairs = zip(_torch().from_numpy(images).unbind(0), labels.tolist())
        return [self._finish(image, label) for image, label in pairs]

    @property
    def epoch(self) -> int:
        """The epoch the random crops are drawn for."""
        return struct.unpack_from("<q", self._epoch)[0]

    def set_epoch(self, epoch: int) -> None:
        """Selects the epoch of the random crops (call before each epoch)."""
        if epoch < 0:
            raise ValueError(f"epoch must be >= 0, got {epoch}")
        struct.pack_into("<q", self._epoch, 0, _int_arg("epoch", epoch, 0, 2**63 - 1))

    def crop_window(self, index: int, epoch: Optional[int] = None) -> Tuple[int, int, int, int, bool]:
        """The window ``(x, y, width, height, flip)`` of the original image that
        ``ds[index]`` shows at ``epoch`` (default: the current one)."""
        return self._reader.window(self._record(index), self.epoch if epoch is None else epoch)

    @property
    def classes(self) -> List[str]:
        """Class names in label order (from the dataset's "classes" metadata)."""
        return self.dataset.classes or []

    @property
    def class_to_idx(self) -> Dict[str, int]:
        """``{class name: label}``, as ImageFolder's."""
        return {c: i for i, c in enumerate(self.classes)}

    @property
    def targets(self) -> List[int]:
        """Every item's label, a list of ints as ImageFolder's (read from the index;
        built on first use, not at open)."""
        if not self.label_field:
            raise AttributeError("this ImageDataset has no label field")
        cached = getattr(self, "_targets", None)
        if cached is None:
            column = self.dataset.column(self.label_field)
            cached = self._targets = (column if self.ids is None else column[self.ids]).tolist()
        return cached

    @property
    def samples(self) -> List[Tuple[str, int]]:
        """``[(path, label)]`` of every item, as ImageFolder's: the record's
        ``path_field`` joined to ``root`` (relative without it). Read on first
        use: one pass over the records' path values."""
        cached = getattr(self, "_samples", None)
        if cached is None:
            paths = Dataset(self.dataset.path, fields=[self.path_field], verify_checksums=False)
            ids = range(len(paths)) if self.ids is None else (int(i) for i in self.ids)
            names = [paths[i][self.path_field] for i in ids]
            if self.root is not None:
                names = [os.path.join(self.root, name) for name in names]
            labels = self.targets if self.label_field else [-1] * len(names)
            cached = self._samples = list(zip(names, labels))
        return cached

    @property
    def imgs(self) -> List[Tuple[str, int]]:
        """ImageFolder's other name of :attr:`samples`."""
        return self.samples

    def __getstate__(self) -> Dict[str, Any]:
        state = {k: v for k, v in self.__dict__.items() if k not in ("_reader", "_epoch", "_targets", "_samples")}
        state["epoch"] = self.epoch
        return state

    def __setstate__(self, state: Dict[str, Any]) -> None:
        epoch = state.pop("epoch")
        self.__dict__.update(state)
        self._epoch = mmap.mmap(-1, 8)
        self.set_epoch(epoch)
        self._make_reader()

    def __repr__(self) -> str:
        return (
            f"unirecord.ImageDataset({self.dataset.path!r}, records={len(self)}, crop={self.crop!r}, "
            f"transform={self.transform!r}, target_transform={self.target_transform!r})"
        )


# ----------------------------------------------------------------- Loader ---


def cuda_available() -> bool:
    """True when this build has the CUDA path and torch sees a CUDA device."""
    if not _core.built_with_cuda:
        return False
    try:
        return bool(_torch().cuda.is_available())
    except Exception:  # pragma: no cover - torch without CUDA
        return False


def _distributed_defaults(num_shards: Optional[int], shard_id: Optional[int]) -> Tuple[int, int]:
    if num_shards is not None:
        num_shards = _int_arg("num_shards", num_shards, 1, 2**32 - 1)
    if shard_id is not None:
        shard_id = _int_arg("shard_id", shard_id, 0, (num_shards or 2**32) - 1)
    if num_shards is not None and shard_id is not None:
        return num_shards, shard_id
    world, rank = 1, 0
    try:
        import torch.distributed as dist

        if dist.is_available() and dist.is_initialized():
            world, rank = dist.get_world_size(), dist.get_rank()
    except ImportError:  # pragma: no cover
        pass
    return (world if num_shards is None else num_shards), (rank if shard_id is None else shard_id)


def _alias(name: str, value: Optional[int], alias: str, alias_value: Optional[int]) -> Optional[int]:
    """One option given under its name or DataLoader's; both only when they agree."""
    if value is not None and alias_value is not None and value != alias_value:
        raise ValueError(f"{name}={value!r} and {alias}={alias_value!r} disagree: they are the same option, give one")
    return value if value is not None else alias_value


def _sample_order(shuffle: Any, order: Optional[str]) -> str:
    if not isinstance(shuffle, bool):
        raise TypeError(f"shuffle must be True or False, not {shuffle!r}")
    if order is None:
        return "shuffle" if shuffle else "sequential"
    if order not in ("sequential", "shuffle", "block"):
        raise ValueError(f"order must be 'sequential', 'shuffle' or 'block', not {order!r}")
    if (order != "sequential") != shuffle:
        raise ValueError(f"order={order!r} contradicts shuffle={shuffle}")
    return order


class Loader:
    """The native loader: batches of decoded, cropped images as torch tensors.

    ``for images, labels in loader`` yields ``images`` uint8 ``[B, 3, H, W]``
    (``layout="NHWC"``: ``[B, H, W, 3]``) and ``labels`` int64 ``[B]``, in the
    order of a ``DistributedSampler``-style sampler (``shuffle``/``seed``,
    ``num_shards``/``shard_id``, padding by wrap-around). Decoding runs on
    ``threads`` native threads; the GIL is released while waiting.

    ``shuffle`` has no default: a training loop says ``shuffle=True``, an
    evaluation pass ``shuffle=False`` (every record once, in id order, when
    ``num_shards`` is 1). ``order="block"`` (with ``shuffle=True``) shuffles runs
    of ``block_size`` consecutive records, then positions within ``window``:
    mostly sequential reads for slow storage.

    Distributed: ``num_shards``/``shard_id`` (the data-parallel ranks) default
    to ``torch.distributed``'s world size and rank when it is initialised, else
    1 and 0. As ``DistributedSampler``, the epoch is padded by wrap-around to a
    multiple of ``num_shards`` (``sampler_drop_last=True``: cut to one instead);
    ``return_ids=True`` shows which records a batch holds. ``drop_last`` drops
    the epoch's last, partial batch (DataLoader's).

    DataLoader's spellings are accepted: ``num_workers`` for ``threads``
    (``num_workers=0``, DataLoader's "no workers", is one thread) and
    ``prefetch_factor`` for ``prefetch``; giving both spellings with different
    values is a ValueError. ``threads=0``: every usable core.

    Zero copy and lifetime: the tensors are views of the loader's batch
    buffers (DLPack); a buffer returns to the loader's pool of ``prefetch + 1``
    buffers when every tensor made from it has been freed, and the buffer
    stays valid while any such tensor does, even after the loader is gone
    (its decode threads stop with it). Rule: a
    batch's tensors keep their buffer until freed - the loader fills only
    free buffers, so a kept batch stays unchanged however many batches
    follow, across :meth:`set_epoch` / :meth:`load_state_dict` too - and
    requesting a batch while tensors of all ``prefetch + 1`` buffers are
    still referenced raises RuntimeError (data is never overwritten under a
    live tensor). A plain ``for images, labels in loader`` loop never trips
    the rule; ``.clone()`` batches you keep in quantity.

    Epochs: iterating runs the current epoch to its end; call
    :meth:`set_epoch` before each epoch (iterating again without it repeats
    the same epoch, as ``DistributedSampler`` does). :meth:`state_dict` /
    :meth:`load_state_dict` resume mid-epoch exactly.

    ``transform``: a unirecord crop, or a torchvision ``RandomResizedCrop``
    [+ ``RandomHorizontalFlip``] / ``Resize(int)`` + ``CenterCrop`` (run
    natively, as in :class:`ImageDataset`); nothing else runs inside the loader.

    ``device="cuda"`` uploads each batch on the loader's stream and converts it
    to ``dtype`` (default float32), normalised with ``mean``/``std`` (0..1 scale,
    as torchvision's ``Normalize``; default ImageNet's); the current stream
    waits for it. On the CPU, ``dtype``/``mean``/``std`` convert the uint8
    batch with torch ops (a copy; default: uint8, no normalisation).

    ``on_error="skip"`` replaces an undecodable record by the next id of the
    sequence; ``max_consecutive_bad`` such records in a row is an error.

    ``subset=ids`` loads only those records; ``where=expression`` only the
    records matching it (``Dataset.query``, docs/query.md), e.g.
    ``where='label in [3, 7] and width >= 400'``. Order, padding and resume
    work over the subset as over the whole dataset.

    The defaults are those of C++'s ``LoaderOptions``, except ``layout``
    (``NCHW``, torch's convention; C++: ``NHWC``) and ``batch_size`` and
    ``shuffle``, which have none.
    """

    def __init__(
        self,
        path: Any,
        batch_size: int,
        shuffle: bool,
        seed: int = _DEFAULTS["seed"],
        num_shards: Optional[int] = None,
        shard_id: Optional[int] = None,
        transform: Any = None,
        device: Any = "cpu",
        dtype: Any = None,
        mean: Optional[Sequence[float]] = None,
        std: Optional[Sequence[float]] = None,
        threads: Optional[int] = None,
        prefetch: Optional[int] = None,
        drop_last: bool = _DEFAULTS["drop_last"],
        on_error: str = _DEFAULTS["on_error"],
        *,
        num_workers: Optional[int] = None,
        prefetch_factor: Optional[int] = None,
        order: Optional[str] = None,
        block_size: int = _DEFAULTS["block_size"],
        window: int = _DEFAULTS["window"],
        sampler_drop_last: bool = _DEFAULTS["sampler_drop_last"],
        max_consecutive_bad: int = _DEFAULTS["max_consecutive_bad"],
        layout: str = "NCHW",
        image_field: str = _DEFAULTS["image_field"],
        label_field: Optional[str] = _DEFAULTS["label_field"],
        path_field: str = _DEFAULTS["path_field"],
        strict: bool = _DEFAULTS["strict"],
        apply_exif: bool = _DEFAULTS["apply_exif"],
        dct_scaling: bool = _DEFAULTS["dct_scaling"],
        max_pixels: int = _DEFAULTS["max_pixels"],
        subset: Optional[Sequence[int]] = None,
        return_ids: bool = False,
        verify_checksums: bool = True,
        where: Optional[str] = None,
    ) -> None:
        torch = _torch()
        order = _sample_order(shuffle, order)
        if num_workers is not None:
            num_workers = max(_int_arg("num_workers", num_workers, 0, 2**31 - 1), 1)
        threads = _alias("threads", threads, "num_workers", num_workers)
        prefetch = _alias("prefetch", prefetch, "prefetch_factor", prefetch_factor)
        self.dataset = _open(path, verify_checksums)
        if where is not None:
            if subset is not None:
                raise ValueError("give where= or subset=, not both")
            subset = self.dataset.query(where)
        self.num_shards, self.shard_id = _distributed_defaults(num_shards, shard_id)
        crop, rest = _split_transform(transform)
        if rest is not None:
            raise TypeError(
                f"Loader runs native transforms only; {rest!r} is not one: apply it to the batches "
                "(or use ImageDataset, whose transform may be any callable)"
            )
        self.transform: _NativeCrop = crop or _default_crop()
        self.device = torch.device(device)
        self.return_ids = bool(return_ids)
        params = _transform_params(self.transform)
        batch_size = _int_arg("batch_size", batch_size, 1)
        if std is not None:
            std = _std_arg(std)
        opts: Dict[str, Any] = dict(
            batch_size=batch_size,
            drop_last=bool(drop_last),
            order=order,
            seed=_int_arg("seed", seed, 0, 2**64 - 1),
            num_shards=self.num_shards,
            shard_id=self.shard_id,
            block_size=_int_arg("block_size", block_size, 1, 2**64 - 1),
            window=_int_arg("window", window, 0, 2**64 - 1),
            sampler_drop_last=bool(sampler_drop_last),
            transform="random_resized_crop" if params["kind"] == 0 else "center_crop",
            size=params["size"],
            # CenterCrop without resize: 0, the crop alone (as ImageDataset).
            resize=params["resize"] if params["kind"] == 1 else _DEFAULTS["resize"],
            scale_min=params["scale_min"],
            scale_max=params["scale_max"],
            ratio_min=params["ratio_min"],
            ratio_max=params["ratio_max"],
            flip_probability=params["flip_probability"],
            layout=layout,
            image_field=image_field,
            label_field=label_field or "",
            path_field=path_field,
            # The native loader refuses more than its thread and buffer limits.
            threads=_int_arg("threads", _DEFAULTS["threads"] if threads is None else threads, 0, 2**31 - 1),
            prefetch=_int_arg("prefetch", _DEFAULTS["prefetch"] if prefetch is None else prefetch, 1, 2**31 - 1),
            on_error=on_error,
            max_consecutive_bad=_int_arg("max_consecutive_bad", max_consecutive_bad, 1, 2**31 - 1),
            strict=bool(strict),
            apply_exif=bool(apply_exif),
            dct_scaling=bool(dct_scaling),
            max_pixels=_int_arg("max_pixels", max_pixels, 1, 2**63 - 1),
        )
        if subset is not None:
            opts["subset"] = _subset_ids(subset)
        self._cpu_convert = None
        if self.device.type == "cuda":
            if not _core.built_with_cuda:
                raise NotSupportedError("unirecord was built without CUDA: Loader(device='cuda') is unavailable")
            if not torch.cuda.is_available():
                raise NotSupportedError("torch sees no CUDA device: Loader(device='cuda') is unavailable")
            index = self.device.index if self.device.index is not None else torch.cuda.current_device()
            self.device = torch.device("cuda", index)
            dtype = torch.float32 if dtype is None else dtype
            names = {torch.float32: "float32", torch.float16: "float16", torch.uint8: "uint8"}
            if dtype not in names:
                raise ValueError(f"dtype on the device must be uint8, float16 or float32, not {dtype}")
            normalize = dtype != torch.uint8
            m = IMAGENET_MEAN if mean is None else tuple(mean)
            s = IMAGENET_STD if std is None else tuple(std)
            opts.update(
                cuda_device=index,
                cuda_dtype=names[dtype],
                cuda_normalize=normalize,
                cuda_mean=[255.0 * float(v) for v in m],
                cuda_std=[255.0 * float(v) for v in s],
                cuda_stream=torch.cuda.current_stream(self.device).cuda_stream,
            )
        elif self.device.type != "cpu":
            raise ValueError(f"device must be 'cpu' or 'cuda', not {device!r}")
        elif dtype is not None or mean is not None or std is not None:
            self._cpu_convert = (dtype or torch.float32, mean, std)
        self.batch_size = batch_size
        self._core = _core._Loader(self.dataset, opts)
        self._exhausted = False

    # -- iteration --
    def __len__(self) -> int:
        """Batches per epoch on this rank (equal on every rank)."""
        return self._core.batches_per_epoch

    def __iter__(self) -> Iterator[Tuple[Any, ...]]:
        if self._exhausted:
            self._core.set_epoch(self._core.epoch)  # same epoch again, as DistributedSampler
            self._exhausted = False
        while True:
            item = self.next_batch()
            if item is None:
                return
            yield item
            del item

    def next_batch(self) -> Optional[Tuple[Any, ...]]:
        """The next batch of the epoch, or None at its end."""
        torch = _torch()
        stream = 0
        if self.device.type == "cuda":
            stream = torch.cuda.current_stream(self.device).cuda_stream
        raw = self._core.next(stream)
        if raw is None:
            self._exhausted = True
            return None
        images_c, labels_c, ids_c, _epoch, _index = raw
        del raw
        from_dlpack = torch.utils.dlpack.from_dlpack
        images = from_dlpack(images_c)
        labels = from_dlpack(labels_c) if labels_c is not None else None
        if self._cpu_convert is not None:
            dtype, mean, std = self._cpu_convert
            images = images.to(dtype)
            if mean is not None or std is not None:
                shape = (1, 3, 1, 1) if images.dim() == 4 and images.shape[1] == 3 else (1, 1, 1, 3)
                m = torch.tensor(mean if mean is not None else (0.0, 0.0, 0.0), dtype=dtype).view(shape) * 255
                s = torch.tensor(std if std is not None else (1.0, 1.0, 1.0), dtype=dtype).view(shape) * 255
                images = images.sub_(m).div_(s)
        if self.device.type == "cuda" and labels is not None:
            labels = labels.to(self.device, non_blocking=False)
        if self.return_ids:
            return images, labels, from_dlpack(ids_c)
        return images, labels

    # -- epochs, resume, stats --
    def set_epoch(self, epoch: int) -> None:
        """Starts ``epoch`` from its first batch (new order and new random crops)."""
        if epoch < 0:
            raise ValueError(f"epoch must be >= 0, got {epoch}")
        self._core.set_epoch(_int_arg("epoch", epoch, 0, 2**64 - 1))
        self._exhausted = False

    @property
    def epoch(self) -> int:
        return self._core.epoch

    def state_dict(self) -> Dict[str, Any]:
        """Where this loader is: ``{"sampler_state": bytes, "seed", "epoch", "position"}``
        (take it between batches; position counts samples of this rank)."""
        return self._core.state()

    def load_state_dict(self, state: Dict[str, Any]) -> None:
        """Continues exactly after the batch where ``state`` was taken (same dataset,
        same sampler options)."""
        self._core.restore(state["sampler_state"])
        self._exhausted = False

    def stats(self) -> Dict[str, Any]:
        """Cumulative counters and stage times (thread-seconds; ``wait_s`` is the
        consumer's wall time blocked in ``next``), ``images_per_s``."""
        return self._core.stats()

    def reset_stats(self) -> None:
        self._core.reset_stats()

    @property
    def threads(self) -> int:
        """Decode threads actually running."""
        return self._core.threads

    def __repr__(self) -> str:
        return (
            f"unirecord.Loader({self.dataset.path!r}, batch_size={self.batch_size}, "
            f"shard {self.shard_id}/{self.num_shards}, transform={self.transform!r}, device={str(self.device)!r})"
        )
