"""Type stubs of unirecord._core, the native extension (see unirecord's own stubs)."""

import os
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple, Union, overload

import numpy as np
import numpy.typing as npt

_Path = Union[str, bytes, "os.PathLike[str]"]
_FieldType = Union[str, type, np.dtype]
_Value = Union[int, float, str, bytes, memoryview, npt.NDArray[Any], "os.PathLike[str]"]  # a path: a video or audio field's file

built_with_cuda: bool
# The options of _Loader and _ImageReader (python/src/loader_options_py.cc's table),
# each with the value of a default-constructed LoaderOptions.
_loader_defaults: Dict[str, Any]
# RemoteOptions' defaults besides cache_dir and cache_limit (python/src/dataset_options_py.cc's table).
_remote_defaults: Dict[str, Any]
# The keywords every converter takes (python/src/convert_py.cc's table), in
# their order, with their defaults: the four converters' stubs below list them.
_convert_keywords: Dict[str, Any]

class CorruptRecordError(OSError):
    """On-disk data failed a checksum or bounds check; the message names the file and record."""

class NotSupportedError(ValueError):
    """Valid input that unirecord does not support (12-bit JPEG, newer format, CUDA in a CPU build)."""

def _raise_status(code: int, message: str) -> None: ...
def _int_arg(name: str, value: Any, minimum: int, maximum: Optional[int] = None) -> int:
    """value as an int within [minimum, maximum]; TypeError / ValueError naming the argument."""
def _bool_arg(name: str, value: Any) -> bool:
    """value as a bool (True, False or a numpy bool); TypeError naming the argument."""
def _index_arg(index: Any, records: int) -> int:
    """A sequence index (negative from the end) as a position; TypeError / IndexError."""
def _to_schema(schema: "_SchemaLike") -> "Schema": ...
def _check_loader_option(key: str, value: Any, shown_as: str) -> None:
    """value checked as the loader option `key` (loader_options_py.cc's table); the error names it `shown_as`."""
def _check_dataset_option(key: str, value: Any, shown_as: str) -> None:
    """value checked as Dataset's keyword or remote option `key`; the error names it `shown_as`."""

class _BlobView:
    """Owner of a zero-copy blob view (keeps the dataset mapped); a buffer."""

    @property
    def zero_copy(self) -> bool: ...

class Field:
    """One field of a schema."""

    def __init__(
        self,
        name: str,
        type: _FieldType,
        shape: Union[None, int, Sequence[int]] = None,
        indexed: bool = False,
        compression: str = "none",
    ) -> None: ...
    @property
    def name(self) -> str: ...
    @property
    def type(self) -> str: ...
    @property
    def shape(self) -> Tuple[int, ...]: ...
    @property
    def indexed(self) -> bool: ...
    @property
    def compression(self) -> str: ...
    def __eq__(self, other: object) -> bool: ...
    def __hash__(self) -> int: ...

class Schema:
    """The ordered, typed fields every record of a dataset has."""

    def __init__(self, fields: Union["Schema", Sequence[Field], Dict[str, Union[_FieldType, Field]]]) -> None: ...
    @property
    def fields(self) -> List[Field]: ...
    @property
    def names(self) -> List[str]: ...
    def __len__(self) -> int: ...
    def __iter__(self) -> Iterator[Field]: ...
    def __contains__(self, name: str) -> bool: ...
    def __getitem__(self, key: Union[int, str]) -> Field: ...
    def __eq__(self, other: object) -> bool: ...

_SchemaLike = Union[Schema, Sequence[Field], Dict[str, Union[_FieldType, Field]]]

class VideoStream:
    """A video field's value (Dataset[i]["video"]): packets and parameters, decoded on demand."""

    @property
    def info(self) -> Dict[str, Any]: ...
    @property
    def pts(self) -> List[int]: ...
    @property
    def frames_decoded(self) -> int: ...
    def frames_at(self, indices: Sequence[int], rotate: bool = False) -> npt.NDArray[np.uint8]: ...
    def frames_in(self, start_s: float, end_s: float, rotate: bool = False) -> npt.NDArray[np.uint8]: ...
    def remux(self) -> Tuple[bytes, str]: ...
    def __len__(self) -> int: ...

