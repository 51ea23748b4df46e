#!/usr/bin/env python3
"""Fails when a source under src/ includes a header of a higher layer.

The layer order is the one list in the top-level CMakeLists.txt
(`foreach(layer ...)`, bottom-up). A file in src/L/ may include "M/..." only
when M is L or comes before L in that list; every directory under src/ must be
in the list. Tests (`*_test.cc`) are exempt: they may build whole datasets to
test a lower layer. Usage: check-layers.py [ROOT]   (default: the repository
holding this script); check-layers.py --self-test.
"""
import os
import re
import sys
import tempfile

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"/]+)/[^"]+"', re.M)


def layer_order(root):
    with open(os.path.join(root, "CMakeLists.txt")) as f:
        match = re.search(r"foreach\(layer\s+([^)]*)\)", f.read())
    if not match:
        sys.exit("check-layers: no foreach(layer ...) list in CMakeLists.txt")
    return match.group(1).split()


def violations(root):
    layers = layer_order(root)
    rank = {name: i for i, name in enumerate(layers)}
    src = os.path.join(root, "src")
    problems = []
    for name in sorted(os.listdir(src)):
        if os.path.isdir(os.path.join(src, name)) and name not in rank:
            problems.append(f"src/{name}/ is not in CMakeLists.txt's layer list {layers}")
    for layer in layers:
        folder = os.path.join(src, layer)
        if not os.path.isdir(folder):
            continue
        for dirpath, _, files in os.walk(folder):
            for file in sorted(files):
                if not file.endswith((".h", ".cc", ".cu")) or file.endswith("_test.cc"):
                    continue
                path = os.path.join(dirpath, file)
                with open(path, encoding="utf-8") as f:
                    text = f.read()
                for match in INCLUDE.finditer(text):
                    target = match.group(1)
                    if target in rank and rank[target] > rank[layer]:
                        line = text.count("\n", 0, match.start()) + 1
                        problems.append(f"{os.path.relpath(path, root)}:{line}: includes {target}/, "
                                        f"a layer above {layer}/ (order: {' < '.join(layers)})")
    return problems


def self_test():
    """The check must catch an upward include and pass a downward one."""
    with tempfile.TemporaryDirectory() as root:
        with open(os.path.join(root, "CMakeLists.txt"), "w") as f:
            f.write("foreach(layer low high)\n")
        for layer, body in (("low", '#include "high/b.h"\n'), ("high", '#include "low/a.h"\n')):
            os.makedirs(os.path.join(root, "src", layer))
            with open(os.path.join(root, "src", layer, "x.cc"), "w") as f:
                f.write(body)
        with open(os.path.join(root, "src", "low", "x_test.cc"), "w") as f:
            f.write('#include "high/b.h"\n')
        found = violations(root)
        expected = ["src/low/x.cc:1: includes high/, a layer above low/ (order: low < high)"]
        if found != expected:
            sys.exit(f"check-layers self-test: expected {expected}, got {found}")
        os.makedirs(os.path.join(root, "src", "stray"))
        if not any("src/stray/ is not in" in p for p in violations(root)):
            sys.exit("check-layers self-test: a directory outside the layer list was not reported")
    print("check-layers self-test: ok")


def main():
    if sys.argv[1:] == ["--self-test"]:
        self_test()
        return
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    problems = violations(root)
    for problem in problems:
        print(problem)
    if problems:
        sys.exit(f"check-layers: {len(problems)} upward include(s) or unlisted layer(s)")
    print(f"check-layers: ok ({' < '.join(layer_order(root))})")


if __name__ == "__main__":
    main()
