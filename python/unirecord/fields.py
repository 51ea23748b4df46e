"""Fields added, replaced and dropped without rewriting a dataset (format/SPEC.md
section 1.4; docs/python.md "Adding fields").

``add_fields(path, {"score": values})`` writes the new fields into column
files beside the shards and commits them as a new version; the shards are not
touched. ``values`` is a sequence or numpy array with one entry per record (a
2-D array is a fixed-shape array field), or a function of the record
(``fn(record_dict) -> value``), computed in this process, in local processes
(``processes=``) or on Dask (``client=``) with the same bytes; ``segments=``
and ``default=`` give values to some segments only. A field named as one the
dataset has replaces it from the new version on. ``drop_fields`` hides
fields from the next version (their bytes go with ``unirecord.gc``).
"""
import bisect
import concurrent.futures
import os
import pickle
from typing import Any, Callable, Dict, Mapping, Optional, Sequence, Union

from . import _core
from .distributed import _check_counts, _run
from .write import _ProcessPool, _add_note

try:
    import numpy as np
except ImportError:  # numpy is a dependency; kept optional for type checkers only
    np = None  # type: ignore[assignment]

_Values = Union[Sequence[Any], Callable[[Dict[str, Any]], Any]]


def _field_for(name: str, value: Any) -> "_core.Field":
    """The field a value of record 0 asks for: numpy dtype and shape, or the Python type."""
    if np is not None and isinstance(value, np.ndarray):
        return _core.Field(name, str(value.dtype), list(value.shape) if value.ndim else None)
    if np is not None and isinstance(value, np.generic):
        return _core.Field(name, str(value.dtype))
    if isinstance(value, bool):
        return _core.Field(name, "bool")
    if isinstance(value, int):
        return _core.Field(name, "int64")
    if isinstance(value, float):
        return _core.Field(name, "float64")
    if isinstance(value, str):
        return _core.Field(name, "string")
    if isinstance(value, (bytes, bytearray, memoryview)):
        return _core.Field(name, "bytes")
    raise TypeError(f"add_fields: field '{name}': cannot infer a field type from {type(value).__name__} "
                    f"(give schema=)")


def add_fields(path: Any, fields: Mapping[str, _Values], *, schema: Optional[Any] = None, sync: bool = True,
               processes: Optional[int] = None, client: Any = None, shards_per_task: int = 1,
               progress: Union[None, bool, Callable[[Dict[str, Any]], None]] = None, retries: int = 1,
               commit_threads: int = 1, segments: Optional[Sequence[int]] = None,
               default: Optional[Mapping[str, Any]] = None) -> Dict[str, Any]:
    """Adds (or replaces) ``fields`` in the dataset at ``path`` as a new version.

    Args:
        path: a folder holding one dataset with a manifest, DIR/NAME or DIR/NAME.uset.
        fields: name -> values: a sequence or numpy array with one entry per
            record (len(dataset); with ``segments``, per record of those
            segments), or a function of the record dict.
        schema: the new fields' schema (what :class:`Schema` takes); by
            default inferred from the first record's values (numpy dtypes and shapes,
            int -> int64, float -> float64, str -> string, bytes -> bytes).
        sync: fsync the new files before the commit (as :class:`Writer`'s sync).
        processes: None, 0 or 1: computed in this process, in id order;
            P >= 2: in a pool of P local processes (started with 'spawn':
            the functions must be picklable, a script needs ``if __name__ ==
            "__main__":``), as :func:`write_dataset`'s.
        client: a ``distributed.Client``: computed on its workers (``path``
            the same on every worker; not with ``processes``).
        shards_per_task, progress, retries, commit_threads: with ``processes``
            or ``client``, as :func:`write_dataset`'s: each task computes the
            values of a run of ``shards_per_task`` shards of one segment and
            stages their column files; the driver commits them. The files
            are byte-identical however the values were computed.
        segments: the segments (indexes into :attr:`Dataset.segments`) the
            values are for; default: all. The records of the others get
            ``default``.
        default: ``{field: value}`` for every new field: the values of the
            records of the segments ``segments`` leaves out. Without it an
            add that leaves a segment out is refused (ValueError naming the
            segments).

    Returns:
        The commit's summary (records, shards, bytes_written, generation, ...);
        with ``processes`` or ``client`` also ``seconds``, ``commit_seconds``
        and ``tasks``.

    Raises:
        ValueError: a sequence of another length than the dataset (or its
            ``segments``), a segment left without values, or a value
            the field refuses (naming the record); an exception of a function
            stops the add, which then commits nothing (a note names the field
            and record: ``unirecord.add_fields: raised by the function of
            field 'score' for record 7``).
        RuntimeError: another writer committed to the dataset meanwhile.
    """
    if not fields:
        raise ValueError("add_fields: no fields given")
    if client is not None and processes is not None:
        raise ValueError("processes and client exclude each other: the values are computed either in local "
                         "processes or on the client's workers")
    if processes is not None and (isinstance(processes, bool) or not isinstance(processes, int) or processes < 0):
        raise ValueError("processes must be None or an int >= 0, not %r" % (processes,))
    dataset = _core.Dataset(path)
    rows = _Rows(dataset, segments)
    n = rows.count
    where = "the dataset" if segments is None else "segments %s" % (list(segments),)
    sources = {}
    for name, values in fields.items():
        if not callable(values) and len(values) != n:
            raise ValueError(f"add_fields: field '{name}' has {len(values)} values, {where} {n} records")
        sources[name] = values
    if schema is None:
        if n == 0:
            raise ValueError(f"add_fields: {where} has no records to infer the fields' types from; give schema=")
        first = _values_of(dataset, sources, rows.first_id, 0)
        schema = _core.Schema([_field_for(name, value) for name, value in first.items()])
    schema = _core.Schema(schema)
    arrays = _as_arrays(schema, sources, n)
    chosen = dict(segments=None if segments is None else list(segments),
                  default=None if default is None else dict(default))
    if client is None and (processes is None or processes <= 1):
        if arrays is not None and rows.contiguous:  # read natively, without a call per record
            return _core.add_field_arrays(path, schema, arrays, dataset.uuid, sync, first_id=rows.first_id, **chosen)
        return _core.add_fields(path, schema, lambda i: _values_of(dataset, sources, i, rows.row(i)), dataset.uuid,
                                sync, **chosen)
    return _add_in_parts(path, dataset, schema, sources, arrays, rows, chosen, sync=sync, processes=processes,
                         client=client, shards_per_task=shards_per_task, progress=progress, retries=retries,
                         commit_threads=commit_threads)


