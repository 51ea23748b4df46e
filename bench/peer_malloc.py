"""The malloc that the benchmarks' torch peers run with, one definition for
loader_peer.py, python_bench.py and fields_bench.py.

"huge" (loader_peer.py's and python_bench.py's default) lets glibc's malloc ask for transparent huge pages
(GLIBC_TUNABLES glibc.malloc.hugetlb=1). A DataLoader allocates every batch
afresh, and with 4 KB pages a 38.5 MB image batch is ~9,400 page faults, ~6 us
each on the development VM: with huge pages the torchvision peer at
num_workers=0 ran 1.18-1.25x faster (bench/README.md, "Own Huffman decoder").
That is the peer at its best, the fair one to beat. Workers' shared-memory
batches are not malloc's and keep their faults either way. "default" leaves
malloc as it is: fields_bench.py's default, whose peers' smaller batches do not
fault and ran slower with huge pages.
"""
import os
import sys

CHOICES = ("huge", "default")
_HUGE = "glibc.malloc.hugetlb=1"


def environment(malloc, base=None):
    """A copy of `base` (default os.environ) for a child process that uses `malloc`."""
    env = dict(os.environ if base is None else base)
    if malloc == "huge" and _HUGE not in env.get("GLIBC_TUNABLES", ""):
        env["GLIBC_TUNABLES"] = ":".join(filter(None, [env.get("GLIBC_TUNABLES"), _HUGE]))
    return env


def reexec_with(malloc):
    """For a script whose peer runs in its own process: glibc reads its tunables only at
    start-up, so re-execute this script once with them set (no-op when they already are)."""
    env = environment(malloc)
    if env.get("GLIBC_TUNABLES") != os.environ.get("GLIBC_TUNABLES"):
        os.execve(sys.executable, [sys.executable] + sys.argv, env)
