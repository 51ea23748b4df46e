"""The native loader (as ``torch.utils.data.DataLoader``): :class:`Loader`,
whole batches of decoded, cropped images as torch tensors from native threads."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterator, Optional, Sequence, Tuple, Union

from . import _core
from ._args import DEFAULTS, PathLike, channel_values, int_arg, open_dataset, record_ids, import_torch
from ._core import Coverage, Dataset, NotSupportedError
from .options import Decode, Fields, Remote, Sampler, groups_from_keywords
from .packing import Pack
from .transforms import NativeCrop, default_crop, native_options, split_transform

if TYPE_CHECKING:
    import torch

# What the iteration yields: (images, labels), + record ids with
# return_ids, or a dict (fields, boxes, masks, no image, pack).
Batch = Union[Tuple["torch.Tensor", Optional["torch.Tensor"]],
              Tuple["torch.Tensor", Optional["torch.Tensor"], "torch.Tensor"],
              Dict[str, Any]]

__all__ = ["IMAGENET_MEAN", "IMAGENET_STD", "Loader", "cuda_available"]

# Loader(device=EMULATED_DEVICE), for tests only: the device path runs against
# the host device, an emulation of CUDA in ordinary memory (CudaOptions::
# host_emulation; batches come back as CPU tensors), so that machines
# without a GPU test it.
EMULATED_DEVICE = "emulated"

# ImageNet statistics on the 0..1 scale, as torchvision's Normalize uses them
# (LoaderOptions' CUDA defaults are these times 255).
IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)

# LoaderOptions::prefetch's upper bound (loader.cc checks it).
_MAX_PREFETCH = 1024

# torch dtypes of a batch on a CUDA device, by the library's names (DeviceDTypeName).
_DEVICE_DTYPES = ("uint8", "float16", "float32")


def cuda_available() -> bool:
    """True when this build has the CUDA path and torch sees a CUDA device."""
    if not _core.built_with_cuda:
        return False
    try:
        return bool(import_torch().cuda.is_available())
    except Exception:  # pragma: no cover - torch without CUDA
        return False


def _distributed_defaults(num_shards: Optional[int], shard_id: Optional[int]) -> Tuple[int, int]:
    if num_shards is not None:
        num_shards = int_arg("num_shards", num_shards, 1, 2**32 - 1)
    if shard_id is not None:
        shard_id = int_arg("shard_id", shard_id, 0, (num_shards or 2**32) - 1)
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


# Keys every dict batch may have besides the fields' names.
_BATCH_KEYS = ("id", "crop")


def _check_field_names(
    fields: Optional[Sequence[str]],
    boxes: Optional[str],
    box_aligned: Optional[Sequence[str]],
    image_field: Optional[str],
    label_field: Optional[str],
) -> None:
    """The keys a dict batch will have must not collide: a field called ``id``
    or ``crop``, or one whose name is another's ``_lengths``/``_offsets`` key."""
    names = [n for n in [image_field, label_field, *(fields or ()), boxes, *(box_aligned or ())] if n]
    for name in names:
        if not isinstance(name, str):
            raise TypeError(f"a field name must be a str, not {name!r}")
        if name in _BATCH_KEYS:
            raise ValueError(f"field {name!r} cannot be batched under its name: the batch's {name!r} is the {name} of each sample")
        for suffix in ("_lengths", "_offsets"):
            if name.endswith(suffix) and name[: -len(suffix)] in names:
                raise ValueError(f"field {name!r} collides with the {suffix[1:]} of field {name[: -len(suffix)]!r}")


def _sample_order(shuffle: Any, order: Optional[str]) -> Optional[str]:
    """The order ``shuffle`` asks for; ``order`` (a name the native side
    parses) refines ``shuffle=True`` to ``"block"``."""
    if not isinstance(shuffle, bool):
        raise TypeError(f"shuffle must be True or False, not {shuffle!r}")
    if order is None:
        return "shuffle" if shuffle else "sequential"
    if (order == "sequential") == shuffle:
        raise ValueError(f"order={order!r} contradicts shuffle={shuffle}")
    return order


