#!/usr/bin/env python3
"""Fails when the house rules on size break (docs/DEVELOPING.md, "Conventions").

- No non-test source file over MAX_FILE_LINES lines.
- No function over MAX_FUNCTION_LINES lines, counted from the first line of
  its signature to its closing brace (C++, in-class members and lambdas at
  namespace scope included) or from `def` to its last line (Python, methods
  and nested functions included).

Sources are the .h/.cc/.cu/.c/.py files under SOURCE_DIRS. Tests are not
counted: `*_test.*`, `test_*`, `*_testing.*` (test helpers, see
docs/DEVELOPING.md), conftest.py and anything under a `tests/` folder.

C++ is read without a compiler: comments, string and character literals and
preprocessor lines are blanked first (so a brace in a string or a comment
counts for nothing), then braces are matched. A `{` in namespace or class
scope opens a function body when the text before it since the last `;`, `{`
or `}` holds a parameter list and ends in one (or in a qualifier, a trailing
return type or a constructor's initializer list); brace initializers of
members (`: a_{x}`) and of variables (`kTable = {`) are not bodies.

An exception is allowed only in EXCEPTIONS below, keyed "path" (a file) or
"path:function" (as the report names it), each with a one-line reason; an
exception that no longer matches anything is an error too, so the list
cannot go stale.

Usage: check-house.py [ROOT]   (default: the repository holding this script);
check-house.py --self-test.
"""
import ast
import os
import re
import sys
import tempfile

MAX_FILE_LINES = 600
MAX_FUNCTION_LINES = 120
SOURCE_DIRS = ("src", "include", "tools", "python/src", "python/unirecord", "bench", "fuzz", "examples", "scripts")
EXTENSIONS = (".h", ".cc", ".cu", ".c", ".hpp", ".cuh", ".py")

# "path" or "path:function" -> why it may break the rule. Keep it empty.
EXCEPTIONS = {
    "bench/image_bench.cc": "benchmark, not shipped: its split (set, libjpeg floor, fast settings) is still to do",
}


def is_test(rel_path):
    name = os.path.basename(rel_path)
    stem = name.split(".")[0]
    return (stem.endswith(("_test", "_testing")) or name.startswith("test_") or name == "conftest.py"
            or "tests" in rel_path.split("/")[:-1])


def source_files(root):
    for top in SOURCE_DIRS:
        for dirpath, dirnames, files in os.walk(os.path.join(root, top)):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d != "__pycache__")
            for file in sorted(files):
                rel = os.path.relpath(os.path.join(dirpath, file), root).replace(os.sep, "/")
                if file.endswith(EXTENSIONS) and not is_test(rel):
                    yield rel


RAW_STRING = re.compile(r'R"([^()\\ ]{0,16})\(')


def blank_cpp(text):
    """The text with comments, literals and preprocessor lines turned to spaces (newlines kept)."""
    out = []
    i, n = 0, len(text)
    line_start = True
    while i < n:
        c = text[i]
        if line_start and c == "#":
            # A preprocessor directive, with its continuation lines.
            while i < n and text[i] != "\n":
                if text[i] == "\\" and i + 1 < n and text[i + 1] == "\n":
                    out.append(" \n")
                    i += 2
                    continue
                out.append(" ")
                i += 1
            continue
        if c == "\n":
            line_start = True
            out.append(c)
            i += 1
            continue
        if c in " \t\r":
            out.append(c)
            i += 1
            continue
        line_start = False
        if text.startswith("//", i):
            while i < n and text[i] != "\n":
                out.append(" ")
                i += 1
            continue
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append(re.sub(r"[^\n]", " ", text[i:end]))
            i = end
            continue
        raw = RAW_STRING.match(text, i)
        if raw and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            end = text.find(")" + raw.group(1) + '"', raw.end())
            end = n if end < 0 else end + len(raw.group(1)) + 2
            out.append('"' + re.sub(r"[^\n]", " ", text[i + 1:end - 1]) + '"')
            i = end
            continue
        if c in "\"'":
            # A digit separator (1'000'000) is not a character literal.
            if c == "'" and i > 0 and text[i - 1].isalnum() and i + 1 < n and text[i + 1].isalnum() \
                    and re.match(r"[0-9a-fA-FxXbB.]", text[i - 1]):
                out.append(" ")
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(c + " " * (min(j, n) - i - 1) + (c if j < n else ""))
            i = j + 1
            continue
        out.append(c)
        i += 1
    return "".join(out)


