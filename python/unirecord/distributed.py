"""Conversion on Dask's distributed scheduler.

:func:`convert_imagefolder` is :func:`unirecord.convert_imagefolder` with its
shards written by the workers of a ``distributed.Client``: the client lists
the folder once and takes the writers' lock (``unirecord.StagedWrite``), each
task converts a run of whole shards (``PartWriter`` under hidden staged names
in OUT), and the client verifies every staged shard and commits one manifest.
:func:`convert_coco`, :func:`convert_jsonl` and :func:`convert_csv` do the
same for :func:`unirecord.convert_coco` / ``convert_jsonl`` / ``convert_csv``;
their tasks read the annotations or the manifest themselves (the same input
cuts into the same shards), so only paths go to the workers.
The bytes equal those of a local ``urec convert`` with the same ``--shards``
and options, for any number of workers, whatever the order tasks finish in
and however often Dask reruns one (a worker that dies mid-task: its
replacement's files replace the first attempt's whole).

A task whose driver went away (a killed client) or gave up (a failed task
cancels the others) still runs to its end on its worker: Dask forgets it at
once, scheduler and worker state alike, but cannot stop the thread running
it. Until then it writes hidden files of its run into OUT, never committed;
it stages its part only while the run is under way (once the driver has
cleaned up or the next writer of the dataset has begun, the part is refused
and its files removed), and what a killed driver's tasks staged before that
the next writer removes.

SRC and OUT must be the same paths on every worker and on the client (a
shared file system: NFS, Lustre, or one machine's disk). ``python -m
unirecord.distributed`` is the command line behind ``urec convert imagefolder
--scheduler``.
"""

import os
import sys
import time

from . import _core

__all__ = ["convert_imagefolder", "convert_coco", "convert_jsonl", "convert_csv", "convert_videofolder",
           "convert_audiofolder"]


def _convert_part(src, out, name, token, spec, part, num_parts, options):
    """One task: shards of ``spec`` as part ``part`` (runs on a worker)."""
    return _core._convert_imagefolder_part(src, out, name, token, spec, part, num_parts, **options)


def _convert_source_part(source, out, name, token, first, end, part, num_parts, options):
    """One task of a COCO / JSON Lines / CSV conversion: shards [first, end) (runs on a worker)."""
    return _core._convert_source_part(*source, out, name, token, first, end, part, num_parts, **options)


class _ProgressBar:
    """``[####......] 1234/5000 files, 456.7 files/s, ETA 8 s`` on stderr."""

    def __init__(self, total):
        self.total = total
        self.start = time.monotonic()

    def __call__(self, p):
        width = 30
        filled = int(width * p["files_done"] / max(p["files_total"], 1))
        rate = p["files_done"] / p["seconds"] if p["seconds"] > 0 else 0.0
        eta = (p["files_total"] - p["files_done"]) / rate if rate > 0 else float("nan")
        sys.stderr.write(
            "\r[%s%s] %d/%d files, %d rejected, %.1f files/s, ETA %.0f s, %d/%d tasks "
            % ("#" * filled, "." * (width - filled), p["files_done"], p["files_total"], p["rejected"], rate,
               eta, p["tasks_done"], p["tasks_total"]))
        sys.stderr.flush()

    @staticmethod
    def close():
        sys.stderr.write("\r\033[K")
        sys.stderr.flush()


def _check_counts(num_shards, shards_per_task):
    if isinstance(num_shards, bool) or not isinstance(num_shards, int) or num_shards < 1:
        raise ValueError("num_shards must be a positive int (the parts are runs of whole shards), not %r"
                         % (num_shards,))
    if isinstance(shards_per_task, bool) or not isinstance(shards_per_task, int) or shards_per_task < 1:
        raise ValueError("shards_per_task must be a positive int, not %r" % (shards_per_task,))


def _check_default(append, default):
    if default is not None and not append:
        raise ValueError("default is for the fields an append's records lack: it needs append=True")


