"""The viewer's goals (issue 46), measured in a real browser (headless
Chromium through chromedriver, tests/browser.py) against `urec serve`:

- cold start: from starting `urec serve` on N records to the page showing
  the overview and the first grid page with every thumbnail decoded;
- the label histogram over every record (from the index): its request,
  timed in the page;
- a query typed into the box: from Enter to its first page shown, thumbnails
  decoded;
- thumbnails per second with the server on 1 thread: grid pages of
  ImageNet-sized JPEGs (500x375), each page's 48 thumbnails from the grid's
  answer to the last one drawn (the page asks for them as one atlas,
  /api/thumbs), pages never seen before; then thumbnails asked without a
  browser, one at a time (/api/thumb) and a page's 48 at a time (the atlas's
  two requests, picture then cells), with the server's CPU seconds; then,
  in the browser, 48 thumbnails as 48 images (as the page asked before the
  atlas) and as one atlas, alternately (both see the same load);
- the server's memory (VmRSS, RssAnon, RssFile from /proc) while grid
  pages spread over the whole dataset are asked for, their atlases included.

Datasets are made on the first run under --dir and reused: N records (label
of 1,000 classes, indexed width and height, a path, a small JPEG from a pool
of 1,000; the size of ImageNet-1k's train split by default) and 2,000
records of 500x375 JPEGs (urec synth-imagefolder).

    PYTHONPATH=build/python UREC=build/tools/urec /usr/bin/python3 bench/viewer_bench.py [--records N]
"""
import argparse
import io
import json
import os
import pathlib
import subprocess
import sys
import time
import urllib.request

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests"))
from browser import UrecServe, chromium, wait_for  # noqa: E402

UREC = os.environ.get("UREC", "build/tools/urec")


def small_jpegs(count, width=96, height=72):
    from PIL import Image

    out = []
    rng = np.random.default_rng(0)
    yy, xx = np.mgrid[0:height, 0:width]
    for k in range(count):
        base = np.stack([(xx * 3 + k) % 256, (yy * 3 + 7 * k) % 256, (xx + yy + 13 * k) % 256], -1)
        pixels = np.clip(base + rng.normal(0, 12, base.shape), 0, 255).astype(np.uint8)
        buffer = io.BytesIO()
        Image.fromarray(pixels).save(buffer, format="JPEG", quality=85)
        out.append(buffer.getvalue())
    return out


def make_big(path, records):
    import unirecord

    if (path / "big.uset").exists():
        return
    schema = unirecord.Schema([unirecord.Field("image", "bytes"), unirecord.Field("label", "int64", indexed=True),
                               unirecord.Field("path", "string"), unirecord.Field("width", "int32", indexed=True),
                               unirecord.Field("height", "int32", indexed=True)])
    jpegs = small_jpegs(1000)
    rng = np.random.default_rng(1)
    labels = rng.integers(0, 1000, records)
    widths = rng.integers(200, 700, records)
    heights = rng.integers(200, 700, records)
    start = time.monotonic()
    with unirecord.Writer(path, schema, "big", num_shards=8, expected_records=records, sync=False,
                          classes=[f"n{c:08d}" for c in range(1000)]) as w:
        for i in range(records):
            label = int(labels[i])
            w.write({"image": jpegs[i % 1000], "label": label, "path": f"n{label:08d}/{i}.JPEG",
                     "width": int(widths[i]), "height": int(heights[i])})
    print(f"made {records} records in {time.monotonic() - start:.0f} s", file=sys.stderr)


def make_photos(path):
    if (path / "photos.uset").exists():
        return
    src = path.parent / "photos-src"
    for args in (["synth-imagefolder", src, "--classes", 20, "--per-class", 100, "--width", 500, "--height", 375],
                 ["convert", "imagefolder", src, path, "--name", "photos", "--shards", 2]):
        subprocess.run([UREC, *map(str, args)], check=True, capture_output=True)


