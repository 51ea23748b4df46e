"""A real browser and a real viewer for the tests and benchmarks of `urec
serve` (python/tests/test_viewer.py, bench/viewer_bench.py), started and
stopped by them, on 127.0.0.1:

- chromium(): Debian's headless Chromium driven through chromedriver
  (python3-selenium), with a fresh profile, no network of its own (no
  component updates, sync, QUIC or background requests), and every alert()
  the page would call recorded instead (window.__alerts) from before any
  script of the page runs.
- UrecServe: `urec serve DATASET --port 0 ...` as a process; its address is
  the first line it prints; stop() sends SIGTERM and waits.
- wait_for(driver, script): polls a JavaScript expression until it is truthy.
"""
import os
import shutil
import signal
import subprocess
import tempfile
import time

CHROMIUM = os.environ.get("UREC_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("UREC_CHROMEDRIVER", "/usr/bin/chromedriver")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--window-size=1400,1000"]

# Installed before the page's own scripts: an alert() from injected markup
# would be recorded here (and not block the driver).
RECORD_ALERTS = """
window.__alerts = [];
for (const name of ["alert", "confirm", "prompt"]) {
  window[name] = (message) => { window.__alerts.push(String(message)); };
}
"""


class Browser:
    """A headless Chromium; .driver is the selenium WebDriver."""

    def __init__(self):
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service

        self.profile = tempfile.mkdtemp(prefix="urec-chromium-")
        options = webdriver.ChromeOptions()
        options.binary_location = CHROMIUM
        for flag in FLAGS:
            options.add_argument(flag)
        options.add_argument(f"--user-data-dir={self.profile}")
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        self.driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
        self.driver.set_page_load_timeout(60)
        self.driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": RECORD_ALERTS})

    def close(self):
        try:
            self.driver.quit()
        finally:
            shutil.rmtree(self.profile, ignore_errors=True)


def chromium():
    return Browser()


def wait_for(driver, script, timeout=60.0, what=None):
    """Polls `return (script)` in the page until truthy; returns its value."""
    deadline = time.monotonic() + timeout
    while True:
        value = driver.execute_script(f"return ({script});")
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what or script}")
        time.sleep(0.05)


class UrecServe:
    """`urec serve` on a free port of 127.0.0.1 (or as `args` say)."""

    def __init__(self, urec, dataset, *args, env=None):
        self.proc = subprocess.Popen([urec, "serve", str(dataset), "--port", "0", *map(str, args)],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        line = self.proc.stdout.readline().strip()
        if not line.startswith("http://"):
            self.proc.kill()
            raise RuntimeError(f"urec serve printed {line!r}: {self.proc.stderr.read()}")
        self.url = line

    @property
    def origin(self):
        return self.url.split("/?")[0].rstrip("/")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode
