#!/usr/bin/env python3
"""Fails when a source under src/ or a public header includes a higher layer.

The layer order is the one list in the top-level CMakeLists.txt
(`foreach(layer ...)`, bottom-up). A file in src/L/ may include "M/..." only
when M is L or comes before L in that list. A public header
include/unirecord/X.h belongs to the layer PUBLIC_HEADERS names (the one that
implements it): including it counts as including that layer, from src/ and
from the other public headers alike. Every directory under src/ must be in the
list, every public header in PUBLIC_HEADERS. Tests (`*_test.cc`) are exempt:
they may build whole datasets to test a lower layer.

The docs name the layers too, and must agree with CMakeLists.txt: the README's
"`src/` | the library, by layer: ..." row and docs/DEVELOPING.md's "## Layers"
table list them in order; DEVELOPING.md's "## Layout" table has a `src/L/` row
for each, in order. The README's "`include/unirecord/` | ..." row names every
public header, and no other (what is installed is that folder, whole).

On top of the library, python/src/ (the binding) and tools/ (urec) may include
only the public headers (and their own, named without a folder): they ship
against the installed API. Every .h and .cc file under both is read (tests
`*_test.cc` aside). urec also ships what the installed library leaves out
(the PNG and JPEG encoders, the synthetic image folders, a whole-image
resize, its whole-file reads and writes): the internal static library
unirecord_tools_support, built from pieces that live in their layers'
folders and are added with `target_sources(unirecord_tools_support PRIVATE
...)` in src/L/CMakeLists.txt. The headers of those pieces (src/L/x.h for
each x.cc there, each saying so in its first comment) are urec's documented
way in: tools/ may include them, and no other internal header; the check
reads them from the CMake files, so there is no list to keep by hand. The
binding does not link that library and may include none of them. What urec
needed of the library itself and a user of the API may need as well became
public instead (kMaxThreads, in unirecord/threads.h): a support piece is
for what only a tool ships (an encoder, test folders) or a thin door onto
the io layer, not a way around the public headers.

Usage: check-layers.py [ROOT]   (default: the repository holding this script);
check-layers.py --self-test.
"""
import os
import re
import sys
import tempfile

# include/unirecord/X.h -> the layer under src/ that implements it.
PUBLIC_HEADERS = {
    "status.h": "util",
    "threads.h": "util",
    "schema.h": "format",
    "media_value.h": "format",
    "media.h": "media",
    "writer.h": "dataset",
    "staged_write.h": "dataset",
    "dataset.h": "dataset",
    "versions.h": "dataset",
    "fields.h": "dataset",
    "remote.h": "remote",
    "query.h": "query",
    "sampler.h": "sample",
    "coverage.h": "sample",
    "image.h": "image",
    "convert.h": "convert",
    "convert_parts.h": "convert",
    "cuda.h": "gpu",
    "sample_decoder.h": "pipeline",
    "loader.h": "pipeline",
    "packing.h": "pipeline",
    "serve.h": "serve",
}

# Roots above the library that see only include/unirecord/ (plus their own
# headers, included without a folder); tools/ also sees the headers of
# unirecord_tools_support (support_headers).
API_ONLY_ROOTS = ("python/src", "tools")
TOOLS_ROOT = "tools"
SUPPORT_TARGET = "unirecord_tools_support"
SUPPORT_SOURCES = re.compile(r"target_sources\(\s*" + SUPPORT_TARGET + r"\s+PRIVATE\s+([^)]*)\)")

INCLUDE = re.compile(r'^[ \t]*#[ \t]*include\s+"([^"/]+)/([^"]+)"', re.M)
BACKTICKED = re.compile(r"`([a-z_]+)`")


