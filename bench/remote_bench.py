#!/usr/bin/env python3
"""Remote datasets against the same dataset on local disk (issue 19): `urec
bench` and the Python Loader reading from nginx on 127.0.0.1 through the
fault proxy of tests/remote_servers.py with `--latency` seconds added to
every request; RandomResizedCrop(224), batch 256, `--threads` decode threads
(2; 1 leaves a core to the servers and the downloads); `--prefetch-shards`
and `--max-requests` as the remote options (3 and 4, the defaults).

Cases, interleaved per round (ours and the local peer in the same round):
- warm: the cache holds the whole dataset (read once before timing);
- budget: cache_limit = 25% of the shard bytes, block shuffle with
  block_size = records per shard and window = `--window-shards` shards;
  the local peer uses the same order;
- cold: a fresh cache, the first epoch (images/s and requests per epoch).

Prints one JSON object: per case images/s of remote and local, their ratio,
requests, and the load average at start and end (the machine may be shared:
a ratio measured under load is not a quiet-machine figure). "harness": the
rate at which curl (one process, one shard after another) fetches every
shard straight from nginx and through the proxy (with its latency), to
tell the harness's limits from ours. "cpu": CPU seconds (user + system) of
`urec bench` for its 2 epochs, local (block order) and budget, and of the
servers during the budget run (the proxy is a thread of this process; nginx's
processes are read from /proc), to show what the downloads cost beside the
decoding on a machine whose cores they share.

  .venv/bin/python bench/remote_bench.py --urec build/tools/urec --images 2048 --shards 16 --rounds 2
"""
import argparse
import json
import os
import pathlib
import resource
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests"))
from remote_servers import FaultProxy, Nginx  # noqa: E402


THREADS = 2  # --threads
PREFETCH = {"prefetch_shards": 3, "max_requests": 4}  # --prefetch-shards, --max-requests


def children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def own_cpu():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def process_tree_cpu(pid):
    """CPU seconds of process `pid` and its live children (from /proc)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = pathlib.Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(entry) == pid or int(fields[1]) == pid:  # fields[1]: the parent's pid
            total += (int(fields[11]) + int(fields[12])) / tick  # utime, stime
    return total


def urec_bench(urec, path, epochs, extra, cpu=None):
    """The epochs of `urec bench --json`; cpu (a dict): its CPU seconds as cpu["s"]."""
    before = children_cpu()
    out = subprocess.run([urec, "bench", str(path), "--json", "--threads", str(THREADS), "--batch", "256",
                          "--epochs", str(epochs), "--transform", "train", "--prefetch-shards",
                          str(PREFETCH["prefetch_shards"]), "--max-requests", str(PREFETCH["max_requests"]),
                          *map(str, extra)],
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(out.stderr)
    if cpu is not None:
        cpu["s"] = children_cpu() - before
    return json.loads(out.stdout)["epochs"]


PY_LOADER = """
import json, sys, time, unirecord
path, epochs, order, block, window, cache, limit = sys.argv[1:8]
kw = dict(threads=int(sys.argv[8]), seed=0,
          sampler=unirecord.Sampler(order=order, block_size=int(block), window=int(window)))
if cache:
    kw.update(remote=unirecord.Remote(cache_dir=cache, cache_limit=int(limit), **json.loads(sys.argv[9])))
loader = unirecord.Loader(path, 256, True, **kw)
result = []
for epoch in range(int(epochs)):
    loader.set_epoch(epoch)
    stats = loader.dataset.remote_stats()
    t0, n = time.perf_counter(), 0
    for images, labels in loader:
        n += images.shape[0]
    after = loader.dataset.remote_stats()
    result.append({"images_per_s": n / (time.perf_counter() - t0), "requests": after["requests"] - stats["requests"]})
