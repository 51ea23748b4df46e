"""The :class:`~unirecord.Loader`'s options in small typed groups, as
torchvision's transforms are objects: :class:`Sampler` (which records, in
what order, on which rank), :class:`Fields` (what a batch holds and how it is
laid out), :class:`Decode` (how each record is checked and decoded, and what
a bad one does) and :class:`Remote` (how a remote dataset is fetched and
cached); :class:`~unirecord.Pack` (``unirecord.packing``) is one more.

Each is a frozen dataclass: immutable, compared by value, picklable (a loader
made in another process takes the same objects), checked when made. The
checks are the native loader's own (python/src/loader_options_py.cc's table of
options; python/src/dataset_options_py.cc's for :class:`Remote`): a wrong type is a
TypeError, a value out of range a ValueError, each naming the option as
``Group.name``. ``Loader(sampler=Sampler(block_size=0))`` fails where the
Sampler is made, exactly as the loader would."""

from __future__ import annotations

import os  # noqa: F401 (PathLike's annotations name os.PathLike)
import warnings
from dataclasses import dataclass, fields as dataclass_fields
from typing import Any, ClassVar, Dict, Literal, Optional, Sequence, Tuple, Type, Union

from . import _core
from ._args import DEFAULTS, PathLike, bool_arg, int_arg

__all__ = ["AudioClip", "Clip", "Decode", "Fields", "Remote", "Sampler"]

# The names the native loader parses (loader.h's ...Name/Parse... pairs).
OnBadRecord = Literal["raise", "skip"]
SampleOrder = Literal["sequential", "shuffle", "block"]
Layout = Literal["NCHW", "NHWC"]
Ragged = Literal["pad", "jagged"]
BoxFormat = Literal["xywh", "xyxy"]
CoverageDetail = Literal["none", "digest", "ids"]
AudioDType = Literal["float32", "int16"]

# RemoteOptions' defaults (the remote options besides cache_dir and
# cache_limit), from a default-constructed one: python/src/dataset_options_py.cc.
REMOTE_DEFAULTS: Dict[str, Any] = dict(_core._remote_defaults)


def field_names(what: str, names: Optional[Sequence[str]]) -> Optional[Tuple[str, ...]]:
    """A list of field names as a tuple (the names themselves are checked natively)."""
    if names is None:
        return None
    if isinstance(names, (str, bytes)) or not isinstance(names, Sequence):
        raise TypeError(f"{what} must be a list of field names, not {names!r}")
    return tuple(names)


class _Options:
    """What the groups share: when made, each option is checked by the
    native table that takes it (``_NATIVE``: attribute -> native option)."""

    _NATIVE: ClassVar[Dict[str, str]] = {}

    def __post_init__(self) -> None:
        self._normalize()
        native = self._native()
        for attribute, key in self._NATIVE.items():
            if key in native:
                self._check(key, native[key], f"{type(self).__name__}.{attribute}")

    def _set(self, name: str, value: Any) -> None:
        object.__setattr__(self, name, value)  # frozen: only while being made

    def _normalize(self) -> None:
        """Lists as tuples (immutable, comparable); Python-only checks."""

    def _check(self, key: str, value: Any, shown_as: str) -> None:
        _core._check_loader_option(key, value, shown_as)

    def _native(self) -> Dict[str, Any]:
        """The options as the native loader takes them (keys of ``_core._loader_defaults``)."""
        raise NotImplementedError


