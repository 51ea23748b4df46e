"""`urec convert`, `convert --append`, `merge`, `gc`, `compact` and
`add-field` killed by a real SIGKILL at each rename, fsync and unlink
(strace's syscall injection, the reproduction of issue 12): the latest version is the one before or after,
every kept version verifies, and the next run leaves only the kept
versions' files; and two conversions of one dataset at once. The C++ test
src/convert/image_folder_crash_test.cc stops a conversion at every step."""
import fcntl
import json
import os
import shutil
import subprocess

import pytest

from conftest import UREC, run_urec

SYSCALLS = {
    "rename": "rename,renameat,renameat2",
    "fsync": "fsync,fdatasync",
    "unlink": "unlink,unlinkat",
}


def strace_usable():
    if shutil.which("strace") is None:
        return False
    return subprocess.run(["strace", "-f", "-qq", "-o", "/dev/null", "true"]).returncode == 0


def run(args, check=True, prefix=()):
    result = subprocess.run([*prefix, UREC, *map(str, args)], capture_output=True, text=True)
    if check:
        assert result.returncode == 0, result.stderr
    return result


def convert(src, out, shards, check=True):
    return run(["convert", "imagefolder", src, out, "--name", "train", "--shards", shards], check)


def uuid_of(out, version=None):
    result = run_urec("inspect", out, "--json", "--verify", *(["--version", version] if version else []), check=False)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)["uuid"]


def manifest_files(text):
    """The files a manifest (format/SPEC.md sections 1.1, 1.2, 1.4) names:
    its segments' shards and indexes, their column files and its reports."""
    lines = text.splitlines()
    fields = dict(line.split(" ", 1) for line in lines[1:])
    generation = int(fields["generation"])
    segments = [line.split()[1:3] for line in lines if line.startswith("segment ")]
    if lines[0] == "unirecord-manifest 1":
        segments = [(generation, fields["shards"])]
    names = {f"train.{line.split()[1]}.g{generation:06d}.tsv" for line in lines if line.startswith("report ")}
    groups = [line.split()[1:3] for line in lines if line.startswith("fields ")]
    for segment_generation, shards in segments:
        for s in range(int(shards)):
            stem = f"train-{s:05d}-of-{int(shards):05d}.g{int(segment_generation):06d}"
            names |= {f"{stem}.{ext}" for ext in ("urec", "uidx")}
            names |= {f"{stem}.f{int(g):06d}.{ext}" for seg, g in groups if seg == str(segment_generation)
                      for ext in ("urec", "uidx")}
    return names


def committed_files(out):
    """The manifest and every kept version's files (section 1.3): nothing else may be left."""
    names = {"train.uset"} | manifest_files((out / "train.uset").read_text())
    for name in os.listdir(out):
        if name.endswith(".uver"):
            names |= {name} | manifest_files((out / name).read_text())
    return names


@pytest.fixture(scope="module")
def folders(urec, tmp_path_factory):
    root = tmp_path_factory.mktemp("crash")
    urec("synth-imagefolder", root / "old_src", "--classes", 2, "--per-class", 3, "--width", 64, "--height", 48,
         "--mix", "--seed", 1)
    urec("synth-imagefolder", root / "new_src", "--classes", 3, "--per-class", 2, "--width", 64, "--height", 48,
         "--mix", "--seed", 2)
    base = root / "base"
    convert(root / "old_src", base, 2)
    records = json.loads(run_urec("inspect", base, "--json").stdout)["records"]
    (root / "score.json").write_text(json.dumps({"fields": [{"name": "score", "type": "float32", "indexed": True}]}))
    (root / "score.jsonl").write_text("".join(json.dumps({"id": i, "score": i / 4}) + "\n" for i in range(records)))
    reference = root / "reference"
    convert(root / "new_src", reference, 3)
    return root, uuid_of(base), uuid_of(reference)


# What each operation does to a copy of `base` (2 shards of old_src, version
# 1); `setup` adds versions first (for gc).
OPERATIONS = {
    "convert": lambda root, work: ["convert", "imagefolder", root / "new_src", work, "--name", "train", "--shards", 3],
    "append": lambda root, work: ["convert", "imagefolder", root / "old_src", work, "--name", "train", "--shards", 1,
                                  "--append"],
    "merge": lambda root, work: ["merge", work, work, root / "base", "--name", "train"],
    "gc": lambda root, work: ["gc", work, "--keep", 1],
    "compact": lambda root, work: ["compact", work, "--shards", 1],
    "add-field": lambda root, work: ["add-field", work, root / "score.jsonl", "--schema", root / "score.json"],
}