def _run(client, out, plan, submit, commit, *, num_shards, shards_per_task, progress, retries, commit_threads, sync,
         as_completed=None, append=False, default=None, ranges=None, begin=None, task="convert"):
    """The driver: one task per run of ``shards_per_task`` shards of ``plan``
    (``submit(client, token, first, end, part, num_parts, key, retries)``
    returns its future), the progress bar as tasks finish, then
    ``commit(staged, plan, reports)``; a failed task cancels the others and
    nothing is committed. ``as_completed`` yields the futures as they finish
    (default: Dask's; ``unirecord.write_dataset``'s local runs pass theirs).
    ``append``: the commit adds one segment to the committed dataset;
    ``default``: the values of the fields it has and the new records lack.
    ``ranges``: the tasks' shard runs (default: cut by ``shards_per_task``);
    ``begin(num_parts)``: the run's StagedWrite (default: one of dataset
    ``plan.name`` in OUT). ``task`` names the tasks' keys
    (``unirecord-TASK-TOKEN-PART``, as Dask's dashboard shows them)."""
    if as_completed is None:
        import distributed

        as_completed = distributed.as_completed
    if ranges is None:
        ranges = [(first, min(first + shards_per_task, num_shards)) for first in range(0, num_shards, shards_per_task)]
    if progress is None:
        progress = sys.stderr.isatty()
    draw = _ProgressBar(plan.candidates) if progress is True else (progress or None)
    start = time.monotonic()
    if begin is None:
        def begin(num_parts):
            return _core.StagedWrite(out, plan.name, num_parts, threads=commit_threads, sync=sync, default=default)
    with begin(len(ranges)) as staged:
        if append:
            staged.keep_committed()
        futures = {}
        for part, (first, end) in enumerate(ranges):
            key = "unirecord-%s-%s-%05d" % (task, staged.token, part)
            futures[submit(client, staged.token, first, end, part, len(ranges), key, retries)] = part
        reports = [None] * len(ranges)
        done = dict(files_done=0, files_total=plan.candidates, written=0, rejected=0, bytes=0, seconds=0.0,
                    tasks_done=0, tasks_total=len(ranges))
        try:
            for future in as_completed(list(futures)):
                part = futures[future]
                report = future.result()  # raises the task's error
                reports[part] = report
                first, end = ranges[part]
                done["files_done"] += plan.candidates_in(first, end)
                done["written"] += report["written"]
                done["rejected"] += report["rejected"]
                done["bytes"] += report["image_bytes"]
                done["seconds"] = time.monotonic() - start
                done["tasks_done"] += 1
                if draw:
                    draw(dict(done))
        except BaseException:
            client.cancel(list(futures))
            raise
        finally:
            if isinstance(draw, _ProgressBar):
                draw.close()
        commit_start = time.monotonic()
        result = commit(staged, plan, reports)
    result["seconds"] = time.monotonic() - start
    result["commit_seconds"] = time.monotonic() - commit_start
    result["tasks"] = len(ranges)
    return result


def convert_imagefolder(src, out, client=None, *, num_shards, name=None, shards_per_task=1, threads=1,
                        strict=False, keep_original=False, sync=True, max_pixels=None, follow_links_outside=False,
                        allow_empty=False, progress=None, retries=1, commit_threads=1, append=False,
                        extend_classes=False, default=None):
    """Converts the ImageFolder SRC into OUT on the workers of ``client``.

    Returns the report dict of :func:`unirecord.convert_imagefolder` (plus
    ``tasks``, ``commit_seconds``), for the same dataset.

    client: a ``distributed.Client`` (default: the current one,
    ``distributed.get_client()``). num_shards: required (the parts are runs
    of whole shards; the shard count fixes the bytes); at least the number
    of workers, better a few per worker. shards_per_task: shards each task
    writes. threads: reading threads per task. retries: how often Dask
    reruns a task that raised (a task whose worker died is rerun by the
    scheduler anyway). progress: None (a bar on stderr when it is a
    terminal), False, True, or a callable taking a dict (files_done,
    files_total, written, rejected, bytes, seconds, tasks_done,
    tasks_total) after each task. commit_threads: threads that verify and
    stamp shards at the commit. The other keywords (``append``,
    ``extend_classes`` and ``default`` too: the same new segment as a local
    append) are :func:`unirecord.convert_imagefolder`'s; ``default`` may
    also be the text of one JSON object, as ``urec --default`` gives.

    Raises what the local conversion raises; a failed task fails the whole
    conversion (nothing committed, the old dataset NAME stays) after its
    retries, with the task's error. While it runs, a second writer of NAME
    in OUT (local or distributed) is refused with RuntimeError naming this one.
    """
    import distributed

    if client is None:
        client = distributed.get_client()
    _check_counts(num_shards, shards_per_task)
    _check_default(append, default)
    src = os.path.abspath(os.fspath(src))
    out = os.path.abspath(os.fspath(out))
    options = dict(strict=strict, keep_original=keep_original, sync=sync,
                   max_pixels=_core._DEFAULT_MAX_PIXELS if max_pixels is None else max_pixels,
                   follow_links_outside=follow_links_outside, allow_empty=allow_empty)
    plan = _core._plan_imagefolder(src, out, name=name, num_shards=num_shards, append=append,
                                   extend_classes=extend_classes, **options)
    options["threads"] = threads

    def submit(client, token, first, end, part, num_parts, key, retries):
        return client.submit(_convert_part, src, out, plan.name, token, plan.part(first, end), part, num_parts,
                             options, key=key, retries=retries, pure=False)

    return _run(client, out, plan, submit, _core._commit_imagefolder, num_shards=num_shards,
                shards_per_task=shards_per_task, progress=progress, retries=retries, commit_threads=commit_threads,
                sync=sync, append=append, default=default)