@dataclass(frozen=True)
class Sampler(_Options):
    """Which records each epoch reads, in what order, on which rank: torch's
    ``DistributedSampler``, ``WeightedRandomSampler`` and
    ``SubsetRandomSampler`` in one (``Loader(sampler=Sampler(...))``).
    Whether to shuffle is the Loader's ``shuffle``; the seed its ``seed``.

    Args:
        num_shards: data-parallel ranks (None: ``torch.distributed``'s world
            size when it is initialised, else 1). As ``DistributedSampler``,
            the epoch is padded by wrap-around to a multiple of it.
        shard_id: this rank (None: ``torch.distributed``'s rank, else 0).
        drop_last: cut the epoch to a multiple of ``num_shards`` instead of
            padding it (``DistributedSampler``'s ``drop_last``; the Loader's
            ``drop_last`` drops the last partial batch).
        order: with ``shuffle=True``, ``"block"`` shuffles runs of
            ``block_size`` consecutive records, then positions within
            ``window``: mostly sequential reads for slow storage. None: what
            ``shuffle`` says (``"shuffle"`` or ``"sequential"``).
        block_size: the block order's run of consecutive records.
        window: the block order's positions shuffled together (0: none).
        weights: with several datasets, the proportions each epoch draws
            from them (None: their sizes), in one deterministic interleaving
            per (seed, epoch), partitioned across ranks as one dataset
            (docs/loader.md, "Mixing").
        epoch_size: samples per epoch (0: the datasets' total); alone, it
            resamples one dataset.
        subset: load only these record ids (order, padding and resume work
            over them as over the whole dataset; ``[]`` is an empty epoch).
        where: load only the records matching a query (``Dataset.query``,
            docs/query.md), e.g. ``'label in [3, 7] and width >= 400'``.
            ``subset`` and ``where`` select in one dataset only.
        coverage: what ``Loader.coverage()`` keeps of the ids this rank
            delivered: ``"digest"`` (counts and sums, a few nanoseconds a
            sample), ``"ids"`` (the ids too, as compressed bitmaps, so that
            :func:`unirecord.check_coverage` names each missing or repeated
            one) or ``"none"`` (docs/loader.md, "Coverage").
    """

    num_shards: Optional[int] = None
    shard_id: Optional[int] = None
    drop_last: bool = DEFAULTS["sampler_drop_last"]
    order: Optional[SampleOrder] = None
    block_size: int = DEFAULTS["block_size"]
    window: int = DEFAULTS["window"]
    weights: Optional[Sequence[float]] = None
    epoch_size: int = DEFAULTS["epoch_size"]
    subset: Optional[Sequence[int]] = None
    where: Optional[str] = None
    coverage: CoverageDetail = DEFAULTS["coverage"]

    _NATIVE: ClassVar[Dict[str, str]] = dict(
        num_shards="num_shards", shard_id="shard_id", drop_last="sampler_drop_last", order="order",
        block_size="block_size", window="window", weights="weights", epoch_size="epoch_size", subset="subset",
        coverage="coverage")

    def _normalize(self) -> None:
        if self.weights is not None:
            if isinstance(self.weights, (str, bytes)) or not hasattr(self.weights, "__len__"):
                raise TypeError(f"Sampler.weights must be a sequence of numbers, not {self.weights!r}")
            self._set("weights", tuple(self.weights))
        if self.subset is not None:
            # The ids are checked against the dataset by the Loader (record_ids).
            if isinstance(self.subset, (str, bytes)) or not hasattr(self.subset, "__len__"):
                raise TypeError("Sampler.subset must be a sequence of ints (record ids), "
                                f"not {type(self.subset).__name__}")
            tolist = getattr(self.subset, "tolist", None)
            self._set("subset", tuple(tolist() if callable(tolist) else self.subset))
        if self.where is not None and not isinstance(self.where, str):
            raise TypeError(f"Sampler.where must be a str (a query, docs/query.md), not {self.where!r}")
        if self.where is not None and self.subset is not None:
            raise ValueError("Sampler: give where= or subset=, not both")
        if self.num_shards is not None and self.shard_id is not None:  # a rank of these ranks
            ranks = int_arg("Sampler.num_shards", self.num_shards, 1, 2**32 - 1)
            int_arg("Sampler.shard_id", self.shard_id, 0, ranks - 1)

    def _native(self) -> Dict[str, Any]:
        out = dict(sampler_drop_last=self.drop_last, block_size=self.block_size, window=self.window,
                   weights=None if self.weights is None else list(self.weights), epoch_size=self.epoch_size,
                   coverage=self.coverage)
        # Resolved by the Loader: the order from shuffle, the ranks from
        # torch.distributed when None, the subset (or where) against the dataset.
        for name in ("order", "num_shards", "shard_id"):
            if getattr(self, name) is not None:
                out[name] = getattr(self, name)
        return out