def layer_order(root):
    with open(os.path.join(root, "CMakeLists.txt")) as f:
        match = re.search(r"foreach\(layer\s+([^)]*)\)", f.read())
    if not match:
        sys.exit("check-layers: no foreach(layer ...) list in CMakeLists.txt")
    return match.group(1).split()


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def upward_includes(root, path, layer, rank, public_headers, order):
    """Problems with the includes of `path`, a file of `layer`."""
    text = read(path)
    problems = []
    for match in INCLUDE.finditer(text):
        folder, rest = match.groups()
        if folder == "unirecord":
            target = public_headers.get(rest)
            what = f"unirecord/{rest} (layer {target})"
        else:
            target = folder
            what = f"{target}/"
        if target in rank and rank[target] > rank[layer]:
            line = text.count("\n", 0, match.start()) + 1
            problems.append(f"{os.path.relpath(path, root)}:{line}: includes {what}, "
                            f"a layer above {layer} (order: {order})")
    return problems


def support_headers(root, layers):
    """The headers of unirecord_tools_support's pieces: "L/x.h" for each x.cc that
    src/L/CMakeLists.txt adds to the target, when src/L/x.h exists."""
    headers = set()
    for layer in layers:
        cmake = os.path.join(root, "src", layer, "CMakeLists.txt")
        if not os.path.exists(cmake):
            continue
        for match in SUPPORT_SOURCES.finditer(read(cmake)):
            for source in match.group(1).split():
                stem, ext = os.path.splitext(os.path.basename(source))
                if ext == ".cc" and os.path.exists(os.path.join(root, "src", layer, stem + ".h")):
                    headers.add(f"{layer}/{stem}.h")
    return headers


def api_only_problems(root, support):
    """Includes of internal headers from the API-only roots; tools/ may include the `support` ones."""
    problems = []
    for top in API_ONLY_ROOTS:
        for dirpath, _, files in sorted(os.walk(os.path.join(root, top))):
            for file in sorted(files):
                if not file.endswith((".h", ".cc")) or file.endswith("_test.cc"):
                    continue
                path = os.path.join(dirpath, file)
                text = read(path)
                for match in INCLUDE.finditer(text):
                    folder, rest = match.groups()
                    if folder == "unirecord" or (top == TOOLS_ROOT and f"{folder}/{rest}" in support):
                        continue
                    line = text.count("\n", 0, match.start()) + 1
                    allowed = (f"only unirecord/ headers and those of {SUPPORT_TARGET} above the library"
                               if top == TOOLS_ROOT else "only unirecord/ headers above the library")
                    problems.append(f"{os.path.relpath(path, root)}:{line}: includes {folder}/{rest}, an internal "
                                    f"header ({allowed})")
    return problems


def doc_problems(root, layers):
    """The README and DEVELOPING.md lists of layers against CMakeLists.txt's."""
    problems = []
    checks = []
    readme = os.path.join(root, "README.md")
    if os.path.exists(readme):
        row = re.search(r"^\|\s*`src/`\s*\|[^|\n]*by layer:([^|\n]*)\|", read(readme), re.M)
        checks.append(("README.md's `src/` row", BACKTICKED.findall(row.group(1)) if row else None))
        include_dir = os.path.join(root, "include", "unirecord")
        headers = sorted(h for h in os.listdir(include_dir) if h.endswith(".h")) if os.path.isdir(include_dir) else []
        row = re.search(r"^\|\s*`include/unirecord/`\s*\|([^|\n]*)\|", read(readme), re.M)
        named = sorted(set(re.findall(r"`([a-z_0-9]+\.h)`", row.group(1)))) if row else None
        if named is None:
            problems.append("README.md's `include/unirecord/` row: not found")
        elif named != headers:
            problems.append(f"README.md's `include/unirecord/` row names {', '.join(named)}; "
                            f"include/unirecord/ holds {', '.join(headers)}")
    developing = os.path.join(root, "docs", "DEVELOPING.md")
    if os.path.exists(developing):
        text = read(developing)
        section = re.search(r"^## Layers\n(.*?)(?=^## |\Z)", text, re.M | re.S)
        rows = re.findall(r"^\|([^|\n]*)\|", section.group(1), re.M) if section else []
        checks.append(('docs/DEVELOPING.md "## Layers" table',
                       [name for row in rows for name in BACKTICKED.findall(row)] if section else None))
        section = re.search(r"^## Layout\n(.*?)(?=^## |\Z)", text, re.M | re.S)
        checks.append(('docs/DEVELOPING.md "## Layout" table',
                       re.findall(r"^\|\s*`src/([a-z_]+)/`", section.group(1), re.M) if section else None))
    for where, found in checks:
        if found is None:
            problems.append(f"{where}: not found")
        elif found != layers:
            problems.append(f"{where} lists {' < '.join(found)}, CMakeLists.txt {' < '.join(layers)}")
    return problems


