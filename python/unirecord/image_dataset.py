"""The image dataset (as ``torchvision.datasets``): :class:`ImageDataset`, a
drop-in for ``ImageFolder`` over a dataset of JPEG records."""

from __future__ import annotations

import mmap
import os
import struct
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

from . import _core
from ._args import DEFAULTS, PathLike, index_arg, int_arg, open_dataset, record_ids, import_torch
from ._core import Dataset
from .transforms import NativeCrop, default_crop, native_options, split_transform

__all__ = ["ImageDataset"]


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
    ``ids`` it matched. ``subset=ids``: those records, in that order (checked
    as by :class:`~unirecord.Loader`: ints, each a record of the dataset).

    ``max_pixels``: a JPEG of more pixels is refused (an error naming the
    record), as in :class:`~unirecord.Loader`. The defaults are those of C++'s
    ``LoaderOptions``.
    """

    def __init__(
        self,
        path: Union[PathLike, Dataset],
        transform: Optional[Union[NativeCrop, Callable[[Any], Any]]] = None,
        target_transform: Optional[Callable[[int], Any]] = None,
        *,
        crop: Optional[NativeCrop] = None,
        seed: int = DEFAULTS["seed"],
        root: Optional[PathLike] = None,
        image_field: str = DEFAULTS["image_field"],
        label_field: Optional[str] = DEFAULTS["label_field"],
        path_field: str = DEFAULTS["path_field"],
        strict: bool = DEFAULTS["strict"],
        apply_exif: bool = DEFAULTS["apply_exif"],
        dct_scaling: bool = DEFAULTS["dct_scaling"],
        max_pixels: int = DEFAULTS["max_pixels"],
        verify_checksums: bool = True,
        where: Optional[str] = None,
        subset: Optional[Sequence[int]] = None,
        cache_dir: Optional[PathLike] = None,
        cache_limit: int = 0,
        remote_options: Optional[Dict[str, Any]] = None,
    ) -> None:
        # The native reader's options: this signature's names that are loader
        # options (the transform and subset are resolved here, not there).
        self._options = {k: v for k, v in locals().items() if k in DEFAULTS and k not in ("transform", "subset")}
        native, self.transform = split_transform(transform)
        if native is not None and crop is not None:
            raise ValueError("transform starts with a crop and crop= is given too: give the crop once")
        self.crop: NativeCrop = native or crop or default_crop()
        self.target_transform = target_transform
        self.root = None if root is None else os.fsdecode(root)
        self._options["label_field"] = label_field or ""
        self._options.update(native_options(self.crop))
        self.dataset = open_dataset(path, verify_checksums, cache_dir, cache_limit, remote_options)
        # where= / subset=: item i is record ids[i].
        self.where = where
        self.ids = record_ids(self.dataset, where, subset)
        self._epoch = mmap.mmap(-1, 8)  # MAP_SHARED|MAP_ANONYMOUS: shared with forked workers
        self._make_reader()

    @property
    def seed(self) -> int:
        """The seed of the random crops (with the epoch and the record id)."""
        return self._options["seed"]

    @property
    def label_field(self) -> Optional[str]:
        """The label field; None: no labels (the label is then -1)."""
        return self._options["label_field"] or None

    @property
    def path_field(self) -> str:
        """The field of the records' paths (:attr:`samples`)."""
        return self._options["path_field"]

    def _make_reader(self) -> None:
        self._reader = _core._ImageReader(self.dataset, self._options)

    def __len__(self) -> int:
        """The number of items: the dataset's records, or those ``where``/``subset`` select."""
        return len(self._reader) if self.ids is None else len(self.ids)

    def _record(self, index: int) -> int:
        """The record id of item ``index`` (the index itself without ``where``/``subset``)."""
        if self.ids is None:
            return index
        return int(self.ids[index_arg(index, len(self.ids))])

    def _finish(self, image: Any, label: int) -> Tuple[Any, Any]:
        if self.transform is not None:
            image = self.transform(image)
        if self.target_transform is not None:
            label = self.target_transform(label)
        return image, label

    def __getitem__(self, index: int) -> Tuple[Any, Any]:
        """``(image, label)`` of item ``index``: a uint8 CHW tensor (after ``transform``)
        and an int (after ``target_transform``; -1 without a label field)."""
        image, label = self._reader.get(self._record(index), self.epoch)
        return self._finish(import_torch().from_numpy(image), label)

    def __getitems__(self, indices: Sequence[int]) -> List[Tuple[Any, Any]]:
        """``[self[i] for i in indices]``, decoded in one native call (the GIL released
        once for the batch). torch's DataLoader calls it with each batch's indices
        when it is defined, then ``collate_fn``; ``default_collate`` gives the same
        batch as from per-item fetching. Without ``transform``, the images are views
        of one uint8 tensor ``[len(indices), 3, size, size]``, which each of them
        keeps alive."""
        images, labels = self._reader.get_many([self._record(i) for i in indices], self.epoch)
        pairs = zip(import_torch().from_numpy(images).unbind(0), labels.tolist())
        return [self._finish(image, label) for image, label in pairs]

    @property
    def epoch(self) -> int:
        """The epoch the random crops are drawn for."""
        return struct.unpack_from("<q", self._epoch)[0]

    def set_epoch(self, epoch: int) -> None:
        """Selects the epoch of the random crops (call before each epoch)."""
        struct.pack_into("<q", self._epoch, 0, int_arg("epoch", epoch, 0, 2**63 - 1))

    def crop_window(self, index: int, epoch: Optional[int] = None) -> Tuple[int, int, int, int, bool]:
        """The window ``(x, y, width, height, flip)`` of the original image that
        ``ds[index]`` shows at ``epoch`` (default: the current one)."""
        epoch = self.epoch if epoch is None else int_arg("epoch", epoch, 0, 2**63 - 1)
        return self._reader.window(self._record(index), epoch)

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