class _MediaGroup(_Options):
    """What Clip and AudioClip share: one native option (``_KEY``) holding
    all of the group's attributes, checked as a whole when made."""

    _KEY: ClassVar[str] = ""

    def __post_init__(self) -> None:
        _core._check_loader_option(self._KEY, self._group(), type(self).__name__)

    def _group(self) -> Dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in dataclass_fields(self)}

    def _native(self) -> Dict[str, Any]:
        return {self._KEY: self._group()}


@dataclass(frozen=True)
class Clip(_MediaGroup):
    """Video clips (``Loader(fields=Fields(clip=Clip(...)))``; docs/video-audio.md):
    each sample is ``clips_per_video`` clips of ``frames`` frames of a video
    field, decoded natively from the keyframe before each clip's first frame
    to its last, each frame cropped and resized by the Loader's transform
    (one RandomResizedCrop window and flip per sample, for all of its
    frames; or the centre crop). Batches are dicts: the clips under the
    video field's name, uint8 ``[B, 3, T, H, W]`` (``layout="NCHW"``) or
    ``[B, T, H, W, 3]`` (``"NHWC"``; ``[B, K, ...]`` with K clips), on a
    ``device`` normalised as images are; ``frame_pts`` ``[B, (K,) T]`` (each
    frame's timestamp in its stream's time base) and ``clip_start`` ``[B,
    (K)]`` (seconds from the stream's start).

    Args:
        frames: frames per clip (T).
        stride: frames of the stream between sampled frames (presentation order).
        fps: when > 0, sample at this rate by timestamp instead (the frame
            shown at each time: right for variable frame rates).
        clips_per_video: clips per sample (K); they share the sample's crop.
        centre: evaluation: the clip centred (K clips evenly spaced); else
            its start is drawn per (seed, epoch, record), as crops are.
        apply_rotation: turn frames upright by the stream's rotation metadata.
        field: the video field.
    """

    frames: int = 16
    stride: int = 2
    fps: float = 0.0
    clips_per_video: int = 1
    centre: bool = False
    apply_rotation: bool = True
    field: str = "video"

    _KEY: ClassVar[str] = "clip"


@dataclass(frozen=True)
class AudioClip(_MediaGroup):
    """Audio windows (``Loader(fields=Fields(audio=AudioClip(...)))``;
    docs/video-audio.md): ``seconds`` of an audio field from a random offset
    (keyed by seed, epoch and record) or the centred one, with a
    :class:`Clip` from each clip's first frame's time; decoded natively from
    the packet holding the start and resampled (libswresample) to ``rate``
    and ``channels``. Batches are dicts: the windows under the audio
    field's name, ``[B, channels, round(seconds * rate)]`` of ``dtype``
    (``[B, K, ...]`` with K clips), zeros past the stream's end, and
    ``NAME_lengths`` the frames before it.

    Args:
        seconds: window length.
        rate: output sample rate (Hz).
        channels: output channels (FFmpeg's default layout of that count).
        dtype: ``"float32"`` (in [-1, 1]) or ``"int16"``.
        centre: evaluation: the window centred in the stream.
        field: the audio field.
    """

    seconds: float = 2.0
    rate: int = 16000
    channels: int = 1
    dtype: AudioDType = "float32"
    centre: bool = False
    field: str = "audio"

    _KEY: ClassVar[str] = "audio"


