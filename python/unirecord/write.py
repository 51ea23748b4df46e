"""Any source, converted by a user function: :func:`write_dataset`.

``write_dataset(fn, inputs, out, schema=..., num_shards=N)`` maps ``fn`` over
``inputs`` (each call gives zero or more samples) and writes the samples as
dataset NAME in OUT. The inputs are cut into ``num_shards`` fixed ranges;
each task (a run of whole shards) writes its shards with a
:class:`unirecord.PartWriter` and the driver commits them with its
:class:`unirecord.StagedWrite` (the machinery and the driver of
``unirecord.distributed``), so the files are byte-identical whether the tasks
ran in this process, in local processes or on a Dask cluster, in any order
and however often one was rerun.
"""

from __future__ import annotations

import collections.abc
import concurrent.futures
import multiprocessing
import os
import pickle
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Union

from . import _core
from ._args import PathLike
from .distributed import _check_counts, _run

__all__ = ["write_dataset"]

_Sample = Dict[str, Any]
_SchemaLike = Union[_core.Schema, Sequence[_core.Field], Dict[str, Union[str, _core.Field]]]


def write_dataset(fn: Callable[[Any], Union[_Sample, Iterable[_Sample]]], inputs: Sequence[Any], out: PathLike, *,
                  schema: _SchemaLike, num_shards: int, name: str = "data", processes: Optional[int] = None,
                  client: Any = None, shards_per_task: int = 1, metadata: Optional[Dict[str, Union[str, bytes]]] = None,
                  classes: Optional[Sequence[str]] = None, sync: bool = True, allow_empty: bool = False,
                  progress: Union[None, bool, Callable[[Dict[str, Any]], None]] = None, retries: int = 1,
                  commit_threads: int = 1) -> Dict[str, Any]:
    """Writes the samples of ``fn(inputs[0])``, ``fn(inputs[1])``, ... as
    dataset NAME in OUT, in that order (ids 0, 1, ...).

    Args:
        fn: called once per input; returns a dict (one sample) or an iterable
            of dicts (a list, a generator: zero or more samples), each with a
            value for every field of ``schema`` (as :meth:`Writer.write`).
            It must be picklable for ``processes`` >= 2 (a function defined at
            the top of a module); Dask pickles closures and lambdas too.
        inputs: a sequence (``len()`` and ``inputs[i]``): file names, line
            numbers, records. Input i goes to shard s when
            ``s * n // num_shards <= i < (s + 1) * n // num_shards`` (n =
            ``len(inputs)``), as the converters cut their inputs; each
            task is sent only its own inputs.
        out: the dataset's folder; with ``client``, the same path on every
            worker (a shared file system).
        schema: what :class:`Writer` takes (a :class:`Schema`, a list of
            :class:`Field`, or ``{name: type or Field}``).
        num_shards: the number of shard files, at most ``len(inputs)``: it
            fixes the bytes, whoever writes them.
        name: the dataset's name (``OUT/NAME.uset``).
        processes: None, 0 or 1: the tasks run in this process, one by one;
            P >= 2: in a pool of P local processes (started with 'spawn':
            a script that calls this needs ``if __name__ == "__main__":``).
        client: a ``distributed.Client``: the tasks run on its workers, as
            ``unirecord.distributed``'s conversions (not with ``processes``).
        shards_per_task: shards each task writes.
        metadata, classes: the dataset's metadata, as :class:`Writer`'s.
        sync: fsync the files before the commit.
        allow_empty: commit a dataset of no record when ``fn`` gave no
            sample at all; else that raises ValueError and commits nothing.
        progress: None (a bar on stderr when it is a terminal), False, True,
            or a callable taking the dict of ``unirecord.distributed``'s
            conversions after each task (``files_done`` and ``files_total``
            count inputs, ``bytes`` the bytes staged).
        retries: with ``client``, how often Dask reruns a task that raised.
        commit_threads: threads that verify and stamp the shards at the commit.

    Returns:
        :meth:`StagedWrite.commit`'s summary (records, shards, bytes, uuid,
        shard_paths, index_paths, manifest_path, generation) plus ``name``,
        ``written`` (= records, the converters' name), ``inputs``,
        ``seconds``, ``commit_seconds`` and ``tasks``.

    Raises:
        ValueError / TypeError: a sample the schema refuses, naming the input
            (``fn(inputs[17]), sample 0: record 0: field 'tokens' ...``);
            a bad argument.
        Whatever ``fn`` raised, unchanged but for a note naming the input
        (``unirecord.write_dataset: raised by fn(inputs[17])``, printed
        under the message). Either way the other tasks are cancelled,
        nothing is committed and an older dataset NAME stays whole.
        While it runs, a second writer of NAME in OUT is refused with
        RuntimeError naming this one.
    """
    if not callable(fn):
        raise TypeError("fn must be a callable, not %r" % (fn,))
    if not isinstance(inputs, collections.abc.Sized) or not hasattr(inputs, "__getitem__"):
        raise TypeError("inputs must be a sequence (len() and inputs[i]), not %s; list(...) makes one"
                        % type(inputs).__name__)
    _check_counts(num_shards, shards_per_task)
    if num_shards > len(inputs):
        raise ValueError("num_shards=%d is more than the %d inputs: each input's samples go to one shard, so "
                         "some shards would stay empty" % (num_shards, len(inputs)))
    if client is not None and processes is not None:
        raise ValueError("processes and client exclude each other: the tasks run either in local processes or "
                         "on the client's workers")
    if processes is not None and (isinstance(processes, bool) or not isinstance(processes, int) or processes < 0):
        raise ValueError("processes must be None or an int >= 0, not %r" % (processes,))
    schema = _core.Schema(schema)
    out = os.path.abspath(os.fspath(out))
    writer_options = dict(metadata=metadata, classes=classes, sync=sync)
    plan = _Plan(name, len(inputs), num_shards)

    def submit(pool, token, first, end, part, num_parts, key, retries):
        begin = plan.starts[first]
        items = [inputs[i] for i in range(begin, plan.starts[end])]
        shard_starts = [start - begin for start in plan.starts[first:end + 1]]
        return pool.submit(_write_part, fn, items, begin, shard_starts, out, name, schema, token, part, num_parts,
                           writer_options, key=key, retries=retries, pure=False)

    def commit(staged, plan, reports):
        if sum(report["written"] for report in reports) == 0 and not allow_empty:
            raise ValueError("fn gave no sample for any of the %d inputs: nothing committed as %s in %s "
                             "(allow_empty=True commits the empty dataset)" % (plan.candidates, name, out))
        summary = staged.commit()
        summary.update(name=name, written=summary["records"], inputs=plan.candidates)
        return summary

    options = dict(num_shards=num_shards, shards_per_task=shards_per_task, progress=progress, retries=retries,
                   commit_threads=commit_threads, sync=sync)
    if client is not None:
        return _run(client, out, plan, submit, commit, **options)
    if processes is None or processes <= 1:
        return _run(_InProcess(), out, plan, submit, commit, as_completed=iter, **options)
    try:
        pickle.dumps(fn)
    except Exception as error:
        raise TypeError("fn must be picklable to run in processes=%d (a function defined at the top of a module, "
                        "not a lambda or a nested function), or run it in this process (processes=None): %s"
                        % (processes, error)) from error
    with _ProcessPool(processes) as pool:
        return _run(pool, out, plan, submit, commit, as_completed=concurrent.futures.as_completed, **options)


