#!/usr/bin/env python3
"""Fails when a source names a section of format/SPEC.md that does not exist.

A reference is `SPEC` or `SPEC.md` followed by section numbers
(`SPEC.md section 8.2`, `SPEC.md sections 3 and 4`, `SPEC 2-8`, `SPEC.md §11`)
and/or quoted heading titles (`SPEC.md "Record table"`, `SPEC.md section 7,
"Shard footer and page directory"`). Every number must be a numbered heading
of format/SPEC.md and every quoted title a heading's exact title (with its
number, that heading's title). `SPEC.md` alone, a link to the file, is not a
section reference. Usage: check-spec-refs.py [ROOT]; check-spec-refs.py --self-test.
"""
import os
import re
import sys
import tempfile

SKIP_DIRS = {".git", ".venv", "__pycache__", "node_modules"}
SKIP_PATHS = {os.path.join("tests", "data")}
# The spec itself, and this script, whose examples name sections on purpose.
SELF = {os.path.join("format", "SPEC.md"), os.path.join("scripts", "check-spec-refs.py")}
EXTENSIONS = (".h", ".cc", ".cu", ".py", ".pyi", ".fbs", ".md", ".txt", ".sh", ".cmake", ".in", ".toml", ".cfg")

NUMBER = r"\d+(?:\.\d+)*"
NUMBERS = rf"{NUMBER}(?:\s*(?:,|and|or|to|-|–)\s*{NUMBER})*"
TITLE = r'"[\w ,.\'/-]{1,80}"'
TITLES = rf"{TITLE}(?:\s*(?:/|,|and|or)\s*{TITLE})*"
REFERENCE = re.compile(
    rf"\bSPEC(?:\.md)?[`)\]]*"
    rf"(?:[,:]?\s*(?:(?:sections?|§§?)\s*)?(?P<numbers>{NUMBERS})(?![\w.]*\d)"
    rf"(?:[,:]?\s*(?P<numbered_titles>{TITLES}))?"
    rf"|[,:]?\s*(?P<titles>{TITLES}))?")
# A comment or docstring continues a sentence on the next line.
LINE_BREAK = re.compile(r"[ \t]*\n[ \t]*(?://+|#+|\*|--)?[ \t]*")


def spec_headings(spec_path):
    """{number: title} of the numbered headings, e.g. {"8.2": "Record table"}."""
    headings = {}
    with open(spec_path, encoding="utf-8") as f:
        for line in f:
            match = re.match(r"#{2,}\s+(\d+(?:\.\d+)*)\.?\s+(.+?)\s*$", line)
            if match:
                headings[match.group(1)] = match.group(2)
    return headings


def source_files(root):
    for dirpath, dirnames, files in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        dirnames[:] = sorted(d for d in dirnames
                             if d not in SKIP_DIRS and not d.startswith("build")
                             and os.path.normpath(os.path.join(rel, d)) not in SKIP_PATHS)
        for file in sorted(files):
            if file.endswith(EXTENSIONS) or file == "CMakeLists.txt":
                path = os.path.join(dirpath, file)
                if os.path.relpath(path, root) not in SELF:
                    yield path


def check_text(text, headings):
    """Problems with the SPEC references in `text` (comment line breaks joined)."""
    problems = []
    titles = set(headings.values())
    joined = LINE_BREAK.sub(" ", text)
    for match in REFERENCE.finditer(joined):
        where = joined[match.start():match.end()]
        numbers = re.findall(NUMBER, match.group("numbers") or "")
        for number in numbers:
            if number not in headings:
                problems.append(f"{where!r}: format/SPEC.md has no section {number}")
        for title in re.findall(r'"([^"\n]+)"', match.group("numbered_titles") or match.group("titles") or ""):
            if title not in titles:
                problems.append(f"{where!r}: format/SPEC.md has no heading \"{title}\"")
            elif match.group("numbered_titles") and not any(headings.get(n) == title for n in numbers):
                problems.append(f"{where!r}: \"{title}\" is not the title of section(s) {', '.join(numbers)}")
    return problems


def self_test():
    headings = {"1": "Names", "1.1": "Generations", "8": "Index layout", "8.2": "Record table"}
    good = ('// SPEC.md section 8.2 / SPEC 1.1\'s / SPEC.md sections 1 and 8 / SPEC 1-8 / SPEC.md §8.2\n'
            '// format/SPEC.md, "Record table" / SPEC.md "Names" / "Generations" / [SPEC.md](SPEC.md) / SPEC.md.\n'
            '// SPEC.md section 8.2, "Record table" / (format/SPEC.md\n// section 1.1)')
    if check_text(good, headings):
        sys.exit(f"check-spec-refs self-test: good references reported: {check_text(good, headings)}")
    bad = {'// SPEC.md section 9': "no section 9", '// SPEC 8.3 orders': "no section 8.3",
           '// SPEC.md, "Field types"': 'no heading "Field types"', '// SPEC.md sections 1 and 2': "no section 2",
           '// format/SPEC.md\n// section 12': "no section 12",
           '// SPEC.md section 8, "Record table"': "is not the title"}
    for text, expected in bad.items():
        found = check_text(text, headings)
        if len(found) != 1 or expected not in found[0]:
            sys.exit(f"check-spec-refs self-test: {text!r} gave {found}, expected one '{expected}'")
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "format"))
        os.makedirs(os.path.join(root, "build", "x"))
        with open(os.path.join(root, "format", "SPEC.md"), "w") as f:
            f.write("# Title\n## 1. Names\n### 1.1 Generations\n")
        with open(os.path.join(root, "build", "x", "a.h"), "w") as f:
            f.write("// SPEC.md section 7 (a build directory: not a source)\n")
        with open(os.path.join(root, "a.cc"), "w") as f:
            f.write("// SPEC.md section 1.1\n// SPEC.md section 2\n")
        found = check_root(root)
        if len(found) != 1 or not found[0].startswith("a.cc: ") or "no section 2" not in found[0]:
            sys.exit(f"check-spec-refs self-test: tree check gave {found}")
    print("check-spec-refs self-test: ok")


def check_root(root):
    headings = spec_headings(os.path.join(root, "format", "SPEC.md"))
    problems = []
    for path in source_files(root):
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        problems += [f"{os.path.relpath(path, root)}: {p}" for p in check_text(text, headings)]
    return problems


def main():
    if sys.argv[1:] == ["--self-test"]:
        self_test()
        return
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    problems = check_root(root)
    for problem in problems:
        print(problem)
    if problems:
        sys.exit(f"check-spec-refs: {len(problems)} reference(s) to sections format/SPEC.md does not have")
    print("check-spec-refs: ok")


if __name__ == "__main__":
    main()