def violations(root, public_headers=PUBLIC_HEADERS):
    layers = layer_order(root)
    rank = {name: i for i, name in enumerate(layers)}
    order = " < ".join(layers)
    src = os.path.join(root, "src")
    problems = []
    for name in sorted(os.listdir(src)):
        if os.path.isdir(os.path.join(src, name)) and name not in rank:
            problems.append(f"src/{name}/ is not in CMakeLists.txt's layer list {layers}")
    for header, layer in sorted(public_headers.items()):
        if layer not in rank:
            problems.append(f"check-layers.py: unirecord/{header} belongs to {layer}, not a layer")
    include_dir = os.path.join(root, "include", "unirecord")
    for header in sorted(os.listdir(include_dir)) if os.path.isdir(include_dir) else []:
        if header not in public_headers:
            problems.append(f"include/unirecord/{header}: no layer owns it (PUBLIC_HEADERS in check-layers.py)")
        elif public_headers[header] in rank:
            problems += upward_includes(root, os.path.join(include_dir, header), public_headers[header], rank,
                                        public_headers, order)
    for layer in layers:
        folder = os.path.join(src, layer)
        if not os.path.isdir(folder):
            continue
        for dirpath, _, files in os.walk(folder):
            for file in sorted(files):
                if not file.endswith((".h", ".cc", ".cu")) or file.endswith("_test.cc"):
                    continue
                problems += upward_includes(root, os.path.join(dirpath, file), layer, rank, public_headers, order)
    return problems + api_only_problems(root, support_headers(root, layers)) + doc_problems(root, layers)


def write(root, path, text):
    path = os.path.join(root, path)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def expect(found, expected, what):
    if found != expected:
        sys.exit(f"check-layers self-test ({what}): expected {expected}, got {found}")


README_LOW_HIGH = ("| `include/unirecord/` | the public API: `low.h`, `high.h` |\n"
                   "| `src/` | the library, by layer: `low`, `high` |\n")