class _Plan:
    """The cut of n inputs into shards, as ``unirecord.distributed``'s driver
    reads a conversion's plan: shard s is inputs [starts[s], starts[s + 1])."""

    def __init__(self, name: str, inputs: int, num_shards: int) -> None:
        self.name = name
        self.candidates = inputs
        self.starts = [s * inputs // num_shards for s in range(num_shards + 1)]

    def candidates_in(self, first_shard: int, end_shard: int) -> int:
        return self.starts[end_shard] - self.starts[first_shard]


def _write_part(fn: Callable[[Any], Any], items: List[Any], first_index: int, shard_starts: List[int], out: str,
                name: str, schema: _core.Schema, token: str, part: int, num_parts: int,
                writer_options: Dict[str, Any]) -> Dict[str, Any]:
    """One task (in any process): the samples of ``fn`` over ``items``
    (inputs ``first_index``, ...) as part ``part``, shard k being items
    [shard_starts[k], shard_starts[k + 1])."""
    with _core.PartWriter(out, schema, name, token=token, part=part, num_parts=num_parts, **writer_options) as w:
        for shard in range(len(shard_starts) - 1):
            if shard:
                w.next_shard()
            for k in range(shard_starts[shard], shard_starts[shard + 1]):
                index = first_index + k
                for n, sample in enumerate(_samples(fn, items[k], index)):
                    try:
                        w.write(sample)
                    except (TypeError, ValueError) as error:
                        raise type(error)("fn(inputs[%d]), sample %d: %s" % (index, n, error)) from None
    # What the driver's progress counts, under the names of a converter task's report.
    return dict(written=w.summary["records"], rejected=0, image_bytes=w.summary["bytes"])


def _samples(fn: Callable[[Any], Any], item: Any, index: int) -> Iterator[_Sample]:
    """The samples of ``fn(item)``; an error of fn's (also one raised while
    its iterable is read) gets a note naming the input."""
    try:
        result = fn(item)
    except Exception as error:
        _add_note(error, "unirecord.write_dataset: raised by fn(inputs[%d])" % index)
        raise
    if isinstance(result, dict):
        yield result
        return
    if isinstance(result, (str, bytes)) or not isinstance(result, collections.abc.Iterable):
        raise TypeError("fn(inputs[%d]) returned %s: it must return a dict (one sample) or an iterable of dicts "
                        "(zero or more)" % (index, type(result).__name__))
    samples = iter(result)
    while True:
        try:
            sample = next(samples)
        except StopIteration:
            return
        except Exception as error:
            _add_note(error, "unirecord.write_dataset: raised by fn(inputs[%d])" % index)
            raise
        yield sample


def _add_note(error: BaseException, note: str) -> None:
    # BaseException.add_note's list (Python 3.11 prints it under the message);
    # it survives the pickling that brings a task's error back.
    error.__notes__ = [*getattr(error, "__notes__", ()), note]


class _Deferred:
    """A task run in this process when the driver asks for its result."""

    def __init__(self, task: Callable[..., Any], args: tuple) -> None:
        self._task = task
        self._args = args

    def result(self) -> Any:
        return self._task(*self._args)


class _InProcess:
    """The driver's client for ``processes`` None, 0 or 1: tasks run one by
    one, in part order (``as_completed=iter``), so none runs after one failed."""

    @staticmethod
    def submit(task: Callable[..., Any], *args: Any, **dask_options: Any) -> _Deferred:
        return _Deferred(task, args)

    @staticmethod
    def cancel(futures: List[_Deferred]) -> None:
        pass  # what was not asked for never runs


class _ProcessPool:
    """The driver's client over P spawned local processes. ``cancel`` waits
    for the tasks already running, so that a failed run's abort (and its
    cleanup of what they staged) comes after them: a task checks that the run
    is under way and then renames its part, two steps the abort could fall
    between. Leaving the ``with`` block waits too, so no process outlives the
    call."""

    def __init__(self, processes: int) -> None:
        self._executor = concurrent.futures.ProcessPoolExecutor(processes,
                                                                mp_context=multiprocessing.get_context("spawn"))

    def submit(self, task: Callable[..., Any], *args: Any, **dask_options: Any) -> concurrent.futures.Future:
        return self._executor.submit(task, *args)

    @staticmethod
    def cancel(futures: List[concurrent.futures.Future]) -> None:
        for future in futures:
            future.cancel()
        concurrent.futures.wait(futures)

    def __enter__(self) -> "_ProcessPool":
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self._executor.shutdown(wait=True)
