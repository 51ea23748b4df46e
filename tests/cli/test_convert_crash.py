"""`urec convert` killed by a real SIGKILL at each rename, fsync and unlink
(strace's syscall injection, the reproduction of issue 12): the latest
version is the old or the new dataset, the version before stays intact, and
the next run leaves only the kept versions' files; and two conversions of
one dataset at once. The C++ test
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


def convert(src, out, shards, check=True, prefix=()):
    args = [*prefix, UREC, "convert", "imagefolder", str(src), str(out), "--name", "train", "--shards", str(shards)]
    result = subprocess.run(args, capture_output=True, text=True)
    if check:
        assert result.returncode == 0, result.stderr
    return result


def uuid_of(out, version=None):
    result = run_urec("inspect", out, "--json", "--verify", *(["--version", version] if version else []), check=False)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)["uuid"]


def manifest_files(text):
    """The files a manifest (format/SPEC.md sections 1.1, 1.2) names: its
    segments' shards and indexes and its reports."""
    lines = text.splitlines()
    fields = dict(line.split(" ", 1) for line in lines[1:])
    generation = int(fields["generation"])
    segments = [line.split()[1:3] for line in lines if line.startswith("segment ")]
    if lines[0] == "unirecord-manifest 1":
        segments = [(generation, fields["shards"])]
    names = {f"train.{line.split()[1]}.g{generation:06d}.tsv" for line in lines if line.startswith("report ")}
    for segment_generation, shards in segments:
        for s in range(int(shards)):
            names |= {f"train-{s:05d}-of-{int(shards):05d}.g{int(segment_generation):06d}.{ext}" for ext in ("urec", "uidx")}
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
    reference = root / "reference"
    convert(root / "new_src", reference, 3)
    return root, uuid_of(base), uuid_of(reference)


@pytest.mark.parametrize("syscall", sorted(SYSCALLS))
def test_a_conversion_killed_at_each_syscall_leaves_the_old_or_the_new_dataset(folders, syscall):
    if not strace_usable():
        pytest.skip("strace is missing or cannot trace here (scripts/install-deps.sh installs it)")
    root, old_uuid, new_uuid = folders
    work = root / ("work-" + syscall)
    shutil.copytree(root / "base", work)
    log = root / ("count-" + syscall)
    convert(root / "new_src", work, 3, prefix=("strace", "-f", "-qq", "-o", str(log), "-e", "trace=" + SYSCALLS[syscall]))
    calls = sum(1 for line in log.read_text().splitlines() if "(" in line and "resumed>" not in line)
    assert calls >= 2, log.read_text()
    seen = set()
    for when in range(1, calls + 1):
        shutil.rmtree(work)
        shutil.copytree(root / "base", work)
        inject = f"inject={SYSCALLS[syscall]}:signal=KILL:when={when}"
        result = convert(root / "new_src", work, 3, check=False, prefix=("strace", "-f", "-qq", "-o", "/dev/null", "-e", inject))
        assert result.returncode != 0, f"{syscall} #{when} was not reached"
        uuid = uuid_of(work)
        assert uuid in (old_uuid, new_uuid), f"killed at {syscall} #{when}: dataset {uuid} is neither"
        assert uuid_of(work, version=1) == old_uuid, f"killed at {syscall} #{when}: version 1 changed"
        seen.add(uuid)
        convert(root / "new_src", work, 3)
        assert uuid_of(work) == new_uuid and uuid_of(work, version=1) == old_uuid
        assert set(os.listdir(work)) == committed_files(work), f"leftovers after a kill at {syscall} #{when}"
    assert seen, "no kill was checked"


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