class _Rows:
    """Where the values of a record are in the sequences add_fields was given:
    one entry per record of ``segments`` (None: all), in id order."""

    def __init__(self, dataset: "_core.Dataset", segments: Optional[Sequence[int]]) -> None:
        all_segments = dataset.segments
        chosen = range(len(all_segments)) if segments is None else sorted(set(segments))
        if not chosen and segments is not None:
            raise ValueError("add_fields: segments=%r names no segment (None: every segment)" % (segments,))
        for k in chosen:
            if not isinstance(k, int) or isinstance(k, bool) or not 0 <= k < len(all_segments):
                raise ValueError("add_fields: segment %r does not exist (the dataset has %d)" % (k, len(all_segments)))
        self.first_row = {}  # segment -> row of its first record
        self.count = 0
        for k in chosen:
            self.first_row[k] = self.count
            self.count += all_segments[k]["records"]
        self._segments = all_segments
        self._first_ids = [s["first_id"] for s in all_segments]
        self.first_id = all_segments[chosen[0]]["first_id"] if chosen else 0
        # The chosen records are ids first_id ... first_id + count - 1.
        self.contiguous = list(chosen) == list(range(chosen[0], chosen[0] + len(chosen))) if chosen else True

    def row(self, record_id: int) -> int:
        k = bisect.bisect_right(self._first_ids, record_id) - 1
        return self.first_row[k] + record_id - self._segments[k]["first_id"]


def _values_of(dataset: Optional["_core.Dataset"], sources: Dict[str, _Values], record_id: int,
               row: int) -> Dict[str, Any]:
    """The new fields of record ``record_id``: functions of its record dict, or
    entry ``row`` of a sequence."""
    record = dataset[record_id] if any(callable(v) for v in sources.values()) else None
    values = {}
    for name, v in sources.items():
        if not callable(v):
            values[name] = v[row]
            continue
        try:
            values[name] = v(record)
        except Exception as error:
            _add_note(error, "unirecord.add_fields: raised by the function of field '%s' for record %d"
                      % (name, record_id))
            raise
    return values


class _FieldPlan:
    """The tasks of an add in parts, as ``unirecord.distributed``'s driver reads
    a plan: runs of ``shards_per_task`` shards, none across two segments."""

    def __init__(self, dataset: "_core.Dataset", shards_per_task: int) -> None:
        self.name = "fields"
        self.version = dataset.version
        self.candidates = len(dataset)
        self.starts = [0]
        for shard in dataset.shards:
            self.starts.append(self.starts[-1] + shard["records"])
        self.ranges = []
        self.segment_of = {}  # a range's first shard -> its segment
        for k, segment in enumerate(dataset.segments):
            end = segment["first_shard"] + segment["shards"]
            for first in range(segment["first_shard"], end, shards_per_task):
                self.ranges.append((first, min(first + shards_per_task, end)))
                self.segment_of[first] = k

    def candidates_in(self, first_shard: int, end_shard: int) -> int:
        return self.starts[end_shard] - self.starts[first_shard]


