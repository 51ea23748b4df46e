"""Conversion on Dask against local `urec convert`, on one machine.

Generates an ImageNet-like folder (`urec synth-imagefolder`, default 50
classes x 100 = 5,000 JPEGs of about 500x375), then, interleaved for each
round: `urec convert --threads 1` and `--threads 2` (local), and
unirecord.distributed.convert_imagefolder on a dask-scheduler with 1 worker
and one with 2 workers (dask-worker --nthreads 1, one reading thread per
task). Every run writes the same --shards; the outputs are checked equal.
Reports images/s (median over rounds), the engine's overhead (Dask with W
workers against local with W threads), the commit's time, this process's
(the Dask client's) peak RSS, and the load average before and after:
the machine is shared, so ratios from one run are what to read.

    .venv/bin/python bench/dask_convert_bench.py --urec build/tools/urec --rounds 3
"""
import argparse
import filecmp
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import distributed

import unirecord.distributed


def start_cluster(tmp, workers):
    scheduler_file = os.path.join(tmp, "scheduler-%d.json" % workers)
    procs = [subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
                               "--port", "0", "--no-dashboard", "--scheduler-file", scheduler_file],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    while not os.path.exists(scheduler_file):
        time.sleep(0.1)
    time.sleep(0.3)
    address = json.load(open(scheduler_file))["address"]
    for _ in range(workers):
        procs.append(subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", address, "--no-nanny",
                                       "--nthreads", "1", "--no-dashboard", "--memory-limit", "0"],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    client = distributed.Client(address)
    client.wait_for_workers(workers, timeout=120)
    return client, procs


def same_files(a, b):
    names = sorted(os.listdir(a))
    _, mismatch, errors = filecmp.cmpfiles(a, b, names, shallow=False)
    return names == sorted(os.listdir(b)) and not mismatch and not errors


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--urec", default="build/tools/urec")
    p.add_argument("--classes", type=int, default=50)
    p.add_argument("--per-class", type=int, default=100)
    p.add_argument("--shards", type=int, default=32)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--work", default=None, help="scratch folder (default: a temporary one)")
    args = p.parse_args()
    work = args.work or tempfile.mkdtemp(prefix="urec-dask-bench-")
    src = os.path.join(work, "train")
    if not os.path.isdir(src):
        subprocess.run([args.urec, "synth-imagefolder", src, "--classes", str(args.classes), "--per-class",
                        str(args.per_class)], check=True, stdout=subprocess.DEVNULL)
    files = args.classes * args.per_class
    load_before = os.getloadavg()
    clusters = {w: start_cluster(work, w) for w in (1, 2)}
    times = {name: [] for name in ("local_t1", "local_t2", "dask_w1", "dask_w2")}
    commit = []
    reference = os.path.join(work, "local_t1")
    try:
        for r in range(args.rounds):
            for name in times:
                out = os.path.join(work, name)
                shutil.rmtree(out, ignore_errors=True)
                start = time.monotonic()
                if name.startswith("local"):
                    subprocess.run([args.urec, "convert", "imagefolder", src, out, "--name", "train", "--shards",
                                    str(args.shards), "--threads", name[-1]], check=True, stdout=subprocess.DEVNULL)
                else:
                    report = unirecord.distributed.convert_imagefolder(
                        src, out, clusters[int(name[-1])][0], name="train", num_shards=args.shards, threads=1,
                        progress=False)
                    commit.append(report["commit_seconds"])
                times[name].append(time.monotonic() - start)
                if name != "local_t1":
                    assert same_files(reference, out), name + " differs from local --threads 1"
                print("round %d %s %.2f s" % (r, name, times[name][-1]), file=sys.stderr)
    finally:
        for client, procs in clusters.values():
            client.close()
            for proc in procs:
                proc.kill()
                proc.wait()
    rate = {name: files / statistics.median(t) for name, t in times.items()}
    result = {
        "files": files, "shards": args.shards, "rounds": args.rounds,
        "images_per_s": rate,
        "seconds": times,
        "dask_overhead_1_worker": 1 - rate["dask_w1"] / rate["local_t1"],
        "dask_overhead_2_workers": 1 - rate["dask_w2"] / rate["local_t2"],
        "commit_seconds_median": statistics.median(commit),
        "client_peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "load_average_before": load_before, "load_average_after": os.getloadavg(),
        "cpus": os.cpu_count(),
    }
    json.dump(result, sys.stdout, indent=1)
    print()
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