CLASS_HEAD = re.compile(r"^(typedef\s+)?(class|struct|union|enum)\b")
NAMESPACE_HEAD = re.compile(r"^(inline\s+)?namespace\b|^extern\s*\"\s*\"$|^extern$")
ACCESS = re.compile(r"^\s*(public|private|protected)\s*:(?!:)")
# What may follow a parameter list before a body: qualifiers, noexcept(...),
# a trailing return type.
BODY_TAIL = re.compile(r"\)(\s*(const|volatile|noexcept|override|final|mutable|try|&&|&))*"
                       r"(\s*noexcept\s*\([^()]*\))?(\s*->\s*[\w:<>,\s\*&]+)?\s*$")


def strip_template_prefix(head):
    while head.startswith("template"):
        start = head.find("<")
        if start < 0:
            return head
        depth = 0
        for k in range(start, len(head)):
            depth += {"<": 1, ">": -1}.get(head[k], 0)
            if depth == 0:
                head = head[k + 1:].lstrip()
                break
        else:
            return head
    return head


def classify(head):
    """'namespace', 'class', 'function', 'init' (a member's brace initializer) or 'other'."""
    head = ACCESS.sub("", head).strip()
    head = strip_template_prefix(head)
    if NAMESPACE_HEAD.match(head):
        return "namespace"
    if CLASS_HEAD.match(head):
        return "class"
    paren = head.find("(")
    if paren < 0:
        return "other"
    before = head[:paren]
    if "=" in before.replace("operator", "").replace("==", "") and not re.search(r"=\s*\[", head):
        if "operator" not in before:
            return "other"
    if re.search(r"=\s*\[[^\]]*\]\s*(\([^()]*\))?[^=]*$", head):
        return "function"  # a lambda at namespace scope
    if BODY_TAIL.search(head):
        return "function"
    # A constructor's initializer list: `) : a_(x), b_{y} {` (the body) or `: b_` (b_'s braces).
    if re.search(r"\)\s*:[^:]", head):
        return "function" if head.endswith("}") else "init"
    return "other"


def cpp_functions(text):
    """(first line, last line, name) of each function body outside other function bodies."""
    clean = blank_cpp(text)
    found = []
    stack = []  # (kind, head_line, head) per open brace
    boundary = 0  # where the text before the next `{` starts
    line_at, line = [], 1  # the line of each character
    for c in clean:
        line_at.append(line)
        line += c == "\n"
    for k, c in enumerate(clean):
        if c == "{":
            outer = stack[-1][0] if stack else "namespace"
            if outer in ("function", "other", "init_body"):
                stack.append(("other", 0, ""))
                boundary = k + 1
                continue
            raw_head = clean[boundary:k]
            head = " ".join(raw_head.split())
            kind = classify(head)
            if kind == "init":
                stack.append(("init", 0, ""))  # boundary stays: the body's head goes on after it
                continue
            access = ACCESS.match(raw_head)
            offset = boundary + (access.end() if access else 0)
            while offset < k and clean[offset].isspace():
                offset += 1
            stack.append(("function" if kind == "function" else kind, line_at[offset], head))
            boundary = k + 1
        elif c == "}":
            if stack:
                kind, first, head = stack.pop()
                if kind == "function":
                    found.append((first, line_at[k], function_name(head)))
                if kind == "init":
                    continue
            boundary = k + 1
        elif c == ";":
            if not stack or stack[-1][0] != "init":
                boundary = k + 1
    return found


def function_name(head):
    head = strip_template_prefix(ACCESS.sub("", head).strip())
    lambda_ = re.match(r"^(.*?)=\s*\[", head)
    if lambda_:
        return lambda_.group(1).split()[-1] if lambda_.group(1).split() else "lambda"
    name = head[:head.find("(")].split()
    return name[-1].lstrip("*&") if name else head[:40]


def python_functions(text, path):
    try:
        tree = ast.parse(text, filename=path)
    except SyntaxError as e:
        return [(e.lineno or 1, e.lineno or 1, f"<syntax error: {e.msg}>")]
    return [(node.lineno, node.end_lineno, node.name) for node in ast.walk(tree)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]


def violations(root, exceptions=EXCEPTIONS):
    problems, used = [], set()
    for rel in source_files(root):
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
            text = f.read()
        lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
        if lines > MAX_FILE_LINES:
            if rel in exceptions:
                used.add(rel)
            else:
                problems.append(f"{rel}: {lines} lines (at most {MAX_FILE_LINES}; split it by concept)")
        functions = python_functions(text, rel) if rel.endswith(".py") else cpp_functions(text)
        for first, last, name in functions:
            length = last - first + 1
            if length <= MAX_FUNCTION_LINES:
                continue
            key = f"{rel}:{name}"
            if key in exceptions:
                used.add(key)
            else:
                problems.append(f"{rel}:{first}: {name} is {length} lines "
                                f"(at most {MAX_FUNCTION_LINES}; split it into named steps)")
    for key in sorted(set(exceptions) - used):
        problems.append(f"check-house.py: the exception {key!r} matches nothing over the limit; remove it")
    return problems


def write(root, path, text):
    path = os.path.join(root, path)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def expect(found, expected, what):
    if found != expected:
        sys.exit(f"check-house self-test ({what}): expected {expected}, got {found}")


def body(lines):
    return "".join(f"  x += {i};\n" for i in range(lines))


def self_test():
    """Each way a function is written is measured right; literals and initializers do not fool it."""
    tricky = ('namespace a {\nnamespace {\nstruct S {\n  S(int v) : v_{v}, w_(v) {\n    f("{");\n  }\n'
              "  int f(const char*) const { return '{'; }\n  int v_{0}, w_;\n};\n}  // namespace\n"
              "const int kT[] = {1, 2};\n"
              "template <class T, class = void>\nResult<T>\nA::B<T>::Get(int x,\n    int y) const noexcept {\n"
              "  if (x) { /* } */ }\n  auto l = [&] { return R\"({)\"; };\n  // }\n}\n"
              "auto kL = [](int x) -> int {\n  return x;\n};\n"
              "class C {\n public:\n  void M() override {\n  }\n};\n#define X {\n}\n")
    expect(cpp_functions(tricky),
           [(4, 6, "S"), (7, 7, "f"), (12, 19, "A::B<T>::Get"), (20, 22, "kL"), (25, 26, "M")],
           "functions among literals, initializers and classes")
    with tempfile.TemporaryDirectory() as root:
        write(root, "src/a/ok.cc", "int F() {\n" + body(118) + "}\n")
        write(root, "src/a/long_test.cc", "x\n" * 700 + "int F() {\n" + body(200) + "}\n")
        write(root, "src/a/a_testing.h", "x\n" * 700)
        write(root, "python/unirecord/ok.py", "def f():\n" + "    x = 1\n" * 119)
        expect(violations(root, {}), [], "a clean tree (tests and test helpers not counted)")

        write(root, "src/a/long.cc", "x\n" * 601)
        write(root, "src/a/f.cc", "struct S {\n  Status Run(int a,\n             int b) {\n" + body(118) + "  }\n};\n")
        write(root, "python/unirecord/long.py", "class C:\n    def g(self):\n" + "        x = 1\n" * 120)
        expect(sorted(violations(root, {})),
               ["python/unirecord/long.py:2: g is 121 lines (at most 120; split it into named steps)",
                "src/a/f.cc:2: Run is 121 lines (at most 120; split it into named steps)",
                "src/a/long.cc: 601 lines (at most 600; split it by concept)"],
               "a long file, a long member function, a long Python method")
        expect(violations(root, {"src/a/long.cc": "why", "src/a/f.cc:Run": "why",
                                 "python/unirecord/long.py:g": "why", "src/a/ok.cc:F": "why"}),
               ["check-house.py: the exception 'src/a/ok.cc:F' matches nothing over the limit; remove it"],
               "exceptions, and one gone stale")
    print("check-house self-test: ok")


def main():
    if sys.argv[1:] == ["--self-test"]:
        self_test()
        return
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    problems = violations(root)
    for problem in problems:
        print(problem)
    if problems:
        sys.exit(f"check-house: {len(problems)} file(s) or function(s) over the house limits")
    print(f"check-house: ok (files <= {MAX_FILE_LINES} lines, functions <= {MAX_FUNCTION_LINES} lines, "
          f"{len(EXCEPTIONS)} exception(s))")


if __name__ == "__main__":
    main()