class AudioStream:
    """An audio field's value (Dataset[i]["audio"]): packets and parameters, decoded on demand."""

    @property
    def info(self) -> Dict[str, Any]: ...
    def samples(
        self,
        start_s: float,
        seconds: float,
        rate: Optional[int] = None,
        channels: Optional[int] = None,
        dtype: str = "float32",
    ) -> npt.NDArray[Any]: ...
    def remux(self) -> Tuple[bytes, str]: ...

def demux(source: Union[bytes, memoryview, "os.PathLike[str]", str], kind: str = "video", stream: int = -1) -> bytes: ...

class Dataset:
    """Random access to the records of a unirecord dataset (map-style, picklable)."""

    def __init__(
        self,
        path: Union[_Path, Sequence[_Path]],
        fields: Union[None, str, Sequence[str]] = None,
        *,
        verify_checksums: bool = True,
        allow_partial: bool = False,
        bytes_as: str = "memoryview",
        cache_dir: Optional[_Path] = None,
        cache_limit: int = 0,
        remote_options: Optional[Dict[str, Union[int, str]]] = None,
        version: Optional[int] = None,
        tag: Optional[str] = None,
        page_cache_bytes: int = 268435456,  # 256 MiB
    ) -> None: ...
    def __len__(self) -> int: ...
    def __getitem__(self, index: int) -> Dict[str, Any]: ...
    def get_blob(self, index: int, field: str) -> Union[memoryview, npt.NDArray[np.uint8]]: ...
    def remote_stats(self) -> Dict[str, int]: ...
    def column(self, field: str) -> Union[npt.NDArray[np.int64], npt.NDArray[np.float64]]: ...
    def query(self, expression: str) -> npt.NDArray[np.uint64]: ...
    def count(self, expression: str) -> int: ...
    @property
    def schema(self) -> Schema: ...
    @property
    def fields(self) -> List[str]: ...
    @property
    def metadata(self) -> Dict[str, Union[str, bytes]]: ...
    @property
    def classes(self) -> Optional[List[str]]: ...
    @property
    def uuid(self) -> str: ...
    @property
    def version(self) -> int: ...
    @property
    def segments(self) -> List[Dict[str, Any]]: ...
    @property
    def num_files(self) -> int: ...
    @property
    def num_shards(self) -> int:
        """Deprecated alias of num_files (DeprecationWarning)."""
    @property
    def path(self) -> Union[str, List[str]]: ...
    @property
    def shards(self) -> List[Dict[str, Any]]: ...
    def verify(self) -> None: ...

class Writer:
    """Writes records into a new sharded dataset; a context manager (abort on exception)."""

    def __init__(
        self,
        out: _Path,
        schema: _SchemaLike,
        name: str = "data",
        *,
        num_shards: int = 0,
        expected_records: int = 0,
        target_shard_bytes: int = 0,
        metadata: Optional[Dict[str, Union[str, bytes]]] = None,
        classes: Optional[Sequence[str]] = None,
        blob_compression: str = "none",
        zstd_level: int = 3,
        threads: int = 1,
        sync: bool = True,
        blob_page_bytes: int = 1048576,
        scalar_page_bytes: int = 16384,
        mode: str = "write",
        default: Optional[Union[Dict[str, Any], str]] = None,
    ) -> None: ...
    def write(self, record: Dict[str, Any]) -> None: ...
    def set_metadata(self, key: str, value: Union[str, bytes]) -> None: ...
    def finish(self) -> Dict[str, Any]: ...
    def abort(self) -> None: ...
    @property
    def records_written(self) -> int: ...
    @property
    def schema(self) -> Schema: ...
    @property
    def closed(self) -> bool: ...
    @property
    def summary(self) -> Optional[Dict[str, Any]]: ...
    def __enter__(self) -> "Writer": ...
    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> bool: ...