def _convert_source(kind, input, images, schema, out, client, *, num_shards, name, shards_per_task, threads, strict,
                    keep_original, sync, max_pixels, follow_links_outside, allow_empty, progress, retries,
                    commit_threads, append, default):
    import distributed

    if client is None:
        client = distributed.get_client()
    _check_counts(num_shards, shards_per_task)
    _check_default(append, default)
    source = (kind, os.path.abspath(os.fspath(input)), None if images is None else os.path.abspath(os.fspath(images)),
              None if schema is None else os.path.abspath(os.fspath(schema)))
    out = os.path.abspath(os.fspath(out))
    options = dict(strict=strict, keep_original=keep_original, sync=sync,
                   max_pixels=_core._DEFAULT_MAX_PIXELS if max_pixels is None else max_pixels,
                   follow_links_outside=follow_links_outside, allow_empty=allow_empty)
    plan = _core._plan_source(*source, out, name=name, num_shards=num_shards, **options)
    # Each task reads the input again with the plan's options (its name included).
    options.update(num_shards=num_shards, threads=threads)

    def submit(client, token, first, end, part, num_parts, key, retries):
        return client.submit(_convert_source_part, source, out, plan.name, token, first, end, part, num_parts,
                             options, key=key, retries=retries, pure=False)

    return _run(client, out, plan, submit, _core._commit_source, num_shards=num_shards,
                shards_per_task=shards_per_task, progress=progress, retries=retries, commit_threads=commit_threads,
                sync=sync, append=append, default=default)


def convert_coco(annotations, images, out, client=None, *, num_shards, name=None, shards_per_task=1, threads=1,
                 strict=False, keep_original=False, sync=True, max_pixels=None, follow_links_outside=False,
                 allow_empty=False, progress=None, retries=1, commit_threads=1, append=False, default=None):
    """:func:`unirecord.convert_coco` on the workers of ``client``: the same
    bytes for the same ``num_shards`` and options, whatever the workers.
    ANNOTATIONS, IMAGES and OUT must be the same paths on every worker. The
    other keywords and the report are :func:`convert_imagefolder`'s (plus
    the report's ``annotations`` and ``annotations_rejected``)."""
    return _convert_source("coco", annotations, images, None, out, client, num_shards=num_shards, name=name,
                           shards_per_task=shards_per_task, threads=threads, strict=strict,
                           keep_original=keep_original, sync=sync, max_pixels=max_pixels,
                           follow_links_outside=follow_links_outside, allow_empty=allow_empty, progress=progress,
                           retries=retries, commit_threads=commit_threads, append=append, default=default)


def _source_converter(kind, doc):
    """convert_jsonl / convert_csv (a manifest and its ``schema=``) and
    convert_videofolder / convert_audiofolder (a folder) of ``kind`` on the
    workers of ``client``."""
    def convert(source, out, client=None, *, schema=None, num_shards, name=None, shards_per_task=1, threads=1,
                strict=False, keep_original=False, sync=True, max_pixels=None, follow_links_outside=False,
                allow_empty=False, progress=None, retries=1, commit_threads=1, append=False, default=None):
        if (schema is None) != kind.endswith("folder"):
            raise TypeError("convert_%s: schema= %s" % (kind, "is for manifests" if schema else "is required"))
        return _convert_source(kind, source, None, schema, out, client, num_shards=num_shards, name=name,
                               shards_per_task=shards_per_task, threads=threads, strict=strict,
                               keep_original=keep_original, sync=sync, max_pixels=max_pixels,
                               follow_links_outside=follow_links_outside, allow_empty=allow_empty,
                               progress=progress, retries=retries, commit_threads=commit_threads, append=append,
                               default=default)

    convert.__name__ = convert.__qualname__ = "convert_" + kind
    convert.__doc__ = doc
    return convert


convert_jsonl = _source_converter(
    "jsonl", """:func:`unirecord.convert_jsonl` on the workers of ``client`` (as
    :func:`convert_coco`); MANIFEST, SCHEMA and the images beside the
    manifest must be at the same paths on every worker.""")
convert_csv = _source_converter(
    "csv", """:func:`unirecord.convert_csv` on the workers of ``client`` (as :func:`convert_jsonl`).""")
convert_videofolder = _source_converter(
    "videofolder", """:func:`unirecord.convert_videofolder` on the workers of ``client`` (as
    :func:`convert_coco`: the same bytes as the local conversion with the same ``num_shards``); SRC and OUT
    must be the same paths on every worker (keep_original and max_pixels do not apply).""")