def self_test():
    """Each kind of upward dependency and each doc mismatch is caught; downward ones pass."""
    owners = {"low.h": "low", "high.h": "high"}
    order = "(order: low < high)"
    with tempfile.TemporaryDirectory() as root:
        write(root, "CMakeLists.txt", "foreach(layer low high)\n")
        write(root, "src/low/x.cc", '#include "low/a.h"\n#include "unirecord/low.h"\n')
        write(root, "src/high/x.cc", '#include "low/a.h"\n#include "unirecord/low.h"\n#include "unirecord/high.h"\n')
        write(root, "src/low/x_test.cc", '#include "high/b.h"\n#include "unirecord/high.h"\n')
        write(root, "include/unirecord/low.h", "\n")
        write(root, "include/unirecord/high.h", '#include "unirecord/low.h"\n')
        write(root, "README.md", README_LOW_HIGH)
        write(root, "docs/DEVELOPING.md", "## Layout\n| `src/low/` | a |\n| `src/high/` | b |\n"
                                          "## Layers\n| `low` | — |\n| `high` | `low` |\n")
        expect(violations(root, owners), [], "a clean tree")

        write(root, "src/low/x.cc", '#include "high/b.h"\n')
        expect(violations(root, owners), [f"src/low/x.cc:1: includes high/, a layer above low {order}"],
               "an internal header of a higher layer")
        write(root, "src/low/x.cc", '#include <vector>\n#include "unirecord/high.h"\n')
        expect(violations(root, owners),
               [f"src/low/x.cc:2: includes unirecord/high.h (layer high), a layer above low {order}"],
               "a public header of a higher layer")
        write(root, "src/low/x.cc", "\n")
        write(root, "include/unirecord/low.h", '#include "unirecord/high.h"\n')
        expect(violations(root, owners),
               [f"include/unirecord/low.h:1: includes unirecord/high.h (layer high), a layer above low {order}"],
               "a public header including a higher one")
        write(root, "include/unirecord/low.h", "\n")
        write(root, "include/unirecord/stray.h", "\n")
        expect(violations(root, owners),
               ["include/unirecord/stray.h: no layer owns it (PUBLIC_HEADERS in check-layers.py)",
                "README.md's `include/unirecord/` row names high.h, low.h; include/unirecord/ holds high.h, low.h, "
                "stray.h"],
               "a public header no layer owns, which the README does not name")
        os.remove(os.path.join(root, "include/unirecord/stray.h"))

        write(root, "README.md", README_LOW_HIGH.replace("`low`, `high`", "`high`, `low`"))
        expect(violations(root, owners), ["README.md's `src/` row lists high < low, CMakeLists.txt low < high"],
               "the README's layer list")
        write(root, "README.md", README_LOW_HIGH)
        write(root, "docs/DEVELOPING.md", "## Layout\n| `src/low/` | a |\n"
                                          "## Layers\n| `low` | — |\n| `high` | `low` |\n")
        expect(violations(root, owners),
               ['docs/DEVELOPING.md "## Layout" table lists low, CMakeLists.txt low < high'],
               "DEVELOPING.md's layout table")
        write(root, "docs/DEVELOPING.md", "## Layout\n| `src/low/` | a |\n| `src/high/` | b |\n"
                                          "## Layers\n| `high` | — |\n")
        expect(violations(root, owners),
               ['docs/DEVELOPING.md "## Layers" table lists high, CMakeLists.txt low < high'],
               "DEVELOPING.md's layers table")
        write(root, "docs/DEVELOPING.md", "## Layout\n| `src/low/` | a |\n| `src/high/` | b |\n"
                                          "## Layers\n| `low` | — |\n| `high` | `low` |\n")

        write(root, "python/src/b.cc", '#include "common.h"\n#include "unirecord/high.h"\n')
        write(root, "tools/t/t.cc", '#include "cmd.h"\n#include "unirecord/low.h"\n')
        expect(violations(root, owners), [], "the binding and a tool on the public headers")
        write(root, "python/src/b.cc", '#include "low/a.h"\n#include "common.h"\n')
        binding_problem = ("python/src/b.cc:1: includes low/a.h, an internal header (only unirecord/ headers above "
                           "the library)")
        expect(violations(root, owners), [binding_problem], "the binding including an internal header")
        write(root, "python/src/b.cc", "\n")
        write(root, "tools/t/t.cc", '#include "low/a.h"\n')
        tool_problem = ("tools/t/t.cc:1: includes low/a.h, an internal header (only unirecord/ headers and those of "
                        "unirecord_tools_support above the library)")
        expect(violations(root, owners), [tool_problem], "a tool including an internal header")
        # A piece of unirecord_tools_support: its header is open to tools/, not to the binding.
        write(root, "src/low/a.h", "\n")
        write(root, "src/low/CMakeLists.txt", "target_sources(low PRIVATE b.cc)\n"
                                              "target_sources(unirecord_tools_support PRIVATE\n  ${DIR}/a.cc)\n")
        expect(violations(root, owners), [], "a tool including a header of unirecord_tools_support")
        write(root, "python/src/b.cc", '#include "low/a.h"\n')
        expect(violations(root, owners), [binding_problem], "the binding including a header of unirecord_tools_support")
        write(root, "python/src/b.cc", "\n")
        write(root, "src/low/CMakeLists.txt", "target_sources(unirecord_testing PRIVATE a.cc)\n")
        expect(violations(root, owners), [tool_problem], "a tool including a header of unirecord_testing")
        os.remove(os.path.join(root, "src/low/CMakeLists.txt"))
        write(root, "tools/t/t.cc", "\n")

        os.makedirs(os.path.join(root, "src", "stray"))
        expect(violations(root, owners), [f"src/stray/ is not in CMakeLists.txt's layer list ['low', 'high']"],
               "a directory outside the layer list")
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
        sys.exit(f"check-layers: {len(problems)} upward include(s), unowned header(s), unlisted layer(s) "
                 f"or doc list(s) out of step")
    print(f"check-layers: ok ({' < '.join(layer_order(root))})")


if __name__ == "__main__":
    main()