def convert_imagefolder(
    src: _Path,
    out: _Path,
    *,
    name: Optional[str] = None,
    num_shards: int = 0,
    target_shard_bytes: int = 0,
    threads: int = 0,
    strict: bool = False,
    keep_original: bool = False,
    sync: bool = True,
    progress: Optional[Callable[[Dict[str, Any]], None]] = None,
    max_pixels: int = 134217728,
    follow_links_outside: bool = False,
    allow_empty: bool = False,
    append: bool = False,
    default: Optional[Union[Dict[str, Any], str]] = None,
    extend_classes: bool = False,
) -> Dict[str, Any]: ...
def convert_videofolder(
    src: _Path,
    out: _Path,
    *,
    name: Optional[str] = None,
    num_shards: int = 0,
    target_shard_bytes: int = 0,
    threads: int = 0,
    strict: bool = False,
    keep_original: bool = False,
    sync: bool = True,
    progress: Optional[Callable[[Dict[str, Any]], None]] = None,
    max_pixels: int = 134217728,
    follow_links_outside: bool = False,
    allow_empty: bool = False,
    append: bool = False,
    default: Optional[Union[Dict[str, Any], str]] = None,
) -> Dict[str, Any]: ...
def convert_audiofolder(
    src: _Path,
    out: _Path,
    *,
    name: Optional[str] = None,
    num_shards: int = 0,
    target_shard_bytes: int = 0,
    threads: int = 0,
    strict: bool = False,
    keep_original: bool = False,
    sync: bool = True,
    progress: Optional[Callable[[Dict[str, Any]], None]] = None,
    max_pixels: int = 134217728,
    follow_links_outside: bool = False,
    allow_empty: bool = False,
    append: bool = False,
    default: Optional[Union[Dict[str, Any], str]] = None,
) -> Dict[str, Any]: ...
def convert_jsonl(
    manifest: _Path,
    out: _Path,
    *,
    schema: _Path,
    name: Optional[str] = None,
    num_shards: int = 0,
    target_shard_bytes: int = 0,
    threads: int = 0,
    strict: bool = False,
    keep_original: bool = False,
    sync: bool = True,
    progress: Optional[Callable[[Dict[str, Any]], None]] = None,
    max_pixels: int = 134217728,
    follow_links_outside: bool = False,
    allow_empty: bool = False,
    append: bool = False,
    default: Optional[Union[Dict[str, Any], str]] = None,
) -> Dict[str, Any]: ...

def convert_csv(
    manifest: _Path,
    out: _Path,
    *,
    schema: _Path,
    name: Optional[str] = None,
    num_shards: int = 0,
    target_shard_bytes: int = 0,
    threads: int = 0,
    strict: bool = False,
    keep_original: bool = False,
    sync: bool = True,
    progress: Optional[Callable[[Dict[str, Any]], None]] = None,
    max_pixels: int = 134217728,
    follow_links_outside: bool = False,
    allow_empty: bool = False,
    append: bool = False,
    default: Optional[Union[Dict[str, Any], str]] = None,
) -> Dict[str, Any]: ...

def versions(path: _Path) -> List[Dict[str, Any]]: ...
def tag(path: _Path, tag: str, version: Optional[int] = None) -> None: ...
def untag(path: _Path, tag: str, version: Optional[int] = None) -> None: ...
def gc(
    path: _Path, *, keep: Optional[int] = None, keep_newer_than_s: Optional[int] = None, dry_run: bool = False
) -> Dict[str, Any]: ...
def compact(
    path: _Path, *, num_shards: int = 0, target_shard_bytes: int = 0, threads: int = 1, sync: bool = True
) -> Dict[str, Any]: ...
def add_fields(
    path: _Path,
    schema: Schema,
    values: Callable[[int], Dict[str, Any]],
    uuid: str,
    sync: bool = True,
    part: Optional[Dict[str, Any]] = None,
    segments: Optional[List[int]] = None,
    default: Optional[Dict[str, Any]] = None,
) -> Dict[str, Any]: ...
def add_field_arrays(
    path: _Path,
    schema: Schema,
    arrays: List[Any],
    uuid: str,
    sync: bool = True,
    part: Optional[Dict[str, Any]] = None,
    first_id: int = 0,
    segments: Optional[List[int]] = None,
    default: Optional[Dict[str, Any]] = None,
) -> Dict[str, Any]: ...
def _begin_add_fields(path: _Path, num_parts: int, threads: int = 1, sync: bool = True) -> StagedWrite: ...
def drop_fields(path: _Path, names: List[str]) -> Dict[str, Any]: ...
def convert_coco(
    annotations: _Path,
    images: _Path,
    out: _Path,
    *,
    name: Optional[str] = None,
    num_shards: int = 0,
    target_shard_bytes: int = 0,
    threads: int = 0,
    strict: bool = False,
    keep_original: bool = False,
    sync: bool = True,
    progress: Optional[Callable[[Dict[str, Any]], None]] = None,
    max_pixels: int = 134217728,
    follow_links_outside: bool = False,
    allow_empty: bool = False,
    append: bool = False,
    default: Optional[Union[Dict[str, Any], str]] = None,
) -> Dict[str, Any]: ...