def _prefetch(prefetch: Optional[int], prefetch_factor: Optional[int], threads: int) -> int:
    """Batches filled ahead in all: ``prefetch``, or DataLoader's ``prefetch_factor``
    (batches ahead per worker) times the decode threads."""
    if prefetch is not None and prefetch_factor is not None:
        raise ValueError(
            f"prefetch={prefetch!r} and prefetch_factor={prefetch_factor!r}: give prefetch (batches ahead "
            "in all) or prefetch_factor (batches ahead per worker thread, as DataLoader's), not both"
        )
    if prefetch_factor is None:
        return DEFAULTS["prefetch"] if prefetch is None else prefetch
    threads = int_arg("threads", threads, 0, 2**31 - 1)
    workers = threads if threads > 0 else len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    limit = max(_MAX_PREFETCH // max(min(workers, _MAX_PREFETCH), 1), 1)
    return int_arg("prefetch_factor", prefetch_factor, 1, limit) * min(workers, _MAX_PREFETCH)


class Loader:
    """The native loader: batches of decoded, cropped images (and any other
    field) as torch tensors, decoded by native threads with no worker processes.

    ``for images, labels in loader`` yields ``images`` uint8 ``[B, 3, H, W]``
    (``Fields(layout="NHWC")``: ``[B, H, W, 3]``) and ``labels`` int64 ``[B]``
    (None when the dataset has no label field), in the order of a
    ``DistributedSampler``-style sampler; with field names, boxes, masks or no
    image field (:class:`Fields`) each batch is a dict instead (below). The
    GIL is released while waiting.

    Zero copy and lifetime: the tensors are views of the loader's batch
    buffers (DLPack). A buffer returns to the pool of ``prefetch + 1`` when
    every tensor made from it has been freed, and stays valid while any does,
    even after the loader is gone; a kept batch stays unchanged however many
    batches follow, across :meth:`set_epoch` / :meth:`load_state_dict` too.
    Asking for a batch while tensors of all ``prefetch + 1`` buffers are still
    referenced raises RuntimeError (data is never overwritten under a live
    tensor): ``.clone()`` batches you keep in quantity.

    Epochs: iterating runs the current epoch to its end; call :meth:`set_epoch`
    before each (iterating again without it repeats the epoch, as
    ``DistributedSampler`` does). :meth:`state_dict` / :meth:`load_state_dict`
    resume mid-epoch exactly, also on another number of ranks or batch size:
    the rest of the epoch is partitioned among them, nothing read twice or
    skipped beyond the padding (docs/loader.md, "Elastic resume").

    Coverage: :meth:`coverage` is a digest of the record ids this rank has
    delivered in the epoch; :func:`unirecord.check_coverage` over every
    rank's says whether together they delivered each record exactly once
    (docs/loader.md, "Coverage"). It carries across :meth:`state_dict` /
    :meth:`load_state_dict`.

    Dict batches (:class:`Fields` ``names``, ``boxes``, ``masks``, or
    ``image_field=None``): ``name -> tensor``: the image and label under their
    field names, each listed field (scalars ``[B]``, arrays ``[B, ...]``,
    variable-shape ones padded with ``pad_value`` plus ``NAME_lengths``, or
    with ``ragged="jagged"`` flat plus ``NAME_offsets``; strings and bytes as
    lists), ``id`` and ``crop`` (x, y, w, h, flip of each sample's window).

    The options beyond DataLoader's come in small typed groups, as
    torchvision's transforms: ``sampler=``:class:`Sampler`, ``fields=``
    :class:`Fields`, ``decode=``:class:`Decode`, ``remote=``:class:`Remote`,
    ``pack=``:class:`Pack`. Their defaults are those of C++'s
    ``LoaderOptions``, except ``Fields.layout`` (``NCHW``, torch's convention;
    C++: ``NHWC``, docs/loader.md says why); ``batch_size`` and ``shuffle``
    have none. The keywords of before the groups (``block_size=``,
    ``image_field=``, ``strict=``, ``cache_dir=``, ...) still work for one
    release, each with a DeprecationWarning naming its new spelling
    (``Loader(block_size=...)`` is ``Loader(sampler=Sampler(block_size=...))``);
    one beside its group is a TypeError.

    Args:
        path: a dataset (a folder, ``OUT/NAME``, a shard, a glob, an
            ``http(s)://`` or ``s3://`` location, or a :class:`Dataset`), or a
            list of them to mix (:class:`Sampler` ``weights``).
        batch_size: samples per batch.
        shuffle: True for a training loop, False for an evaluation pass (every
            record once, in id order, on one rank). No default.
        seed: the seed of the order and of the random crops; each epoch
            reseeds from it (:meth:`set_epoch`).
        transform: a unirecord crop (:class:`RandomResizedCrop`,
            :class:`CenterCrop`), or a torchvision ``RandomResizedCrop``
            [+ ``RandomHorizontalFlip``] / ``Resize(int)`` + ``CenterCrop``,
            run natively; nothing else runs inside the loader. Default:
            ``RandomResizedCrop(224, flip=True)``.
        device: ``"cpu"`` or ``"cuda"``/``"cuda:N"``: each batch is uploaded
            on the loader's stream and converted to ``dtype`` there; the
            current stream waits for it. The batched numeric fields go up
            with the images (strings, bytes, ``id`` and ``crop`` stay on the
            CPU). ``"emulated"`` is for tests: the same device path on the
            host device (docs/loader.md), batches as CPU tensors.
        dtype: on a device, ``torch.float32`` (default), ``float16`` or
            ``uint8`` (raw pixels); on the CPU, a torch conversion of the
            uint8 batch (a copy; default: none).
        mean: per channel, on the 0..1 scale as torchvision's ``Normalize``
            (default on a device: ImageNet's; on the CPU: none).
        std: as ``mean`` (default on a device: ImageNet's).
        threads: native decode threads; 0: every usable core.
        num_workers: DataLoader's spelling of ``threads`` (0, "no workers",
            is one thread); give one of the two.
        prefetch: batches filled ahead, in all.
        prefetch_factor: DataLoader's spelling: ``prefetch = prefetch_factor
            * threads``; give one of ``prefetch`` and ``prefetch_factor``.
        drop_last: drop the epoch's last, partial batch (DataLoader's).
        sampler: a :class:`Sampler`: ranks (default: ``torch.distributed``'s),
            the block order, the mixing weights and epoch size, a subset or a
            query. Default: ``Sampler()``.
        fields: a :class:`Fields`, or a list of field names (``Fields(names)``):
            what each batch holds (the image, label and other fields, boxes,
            masks) and how (layout, padding). Default: ``Fields()``, the
            ``(images, labels)`` tuple.
        decode: a :class:`Decode`: checksums, strictness, EXIF, DCT scaling,
            the pixel limit and what a bad record does. Default: ``Decode()``.
        remote: a :class:`Remote`: the cache and the requests of a remote
            dataset (docs/remote.md). Default: ``Remote()``.
        pack: a :class:`unirecord.Pack`: documents (records of 1-D token
            fields) packed into rows of ``pack.seq_len`` natively; each batch
            is a dict of ``batch_size`` rows (the packed fields,
            ``segment_ids``, ``positions``, ``cu_seqlens``, ``max_seqlen`` and
            ``id``; :class:`unirecord.Pack` says what each holds). Only the
            packed fields are read (give ``Fields(image_field=None)``); on a
            ``device`` the native loader uploads every output there (at most
            ``prefetch + 1`` batches held at once). ``len()`` is unknown (the
            rows depend on the documents' lengths); ``state_dict()`` holds a
            ``pack_state`` that resumes exactly on the same rank of as many
            ranks, and the list of every rank's resumes on any number of
            ranks (docs/loader.md, "Packing sequences").
        deprecated: the keywords of before the groups (above).
    """

    def __init__(
        self,
        path: Union[PathLike, Dataset, Sequence[Union[PathLike, Dataset]]],
        batch_size: int,
        shuffle: bool,
        *,
        seed: int = DEFAULTS["seed"],
        transform: Optional[Union[NativeCrop, Callable[[Any], Any]]] = None,
        device: Union[str, "torch.device"] = "cpu",
        dtype: Optional["torch.dtype"] = None,
        mean: Optional[Sequence[float]] = None,
        std: Optional[Sequence[float]] = None,
        threads: Optional[int] = None,
        num_workers: Optional[int] = None,
        prefetch: Optional[int] = None,
        prefetch_factor: Optional[int] = None,
        drop_last: bool = DEFAULTS["drop_last"],
        sampler: Optional[Sampler] = None,
        fields: Union[None, Sequence[str], Fields] = None,
        decode: Optional[Decode] = None,
        remote: Optional[Remote] = None,
        pack: Optional[Pack] = None,
        **deprecated: Any,
    ) -> None:
        groups = groups_from_keywords(deprecated, dict(sampler=sampler, fields=fields, decode=decode, remote=remote))
        #: The option groups, as given (or made from the deprecated keywords).
        self.sampler: Sampler = groups["sampler"]
        self.fields: Fields = groups["fields"]
        self.decode: Decode = groups["decode"]
        self.remote: Remote = groups["remote"]
        sampler, fields, decode, remote = self.sampler, self.fields, self.decode, self.remote
        if pack is not None and not isinstance(pack, Pack):
            raise TypeError(f"pack must be a unirecord.Pack, not {pack!r}")
        self.pack = pack
        # The native loader's options (python/src/loader_options_py.cc has the one
        # table; it checks each value and names it): the groups' and the
        # ones resolved here.
        opts: Dict[str, Any] = dict(batch_size=batch_size, seed=seed, drop_last=drop_last,
                                    **sampler._native(), **fields._native(), **decode._native())
        opts.update(dict(pack=None) if pack is None else pack._native())
        t = import_torch()
        opts["order"] = _sample_order(shuffle, sampler.order)
        if num_workers is not None:
            num_workers = max(int_arg("num_workers", num_workers, 0, 2**31 - 1), 1)
        opts["threads"] = threads = _alias("threads", threads, "num_workers", num_workers)
        if threads is None:
            opts["threads"] = DEFAULTS["threads"]
        opts["prefetch"] = _prefetch(prefetch, prefetch_factor, opts["threads"])
        several = isinstance(path, (list, tuple))
        if several and not path:
            raise ValueError("Loader needs at least one dataset, got an empty list")
        #: The datasets read (one unless mixing); ``dataset`` is the first.
        self.datasets = [open_dataset(p, decode.verify_checksums, remote.cache_dir, remote.cache_limit,
                                      remote._remote_options())
                         for p in (path if several else [path])]
        self.dataset = self.datasets[0]
        if len(self.datasets) > 1 and (sampler.where is not None or sampler.subset is not None):
            raise ValueError(f"subset= and where= select records of one dataset, not of the {len(self.datasets)} mixed here")
        ids = record_ids(self.dataset, sampler.where, sampler.subset)
        opts["subset"] = None if ids is None else ids.tolist()
        self.num_shards, self.shard_id = _distributed_defaults(sampler.num_shards, sampler.shard_id)
        opts["num_shards"], opts["shard_id"] = self.num_shards, self.shard_id
        # A dict per batch with fields (or boxes), and for a dataset without images.
        self._dict_batches = fields.dict_batches or pack is not None
        # A clip loader's images are its video field's clips.
        image_name = fields.clip.field if fields.clip is not None else fields.image_field
        if fields.clip is None and fields.audio is not None and fields.image_field == DEFAULTS["image_field"] and \
                fields.image_field not in {f.name for f in self.dataset.schema}:
            image_name = None  # as the native loader: an audio loader reads no absent default image
        self._names = (image_name or None, fields.label_field or None)
        if self._dict_batches:
            _check_field_names([*(fields.names or ()), *(fields.masks or ())], fields.boxes, fields.box_aligned,
                               fields.image_field, fields.label_field)
        self._bool_fields = {f.name for f in self.dataset.schema if f.type == "bool"}
        crop, rest = split_transform(transform)
        if rest is not None:
            raise TypeError(
                f"Loader runs native transforms only; {rest!r} is not one: apply it to the batches "
                "(or use ImageDataset, whose transform may be any callable)"
            )
        self.transform: NativeCrop = crop or default_crop()
        opts.update(native_options(self.transform))
        self.return_ids = fields.return_ids
        self._set_device(t, device, dtype, mean, std, opts)
        self._core = _core._Loader(self.datasets, opts)
        self.batch_size: int = opts["batch_size"]
        self._exhausted = False

    def _set_device(self, t: Any, device: Any, dtype: Any, mean: Any, std: Any, opts: Dict[str, Any]) -> None:
        """The device batches go to, and how they are converted there (or on
        the host): self.device, self._cpu_convert and the native cuda_* options."""
        # The host device (testing only): the device path in ordinary memory.
        emulated = isinstance(device, str) and device == EMULATED_DEVICE
        self.device = t.device("cpu" if emulated else device)
        if mean is not None:
            mean = channel_values("mean", mean, positive=False)
        if std is not None:
            std = channel_values("std", std, positive=True)
        self._cpu_convert = None
        if self.device.type == "cuda" or emulated:
            index, stream = 0, 0
            if not emulated:
                if not _core.built_with_cuda:
                    raise NotSupportedError("unirecord was built without CUDA: Loader(device='cuda') is unavailable")
                if not t.cuda.is_available():
                    raise NotSupportedError("torch sees no CUDA device: Loader(device='cuda') is unavailable")
                index = self.device.index if self.device.index is not None else t.cuda.current_device()
                self.device = t.device("cuda", index)
                stream = t.cuda.current_stream(self.device).cuda_stream
            dtype = t.float32 if dtype is None else dtype
            names = {getattr(t, name): name for name in _DEVICE_DTYPES}
            if dtype not in names:
                raise ValueError(f"dtype on the device must be one of {', '.join(_DEVICE_DTYPES)}, not {dtype}")
            opts.update(
                cuda_device=index,
                cuda_dtype=names[dtype],
                cuda_normalize=dtype != t.uint8,
                cuda_mean=[255.0 * v for v in (IMAGENET_MEAN if mean is None else mean)],
                cuda_std=[255.0 * v for v in (IMAGENET_STD if std is None else std)],
                cuda_stream=stream,
                cuda_host_emulation=emulated,
            )
        elif self.device.type != "cpu":
            raise ValueError(f"device must be 'cpu' or 'cuda', not {device!r}")
        elif dtype is not None or mean is not None or std is not None:
            if dtype is not None and not isinstance(dtype, t.dtype):
                raise TypeError(f"dtype must be a torch.dtype, not {dtype!r}")
            self._cpu_convert = (dtype or t.float32, mean, std)

    # -- iteration --
    def __len__(self) -> int:
        """Batches per epoch on this rank (equal on every rank); a packing
        loader's is unknown (TypeError): its rows depend on the documents."""
        if self.pack is not None:
            raise TypeError("a packing Loader has no len(): its rows depend on the documents' lengths")
        return self._core.batches_per_epoch

    def __iter__(self) -> Iterator[Batch]:
        """The batches of the current epoch from where the loader is: ``(images, labels)``
        (``labels`` None without a label field), ``+ (record_ids,)`` with ``return_ids``;
        a dict with ``fields`` (see the class)."""
        if self._exhausted:
            self._core.set_epoch(self._core.epoch)  # same epoch again, as DistributedSampler
            self._exhausted = False
        while True:
            item = self.next_batch()
            if item is None:
                return
            yield item
            del item

    def next_batch(self) -> Optional[Batch]:
        """The next batch of the epoch (as :meth:`__iter__` yields them), or None at its end."""
        torch = import_torch()
        stream = 0
        if self.device.type == "cuda":
            stream = torch.cuda.current_stream(self.device).cuda_stream
        raw = self._core.next(stream)
        if raw is None:
            self._exhausted = True
            return None
        images_c, labels_c, ids_c, _epoch, _index, crops_c, fields_c, clips_c = raw
        del raw
        from_dlpack = torch.utils.dlpack.from_dlpack
        images = from_dlpack(images_c) if images_c is not None else None
        labels = from_dlpack(labels_c) if labels_c is not None else None
        if self._cpu_convert is not None and images is not None:
            dtype, mean, std = self._cpu_convert
            images = images.to(dtype)
            if mean is not None or std is not None:
                # The channel axis: after the batch (and clip) axes in NCHW, last in NHWC.
                shape = [1] * images.dim()
                channel_axis = -1 if self.fields.layout == "NHWC" else images.dim() - (4 if clips_c else 3)
                shape[channel_axis] = 3
                m = torch.tensor(mean if mean is not None else (0.0, 0.0, 0.0), dtype=dtype).view(shape) * 255
                s = torch.tensor(std if std is not None else (1.0, 1.0, 1.0), dtype=dtype).view(shape) * 255
                images = images.sub_(m).div_(s)
        if self.device.type == "cuda" and labels is not None:
            labels = labels.to(self.device, non_blocking=False)
        if self.pack is not None:
            return self._packed_batch(fields_c)
        if self._dict_batches:
            batch = self._dict_batch(images, labels, from_dlpack(ids_c), crops_c, fields_c)
            if clips_c is not None:
                batch["frame_pts"], batch["clip_start"] = from_dlpack(clips_c[0]), from_dlpack(clips_c[1])
            return batch
        if self.return_ids:
            return images, labels, from_dlpack(ids_c)
        return images, labels

    def _dict_batch(self, images: Any, labels: Any, ids: Any, crops_c: Any, fields_c: Dict[str, Any]) -> Dict[str, Any]:
        """The batch as a dict: the image and label under their field names,
        each batched field (tensors, or lists for strings and bytes), ``id`` and ``crop``."""
        from_dlpack = import_torch().utils.dlpack.from_dlpack
        image_field, label_field = self._names
        batch: Dict[str, Any] = {}
        if images is not None:
            batch[image_field] = images
        if labels is not None:
            batch[label_field] = labels
        # On a device the numeric fields arrive there with the images (the
        # loader's upload); strings, bytes, id and crop stay on the CPU.
        for name, value in fields_c.items():
            if not isinstance(value, list):
                value = from_dlpack(value)
                if name in self._bool_fields:  # handed over as uint8 (DLPack 0.6 has no bool)
                    value = value.view(import_torch().bool)
            batch[name] = value
        batch["id"] = ids
        if crops_c is not None:
            batch["crop"] = from_dlpack(crops_c)
        return batch

    def _packed_batch(self, fields_c: Dict[str, Any]) -> Dict[str, Any]:
        """A packing loader's batch: the packed fields and the segment
        outputs as tensors (on the loader's device, uploaded natively),
        ``max_seqlen`` an int."""
        torch = import_torch()
        batch: Dict[str, Any] = {}
        for name, value in fields_c.items():
            tensor = torch.utils.dlpack.from_dlpack(value)
            if name == "max_seqlen":
                batch[name] = int(tensor)
                continue
            if name in self._bool_fields:
                tensor = tensor.view(torch.bool)
            batch[name] = tensor
        return batch

    # -- epochs, resume, stats --
    def set_epoch(self, epoch: int) -> None:
        """Starts ``epoch`` from its first batch (new order and new random crops)."""
        self._core.set_epoch(int_arg("epoch", epoch, 0, 2**64 - 1))
        self._exhausted = False

    @property
    def epoch(self) -> int:
        """The epoch being loaded (:meth:`set_epoch`)."""
        return self._core.epoch

    def state_dict(self) -> Dict[str, Any]:
        """Where this loader is: ``{"sampler_state": bytes, "seed", "epoch", "position",
        "coverage": bytes}`` (take it between batches; position counts the positions
        of the epoch's order all ranks have consumed together, so every rank returns
        the same sampler state). ``sampler_state`` is the state; ``seed``, ``epoch``
        and ``position`` show what it holds; ``coverage`` is this rank's
        :meth:`coverage` so far, carried into the resumed run.
        A packing loader's (``pack=``) is ``{"pack_state": bytes, "seed", "epoch",
        "coverage"}``: one rank's, restored on that rank of as many ranks; to resume
        on another number of ranks, give :meth:`load_state_dict` every rank's."""
        return self._core.state()

    def load_state_dict(self, state: Union[Dict[str, Any], Sequence[Dict[str, Any]]]) -> None:
        """Continues exactly after the batch where ``state`` was taken (same
        dataset(s), same order options; the number of ranks, the batch size and
        ``sampler_drop_last`` may differ: the rest of the epoch is partitioned
        across this run's ranks). ``seed``, ``epoch`` and ``position`` may be left
        out; given, each must equal what ``sampler_state`` holds (ValueError
        naming the key otherwise: an edited copy would resume somewhere else).

        ``state`` may also be the list of the state_dicts of every rank of the
        old run, taken at one step (e.g. gathered with
        ``torch.distributed.all_gather_object``), every new rank loading the
        same list: :meth:`coverage` then carries what all of them delivered, so
        the new ranks' digests check the whole epoch. One rank's state_dict
        carries its ``coverage`` only into that rank of as many ranks; restored
        elsewhere, :meth:`coverage` counts the part before it as uncarried.
        A packing loader (``pack=``) resumes on another number of ranks only
        from such a list: across both runs each token of the epoch is
        delivered once (docs/loader.md, "Packing sequences")."""
        if isinstance(state, (list, tuple)):
            state = self._core.combine(state)
        self._core.restore(state)
        self._exhausted = False

    def coverage(self) -> Coverage:
        """What this rank has delivered of the current epoch so far: a digest
        of its record ids (a packing loader's: documents, each counted when its
        last token goes out), complete after the epoch's last batch. Take it
        then, before :meth:`set_epoch` (or iterating again) starts the next
        epoch; gather every rank's (it pickles) and give them to
        :func:`unirecord.check_coverage`. After :meth:`load_state_dict` it
        includes what the state's run delivered before it (this rank's own
        state_dict, or every rank's as a list)."""
        return self._core.coverage()

    def stats(self) -> Dict[str, Any]:
        """Cumulative counters and stage times (thread-seconds; ``wait_s`` is the
        consumer's wall time blocked in ``next``), ``images_per_s``."""
        return self._core.stats()

    def reset_stats(self) -> None:
        """Sets the counters and times of :meth:`stats` to zero."""
        self._core.reset_stats()

    @property
    def threads(self) -> int:
        """Decode threads actually running."""
        return self._core.threads

    def __repr__(self) -> str:
        paths = self.dataset.path if len(self.datasets) == 1 else [d.path for d in self.datasets]
        return (
            f"unirecord.Loader({paths!r}, batch_size={self.batch_size}, "
            f"shard {self.shard_id}/{self.num_shards}, transform={self.transform!r}, device={str(self.device)!r})"
        )
