"""unirecord.distributed.convert_imagefolder (and convert_coco, convert_jsonl,
convert_csv) on a real Dask cluster: a dask-scheduler and dask-worker
processes on 127.0.0.1 that the module starts and always stops. The
reference is the local converter with the same shard count: the committed
files must be byte-identical."""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest

import unirecord

from urec_fixtures import make_image_folder, urec_binary

distributed = pytest.importorskip("distributed")
import unirecord.distributed  # noqa: E402  (needs distributed)

SHARDS = 12


class Cluster:
    """A dask-scheduler and dask-worker processes (no nanny: SIGKILL kills)."""

    def __init__(self, tmp):
        self.tmp = tmp
        self.workers = []
        scheduler_file = tmp / "scheduler.json"
        self.scheduler = subprocess.Popen(
            [sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", "0",
             "--no-dashboard", "--scheduler-file", str(scheduler_file)],
            stdout=subprocess.DEVNULL, stderr=open(tmp / "scheduler.log", "wb"))
        deadline = time.monotonic() + 60
        while not scheduler_file.exists():
            if time.monotonic() > deadline or self.scheduler.poll() is not None:
                raise RuntimeError("dask-scheduler did not start: " + (tmp / "scheduler.log").read_text())
            time.sleep(0.1)
        time.sleep(0.2)  # written whole
        import json
        self.address = json.loads(scheduler_file.read_text())["address"]
        self.client = distributed.Client(self.address, timeout="60s")

    def add_worker(self):
        name = "w%d" % len(self.workers)
        worker = subprocess.Popen(
            [sys.executable, "-m", "distributed.cli.dask_worker", self.address, "--no-nanny", "--nthreads", "1",
             "--no-dashboard", "--name", name, "--memory-limit", "0", "--death-timeout", "60"],
            stdout=subprocess.DEVNULL, stderr=open(self.tmp / (name + ".log"), "wb"))
        self.workers.append(worker)
        self.client.wait_for_workers(self.alive(), timeout=60)
        return worker

    def alive(self):
        return sum(1 for w in self.workers if w.poll() is None)

    def running(self):
        """Keys of the tasks running anywhere: those the scheduler is
        processing, and those a worker thread still runs. A task whose
        client went away is forgotten by the scheduler and by its worker's
        state at once, but Dask cannot stop the thread that runs it: it runs
        to its end, writing into OUT, while processing() is empty."""
        keys = [key for tasks in self.client.processing().values() for key in tasks]
        threads = self.client.run(lambda dask_worker: list(dask_worker.active_threads.values()))
        return keys + [key for running in threads.values() for key in running]

    def wait_idle(self, timeout=60):
        deadline = time.monotonic() + timeout
        while self.running():
            assert time.monotonic() < deadline, "tasks still running: %s" % self.running()
            time.sleep(0.1)

    def stop(self):
        try:
            self.client.close()
        finally:
            for p in self.workers + [self.scheduler]:
                if p.poll() is None:
                    p.kill()
                p.wait()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    c = Cluster(tmp_path_factory.mktemp("dask"))
    try:
        yield c
    finally:
        c.stop()


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """4 classes x 30 JPEGs, a truncated JPEG and a README (rejected, skipped)."""
    root = make_image_folder(tmp_path_factory.mktemp("src") / "train", 30, [(64, 48), (48, 64), (80, 60)])
    good = (root / "cat" / "img_000.jpg").read_bytes()
    (root / "dog" / "img_005b.jpg").write_bytes(good[: len(good) // 2])
    (root / "emu" / "README.txt").write_text("not an image")
    return root


@pytest.fixture(scope="module")
def reference(folder, tmp_path_factory):
    out = tmp_path_factory.mktemp("local")
    report = unirecord.convert_imagefolder(folder, out, name="train", num_shards=SHARDS, sync=False, threads=1)
    assert report["rejected"] == 1 and report["skipped"] == 1
    return out


def files(folder):
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def generation_free(folder):
    """files(), with the generation taken out of names and manifest."""
    out = {}
    for name, data in files(folder).items():
        if name.endswith((".uset", ".uver")):
            data = b"".join(l for l in data.splitlines(True) if not l.startswith((b"generation ", b"checksum ")))
        out[re.sub(r"\.g\d{6}\.", ".gN.", name)] = data
    return out


def convert(cluster, folder, out, **kwargs):
    kwargs.setdefault("num_shards", SHARDS)
    kwargs.setdefault("progress", False)
    return unirecord.distributed.convert_imagefolder(folder, out, cluster.client, name="train", sync=False, **kwargs)


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_byte_identical_to_a_local_convert(cluster, folder, reference, tmp_path, workers):
    while cluster.alive() < workers:
        cluster.add_worker()
    seen = []
    report = convert(cluster, folder, tmp_path / "out", shards_per_task=1 if workers != 2 else 5,
                     progress=seen.append)
    assert files(tmp_path / "out") == files(reference)
    assert report["written"] == 90 and report["rejected"] == 1 and report["skipped"] == 1
    assert report["shards"] == SHARDS
    assert [p["tasks_done"] for p in seen] == list(range(1, report["tasks"] + 1))
    assert seen[-1]["files_done"] == seen[-1]["files_total"] == 91
    assert len(unirecord.Dataset(str(tmp_path / "out"))) == 90


def test_an_append_on_dask_equals_a_local_append(cluster, folder, reference, tmp_path):
    """An append adds one segment: the same files whether the parts ran on
    Dask (the API and urec --scheduler) or locally, class list extension
    included; a class the dataset lacks is refused before any task runs."""
    while cluster.alive() < 2:
        cluster.add_worker()
    more = tmp_path / "more"
    shutil.copytree(folder / "cat", more / "cat")
    shutil.copytree(folder / "dog", more / "yak")  # a class the dataset lacks (and its truncated JPEG)
    local, dask, cli = tmp_path / "local", tmp_path / "dask", tmp_path / "cli"
    for copy in (local, dask, cli):
        shutil.copytree(reference, copy)
    with pytest.raises(ValueError, match="class 'yak'.*--extend-classes"):
        convert(cluster, more, dask, num_shards=2, append=True)
    assert files(dask) == files(reference)
    unirecord.convert_imagefolder(more, local, name="train", num_shards=2, sync=False, threads=1, append=True,
                                  extend_classes=True)
    report = convert(cluster, more, dask, num_shards=2, append=True, extend_classes=True)
    assert report["written"] == 60 and report["rejected"] == 1
    assert files(dask) == files(local)
    done = subprocess.run([urec_binary(), "convert", "imagefolder", str(more), str(cli), "--name", "train",
                           "--shards", "2", "--threads", "1", "--append", "--extend-classes",
                           "--scheduler", cluster.address],
                          capture_output=True, text=True, env=dict(os.environ, UREC_PYTHON=sys.executable), timeout=120)
    assert done.returncode == 0, done.stderr
    assert files(cli).keys() == files(local).keys()  # (sync does not change the bytes)
    assert files(cli) == files(local)
    appended = unirecord.Dataset(dask)
    assert len(appended) == 90 + 60 and [s["records"] for s in appended.segments] == [90, 60]
    assert appended.metadata["classes"].split("\n")[-1] == "yak"


# --- COCO, JSON Lines and CSV ---------------------------------------------------

@pytest.fixture(scope="module")
def inputs(folder, tmp_path_factory):
    """The folder's images as a COCO instances file (with entries the
    converter leaves out: an annotation of no image, a size that differs
    from the file) and as a JSON Lines and a CSV manifest (with a bad line);
    each converted locally as the reference."""
    root = tmp_path_factory.mktemp("sources")
    paths = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*.jpg"))
    images_dir = root / "images"  # a copy: the manifests go beside the images, out of `folder`
    for path in paths:
        (images_dir / path).parent.mkdir(parents=True, exist_ok=True)
        (images_dir / path).write_bytes((folder / path).read_bytes())
    images, annotations = [], []
    for k, path in enumerate(paths):
        images.append({"id": 1000 - k, "file_name": path})
        if k == 7:
            images[-1].update(width=1, height=1)  # rejected: "the annotations say 1x1"
        for j in range(k % 3):
            annotations.append({"id": 10 * k + j, "image_id": 1000 - k, "category_id": 1 + j,
                                "bbox": [j, k % 5, 4.5, 3], "area": 13.5, "iscrowd": 0})
    annotations.append({"id": 99999, "image_id": 5, "category_id": 1, "bbox": [0, 0, 1, 1], "area": 1, "iscrowd": 0})
    coco = root / "instances.json"
    coco.write_text(json.dumps({"images": images, "annotations": annotations,
                                "categories": [{"id": 1, "name": "a"}, {"id": 2, "name": "b"}]}))
    schema = root / "schema.json"
    schema.write_text(json.dumps({"fields": [{"name": "image", "type": "image"}, {"name": "label", "type": "int64"},
                                             {"name": "tokens", "type": "int32", "shape": [-1]}]}))
    lines = [{"image": p, "label": k % 4, "tokens": list(range(k % 7))} for k, p in enumerate(paths)]
    (images_dir / "manifest.jsonl").write_text("".join(json.dumps(l) + "\n" for l in lines[:50]) + "not json\n" +
                                           "".join(json.dumps(l) + "\n" for l in lines[50:]))
    (images_dir / "manifest.csv").write_text("image,label,tokens\n" + "".join(
        '%s,%d,"%s"\n' % (l["image"], l["label"], l["tokens"]) for l in lines))
    sources = {"coco": (coco, images_dir, None), "jsonl": (images_dir / "manifest.jsonl", None, schema),
               "csv": (images_dir / "manifest.csv", None, schema)}
    references = {}
    for kind, (input, images_dir, schema_file) in sources.items():
        out = root / ("local-" + kind)
        if kind == "coco":
            report = unirecord.convert_coco(input, images_dir, out, name="d", num_shards=5, sync=False)
        else:
            convert_local = unirecord.convert_jsonl if kind == "jsonl" else unirecord.convert_csv
            report = convert_local(input, out, schema=schema_file, name="d", num_shards=5, sync=False)
        references[kind] = (out, report)
    return sources, references


def convert_source(cluster, kind, sources, out, **kwargs):
    input, images_dir, schema_file = sources[kind]
    kwargs = dict(dict(num_shards=5, progress=False, name="d", sync=False), **kwargs)
    if kind == "coco":
        return unirecord.distributed.convert_coco(input, images_dir, out, cluster.client, **kwargs)
    convert_on_dask = getattr(unirecord.distributed, "convert_" + kind)
    return convert_on_dask(input, out, cluster.client, schema=schema_file, **kwargs)


@pytest.mark.parametrize("kind,workers", [("coco", 1), ("coco", 3), ("jsonl", 2), ("csv", 2)])
def test_coco_jsonl_csv_byte_identical_to_a_local_convert(cluster, inputs, tmp_path, kind, workers):
    sources, references = inputs
    while cluster.alive() < workers:
        cluster.add_worker()
    seen = []
    report = convert_source(cluster, kind, sources, tmp_path / "out", shards_per_task=2, progress=seen.append)
    reference, local = references[kind]
    assert files(tmp_path / "out") == files(reference)
    for key in ("written", "rejected", "skipped", "shards", "not_written", "annotations", "annotations_rejected"):
        assert report[key] == local[key], key
    # coco: image 7 and the truncated JPEG; jsonl: that and the line that is not JSON; csv: the JPEG.
    assert report["rejected"] == {"coco": 2, "jsonl": 2, "csv": 1}[kind] and report["tasks"] == 3
    assert seen[-1]["files_done"] == seen[-1]["files_total"]
    if kind == "coco":
        assert report["annotations"] > 0 and report["annotations_rejected"] == 1


def test_a_worker_killed_mid_run_is_rerun_and_nothing_is_committed_twice(cluster, folder, reference, inputs, tmp_path):
    while cluster.alive() < 3:
        cluster.add_worker()
    killed = []

    def kill_the_first_busy_worker():
        """SIGKILLs the first worker seen holding tasks of the conversion."""
        names = {addr: info["name"] for addr, info in cluster.client.scheduler_info()["workers"].items()}
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            for addr, tasks in cluster.client.processing().items():
                tasks = [t for t in tasks if t.startswith("unirecord-convert-")]
                proc = cluster.workers[int(names[addr][1:])]
                if tasks and proc.poll() is None:
                    os.kill(proc.pid, signal.SIGKILL)
                    killed.append(tasks)
                    return
            time.sleep(0.005)

    killer = threading.Thread(target=kill_the_first_busy_worker)
    killer.start()
    report = convert(cluster, folder, tmp_path / "out")
    killer.join()
    assert killed, "no worker held a task of the conversion"
    assert files(tmp_path / "out") == files(reference)
    assert report["written"] == 90
    cluster.wait_idle()
    # The same with a COCO conversion, whose tasks read the annotations again.
    while cluster.alive() < 3:
        cluster.add_worker()
    killed.clear()
    killer = threading.Thread(target=kill_the_first_busy_worker)
    killer.start()
    report = convert_source(cluster, "coco", inputs[0], tmp_path / "coco")
    killer.join()
    assert killed, "no worker held a task of the COCO conversion"
    assert files(tmp_path / "coco") == files(inputs[1]["coco"][0])
    cluster.wait_idle()


CLIENT = textwrap.dedent("""
    import os, signal, sys, time
    import distributed, unirecord.distributed
    address, src, out, mode = sys.argv[1:5]
    def progress(p):
        if mode == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        print("running", flush=True)
        time.sleep(float(mode))
    with distributed.Client(address) as client:
        unirecord.distributed.convert_imagefolder(src, out, client, name="train", num_shards=%d, sync=False,
                                                  progress=progress)
    print("committed", flush=True)
""" % SHARDS)


def run_client(cluster, folder, out, mode):
    return subprocess.Popen([sys.executable, "-c", CLIENT, cluster.address, str(folder), str(out), mode],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_a_killed_client_leaves_the_old_dataset_and_the_next_writer_cleans_up(cluster, folder, reference, tmp_path):
    while cluster.alive() < 2:
        cluster.add_worker()
    out = tmp_path / "out"
    old = unirecord.convert_imagefolder(folder, out, name="train", num_shards=2, sync=False)  # the previous generation
    before = files(out)
    client = run_client(cluster, folder, out, "kill")
    client.communicate(timeout=120)
    assert client.returncode == -signal.SIGKILL
    cluster.wait_idle()
    visible = {n: b for n, b in files(out).items() if not n.startswith(".")}
    assert visible == {n: b for n, b in before.items() if not n.startswith(".")}
    assert [n for n in os.listdir(out) if ".tmp-" in n], "the killed run staged nothing: the test kills too late"
    assert len(unirecord.Dataset(str(out))) == old["written"]
    # The next writer, under the lock, removes the killed run's staged files;
    # the version before it stays until gc.
    convert(cluster, folder, out)
    assert len(unirecord.Dataset(str(out), version=1)) == old["written"]
    unirecord.gc(out, keep=1)
    assert generation_free(out) == generation_free(reference)


def test_a_second_conversion_into_the_same_folder_is_refused_while_one_runs(cluster, folder, reference, tmp_path):
    while cluster.alive() < 2:
        cluster.add_worker()
    out = tmp_path / "out"
    first = run_client(cluster, folder, out, "0.5")  # pauses after each task
    assert first.stdout.readline() == "running\n"
    with pytest.raises(RuntimeError, match="being written by another writer .*pid %d" % first.pid):
        convert(cluster, folder, out)
    with pytest.raises(RuntimeError, match="being written by another writer"):
        unirecord.convert_imagefolder(folder, out, name="train", num_shards=SHARDS)
    stdout, stderr = first.communicate(timeout=120)
    assert first.returncode == 0, stderr
    assert stdout.endswith("committed\n")
    assert files(out) == files(reference)


def test_a_failing_task_commits_nothing(cluster, folder, tmp_path):
    with pytest.raises(unirecord.CorruptRecordError, match="img_005b.jpg.*strict"):
        convert(cluster, folder, tmp_path / "out", strict=True, retries=0)
    cluster.wait_idle()
    assert not (tmp_path / "out" / "train.uset").exists()


def test_urec_convert_with_a_scheduler(cluster, folder, reference, tmp_path):
    urec = urec_binary()
    while cluster.alive() < 2:  # also when run alone
        cluster.add_worker()
    env = dict(os.environ, UREC_PYTHON=sys.executable)
    done = subprocess.run([urec, "convert", "imagefolder", str(folder), str(tmp_path / "out"), "--name", "train",
                           "--shards", str(SHARDS), "--threads", "1", "--scheduler", cluster.address],
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "90 written, 1 rejected, 1 skipped" in done.stdout
    # sync does not change the bytes
    assert files(tmp_path / "out") == files(reference)
    refused = subprocess.run([urec, "convert", "imagefolder", str(folder), str(tmp_path / "x"),
                              "--scheduler", cluster.address], capture_output=True, text=True, env=env)
    assert refused.returncode != 0 and "--scheduler needs --shards" in refused.stderr


def test_urec_convert_coco_and_jsonl_with_a_scheduler(cluster, inputs, tmp_path):
    urec = urec_binary()
    while cluster.alive() < 2:  # also when run alone
        cluster.add_worker()
    sources, references = inputs
    env = dict(os.environ, UREC_PYTHON=sys.executable)
    coco, images_dir, _ = sources["coco"]
    manifest, _, schema = sources["jsonl"]
    for kind, args in (("coco", [str(coco), str(images_dir)]), ("jsonl", [str(manifest), "--schema", str(schema)])):
        out = tmp_path / kind
        done = subprocess.run([urec, "convert", kind, *args, str(out), "--name", "d", "--shards", "5",
                               "--shards-per-task", "2", "--scheduler", cluster.address],
                              capture_output=True, text=True, env=env, timeout=120)
        assert done.returncode == 0, done.stderr
        assert "%d written, 2 rejected" % references[kind][1]["written"] in done.stdout, done.stdout
        assert files(out) == files(references[kind][0])
        assert ("annotations: " in done.stdout) == (kind == "coco")


# --- The source policy and an empty result, as locally (issue 36) ----------------

@pytest.fixture
def rejected_inputs(folder, tmp_path):
    """An image folder and a JSON Lines manifest whose every file is rejected
    (not a JPEG, or a link out of the folder), and a good JPEG outside."""
    root = tmp_path / "bad"
    outside = tmp_path / "outside.jpg"
    outside.write_bytes(next(folder.rglob("*.jpg")).read_bytes())
    for c in ("a", "b"):
        (root / c).mkdir(parents=True)
        (root / c / "x.jpg").write_bytes(b"not a jpeg")
    (root / "a" / "link.jpg").symlink_to(outside)
    (root / "m.jsonl").write_text("".join(json.dumps({"image": p, "label": 1}) + "\n"
                                          for p in ("a/x.jpg", "b/x.jpg", "a/link.jpg")))
    (tmp_path / "schema.json").write_text(json.dumps({"fields": [{"name": "image", "type": "image"},
                                                                 {"name": "label", "type": "int64"}]}))
    return root


def convert_rejected(kind, root, out, client=None, **kwargs):
    """The local converter without a client, else unirecord.distributed's."""
    kwargs = dict(name="d", num_shards=2, sync=False, **kwargs)
    module = unirecord if client is None else unirecord.distributed
    extra = {} if client is None else dict(client=client, progress=False)
    if kind == "imagefolder":
        return module.convert_imagefolder(root, out, **extra, **kwargs)
    return module.convert_jsonl(root / "m.jsonl", out, schema=root.parent / "schema.json", **extra, **kwargs)


@pytest.mark.parametrize("kind", ["imagefolder", "jsonl"])
def test_every_input_rejected_commits_nothing_on_dask_unless_allowed(cluster, rejected_inputs, tmp_path, kind):
    while cluster.alive() < 2:
        cluster.add_worker()
    local, dask = tmp_path / "local", tmp_path / "dask"
    with pytest.raises(ValueError, match="no record written, every input was rejected") as local_error:
        convert_rejected(kind, rejected_inputs, local)
    with pytest.raises(ValueError, match="no record written, every input was rejected") as dask_error:
        convert_rejected(kind, rejected_inputs, dask, cluster.client)
    assert str(dask_error.value) == str(local_error.value).replace(str(local), str(dask))
    # The same rejects report, and nothing committed.
    assert (dask / "d.rejected.tsv").read_bytes() == (local / "d.rejected.tsv").read_bytes()
    assert b"leaves the source folder" in (dask / "d.rejected.tsv").read_bytes()
    assert not list(dask.glob("*.uset"))
    with pytest.raises(FileNotFoundError):
        unirecord.Dataset(dask / "d")
    # allow_empty commits the empty dataset; the committing run removes the old report.
    report = convert_rejected(kind, rejected_inputs, dask, cluster.client, allow_empty=True)
    assert report["written"] == 0 and len(unirecord.Dataset(dask / "d")) == 0
    assert not (dask / "d.rejected.tsv").exists()
    # follow_links_outside reads the link, as locally: the same bytes.
    followed = convert_rejected(kind, rejected_inputs, dask, cluster.client, follow_links_outside=True)
    convert_rejected(kind, rejected_inputs, local, follow_links_outside=True)
    assert followed["written"] == 1
    assert generation_free(dask) == generation_free(local)


def test_urec_convert_with_a_scheduler_passes_allow_empty_and_follow_links_outside(cluster, rejected_inputs,
                                                                                    tmp_path):
    urec = urec_binary()
    while cluster.alive() < 2:
        cluster.add_worker()
    env = dict(os.environ, UREC_PYTHON=sys.executable)
    base = [urec, "convert", "imagefolder", str(rejected_inputs), str(tmp_path / "out"), "--name", "d", "--shards",
            "2", "--scheduler", cluster.address]
    refused = subprocess.run(base, capture_output=True, text=True, env=env, timeout=120)
    assert refused.returncode == 2 and "no record written, every input was rejected" in refused.stderr
    empty = subprocess.run(base + ["--allow-empty"], capture_output=True, text=True, env=env, timeout=120)
    assert empty.returncode == 0 and "0 written, 3 rejected" in empty.stdout, empty.stdout + empty.stderr
    followed = subprocess.run(base + ["--follow-links-outside"], capture_output=True, text=True, env=env, timeout=120)
    assert followed.returncode == 0 and "1 written, 2 rejected" in followed.stdout, followed.stdout + followed.stderr


def test_an_append_after_add_fields_takes_the_default_on_dask(cluster, folder, reference, tmp_path):
    """Scores added, then more images appended on Dask (the order a dataset
    lives in): refused without a default, naming the field, before anything
    is committed; with it the same files as a local append with the same
    default (the API and urec --scheduler --default), and the same records
    as the documented order (append, then add_fields with a default for the
    new segment)."""
    import numpy as np

    while cluster.alive() < 2:
        cluster.add_worker()
    more = tmp_path / "more"
    shutil.copytree(folder / "cat", more / "cat")
    local, dask, cli, documented = tmp_path / "local", tmp_path / "dask", tmp_path / "cli", tmp_path / "documented"
    scores = np.arange(90, dtype=np.float32)
    for copy in (local, dask, cli, documented):
        shutil.copytree(reference, copy)
    for copy in (local, dask, cli):
        unirecord.add_fields(copy / "train", {"score": scores}, sync=False)
    added = files(dask)
    with pytest.raises(ValueError, match=r"the new records lack the fields score \(score: float32\)"):
        convert(cluster, more, dask, num_shards=2, append=True)
    assert visible(files(dask)) == visible(added)
    unirecord.convert_imagefolder(more, local, name="train", num_shards=2, sync=False, threads=1, append=True,
                                  default={"score": -1.0})
    report = convert(cluster, more, dask, num_shards=2, append=True, default={"score": -1.0})
    assert report["written"] == 30
    assert files(dask) == files(local)
    done = subprocess.run([urec_binary(), "convert", "imagefolder", str(more), str(cli), "--name", "train",
                           "--shards", "2", "--threads", "1", "--append", "--default", "score=-1",
                           "--scheduler", cluster.address],
                          capture_output=True, text=True, env=dict(os.environ, UREC_PYTHON=sys.executable), timeout=120)
    assert done.returncode == 0, done.stderr
    assert files(cli) == files(local)
    unirecord.convert_imagefolder(more, documented, name="train", num_shards=2, sync=False, threads=1, append=True)
    unirecord.add_fields(documented / "train", {"score": scores}, segments=[0], default={"score": -1.0}, sync=False)
    appended, expected = unirecord.Dataset(dask), unirecord.Dataset(documented)
    assert [s["records"] for s in appended.segments] == [90, 30]
    assert [appended[i]["score"] for i in (5, 89, 90, 119)] == [5.0, 89.0, -1.0, -1.0]
    for i in range(len(expected)):
        got, want = appended[i], expected[i]
        assert got.keys() == want.keys() and all(bytes(got[k]) == bytes(want[k]) if isinstance(want[k], memoryview)
                                                 else got[k] == want[k] for k in want), i


def visible(files):
    """files() without the hidden ones (a refused run's lock file, say)."""
    return {name: data for name, data in files.items() if not name.startswith(".")}


@pytest.mark.parametrize("kind", ["videofolder", "audiofolder"])
def test_video_and_audio_folders_byte_identical_to_a_local_convert(cluster, tmp_path, kind):
    """Issue 45: convert_videofolder / convert_audiofolder on Dask, through
    the same PreparedConversion as the local run."""
    import media_files

    src = tmp_path / "src"
    for cls in ("a", "b"):
        (src / cls).mkdir(parents=True)
        for k in range(3):
            if kind == "videofolder":
                media_files.make_video(str(src / cls / f"v{k}"), ("h264", "vp9", "mpeg4")[k], frames=12, width=64,
                                       height=48)
            else:
                media_files.make_audio(str(src / cls / f"s{k}"), ("flac", "opus", "wav")[k], seconds=0.3)
    (src / "b" / "broken.mp4" if kind == "videofolder" else src / "b" / "broken.flac").write_bytes(b"\0" * 100)
    local = getattr(unirecord, "convert_" + kind)(src, tmp_path / "local", name="d", num_shards=3, sync=False)
    while cluster.alive() < 2:
        cluster.add_worker()
    report = getattr(unirecord.distributed, "convert_" + kind)(src, tmp_path / "dask", cluster.client, name="d",
                                                                num_shards=3, sync=False, progress=False)
    assert files(tmp_path / "dask") == files(tmp_path / "local")
    assert (report["written"], report["rejected"]) == (local["written"], local["rejected"]) == (6, 1)