class PartWriter:
    """Writes part `part` of `num_parts` of a StagedWrite from any process."""

    def __init__(
        self,
        out: _Path,
        schema: _SchemaLike,
        name: str = "data",
        *,
        token: str,
        part: int,
        num_parts: int,
        target_shard_bytes: int = 0,
        metadata: Optional[Dict[str, Union[str, bytes]]] = None,
        classes: Optional[Sequence[str]] = None,
        blob_compression: str = "none",
        zstd_level: int = 3,
        threads: int = 1,
        sync: bool = True,
        blob_page_bytes: int = 1048576,
        scalar_page_bytes: int = 16384,
    ) -> None: ...
    def write(self, record: Dict[str, Any]) -> None: ...
    def next_shard(self) -> None: ...
    def set_metadata(self, key: str, value: Union[str, bytes]) -> None: ...
    def finish(self) -> Dict[str, Any]: ...
    def abort(self) -> None: ...
    @property
    def records_written(self) -> int: ...
    @property
    def schema(self) -> Schema: ...
    @property
    def closed(self) -> bool: ...
    @property
    def summary(self) -> Optional[Dict[str, Any]]: ...
    def __enter__(self) -> "PartWriter": ...
    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> bool: ...

class StagedWrite:
    """The driver of a dataset written as parts: holds the writers' lock, commits."""

    def __init__(
        self,
        out: _Path,
        name: str,
        num_parts: int,
        *,
        threads: int = 1,
        sync: bool = True,
        default: Optional[Union[Dict[str, Any], str]] = None,
    ) -> None: ...
    @property
    def token(self) -> str: ...
    @property
    def num_parts(self) -> int: ...
    def add_report(self, label: str, text: str) -> None: ...
    def keep_committed(self) -> None: ...
    def commit(self) -> Dict[str, Any]: ...
    def abort(self) -> None: ...
    def __enter__(self) -> "StagedWrite": ...
    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> bool: ...

_DEFAULT_MAX_PIXELS: int

class _ImageFolderPlan:
    @property
    def name(self) -> str: ...
    @property
    def classes(self) -> List[str]: ...
    @property
    def candidates(self) -> int: ...
    @property
    def num_shards(self) -> int: ...
    def part(self, first_shard: int, end_shard: int) -> Tuple[List[str], List[Tuple[str, int, bool]], List[int]]: ...
    def candidates_in(self, first_shard: int, end_shard: int) -> int: ...

def _plan_imagefolder(
    src: _Path, out: _Path, *, name: Optional[str], num_shards: int, strict: bool, keep_original: bool, sync: bool,
    max_pixels: int, follow_links_outside: bool, allow_empty: bool, append: bool, extend_classes: bool
) -> _ImageFolderPlan: ...
def _convert_imagefolder_part(
    src: _Path, out: _Path, name: str, token: str, part_spec: Tuple[Any, Any, Any], part: int, num_parts: int, *,
    threads: int, strict: bool, keep_original: bool, sync: bool, max_pixels: int, follow_links_outside: bool,
    allow_empty: bool
) -> Dict[str, Any]: ...
def _commit_imagefolder(staged: StagedWrite, plan: _ImageFolderPlan, reports: List[Dict[str, Any]]) -> Dict[str, Any]: ...

class _SourcePlan:
    @property
    def name(self) -> str: ...
    @property
    def candidates(self) -> int: ...
    @property
    def num_shards(self) -> int: ...
    def candidates_in(self, first_shard: int, end_shard: int) -> int: ...

def _plan_source(
    kind: str, input: _Path, images: Optional[_Path], schema: Optional[_Path], out: _Path, *, name: Optional[str],
    num_shards: int, strict: bool, keep_original: bool, sync: bool, max_pixels: int, follow_links_outside: bool,
    allow_empty: bool
) -> _SourcePlan: ...
def _convert_source_part(
    kind: str, input: _Path, images: Optional[_Path], schema: Optional[_Path], out: _Path, name: str, token: str,
    first_shard: int, end_shard: int, part: int, num_parts: int, *, num_shards: int, threads: int, strict: bool,
    keep_original: bool, sync: bool, max_pixels: int, follow_links_outside: bool, allow_empty: bool
) -> Dict[str, Any]: ...
def _commit_source(staged: StagedWrite, plan: _SourcePlan, reports: List[Dict[str, Any]]) -> Dict[str, Any]: ...