print(json.dumps(result))
"""


def py_loader(python, path, epochs, order, block, window, cache="", limit=0):
    out = subprocess.run([python, "-c", PY_LOADER, str(path), str(epochs), order, str(block), str(window), str(cache),
                          str(limit), str(THREADS), json.dumps(PREFETCH)], capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(out.stderr)
    return json.loads(out.stdout)


def fetch_rate(base, names, total_bytes, tries=3):
    """MB/s of curl fetching `names` from `base` one after another (best of `tries`)."""
    args = ["curl", "-s", "--fail"]
    for name in names:
        args += ["-o", "/dev/null", f"{base}/{name}"]
    best = float("inf")
    for _ in range(tries):
        t0 = time.perf_counter()
        subprocess.run(args, check=True)
        best = min(best, time.perf_counter() - t0)
    return total_bytes / best / 1e6


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--urec", default="build/tools/urec")
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--images", type=int, default=2048)
    ap.add_argument("--shards", type=int, default=16)
    ap.add_argument("--window-shards", type=int, default=2)
    ap.add_argument("--latency", type=float, default=0.020)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--work", default="")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--prefetch-shards", type=int, default=3)
    ap.add_argument("--max-requests", type=int, default=4)
    args = ap.parse_args()
    global THREADS
    THREADS = args.threads
    PREFETCH.update(prefetch_shards=args.prefetch_shards, max_requests=args.max_requests)

    work = pathlib.Path(args.work or tempfile.mkdtemp(prefix="urec_remote_bench_"))
    www = work / "www"
    if not (www / "ds").exists():
        www.mkdir(parents=True, exist_ok=True)
        src = work / "src"
        shutil.rmtree(src, ignore_errors=True)
        subprocess.run([args.urec, "synth-imagefolder", src, "--classes", "16", "--per-class",
                        str(args.images // 16)], check=True, capture_output=True)
        subprocess.run([args.urec, "convert", "imagefolder", src, www / "ds", "--name", "train", "--shards",
                        str(args.shards)], check=True, capture_output=True)
    local = www / "ds"
    shard_bytes = sum(p.stat().st_size for p in local.glob("*.urec"))
    records = args.images // 16 * 16
    per_shard = records // args.shards
    window = per_shard * args.window_shards
    budget = shard_bytes // 4
    nginx = Nginx(www)
    proxy = FaultProxy(nginx.port)
    proxy.add("latency", "", value=args.latency)
    url = proxy.url + "/ds/"
    load_start = os.getloadavg()
    shard_names = sorted(p.name for p in local.glob("*.urec"))
    harness = {}
    if shutil.which("curl"):
        harness = {"nginx_mb_per_s": fetch_rate(nginx.url + "/ds", shard_names, shard_bytes),
                   "proxy_mb_per_s": fetch_rate(url[:-1], shard_names, shard_bytes)}
    results = {"config": {"images": records, "shards": args.shards, "shard_bytes": shard_bytes,
                          "records_per_shard": per_shard, "block_size": per_shard, "window": window,
                          "budget_bytes": budget, "latency_s": args.latency, "batch": 256, "threads": THREADS,
                          **PREFETCH},
               "harness": harness, "rounds": []}
    try:
        for r in range(args.rounds):
            rnd = {}
            warm_cache = work / f"warm{r}"
            cold_cache = work / f"cold{r}"
            budget_cache = work / f"budget{r}"
            for d in (warm_cache, cold_cache, budget_cache):
                shutil.rmtree(d, ignore_errors=True)
            block = ["--order", "block", "--block-size", per_shard, "--window", window]
            # urec bench: epoch 1 of 2 is timed for warm/local (epoch 0 warms caches and page cache).
            rnd["urec_local"] = urec_bench(args.urec, local, 2, [])[1]["images_per_s"]
            cold = urec_bench(args.urec, url, 2, ["--cache-dir", warm_cache])
            rnd["urec_cold"] = {"images_per_s": cold[0]["images_per_s"], "requests": cold[0]["remote"]["requests"],
                                "shard_downloads": cold[0]["remote"]["shard_downloads"]}
            rnd["urec_warm"] = cold[1]["images_per_s"]
            local_cpu, budget_cpu = {}, {}
            rnd["urec_local_block"] = urec_bench(args.urec, local, 2, block, local_cpu)[1]["images_per_s"]
            servers_before = own_cpu(), process_tree_cpu(nginx.proc.pid)
            budget_run = urec_bench(args.urec, url, 2, ["--cache-dir", budget_cache, "--cache-limit", budget, *block],
                                    budget_cpu)
            rnd["cpu"] = {"urec_local_block_s": local_cpu["s"], "urec_budget_s": budget_cpu["s"],
                          "proxy_during_budget_s": own_cpu() - servers_before[0],
                          "nginx_during_budget_s": process_tree_cpu(nginx.proc.pid) - servers_before[1]}
            rnd["urec_budget"] = {"images_per_s": budget_run[1]["images_per_s"],
                                  "requests": budget_run[1]["remote"]["requests"],
                                  "shard_downloads": budget_run[1]["remote"]["shard_downloads"]}
            # Python Loader, the same cases.
            rnd["py_local"] = py_loader(args.python, local, 2, "shuffle", 1, 0)[1]["images_per_s"]
            py_cold = py_loader(args.python, url, 2, "shuffle", 1, 0, cold_cache, 0)
            rnd["py_cold"] = py_cold[0]
            rnd["py_warm"] = py_cold[1]["images_per_s"]
            rnd["py_local_block"] = py_loader(args.python, local, 2, "block", per_shard, window)[1]["images_per_s"]
            shutil.rmtree(budget_cache, ignore_errors=True)
            rnd["py_budget"] = py_loader(args.python, url, 2, "block", per_shard, window, budget_cache, budget)[1]
            rnd["ratios"] = {
                "urec_warm": rnd["urec_warm"] / rnd["urec_local"],
                "urec_budget": rnd["urec_budget"]["images_per_s"] / rnd["urec_local_block"],
                "urec_cold": rnd["urec_cold"]["images_per_s"] / rnd["urec_local"],
                "py_warm": rnd["py_warm"] / rnd["py_local"],
                "py_budget": rnd["py_budget"]["images_per_s"] / rnd["py_local_block"],
                "py_cold": rnd["py_cold"]["images_per_s"] / rnd["py_local"],
            }
            rnd["loadavg"] = os.getloadavg()
            results["rounds"].append(rnd)
            print(json.dumps(rnd), file=sys.stderr)
    finally:
        proxy.stop()
        nginx.stop()
    results["loadavg_start"] = load_start
    results["loadavg_end"] = os.getloadavg()
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