def _add_in_parts(path: Any, dataset: "_core.Dataset", schema: "_core.Schema", sources: Dict[str, _Values],
                  arrays: Optional[list], rows: _Rows, chosen: Dict[str, Any], *, sync: bool,
                  processes: Optional[int], client: Any, shards_per_task: int, progress: Any, retries: int,
                  commit_threads: int) -> Dict[str, Any]:
    """add_fields on ``client``'s workers or in ``processes`` local processes:
    the driver of ``unirecord.distributed``, one task per run of shards
    (``chosen``: add_fields' segments and default)."""
    _check_counts(max(dataset.num_files, 1), shards_per_task)
    path = os.path.abspath(os.fspath(path))
    plan = _FieldPlan(dataset, shards_per_task)
    uuid = dataset.uuid

    def begin(num_parts: int) -> "_core.StagedWrite":
        staged = _core._begin_add_fields(path, num_parts, commit_threads, sync)
        if _core.Dataset(path).version != plan.version:
            staged.abort()
            raise RuntimeError("add_fields: %s: another writer committed since version %d was read; add the "
                               "fields again" % (path, plan.version))
        return staged

    def submit(pool: Any, token: str, first: int, end: int, part: int, num_parts: int, key: str,
               retries: int) -> Any:
        begin_id, end_id = plan.starts[first], plan.starts[end]
        where = dict(token=token, part=part, num_parts=num_parts, version=plan.version, first_shard=first,
                     end_shard=end)
        # The part's slice of the values; none for a segment that gets the default.
        segment = plan.segment_of[first]
        given = segment in rows.first_row
        row = rows.first_row.get(segment, 0) + begin_id - dataset.segments[segment]["first_id"]
        rows_end = row + end_id - begin_id
        if not given:
            values: Any = {}
        elif arrays is not None:
            values = [a[row:rows_end] for a in arrays]
        else:
            values = {name: v if callable(v) else v[row:rows_end] for name, v in sources.items()}
        return pool.submit(_add_part, path, schema, values, given and arrays is not None, uuid, sync, where,
                           begin_id, chosen, key=key, retries=retries, pure=False)

    def commit(staged: "_core.StagedWrite", plan: _FieldPlan, reports: list) -> Dict[str, Any]:
        return staged.commit()

    options = dict(num_shards=len(plan.starts) - 1, shards_per_task=shards_per_task, progress=progress,
                   retries=retries, commit_threads=commit_threads, sync=sync, ranges=plan.ranges, begin=begin,
                   task="add-fields")
    if client is not None:
        return _run(client, path, plan, submit, commit, **options)
    try:
        pickle.dumps(list(sources.values()))
    except Exception as error:
        raise TypeError("the values must be picklable to be computed in processes=%d (functions defined at the "
                        "top of a module, not lambdas or nested functions), or computed in this process "
                        "(processes=None): %s" % (processes, error)) from error
    with _ProcessPool(processes) as pool:
        return _run(pool, path, plan, submit, commit, as_completed=concurrent.futures.as_completed, **options)


def _add_part(path: str, schema: "_core.Schema", values: Any, native: bool, uuid: str, sync: bool,
              part: Dict[str, Any], first_id: int, chosen: Dict[str, Any]) -> Dict[str, Any]:
    """One task (in any process): stages the column files of ``part``'s shards,
    whose records start at ``first_id``; ``values`` are the part's arrays
    (``native``) or its sources (functions, slices of sequences); ``chosen``:
    add_fields' segments and default."""
    if native:
        summary = _core.add_field_arrays(path, schema, values, uuid, sync, part, first_id, **chosen)
    else:
        dataset = _core.Dataset(path, version=part["version"])
        summary = _core.add_fields(path, schema, lambda i: _values_of(dataset, values, i, i - first_id), uuid,
                                   sync, part, **chosen)
    # What the driver's progress counts, under the names of a converter task's report.
    return dict(written=summary["records"], rejected=0, image_bytes=summary["bytes"])


def _as_arrays(schema: "_core.Schema", sources: Dict[str, _Values], n: int) -> Optional[list]:
    """The values as one C-contiguous array per field (the field's dtype, shape (n, *shape)) when every
    field is a fixed-shape numeric one given as a numpy array of that dtype; else None."""
    if np is None or list(sources) != schema.names:
        return None
    arrays = []
    for field in schema.fields:
        values = sources[field.name]
        if (not isinstance(values, np.ndarray) or field.type in ("string", "bytes") or -1 in field.shape
                or values.dtype != np.dtype(field.type) or values.shape != (n, *field.shape)):
            return None
        arrays.append(np.ascontiguousarray(values))
    return arrays


def drop_fields(path: Any, names: Sequence[str]) -> Dict[str, Any]:
    """Hides ``names`` from the next version of the dataset at ``path``.

    Raises:
        KeyError: a name the dataset does not have. ValueError: no field would be left.
    """
    return _core.drop_fields(path, list(names))