@dataclass(frozen=True)
class Fields(_Options):
    """What each batch holds and how it is laid out (``Loader(fields=Fields(...))``;
    ``Loader(fields=["a", "b"])`` is ``Fields(["a", "b"])``).

    A batch is ``(images, labels)`` (``+ ids`` with ``return_ids``), or a
    dict ``name -> tensor`` when ``names``, ``boxes`` or ``masks`` is given or
    there is no image field (docs/loader.md, "Batching any field").

    Args:
        names: more fields to batch (any type and shape; naming the image
            field is harmless); makes batches dicts.
        image_field: the bytes field of JPEGs or PNGs; None for a dataset
            without images (dict batches).
        label_field: the int32/int64 label field. The default, ``"label"``,
            is used when the dataset has it (no labels otherwise); a name
            given must exist. None: no labels.
        path_field: the string field errors name a record by.
        layout: the images' ``"NCHW"`` (default, torch's) or ``"NHWC"``.
        ragged: variable-shape fields ``"pad"`` (default, with
            ``NAME_lengths``) or ``"jagged"`` (flat, with ``NAME_offsets``).
        pad_value: what pads variable-shape fields.
        boxes: a float32 ``(-1, 4)`` field of boxes, mapped onto the output
            image; the empty ones are dropped with their ``box_aligned``
            values (docs/loader.md, "Boxes").
        box_format: ``"xywh"`` (default) or ``"xyxy"``.
        box_aligned: fields with one row per box, dropped with their boxes.
        masks: uint8 ``(height, width)`` fields, or palette / 8-bit gray PNGs
            in bytes fields, the size of the image: cropped, resized
            nearest-neighbour and flipped with it, uint8 ``[B, H, W]``.
        return_ids: tuple batches also carry each sample's record id (dict
            batches always have ``id``).
        clip: a :class:`Clip`: samples are clips of a video field (dict
            batches; ``image_field`` is not read).
        audio: an :class:`AudioClip`: each sample also gets a window of an
            audio field (dict batches; without ``clip``, no image is read
            unless ``image_field`` names one the dataset has).
    """

    names: Optional[Sequence[str]] = None
    image_field: Optional[str] = DEFAULTS["image_field"]
    label_field: Optional[str] = DEFAULTS["label_field"]
    path_field: str = DEFAULTS["path_field"]
    layout: Layout = "NCHW"
    ragged: Ragged = DEFAULTS["ragged"]
    pad_value: float = DEFAULTS["pad_value"]
    boxes: Optional[str] = None
    box_format: BoxFormat = DEFAULTS["box_format"]
    box_aligned: Optional[Sequence[str]] = None
    masks: Optional[Sequence[str]] = None
    return_ids: bool = False
    clip: Optional[Clip] = None
    audio: Optional[AudioClip] = None

    _NATIVE: ClassVar[Dict[str, str]] = dict(
        names="fields", image_field="image_field", label_field="label_field", path_field="path_field",
        layout="layout", ragged="ragged", pad_value="pad_value", boxes="boxes", box_format="box_format",
        box_aligned="box_aligned", masks="masks", clip="clip", audio="audio")

    def _normalize(self) -> None:
        for name in ("names", "box_aligned", "masks"):
            self._set(name, field_names(f"Fields.{name}", getattr(self, name)))
        bool_arg("Fields.return_ids", self.return_ids)
        if self.clip is not None and not isinstance(self.clip, Clip):
            raise TypeError(f"Fields.clip must be a unirecord.Clip, not {self.clip!r}")
        if self.audio is not None and not isinstance(self.audio, AudioClip):
            raise TypeError(f"Fields.audio must be a unirecord.AudioClip, not {self.audio!r}")

    def _native(self) -> Dict[str, Any]:
        as_list = lambda names: None if names is None else list(names)  # noqa: E731
        # None: no such field, the native empty name.
        return dict(fields=as_list(self.names), image_field=self.image_field or "",
                    label_field=self.label_field or "", path_field=self.path_field, layout=self.layout,
                    ragged=self.ragged, pad_value=self.pad_value, boxes=self.boxes or "",
                    box_format=self.box_format, box_aligned=as_list(self.box_aligned), masks=as_list(self.masks),
                    clip=None if self.clip is None else self.clip._group(),
                    audio=None if self.audio is None else self.audio._group())

    @property
    def dict_batches(self) -> bool:
        """Whether batches are dicts (fields, boxes, masks, clips, audio or no image field)."""
        return (self.names is not None or self.boxes is not None or self.masks is not None or not self.image_field
                or self.clip is not None or self.audio is not None)


