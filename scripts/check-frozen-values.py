#!/usr/bin/env python3
"""Fails when a value frozen in the file format is spelled outside
src/format/format_constants.h, the one header that declares them.

Looks in the library's sources (src/, tests `*_test.cc` exempt: they may
spell expected bytes on purpose) for the literals of the format's file
extensions, the manifest's first line and the shard-count and generation
limits. A line whose comment says "not a format value" is skipped (the same
digits meaning something else). Usage: check-frozen-values.py [ROOT]; check-frozen-values.py --self-test.
"""
import os
import re
import sys
import tempfile

HOME = os.path.join("src", "format", "format_constants.h")
FROZEN = re.compile(r'"\.?(urec|uidx|uset|tsv|partial)"|"unirecord-manifest|\b99999\b|\b999999999999999999')


def violations(root):
    problems = []
    for dirpath, _, files in os.walk(os.path.join(root, "src")):
        for file in sorted(files):
            path = os.path.join(dirpath, file)
            rel = os.path.relpath(path, root)
            if not file.endswith((".h", ".cc", ".cu")) or file.endswith("_test.cc") or rel == HOME:
                continue
            with open(path, encoding="utf-8") as f:
                for number, line in enumerate(f, 1):
                    code, _, comment = line.partition("//")
                    if "not a format value" in comment:
                        continue
                    match = FROZEN.search(code)
                    if match:
                        problems.append(f"{rel}:{number}: spells {match.group(0)}; use the constant in {HOME}")
    return problems


def self_test():
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "src", "format"))
        os.makedirs(os.path.join(root, "src", "dataset"))
        with open(os.path.join(root, HOME), "w") as f:
            f.write('inline constexpr const char* kManifestExtension = ".uset";\n')
        with open(os.path.join(root, "src", "dataset", "x_test.cc"), "w") as f:
            f.write('auto name = "train.uset"; auto ext = ".uset";\n')
        with open(os.path.join(root, "src", "dataset", "x.cc"), "w") as f:
            f.write('// ".uset" in a comment is fine\nint shards = 99999;\nauto ext = ".uset";\n'
                    'int images = 99999;  // not a format value: file numbers\n')
        found = violations(root)
        expected = [f"src/dataset/x.cc:2: spells 99999; use the constant in {HOME}",
                    f"src/dataset/x.cc:3: spells \".uset\"; use the constant in {HOME}"]
        if found != expected:
            sys.exit(f"check-frozen-values self-test: expected {expected}, got {found}")
    print("check-frozen-values self-test: ok")


def main():
    if sys.argv[1:] == ["--self-test"]:
        self_test()
        return
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    problems = violations(root)
    for problem in problems:
        print(problem)
    if problems:
        sys.exit(f"check-frozen-values: {len(problems)} frozen value(s) spelled outside {HOME}")
    print("check-frozen-values: ok")


if __name__ == "__main__":
    main()
