#!/usr/bin/env python3
"""Plots images/s vs threads (workers) for the unirecord Loader and
torchvision, one panel per result file of bench/loader_peer.py.

  bench/loader_plot.py OUT.png "TITLE=results.json" ["TITLE=results.json" ...]
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    panels = [arg.split("=", 1) for arg in sys.argv[2:]]
    fig, axes = plt.subplots(1, len(panels), figsize=(5 * len(panels), 3.8), squeeze=False)
    for ax, (title, path) in zip(axes[0], panels):
        with open(path) as f:
            s = json.load(f)["scaling"]
        threads = s["threads"]
        ax.plot(threads, s["unirecord"], "o-", label="unirecord Loader (threads)")
        ax.plot(threads, s["torchvision"], "s-", label="torchvision ImageFolder+PIL (DataLoader workers)")
        ax.plot(threads, [t * s["unirecord"][0] for t in threads], ":", color="grey",
                label="linear: 1-thread unirecord x threads")
        ax.set_title(title + "\nRandomResizedCrop(224) + flip, batch 256", fontsize=9)
        ax.set_xlabel("threads / workers")
        ax.set_ylabel("images/s")
        ax.set_xticks(threads)
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(sys.argv[1], dpi=110)


if __name__ == "__main__":
    main()