@dataclass(frozen=True)
class Decode(_Options):
    """How each record is checked and decoded, and what a bad one does
    (``Loader(decode=Decode(...))``).

    Args:
        strict: refuse JPEGs with recoverable damage instead of decoding them.
        apply_exif: rotate and flip by the EXIF orientation.
        dct_scaling: let libjpeg-turbo decode at 1/2, 1/4, 1/8 scale where
            the output allows.
        max_pixels: the largest image decoded.
        on_bad_record: ``"raise"`` (default) or ``"skip"``: replace an
            undecodable record by the next id of the sequence.
        max_consecutive_bad: with ``on_bad_record="skip"``, that many bad
            records in a row is an error.
        verify_checksums: verify the checksums of what is read.
    """

    strict: bool = DEFAULTS["strict"]
    apply_exif: bool = DEFAULTS["apply_exif"]
    dct_scaling: bool = DEFAULTS["dct_scaling"]
    max_pixels: int = DEFAULTS["max_pixels"]
    on_bad_record: OnBadRecord = DEFAULTS["on_bad_record"]
    max_consecutive_bad: int = DEFAULTS["max_consecutive_bad"]
    verify_checksums: bool = True

    _NATIVE: ClassVar[Dict[str, str]] = dict(
        strict="strict", apply_exif="apply_exif", dct_scaling="dct_scaling", max_pixels="max_pixels",
        on_bad_record="on_bad_record", max_consecutive_bad="max_consecutive_bad")

    def _normalize(self) -> None:
        bool_arg("Decode.verify_checksums", self.verify_checksums)

    def _native(self) -> Dict[str, Any]:
        return {key: getattr(self, attribute) for attribute, key in self._NATIVE.items()}


@dataclass(frozen=True)
class Remote(_Options):
    """How a remote dataset (``http(s)://``, ``s3://``) is fetched and cached
    (``Loader(remote=Remote(...))``; docs/remote.md, where each option is
    explained). The defaults are C++'s ``RemoteOptions``.

    Args:
        cache_dir: where its files are cached (None:
            ``$XDG_CACHE_HOME/unirecord``, else ``~/.cache/unirecord``).
        cache_limit: the cache's size limit in bytes (0: none).
        prefetch_shards: shards downloaded ahead of the reads.
        max_requests: requests in flight at once per dataset.
        attempts: attempts per request before it fails.
        retry_backoff_ms: the first wait before a retry (it doubles).
        timeout_s: an attempt that receives no byte for this long is retried.
        min_rate_bytes_per_s: an attempt slower than this over
            ``min_rate_window_s`` is retried (0: no minimum).
        min_rate_window_s: the window of that rate.
        request_deadline_s: seconds one request may take in all (0: none).
        s3_endpoint: the S3 endpoint ("": ``AWS_ENDPOINT_URL_S3``,
            ``AWS_ENDPOINT_URL``, else AWS's).
        s3_addressing: ``"auto"``, ``"path"`` or ``"virtual"``.
    """

    cache_dir: Optional[PathLike] = None
    cache_limit: int = 0
    prefetch_shards: int = REMOTE_DEFAULTS["prefetch_shards"]
    max_requests: int = REMOTE_DEFAULTS["max_requests"]
    attempts: int = REMOTE_DEFAULTS["attempts"]
    retry_backoff_ms: int = REMOTE_DEFAULTS["retry_backoff_ms"]
    timeout_s: int = REMOTE_DEFAULTS["timeout_s"]
    min_rate_bytes_per_s: int = REMOTE_DEFAULTS["min_rate_bytes_per_s"]
    min_rate_window_s: int = REMOTE_DEFAULTS["min_rate_window_s"]
    request_deadline_s: int = REMOTE_DEFAULTS["request_deadline_s"]
    s3_endpoint: str = REMOTE_DEFAULTS["s3_endpoint"]
    s3_addressing: str = REMOTE_DEFAULTS["s3_addressing"]

    def __post_init__(self) -> None:
        # Checked by Dataset's own table (dataset_options_py.cc), as Dataset(...) checks them.
        for f in dataclass_fields(self):
            if f.name != "cache_dir" or self.cache_dir is not None:
                _core._check_dataset_option(f.name, getattr(self, f.name), f"Remote.{f.name}")

    def _remote_options(self) -> Dict[str, Any]:
        """The options besides ``cache_dir`` and ``cache_limit``, as
        ``Dataset(remote_options=...)`` takes them."""
        return {name: getattr(self, name) for name in REMOTE_DEFAULTS}

    def _native(self) -> Dict[str, Any]:
        return {}