class _ImageReader:
    # options: keys of _loader_defaults (the per-sample ones apply).
    def __init__(self, dataset: Dataset, options: Dict[str, Any]) -> None: ...
    def __len__(self) -> int: ...
    def get(self, index: int, epoch: int) -> Tuple[npt.NDArray[np.uint8], int]: ...
    def get_many(self, indices: Sequence[int], epoch: int) -> Tuple[npt.NDArray[np.uint8], npt.NDArray[np.int64]]: ...
    def window(self, index: int, epoch: int) -> Tuple[int, int, int, int, bool]: ...

class Coverage:
    """What one loader (rank) delivered of an epoch: Loader.coverage(). Pickles as its bytes."""

    @property
    def epoch(self) -> int: ...
    @property
    def seed(self) -> int: ...
    @property
    def num_shards(self) -> int: ...
    @property
    def shard_id(self) -> int: ...
    @property
    def complete(self) -> bool: ...
    @property
    def skipped(self) -> int: ...
    @property
    def uncarried(self) -> int: ...
    @property
    def has_ids(self) -> bool: ...
    @property
    def expected(self) -> int: ...
    @property
    def delivered(self) -> int: ...
    @property
    def padding(self) -> int: ...
    @property
    def dropped(self) -> int: ...
    @property
    def digest(self) -> Tuple[int, int, int]: ...
    def ids(self) -> Optional[npt.NDArray[np.uint64]]: ...
    def to_bytes(self) -> bytes: ...

class CoverageCheck:
    """The answer of unirecord.check_coverage()."""

    @property
    def ok(self) -> bool: ...
    @property
    def records(self) -> int: ...
    @property
    def deliveries(self) -> int: ...
    @property
    def padding(self) -> int: ...
    @property
    def dropped(self) -> int: ...
    @property
    def missing(self) -> int: ...
    @property
    def repeated(self) -> int: ...
    @property
    def mismatch(self) -> bool: ...
    @property
    def has_ids(self) -> bool: ...
    @property
    def missing_ids(self) -> List[int]: ...
    @property
    def repeated_ids(self) -> List[int]: ...
    @property
    def skipped(self) -> int: ...
    @property
    def uncarried(self) -> int: ...
    @property
    def unfinished(self) -> List[int]: ...
    @property
    def message(self) -> str: ...
    def __bool__(self) -> bool: ...

def check_coverage(digests: Sequence[Union[Coverage, bytes]]) -> CoverageCheck: ...
def merge_coverage(digests: Sequence[Union[Coverage, bytes]]) -> Coverage: ...

class _Loader:
    # datasets: one, or several mixed by options["weights"] / options["epoch_size"].
    def __init__(self, datasets: List[Dataset], options: Dict[str, Any]) -> None: ...
    # (images or None, labels or None, record ids, epoch, index, crops or None,
    #  {field name (and NAME_lengths, NAME_offsets): DLPack capsule, or a list of str/bytes},
    #  None or a clip loader's (frame pts, clip starts)).
    def next(self, wait_stream: int = 0) -> Optional[Tuple[Any, Any, Any, int, int, Any, Dict[str, Any], Any]]: ...
    def set_epoch(self, epoch: int) -> None: ...
    @property
    def epoch(self) -> int: ...
    def state(self) -> Dict[str, Any]: ...
    def restore(self, state: Dict[str, Any]) -> None: ...
    def combine(self, states: Sequence[Dict[str, Any]]) -> Dict[str, Any]: ...
    def coverage(self) -> Coverage: ...
    def stats(self) -> Dict[str, Any]: ...
    def reset_stats(self) -> None: ...
    @property
    def batches_per_epoch(self) -> int: ...
    @property
    def threads(self) -> int: ...

class Server:
    @property
    def url(self) -> str: ...
    @property
    def host(self) -> str: ...
    @property
    def port(self) -> int: ...
    @property
    def token(self) -> str: ...
    @property
    def running(self) -> bool: ...
    def stop(self) -> None: ...
    def __enter__(self) -> "Server": ...
    def __exit__(self, arg0: Any, arg1: Any, arg2: Any) -> None: ...

def _serve(
    dataset: Dataset, port: int, bind: str, token: Optional[str], threads: int, cache_bytes: int,
    thumbnail_size: int, box_format: str
) -> Server: ...