def setup_work(root, work, operation):
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(root / "base", work)
    if operation in ("gc", "compact"):  # versions 2 and 3: for gc to collect, segments to compact
        run(OPERATIONS["append"](root, work))
        run(OPERATIONS["append"](root, work))


def versions_of(work):
    return [v["version"] for v in json.loads(run_urec("versions", work, "--json").stdout)]


@pytest.mark.parametrize("operation,syscall",
                         [(o, s) for o in sorted(OPERATIONS) for s in sorted(SYSCALLS)
                          if (o, s) != ("gc", "rename")])  # gc renames nothing
def test_an_operation_killed_at_each_syscall_leaves_the_dataset_before_or_after(folders, operation, syscall):
    """A conversion, an append, a merge and a gc each killed at every rename,
    fsync and unlink: the latest version is the one before or the one after,
    every kept version still verifies, version 1 is intact (gc: the latest),
    and a rerun finishes and leaves only the kept versions' files."""
    if not strace_usable():
        pytest.skip("strace is missing or cannot trace here (scripts/install-deps.sh installs it)")
    root, old_uuid, _ = folders
    work = root / f"work-{operation}-{syscall}"
    setup_work(root, work, operation)
    before = uuid_of(work)
    log = root / f"count-{operation}-{syscall}"
    run(OPERATIONS[operation](root, work), prefix=("strace", "-f", "-qq", "-o", str(log), "-e", "trace=" + SYSCALLS[syscall]))
    after, after_versions = uuid_of(work), versions_of(work)
    calls = sum(1 for line in log.read_text().splitlines() if "(" in line and "resumed>" not in line)
    assert calls >= 1, f"{operation} made no {syscall} call"
    checked = 0
    for when in range(1, calls + 1):
        setup_work(root, work, operation)
        inject = f"inject={SYSCALLS[syscall]}:signal=KILL:when={when}"
        result = run(OPERATIONS[operation](root, work), check=False,
                     prefix=("strace", "-f", "-qq", "-o", "/dev/null", "-e", inject))
        assert result.returncode != 0, f"{operation}: {syscall} #{when} was not reached"
        where = f"{operation} killed at {syscall} #{when}"
        killed = uuid_of(work)
        assert killed in (before, after), f"{where}: the latest dataset is neither the one before nor after"
        verified = run_urec("versions", work, "--verify", check=False)
        assert verified.returncode == 0, f"{where}: {verified.stderr}"
        if operation != "gc":
            assert uuid_of(work, version=1) == old_uuid, f"{where}: version 1 changed"
        run(OPERATIONS[operation](root, work))
        if killed == before:
            # (a killed commit may have taken a generation number: versions may skip one)
            assert uuid_of(work) == after and len(versions_of(work)) == len(after_versions), where
        elif operation not in ("append", "merge"):  # done again, to the same data (an append or merge adds again)
            assert uuid_of(work) == after, where
        assert set(os.listdir(work)) == committed_files(work), f"{where}: leftovers"
        checked += 1
    assert checked, "no kill was checked"


def test_a_second_conversion_of_the_same_dataset_fails_at_once(folders):
    root, old_uuid, _ = folders
    work = root / "locked"
    shutil.copytree(root / "base", work)
    with open(work / ".train.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        lock.write("pid 4242 host elsewhere\n")
        lock.flush()
        result = convert(root / "new_src", work, 3, check=False)
    assert result.returncode == 1
    assert "being written by another writer" in result.stderr and "pid 4242 host elsewhere" in result.stderr
    assert result.stderr.count("\n") == 1
    assert uuid_of(work) == old_uuid  # untouched


def test_two_simultaneous_conversions_leave_one_complete_dataset(folders):
    root, old_uuid, new_uuid = folders
    work = root / "race"
    for _ in range(5):
        shutil.rmtree(work, ignore_errors=True)
        args = [UREC, "convert", "imagefolder", str(root / "new_src"), str(work), "--name", "train", "--shards", "2"]
        procs = [subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
        results = [(p.wait(), p.stderr.read()) for p in procs]
        for p in procs:
            p.stdout.close()
            p.stderr.close()
        assert any(code == 0 for code, _ in results), results
        for code, stderr in results:
            assert code == 0 or "being written by another writer" in stderr, stderr
        assert set(os.listdir(work)) == committed_files(work)
        run_urec("inspect", work, "--verify")
