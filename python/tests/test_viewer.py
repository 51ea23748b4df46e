"""`urec serve` and unirecord.serve in a real browser: headless Chromium
driven through chromedriver (tests/browser.py), against datasets made here,
served on 127.0.0.1 and stopped by the tests. The overview; a histogram bar
clicked filters; a query filters, a wrong one is shown at its column; a
thumbnail's pixels (drawn from the page's atlas) are `urec decode`'s at that
size, and one that cannot be made is its error in its cell; boxes are drawn where
the record says; the training crops are the loader's; a hostile dataset
(markup and script in class names, captions, field names, paths, metadata)
runs nothing; a damaged shard is an error in its cells; a remote dataset
over nginx; path traversal, other hosts, writes and missing tokens are
refused. UREC_SCREENSHOT_DIR=DIR saves the page's screenshot there
(docs/viewer.png is made so)."""
import http.client
import io
import json
import os
import pathlib
import shutil
import sys
import urllib.parse

import numpy as np
import pytest

import unirecord
from urec_fixtures import urec_binary, write_jpeg

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tests"))
from browser import UrecServe, chromium, wait_for  # noqa: E402
from remote_servers import Nginx  # noqa: E402

selenium = pytest.importorskip("selenium")
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402

HOSTILE = [
    "<script>alert('class')</script>",
    "\"><img src=x onerror=alert('img')>",
    "<svg onload=alert('svg')>",
    "javascript:alert('href')",
    "{{constructor.constructor('alert(1)')()}}",
]


def run(*args, text=True):
    import subprocess

    result = subprocess.run([urec_binary(), *map(str, args)], capture_output=True, text=text)
    assert result.returncode == 0, f"urec {args}: {result.stderr}"
    return result


def read_ppm(data):
    header, rest = [], data
    while len(header) < 4:
        token, rest = rest.split(maxsplit=1)
        header.append(token)
    width, height = int(header[1]), int(header[2])
    return np.frombuffer(rest[:width * height * 3], np.uint8).reshape(height, width, 3)


@pytest.fixture(scope="module")
def browser():
    b = chromium()
    yield b.driver
    b.close()


@pytest.fixture(scope="module")
def images(tmp_path_factory):
    """4 classes x 6 JPEGs of about 400x300, in 3 shards."""
    urec_binary()
    root = tmp_path_factory.mktemp("viewer")
    run("synth-imagefolder", root / "src", "--classes", 4, "--per-class", 6, "--width", 400, "--height", 300)
    run("convert", "imagefolder", root / "src", root / "ds", "--name", "train", "--shards", 3)
    return root / "ds"


@pytest.fixture(scope="module")
def served(images):
    server = UrecServe(urec_binary(), images)
    yield server
    assert server.stop() == 0


def open_page(driver, url):
    driver.get(url)
    wait_for(driver, "document.body.dataset.state === 'ready'", what="the page's first grid")


def grid_total(driver):
    return int(wait_for(driver, "document.getElementById('grid').dataset.state === 'ready' && "
                                "document.getElementById('grid').dataset.total"))


def drawn_thumbnails(driver):
    return driver.execute_script("return document.querySelectorAll('#grid canvas.thumb[data-state=drawn]').length")


def submit_query(driver, text):
    box = driver.find_element(By.ID, "query")
    box.clear()
    box.send_keys(text, Keys.ENTER)


def screenshot(driver, name):
    folder = os.environ.get("UREC_SCREENSHOT_DIR")
    if folder:
        size = driver.get_window_size()
        driver.set_window_size(1400, 1500)
        driver.execute_script("window.scrollTo(0, 0)")
        driver.save_screenshot(str(pathlib.Path(folder) / name))
        driver.set_window_size(size["width"], size["height"])


def test_overview_lists_fields_sizes_versions_and_classes(browser, served, images):
    open_page(browser, served.url)
    ds = unirecord.Dataset(images)
    facts = browser.find_element(By.ID, "dataset-facts").text
    assert f"{len(ds)} records" in facts
    body = browser.find_element(By.ID, "overview-body").text
    for field in ds.fields:
        assert field in body
    assert "Versions" in body and "← shown" in body
    names = [e.text for e in browser.find_elements(By.CSS_SELECTOR, "#overview-body .names span")]
    assert names == ds.classes
    assert grid_total(browser) == len(ds)
    assert len(browser.find_elements(By.CSS_SELECTOR, "#grid .cell")) == len(ds)
    wait_for(browser, "[...document.querySelectorAll('.card')].every(c => ['done', 'scan_needed'].includes(c.dataset.state))")
    screenshot(browser, "viewer.png")