def cpu_seconds(pid):
    """User + system CPU time of the process so far."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def tree_cpu_seconds(pid):
    """CPU time of the process and all its descendants (the browser's
    processes under chromedriver's)."""
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    parents[int(entry)] = int(f.read().rsplit(")", 1)[1].split()[1])
            except OSError:
                pass
    tree, grown = {pid}, True
    while grown:
        grown = False
        for child, parent in parents.items():
            if parent in tree and child not in tree:
                tree.add(child)
                grown = True
    total = 0.0
    for member in tree:
        try:
            total += cpu_seconds(member)
        except OSError:
            pass
    return total


def memory(pid):
    fields = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            name, _, value = line.partition(":")
            if name in ("VmRSS", "RssAnon", "RssFile"):
                fields[name] = int(value.split()[0]) / 1024
    return fields


def page_ready(driver):
    wait_for(driver, "document.getElementById('grid').dataset.state === 'ready'", timeout=300)


def cold_start(driver, dataset):
    start = time.monotonic()
    server = UrecServe(UREC, dataset)
    listening = time.monotonic() - start
    driver.get(server.url)
    wait_for(driver, "document.body.dataset.state === 'ready'", timeout=300)
    total = time.monotonic() - start
    timings = driver.execute_script("return window.urecTimings")
    return server, {"listening_s": listening, "overview_and_first_page_s": total,
                    "page_overview_ms": timings["overview"], "page_grid_ms": timings["grid"],
                    "page_thumbnails_ms": timings["thumbnails"]}


def fetch_ms(driver, url):
    return driver.execute_async_script("""
        const done = arguments[arguments.length - 1];
        const start = performance.now();
        fetch(arguments[0]).then(r => r.json()).then(body => done([performance.now() - start, body]));""", url)


def query_first_page(driver, query):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    box = driver.find_element(By.ID, "query")
    box.clear()
    box.send_keys(query)
    driver.execute_script("document.getElementById('grid').dataset.state = 'stale'")
    start = time.monotonic()
    box.send_keys(Keys.ENTER)
    page_ready(driver)
    wall = time.monotonic() - start
    t = driver.execute_script("return window.urecTimings")
    # In the page: from the query's submit to its first page's thumbnails decoded.
    return {"page_s": (t["thumbnails"] - t["query"]) / 1000, "webdriver_wall_s": wall}


def label_histogram(driver, dataset):
    """A fresh server, and a page of its origin that asks for nothing else."""
    server = UrecServe(UREC, dataset)
    try:
        driver.get(f"{server.origin}/api/overview")
        ms, body = fetch_ms(driver, f"{server.origin}/api/distribution?field=label")
        return {"ms": ms, "state": body["state"], "source": body.get("source"),
                "bars": len(body["charts"][0]["bars"]) if body["state"] == "done" else None}
    finally:
        server.stop()


# In a page of the viewer's origin: 48 thumbnails as 48 images (one request
# each, as the page asked before the atlas) or as the page asks now (an
# atlas's picture, decoded, and its cells, drawn into 48 canvases); the
# milliseconds until all are decoded or drawn.
SINGLE_IMAGES_MS = """
    const done = arguments[arguments.length - 1];
    const start = performance.now();
    Promise.all(arguments[0].map((id) => { const image = new Image(); image.src = '/api/thumb?id=' + id;
                                           return image.decode(); }))
      .then(() => done(performance.now() - start));"""
ATLAS_MS = """
    const done = arguments[arguments.length - 1];
    const ids = arguments[0].join(',');
    const start = performance.now();
    fetch('/api/thumbs.png?ids=' + ids).then((response) => {
      const picture = response.blob().then((blob) => createImageBitmap(blob));
      return Promise.all([fetch('/api/thumbs?ids=' + ids).then((r) => r.json()), picture]);
    }).then(([layout, picture]) => {
      for (const at of layout.cells) {
        const canvas = document.createElement('canvas'); canvas.width = at.width; canvas.height = at.height;
        canvas.getContext('2d').drawImage(picture, at.x, at.y, at.width, at.height, 0, 0, at.width, at.height);
      }
      done(performance.now() - start);
    });"""


def atlas_versus_single_images(driver, server, first, pairs):
    """The same kind of 48 thumbnails (records never asked before) both ways,
    alternately, so that both see the same load: thumbnails per second, and
    the server's and the browser's CPU milliseconds per 48 (whatever the load)."""
    driver.get(f"{server.origin}/api/overview")
    browser_pid = driver.service.process.pid
    ways = {"single_images": SINGLE_IMAGES_MS, "atlas": ATLAS_MS}
    rates = {way: [] for way in ways}
    cpu = {way: [0.0, 0.0] for way in ways}
    for k in range(pairs):
        for way, script in ways.items():
            ids = list(range(first, first + 48))
            first += 48
            before = cpu_seconds(server.proc.pid), tree_cpu_seconds(browser_pid)
            rates[way].append(48 / (driver.execute_async_script(script, ids) / 1000))
            cpu[way][0] += cpu_seconds(server.proc.pid) - before[0]
            cpu[way][1] += tree_cpu_seconds(browser_pid) - before[1]
    result = {}
    for way in ways:
        result.update({f"{way}_per_s_median": float(np.median(rates[way])), f"{way}_per_s": rates[way],
                       f"{way}_server_cpu_ms_per_48": 1000 * cpu[way][0] / pairs,
                       f"{way}_browser_cpu_ms_per_48": 1000 * cpu[way][1] / pairs})
    return result


def thumbnails_per_second(driver, dataset, pages):
    server = UrecServe(UREC, dataset, "--threads", 1)
    try:
        driver.get(server.url)
        page_ready(driver)
        rates = []
        browser_pid = driver.service.process.pid
        cpu, browser_cpu = cpu_seconds(server.proc.pid), tree_cpu_seconds(browser_pid)
        for page in range(1, pages + 1):
            driver.execute_script("document.getElementById('grid').dataset.state = 'stale'")
            driver.get(f"{server.origin}/?page={page}")
            page_ready(driver)
            t = driver.execute_script("return window.urecTimings")
            count = driver.execute_script("return document.querySelectorAll('#grid canvas.thumb[data-state=drawn]').length")
            rates.append(count / ((t["thumbnails"] - t["grid"]) / 1000))
        cpu, browser_cpu = cpu_seconds(server.proc.pid) - cpu, tree_cpu_seconds(browser_pid) - browser_cpu
        # The server's CPU time for those pages (their grid and overview
        # answers included): what one thread makes per second of its own,
        # whatever else the machine runs; and the browser's (every process).
        result = {"pages": pages, "browser_thumbnails_per_s_median": float(np.median(rates)),
                  "browser_thumbnails_per_s_min": float(min(rates)), "browser_pages_server_cpu_s": cpu,
                  "browser_pages_thumbnails_per_cpu_s": pages * 48 / cpu, "browser_pages_browser_cpu_s": browser_cpu}
        # Thumbnails alone, one request at a time, of records no page showed.
        first = (pages + 1) * 48
        cpu, start = cpu_seconds(server.proc.pid), time.monotonic()
        for record in range(first, first + 400):
            with urllib.request.urlopen(f"{server.origin}/api/thumb?id={record}") as r:
                r.read()
        cpu, wall = cpu_seconds(server.proc.pid) - cpu, time.monotonic() - start
        result.update({"direct_thumbnails": 400, "direct_per_s_wall": 400 / wall, "direct_per_cpu_s": 400 / cpu})
        # The same as atlases of 48, as the page asks for them (the picture,
        # then its cells), of records no page showed.
        first, atlases = first + 400, 10
        cpu, start = cpu_seconds(server.proc.pid), time.monotonic()
        for k in range(atlases):
            ids = ",".join(str(first + 48 * k + i) for i in range(48))
            for path in ("thumbs.png", "thumbs"):
                with urllib.request.urlopen(f"{server.origin}/api/{path}?ids={ids}") as r:
                    r.read()
        cpu, wall = cpu_seconds(server.proc.pid) - cpu, time.monotonic() - start
        result.update({"atlas_thumbnails": atlases * 48, "atlas_per_s_wall": atlases * 48 / wall,
                       "atlas_per_cpu_s": atlases * 48 / cpu})
        result["in_browser"] = atlas_versus_single_images(driver, server, first + atlases * 48, 6)
        return result
    finally:
        server.stop()


def memory_over_the_dataset(dataset, records, pages, cache_mb, page_cache_mb):
    """Grid pages spread over every record, each with its thumbnails, asked
    of a server with `cache_mb` MiB of answers' cache and `page_cache_mb` of
    scalar pages; its memory every tenth of the way."""
    server = UrecServe(UREC, dataset, "--cache-mb", cache_mb, "--page-cache-mb", page_cache_mb)
    try:
        pid = server.proc.pid
        points = [{"pages": 0, **memory(pid)}]
        step = max(records // 48 // pages, 1)
        for k in range(pages):
            with urllib.request.urlopen(f"{server.origin}/api/grid?page={k * step}&size=48") as r:
                grid = json.load(r)
            ids = ",".join(str(record["id"]) for record in grid["records"])
            for path in ("thumbs.png", "thumbs"):  # as the page asks for them
                with urllib.request.urlopen(f"{server.origin}/api/{path}?ids={ids}") as r:
                    r.read()
            if (k + 1) % max(pages // 10, 1) == 0:
                points.append({"pages": k + 1, **memory(pid)})
        return {"cache_mb": cache_mb, "page_cache_mb": page_cache_mb, "thumbnails": pages * 48, "points": points}
    finally:
        server.stop()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=1_281_167)
    parser.add_argument("--dir", default="/tmp/urec_viewer_bench")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--thumbnail-pages", type=int, default=8)
    parser.add_argument("--memory-pages", type=int, default=1500)
    parser.add_argument("--memory-cache-mb", type=int, default=32)
    parser.add_argument("--memory-page-cache-mb", type=int, default=8)
    args = parser.parse_args()
    root = pathlib.Path(args.dir)
    big = root / f"big-{args.records}"
    photos = root / "photos"
    make_big(big, args.records)
    make_photos(photos)
    result = {"records": args.records, "rounds": args.rounds, "load_average_start": os.getloadavg()}
    browser = chromium()
    driver = browser.driver
    rounds = {"cold_start": [], "query_first_page_s": [], "label_histogram": [], "thumbnails_1_thread": []}
    try:
        driver.get("about:blank")  # the browser is up before the clock starts
        for _ in range(args.rounds):
            server, cold = cold_start(driver, big)
            rounds["cold_start"].append(cold)
            try:
                rounds["query_first_page_s"].append({q: query_first_page(driver, q)
                                                     for q in ("label == 417", "label in [3, 7] and width >= 400")})
            finally:
                server.stop()
            rounds["label_histogram"].append(label_histogram(driver, big))
            rounds["thumbnails_1_thread"].append(thumbnails_per_second(driver, photos, args.thumbnail_pages))
        result["memory_mb"] = memory_over_the_dataset(big, args.records, args.memory_pages, args.memory_cache_mb,
                                                      args.memory_page_cache_mb)
    finally:
        browser.close()
    result["load_average_end"] = os.getloadavg()
    result["median"] = {
        "overview_and_first_page_s": median(r["overview_and_first_page_s"] for r in rounds["cold_start"]),
        "label_histogram_ms": median(r["ms"] for r in rounds["label_histogram"]),
        "query_first_page_s": {q: median(r[q]["page_s"] for r in rounds["query_first_page_s"])
                               for q in rounds["query_first_page_s"][0]},
        "thumbnails_direct_per_cpu_s": median(r["direct_per_cpu_s"] for r in rounds["thumbnails_1_thread"]),
        "thumbnails_direct_per_s_wall": median(r["direct_per_s_wall"] for r in rounds["thumbnails_1_thread"]),
        "thumbnails_atlas_per_cpu_s": median(r["atlas_per_cpu_s"] for r in rounds["thumbnails_1_thread"]),
        "thumbnails_atlas_per_s_wall": median(r["atlas_per_s_wall"] for r in rounds["thumbnails_1_thread"]),
        "thumbnails_browser_per_s": median(r["browser_thumbnails_per_s_median"] for r in rounds["thumbnails_1_thread"]),
        "thumbnails_in_browser_48_images_per_s": median(r["in_browser"]["single_images_per_s_median"]
                                                        for r in rounds["thumbnails_1_thread"]),
        "thumbnails_in_browser_atlas_per_s": median(r["in_browser"]["atlas_per_s_median"]
                                                    for r in rounds["thumbnails_1_thread"]),
        "thumbnails_in_browser_cpu_ms_per_48": {
            f"{way}_{who}": median(r["in_browser"][f"{way}_{who}_cpu_ms_per_48"] for r in rounds["thumbnails_1_thread"])
            for way in ("single_images", "atlas") for who in ("server", "browser")},
        "thumbnails_browser_pages_per_cpu_s": median(r["browser_pages_thumbnails_per_cpu_s"]
                                                     for r in rounds["thumbnails_1_thread"]),
        "thumbnails_browser_page_cpu_ms": {
            who: median(1000 * r[f"browser_pages_{who}_cpu_s"] / r["pages"] for r in rounds["thumbnails_1_thread"])
            for who in ("server", "browser")},
    }
    result["rounds_detail"] = rounds
    print(json.dumps(result, indent=1))


def median(values):
    return float(np.median(list(values)))


if __name__ == "__main__":
    main()