# --- Loader's keywords of before the groups (deprecated) ----------------------

# Loader's group keywords and their types.
GROUPS: Dict[str, Type[_Options]] = dict(sampler=Sampler, fields=Fields, decode=Decode, remote=Remote)

# The keywords Loader took before the groups: keyword -> (group keyword, its
# attribute); remote_options' keys are Remote's attributes. Accepted for one
# release with a DeprecationWarning naming the new spelling.
DEPRECATED: Dict[str, Tuple[str, Optional[str]]] = {
    **{name: ("sampler", name) for name in ("num_shards", "shard_id", "order", "block_size", "window", "weights",
                                            "epoch_size", "subset", "where")},
    "sampler_drop_last": ("sampler", "drop_last"),
    **{name: ("fields", name) for name in ("image_field", "label_field", "path_field", "layout", "ragged",
                                           "pad_value", "boxes", "box_format", "box_aligned", "masks",
                                           "return_ids")},
    **{name: ("decode", name) for name in ("strict", "apply_exif", "dct_scaling", "max_pixels", "on_bad_record",
                                           "max_consecutive_bad", "verify_checksums")},
    "cache_dir": ("remote", "cache_dir"),
    "cache_limit": ("remote", "cache_limit"),
    "remote_options": ("remote", None),
}


def new_spelling(keyword: str) -> str:
    """How ``Loader(keyword=...)`` is spelt with the groups."""
    group, attribute = DEPRECATED[keyword]
    inner = "..." if attribute is None else f"{attribute}=..."
    return f"Loader({group}=unirecord.{GROUPS[group].__name__}({inner}))"


def groups_from_keywords(given: Dict[str, Any], groups: Dict[str, Any]) -> Dict[str, Any]:
    """The group objects of a Loader call: ``groups`` (keyword -> what was
    given: a group object or None; ``fields`` may be a list of names) with
    the deprecated keywords in ``given`` moved into theirs, each with its
    DeprecationWarning. A deprecated keyword beside its group object is a
    TypeError, as is a keyword Loader never took."""
    moved: Dict[str, Dict[str, Any]] = {name: {} for name in GROUPS}
    for keyword, value in given.items():
        if keyword not in DEPRECATED:
            raise TypeError(f"Loader() got an unexpected keyword argument {keyword!r}")
        group, attribute = DEPRECATED[keyword]
        if isinstance(groups[group], GROUPS[group]):
            raise TypeError(f"Loader({keyword}=...) and Loader({group}=...) both given: give "
                            f"{new_spelling(keyword)} only ({keyword!r} is deprecated)")
        warnings.warn(f"Loader({keyword}=...) is deprecated: use {new_spelling(keyword)}", DeprecationWarning,
                      stacklevel=3)
        if attribute is not None:
            moved[group][attribute] = value
        elif value is not None:  # remote_options: a dict of Remote's attributes
            if not isinstance(value, dict):
                raise TypeError(f"remote_options must be a dict, not {value!r}")
            unknown = sorted(set(value) - set(REMOTE_DEFAULTS))
            if unknown:
                raise ValueError(f"unknown remote option {unknown[0]!r} (known: {', '.join(REMOTE_DEFAULTS)}, "
                                 "and cache_dir and cache_limit as arguments of their own)")
            moved[group].update(value)
    out = dict(groups)
    for group, cls in GROUPS.items():
        value = out[group]
        if isinstance(value, cls):
            continue
        if group == "fields" and value is not None:
            # A list of names is Fields(names).
            out[group] = Fields(field_names("fields", value), **moved[group])
        elif value is None:
            out[group] = cls(**moved[group])
        else:
            also = " or a list of field names" if group == "fields" else ""
            raise TypeError(f"{group} must be a unirecord.{cls.__name__}{also}, not {value!r}")
    return out
