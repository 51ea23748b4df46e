"""A pytest plugin (scripts/test-python.sh loads it with -p skip_policy):
with UNIRECORD_STRICT_SKIPS=1 the run fails when a test or a module skipped
that tests/allowed_skips.txt does not allow, so a suite that stopped running
(a missing package behind importorskip, strace unable to trace) turns CI red
instead of leaving it green with less tested.

Each line of allowed_skips.txt: a glob over the test's node id, " | ", a
regular expression the skip's reason must match (re.search), " | ", why the
skip is expected on CI. Blank lines and lines starting with # are ignored.

It also registers the `device` marker of the GPU tests (bench/run_gpu.sh
selects them with -m device)."""
import fnmatch
import os
import pathlib
import re

import pytest

ALLOWED_FILE = pathlib.Path(__file__).with_name("allowed_skips.txt")
REPOSITORY = pathlib.Path(__file__).resolve().parents[1]
STRICT_ENV = "UNIRECORD_STRICT_SKIPS"
DEVICE_MARKER = "device: runs the loader's device path (python/tests/cuda_check.py's DEVICES carry it)"


def load_allowed(path=ALLOWED_FILE):
    """[(node glob, reason regex)] from the allow list; a malformed line is an error naming it."""
    allowed = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        parts = [part.strip() for part in line.split(" | ")]
        if len(parts) != 3 or not all(parts):
            raise pytest.UsageError(f"{path}:{number}: expected 'node glob | reason regex | why', got {line!r}")
        allowed.append((parts[0], re.compile(parts[1])))
    return allowed


def skip_reason(report):
    """The reason pytest gives for a skip (longrepr is (file, line, reason))."""
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix("Skipped: ")
    return str(longrepr)


def is_allowed(node, reason, allowed):
    return any(fnmatch.fnmatchcase(node, glob) and pattern.search(reason) for glob, pattern in allowed)


class SkipPolicy:
    def __init__(self, allowed, rootpath):
        self.allowed = allowed
        self.rootpath = rootpath
        self.unexpected = []

    def _node(self, report):
        """The report's node id with its path from the repository's root,
        whichever rootdir pytest chose (a file outside it has no path in
        its node id: its location has)."""
        path, sep, rest = report.nodeid.partition("::")
        location = getattr(report, "location", None)
        if location:
            path = location[0]
        try:
            path = (self.rootpath / path).resolve().relative_to(REPOSITORY).as_posix()
        except ValueError:
            pass
        return path + sep + rest

    def _seen(self, report):
        if report.skipped and not hasattr(report, "wasxfail"):
            node, reason = self._node(report), skip_reason(report)
            if not is_allowed(node, reason, self.allowed):
                self.unexpected.append((node, reason))

    def pytest_runtest_logreport(self, report):
        self._seen(report)

    def pytest_collectreport(self, report):  # importorskip and module-level skips
        self._seen(report)

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session):
        if self.unexpected and session.exitstatus == 0:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter):
        if self.unexpected:
            terminalreporter.section(f"skips not allowed on CI ({ALLOWED_FILE})", red=True)
            for node, reason in self.unexpected:
                terminalreporter.write_line(f"{node}: {reason}")


def pytest_configure(config):
    # python/pyproject.toml registers it too, for runs rooted in python/.
    config.addinivalue_line("markers", DEVICE_MARKER)
    if os.environ.get(STRICT_ENV) == "1":
        config.pluginmanager.register(SkipPolicy(load_allowed(), config.rootpath), "unirecord_skip_policy")