def test_histogram_bar_click_filters_the_grid(browser, served, images):
    open_page(browser, served.url)
    wait_for(browser, "document.querySelector('.card[data-field=label]').dataset.state === 'done'")
    bars = browser.find_elements(By.CSS_SELECTOR, ".card[data-field=label] rect.bar")
    assert [int(b.get_attribute("data-n")) for b in bars] == [6, 6, 6, 6]  # the class balance, from the index
    bars[2].click()
    assert grid_total(browser) == 6
    query = urllib.parse.parse_qs(urllib.parse.urlparse(browser.current_url).query)
    assert query["q"] == ["label == 2"]  # the URL holds the view
    ds = unirecord.Dataset(images)
    shown = sorted(int(c.get_attribute("data-id")) for c in browser.find_elements(By.CSS_SELECTOR, "#grid .cell"))
    assert shown == sorted(int(i) for i in ds.query("label == 2"))
    # The same URL opened again shows the same view.
    open_page(browser, browser.current_url)
    assert grid_total(browser) == 6
    assert browser.find_element(By.ID, "query").get_attribute("value") == "label == 2"


def test_query_filters_and_a_wrong_one_is_shown_at_its_column(browser, served, images):
    open_page(browser, served.url)
    submit_query(browser, "label in [1, 3] and path >= 'c'")
    ds = unirecord.Dataset(images)
    expected = ds.query("label in [1, 3] and path >= 'c'")
    assert grid_total(browser) == len(expected)
    assert browser.find_element(By.ID, "query-error").get_attribute("hidden") is not None

    submit_query(browser, "label == 1 and widht > 3")
    wait_for(browser, "!document.getElementById('query-error').hidden")
    message = browser.find_element(By.ID, "query-error-message").text
    assert "column 16" in message and "unknown field 'widht'" in message
    caret = browser.execute_script("return document.getElementById('query-error-caret').textContent").split("\n")
    assert caret[0] == "label == 1 and widht > 3"
    assert caret[1].index("^") == 15
    box = browser.find_element(By.ID, "query")
    assert box.get_attribute("aria-invalid") == "true"
    assert browser.execute_script("return document.getElementById('query').selectionStart") == 15


# The cell's canvas as the page drew it, the part of the atlas the page
# loaded that the page says is the cell's, and where that part is.
CELL_PIXELS = """
    const canvas = document.querySelector(`.cell[data-id="${arguments[0]}"] canvas.thumb`);
    const done = arguments[arguments.length - 1];
    const pixels = (source, x, y, w, h) => {
      const c = document.createElement('canvas'); c.width = w; c.height = h;
      const context = c.getContext('2d'); context.drawImage(source, x, y, w, h, 0, 0, w, h);
      return Array.from(context.getImageData(0, 0, w, h).data);
    };
    const atlas = new Image();
    atlas.src = canvas.dataset.atlas;
    atlas.decode().then(() => {
      const [x, y, w, h] = [+canvas.dataset.x, +canvas.dataset.y, canvas.width, canvas.height];
      const box = canvas.getBoundingClientRect();
      done({shown: pixels(canvas, 0, 0, w, h), atlas: pixels(atlas, x, y, w, h), x, y, width: w, height: h,
            shown_width: box.width, shown_height: box.height, atlas_url: new URL(atlas.src).pathname,
            atlas_src: canvas.dataset.atlas, atlas_width: atlas.naturalWidth, atlas_height: atlas.naturalHeight,
            cells: document.querySelectorAll('.cell canvas.thumb').length});
    });"""


def test_thumbnail_pixels_are_the_decoders_at_that_size(browser, served, images, tmp_path):
    open_page(browser, served.url)
    ds = unirecord.Dataset(images)
    record = max(range(len(ds)), key=lambda i: max(ds[i]["width"], ds[i]["height"]))  # the most reduced
    got = browser.execute_async_script(CELL_PIXELS, record)
    width, height = got["width"], got["height"]
    stored = ds[record]
    scale = min(1, 160 / stored["width"], 160 / stored["height"])  # fitted in 160, never enlarged
    assert (width, height) == (round(stored["width"] * scale), round(stored["height"] * scale))
    assert (got["shown_width"], got["shown_height"]) == (width, height)  # shown 1:1
    assert scale <= 0.5  # decoded at a reduced DCT scale, then resized
    # The page's one atlas: 8 cells a row, the record's where its place on the page says.
    assert got["atlas_url"] == "/api/thumbs.png"
    layout = json.loads(raw_get(served.origin, got["atlas_src"].replace("/api/thumbs.png", "/api/thumbs"))[1])
    cell_width, cell_height = layout["cell_width"], layout["cell_height"]
    assert cell_width == 160 and height <= cell_height <= 160
    assert (got["atlas_width"], got["atlas_height"]) == (8 * cell_width, (got["cells"] + 7) // 8 * cell_height)
    assert (got["x"], got["y"]) == (record % 8 * cell_width, record // 8 * cell_height)
    jpeg = tmp_path / "thumb.jpg"
    jpeg.write_bytes(run("cat", images, record, "--field", "image", text=False).stdout)
    want = read_ppm(run("decode", jpeg, "--crop", f"0,0,{stored['width']},{stored['height']}",
                        "--resize", f"{width}x{height}", "-o", "-", text=False).stdout)
    for name in ("atlas", "shown"):
        pixels = np.array(got[name], np.uint8).reshape(height, width, 4)
        assert (pixels[..., 3] == 255).all(), name
        assert np.array_equal(pixels[..., :3], want), name


def test_a_thumbnail_that_cannot_be_made_is_an_error_in_its_cell(browser, tmp_path):
    from PIL import Image

    schema = unirecord.Schema([unirecord.Field("image", "bytes"), unirecord.Field("label", "int64")])
    Image.fromarray(np.full((48, 64, 3), 90, np.uint8)).save(tmp_path / "ok.png")
    png = bytearray((tmp_path / "ok.png").read_bytes())
    png[png.find(b"IDAT") + 12] ^= 0x55  # the header reads, the pixels do not
    with unirecord.Writer(tmp_path / "ds", schema, "bad", sync=False) as w:
        for k in range(5):
            write_jpeg(tmp_path / f"{k}.jpg", 80, 60, k)
            w.write({"image": bytes(png) if k == 3 else (tmp_path / f"{k}.jpg").read_bytes(), "label": k})
    server = UrecServe(urec_binary(), tmp_path / "ds")
    try:
        open_page(browser, server.url)
        error = browser.find_element(By.CSS_SELECTOR, '.cell[data-id="3"] .image-error').text
        assert "PNG" in error, error
        drawn = [int(c.get_attribute("data-id")) for c in browser.find_elements(By.CSS_SELECTOR, ".cell")
                 if c.find_elements(By.CSS_SELECTOR, "canvas.thumb[data-state=drawn]")]
        assert drawn == [0, 1, 2, 4]
    finally:
        server.stop()


def test_record_page_shows_values_crops_and_the_cat_command(browser, served, images, tmp_path):
    open_page(browser, served.url + "&record=5&seed=9&epoch=2" if "?" in served.url else served.url + "?record=5&seed=9&epoch=2")
    wait_for(browser, "document.querySelectorAll('#record figure.crop img').length === 4 && "
                      "[...document.querySelectorAll('#record figure.crop img')].every(i => i.complete && i.naturalWidth)")
    assert browser.find_element(By.CSS_SELECTOR, "#record code.command").text == f"urec cat {images} 5"
    raw = json.loads(browser.execute_script("return document.querySelector('#record pre.raw').textContent"))
    assert raw["id"] == 5 and raw["label"]["v"] == unirecord.Dataset(images)[5]["label"]
    # The first crop is the loader's for seed 9, epoch 2 (urec decode plans it the same way).
    pixels = browser.execute_script("""
        const img = document.querySelector('#record figure.crop img');
        const canvas = document.createElement('canvas'); canvas.width = 160; canvas.height = 160;
        const context = canvas.getContext('2d'); context.drawImage(img, 0, 0);
        return Array.from(context.getImageData(0, 0, 160, 160).data);""")
    jpeg = tmp_path / "5.jpg"
    jpeg.write_bytes(run("cat", images, 5, "--field", "image", text=False).stdout)
    want = read_ppm(run("decode", jpeg, "--random-resized-crop", "9,2,5", "--resize", "160x160", "-o", "-",
                        text=False).stdout)
    assert np.array_equal(np.array(pixels, np.uint8).reshape(160, 160, 4)[..., :3], want)


def write_boxes_dataset(out):
    """8 images of several sizes, each with boxes and COCO-style categories."""
    from PIL import Image  # noqa: F401  (write_jpeg needs it)

    categories = [{"id": 1, "name": "person"}, {"id": 7, "name": "train"}]
    schema = unirecord.Schema([unirecord.Field("image", "bytes"), unirecord.Field("boxes", "float32", shape=(-1, 4)),
                               unirecord.Field("category_id", "int64", shape=(-1,))])
    boxes = {}
    with unirecord.Writer(out, schema, "coco", metadata={"categories": json.dumps(categories)}, sync=False) as w:
        for k in range(8):
            width, height = 200 + 40 * k, 150 + 10 * k
            path = out.parent / f"src{k}.jpg"
            write_jpeg(path, width, height, k)
            b = np.array([[10 + k, 20, 60, 40], [width / 2, height / 3, width / 4, height / 2]], np.float32)
            boxes[k] = (width, height, b)
            w.write({"image": path.read_bytes(), "boxes": b, "category_id": np.array([1, 7])})
    return boxes


def test_boxes_are_drawn_where_the_record_says(browser, tmp_path):
    boxes = write_boxes_dataset(tmp_path / "coco")
    server = UrecServe(urec_binary(), tmp_path / "coco")
    try:
        open_page(browser, server.url)
        for k, (width, height, b) in boxes.items():
            cell = f'.cell[data-id="{k}"]'
            drawn = browser.execute_script("""
                const cell = document.querySelector(arguments[0]);
                const img = cell.querySelector('canvas.thumb').getBoundingClientRect();
                const svg = cell.querySelector('svg.boxes');
                return [svg.getAttribute('viewBox'), [...svg.querySelectorAll('rect.box')].map(r => {
                  const at = r.getBoundingClientRect();
                  return [+r.getAttribute('x'), +r.getAttribute('y'), +r.getAttribute('width'), +r.getAttribute('height'),
                          at.left - img.left, at.top - img.top, at.width, at.height, img.width];
                }), [...svg.querySelectorAll('text')].map(t => t.textContent)];""", cell)
            view_box, rects, labels = drawn
            assert view_box == f"0 0 {width} {height}"
            assert labels == ["person", "train"]
            assert len(rects) == 2
            for rect, want in zip(rects, b):
                assert np.allclose(rect[:4], want)  # the record's own numbers
                scale = rect[8] / width  # and where they land on the thumbnail, within a pixel
                assert np.allclose(rect[4:8], want * scale, atol=1.5), (k, rect, want * scale)
    finally:
        server.stop()


def write_hostile_dataset(out):
    """Markup and script in a field name, class names, a caption, paths and metadata."""
    from PIL import Image  # noqa: F401

    caption_field = "<img src=x onerror=alert('field')>"
    schema = unirecord.Schema([unirecord.Field("image", "bytes"), unirecord.Field("label", "int64", indexed=True),
                               unirecord.Field(caption_field, "string"), unirecord.Field("path", "string")])
    with unirecord.Writer(out, schema, "evil", classes=HOSTILE, sync=False,
                          metadata={"<script>alert('key')</script>": "</script><script>alert('value')</script>"}) as w:
        for k in range(len(HOSTILE)):
            path = out.parent / f"h{k}.jpg"
            write_jpeg(path, 64, 48, k)
            w.write({"image": path.read_bytes(), "label": k, caption_field: HOSTILE[-1 - k],
                     "path": f"{HOSTILE[k]}/\"'></a><script>alert('path{k}')</script>.jpg"})
    return caption_field


def test_hostile_dataset_is_shown_and_runs_nothing(browser, tmp_path):
    caption_field = write_hostile_dataset(tmp_path / "evil")
    server = UrecServe(urec_binary(), tmp_path / "evil")
    try:
        open_page(browser, server.url + "?record=1")
        wait_for(browser, "document.querySelectorAll('.card').length === 4 && "
                          "[...document.querySelectorAll('.card')].every(c => c.dataset.state === 'done' || "
                          "c.dataset.state === 'scan_needed')")
        wait_for(browser, "document.querySelector('#record pre.raw')")
        # Every name and value is on the page, as text.
        page_text = browser.find_element(By.TAG_NAME, "body").text
        for text in HOSTILE + [caption_field, "<script>alert('key')</script>"]:
            assert text in page_text, text
        names = [e.text for e in browser.find_elements(By.CSS_SELECTOR, "#overview-body .names span")]
        assert names == HOSTILE
        assert drawn_thumbnails(browser) == len(HOSTILE)
        # Nothing ran and nothing was injected: one script (the page's), no
        # element with a handler attribute, no image but the thumbnails.
        assert browser.execute_script("return window.__alerts") == []
        assert browser.execute_script("return document.querySelectorAll('script').length") == 1
        assert browser.execute_script("return [...document.querySelectorAll('*')].filter(e => "
                                      "[...e.attributes].some(a => a.name.startsWith('on'))).length") == 0
        sources = browser.execute_script("return [...document.images].map(i => new URL(i.src).pathname)")
        assert sources and all(s in ("/api/thumb", "/api/crop") for s in sources)
        # A class name's bar filters by the class's number.
        browser.find_element(By.ID, "record-close").click()
        browser.find_elements(By.CSS_SELECTOR, ".card[data-field=label] rect.bar")[1].click()
        assert grid_total(browser) == 1
        assert browser.execute_script("return window.__alerts") == []
    finally:
        server.stop()


def test_damaged_shard_is_an_error_in_its_cells(browser, images, tmp_path):
    damaged = tmp_path / "damaged"
    shutil.copytree(images, damaged)
    ds = unirecord.Dataset(damaged)
    victim = 10  # in the second of 3 shards
    blob = bytes(ds.get_blob(victim, "image"))
    shard = next(p for p in sorted(damaged.glob("train-00001-*.urec")))
    data = bytearray(shard.read_bytes())
    at = data.find(blob[len(blob) // 2:len(blob) // 2 + 64])
    assert at > 0
    data[at] ^= 0x40
    shard.write_bytes(bytes(data))
    server = UrecServe(urec_binary(), damaged)
    try:
        open_page(browser, server.url)
        bad = browser.find_elements(By.CSS_SELECTOR, "#grid .cell.bad")
        assert [int(c.get_attribute("data-id")) for c in bad] == [victim]
        assert "Corruption" in bad[0].text and "checksum" in bad[0].text
        assert drawn_thumbnails(browser) == len(ds) - 1
    finally:
        server.stop()


def test_remote_dataset_over_nginx(browser, images, tmp_path):
    www = tmp_path / "www"
    shutil.copytree(images, www / "ds")
    nginx = Nginx(www)
    server = UrecServe(urec_binary(), nginx.url + "/ds/", "--cache-dir", tmp_path / "cache")
    try:
        open_page(browser, server.url)
        assert "remote" in browser.find_element(By.ID, "dataset-facts").text
        assert grid_total(browser) == 24
        assert drawn_thumbnails(browser) == 24
        submit_query(browser, "label == 3")
        assert grid_total(browser) == 6
    finally:
        server.stop()
        nginx.stop()


def raw_get(origin, target, headers=None):
    """A GET with the target sent as written (no client normalises it)."""
    host, port = urllib.parse.urlparse(origin).netloc.split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=30)
    connection.putrequest("GET", target, skip_host=bool(headers and "Host" in headers))
    for name, value in (headers or {}).items():
        connection.putheader(name, value)
    connection.endheaders()
    response = connection.getresponse()
    body = response.read()
    connection.close()
    return response.status, body


def test_nothing_outside_the_dataset_is_served(browser, served):
    for target in ["/../../../../etc/passwd", "/%2e%2e/%2e%2e/%2e%2e/etc/passwd", "//etc/passwd",
                   "/..%2f..%2f..%2fetc%2fpasswd", "/api/../../etc/passwd", "/viewer.js/../../../../etc/passwd",
                   "/api/thumb?id=0&field=../../../../etc/passwd", "/api/thumb?id=0&field=%2fetc%2fpasswd"]:
        status, body = raw_get(served.origin, target)
        assert status in (400, 404), target
        assert b"root:" not in body, target
    browser.get(served.origin + "/..%2f..%2f..%2fetc%2fpasswd")
    assert "root:" not in browser.page_source
    # Writes, and requests for another host (DNS rebinding), are refused too.
    assert raw_get(served.origin, "/api/overview", {"Host": "attacker.example"})[0] == 403
    connection = http.client.HTTPConnection(*urllib.parse.urlparse(served.origin).netloc.split(":"), timeout=30)
    connection.request("POST", "/api/overview", body=b"x")
    assert connection.getresponse().status == 405
    connection.close()


def test_python_serve_with_a_token(browser, images):
    with unirecord.serve(images, bind="0.0.0.0", threads=2) as server:
        assert len(server.token) == 32 and server.url.endswith("/?token=" + server.token)
        origin = f"http://127.0.0.1:{server.port}"
        assert raw_get(origin, "/api/overview")[0] == 401
        assert raw_get(origin, "/api/overview?token=" + "x" * 32)[0] == 401
        status, body = raw_get(origin, "/api/overview?token=" + server.token)
        assert status == 200 and json.loads(body)["records"] == 24
        open_page(browser, f"{origin}/?token={server.token}")  # the cookie carries the token to the images
        assert drawn_thumbnails(browser) == 24
    assert not server.running
    with unirecord.serve(unirecord.Dataset(images)) as local:
        assert local.token == "" and local.url == f"http://127.0.0.1:{local.port}/"
        assert raw_get(local.url.rstrip("/"), "/api/overview")[0] == 200
    with pytest.raises(ValueError, match="token"):
        unirecord.serve(images, token="short")