convert_audiofolder = _source_converter(
    "audiofolder", """:func:`unirecord.convert_audiofolder` on the workers of ``client`` (as
    :func:`convert_videofolder`).""")


def _defaults_object(parser, pairs):
    """--default FIELD=VALUE pairs as one JSON object's text (None for none), as urec makes it: the values
    stay JSON, checked by the JSON policy of urec's local conversion."""
    import json

    if not pairs:
        return None
    items = []
    for pair in pairs:
        field, eq, value = pair.partition("=")
        if not eq or not field:
            parser.error("--default %s: expected FIELD=VALUE" % pair)
        items.append("%s: %s" % (json.dumps(field), value))
    return "{" + ", ".join(items) + "}"


def main(argv=None):
    """``python -m unirecord.distributed SRC OUT --scheduler ADDRESS --shards N ...`` (urec convert's):
    SRC is the image folder (``--format videofolder|audiofolder``: the video
    or audio folder), or with ``--format coco`` the annotations (and
    ``--images`` their folder), with ``--format jsonl|csv`` the manifest
    (and ``--schema`` its schema file)."""
    import argparse

    import distributed

    parser = argparse.ArgumentParser(prog="urec convert --scheduler",
                                     description="Convert on a Dask scheduler's workers.")
    parser.add_argument("src")
    parser.add_argument("out")
    parser.add_argument("--format", choices=["imagefolder", "videofolder", "audiofolder", "coco", "jsonl", "csv"],
                        default="imagefolder")
    parser.add_argument("--images", help="coco: the images folder")
    parser.add_argument("--schema", help="jsonl, csv: the schema file")
    parser.add_argument("--scheduler", required=True, help="tcp://HOST:PORT of a running dask scheduler")
    parser.add_argument("--shards", type=int, required=True)
    parser.add_argument("--name")
    parser.add_argument("--shards-per-task", type=int, default=1)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--strict", action="store_true")
    parser.add_argument("--keep-original", action="store_true")
    parser.add_argument("--max-pixels", type=int)
    parser.add_argument("--follow-links-outside", action="store_true")
    parser.add_argument("--allow-empty", action="store_true")
    parser.add_argument("--append", action="store_true")
    parser.add_argument("--extend-classes", action="store_true", help="imagefolder: with --append")
    parser.add_argument("--default", action="append", default=[], metavar="FIELD=VALUE",
                        help="with --append: a field added to the dataset later and its value (JSON), as urec's")
    args = parser.parse_args(argv)
    if (args.format == "coco") != (args.images is not None):
        parser.error("--images goes with --format coco, and only with it")
    if (args.format in ("jsonl", "csv")) != (args.schema is not None):
        parser.error("--schema goes with --format jsonl or csv, and only with them")
    options = dict(num_shards=args.shards, name=args.name, shards_per_task=args.shards_per_task,
                   threads=args.threads, strict=args.strict, keep_original=args.keep_original,
                   max_pixels=args.max_pixels, follow_links_outside=args.follow_links_outside,
                   allow_empty=args.allow_empty, append=args.append, default=_defaults_object(parser, args.default))
    if args.extend_classes and args.format != "imagefolder":
        parser.error("--extend-classes goes with the image folder format only")
    try:
        with distributed.Client(args.scheduler, timeout="30s") as client:
            if args.format == "imagefolder":
                r = convert_imagefolder(args.src, args.out, client, extend_classes=args.extend_classes, **options)
            elif args.format == "coco":
                r = convert_coco(args.src, args.images, args.out, client, **options)
            elif args.format in ("videofolder", "audiofolder"):
                convert = convert_videofolder if args.format == "videofolder" else convert_audiofolder
                r = convert(args.src, args.out, client, **options)
            else:
                convert = convert_jsonl if args.format == "jsonl" else convert_csv
                r = convert(args.src, args.out, client, schema=args.schema, **options)
    except ValueError as e:  # a refused input or option: urec's exit code 2, as locally
        sys.stderr.write("urec: error: %s\n" % (e,))
        return 2
    except (OSError, RuntimeError, _core.CorruptRecordError) as e:
        sys.stderr.write("urec: error: %s\n" % (e,))
        return 1
    print("%s: %d written, %d rejected, %d skipped, %.1f MB, %.2f s (commit %.2f s, %d tasks) -> %s/%s (%d shard%s); "
          "not written: %s" % (args.src, r["written"], r["rejected"], r["skipped"], r["image_bytes"] / 1e6,
                               r["seconds"], r["commit_seconds"], r["tasks"], args.out, r["name"], r["shards"],
                               "" if r["shards"] == 1 else "s", r["rejects_path"]))
    if args.format == "coco":
        print("annotations: %d written, %d rejected (see the rejects report)"
              % (r["annotations"], r["annotations_rejected"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
