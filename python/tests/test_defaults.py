"""Python's defaults are C++'s: the same records written with default options
give byte-identical files from `urec` (C++) and from the Python Writer, and
the Python signatures take their defaults from the C++ options structs."""
import ast
import dataclasses
import inspect
import math
import re
import subprocess
from pathlib import Path

import unirecord
from unirecord import _core
import pytest

from urec_fixtures import image_folder, loader_records, urec_binary  # noqa: F401 (pytest fixtures)

ROOT = Path(__file__).resolve().parents[2]


def dataset_files(folder):
    """{file name: bytes} of a dataset's shards and indexes."""
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.suffix in (".urec", ".uidx")}


def rewrite(source, out, **options):
    """Every record of `source` written again by a Python Writer with default options."""
    with unirecord.Writer(out, source.schema, "d", classes=source.classes, sync=False, **options) as w:
        for i in range(len(source)):
            w.write(source[i])


def test_python_writer_defaults_write_the_bytes_cpp_writes(image_folder, tmp_path):
    # urec convert writes through C++'s Writer with a default WriterOptions
    # (only the shard split and sync set: here contiguous, 2 shards).
    urec = urec_binary()
    subprocess.run([urec, "convert", "imagefolder", image_folder, tmp_path / "cpp", "--name", "d", "--shards", "2"],
                   check=True, capture_output=True)
    source = unirecord.Dataset(tmp_path / "cpp")
    rewrite(source, tmp_path / "py", num_shards=2, expected_records=len(source))
    cpp, py = dataset_files(tmp_path / "cpp"), dataset_files(tmp_path / "py")
    assert len(cpp) == 4 and sorted(cpp) == sorted(py)
    for name in cpp:
        assert cpp[name] == py[name], name
    # The comparison sees page sizes: the old Python default (64 KiB scalar pages) differs.
    rewrite(source, tmp_path / "py64", num_shards=2, expected_records=len(source), scalar_page_bytes=64 << 10)
    assert dataset_files(tmp_path / "py64") != cpp


def test_convert_imagefolder_defaults_are_urecs(image_folder, tmp_path):
    urec = urec_binary()
    subprocess.run([urec, "convert", "imagefolder", image_folder, tmp_path / "cpp", "--name", "d"],
                   check=True, capture_output=True)
    unirecord.convert_imagefolder(image_folder, tmp_path / "py", name="d")
    cpp = sorted(p.name for p in (tmp_path / "cpp").iterdir())
    assert cpp == sorted(p.name for p in (tmp_path / "py").iterdir())
    for name in cpp:
        if not name.startswith("."):  # the lock file
            assert (tmp_path / "cpp" / name).read_bytes() == (tmp_path / "py" / name).read_bytes(), name


# --- The C++ defaults, read from the public headers --------------------------
# unirecord.Loader's signature takes its defaults from _core._loader_defaults
# (DEFAULTS[...]), so comparing the two proves nothing about C++. These read
# the default member initializers of LoaderOptions and the option structs it
# holds straight from include/unirecord/*.h, and the option -> member map from
# the binding's UREC_LOADER_OPTION table, so that a wrong value anywhere on the
# way (a header, the table, its conversion to Python, a Python signature) fails.

class CppEnum:
    """An enumerator, e.g. ImageLayout::kNHWC: equal to the Python name that
    spells it ("NHWC", "random_resized_crop" for kRandomResizedCrop)."""

    def __init__(self, text):
        self.text = text

    def __eq__(self, other):
        norm = self.text.rsplit("::", 1)[-1][1:].lower()
        return isinstance(other, str) and other.replace("_", "").lower() == norm

    def __repr__(self):
        return self.text


def _strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def _member_statements(body):
    """The statements at the top level of a struct body; function bodies dropped."""
    statements, depth, current = [], 0, ""
    for ch in body:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0 and "(" in current and "=" not in current.split("(")[0]:
                current = ""  # an inline function: `T f() const { ... }`
                continue
        if ch == ";" and depth == 0:
            statements.append(" ".join(current.split()))
            current = ""
        else:
            current += ch
    return statements


def header_structs():
    """{struct: {member: (type, initializer or None)}} of include/unirecord/*.h."""
    structs = {}
    for header in sorted((ROOT / "include" / "unirecord").glob("*.h")):
        text = _strip_comments(header.read_text())
        for m in re.finditer(r"\bstruct (\w+) \{", text):
            depth, i = 1, m.end()
            while depth:
                depth += {"{": 1, "}": -1}.get(text[i], 0)
                i += 1
            members = {}
            for statement in _member_statements(text[m.end():i - 1]):
                if not statement or statement.startswith(("static", "friend", "using")):
                    continue
                declaration, _, initializer = statement.partition("=")
                if "(" in declaration:
                    continue  # a function
                declaration = declaration.strip()
                mm = re.match(r"(.*\S)\s+(\w+)$", declaration)
                if mm:
                    members[mm.group(2)] = (mm.group(1), initializer.strip() or None)
            structs[m.group(1)] = members
    return structs


def _evaluate(member_type, initializer):
    """A default member initializer as the Python value the binding would give."""
    if initializer is None:  # value-initialized
        if "optional" in member_type or member_type.endswith("*"):
            return None
        if "vector" in member_type:
            return []
        if member_type == "std::string":
            return ""
        raise AssertionError(f"no initializer for a {member_type}")
    if re.fullmatch(r"\w+::\w+", initializer):
        return CppEnum(initializer)
    if initializer == "nullptr":
        return 0  # a pointer, as an int
    python = re.sub(r"(\d)[fF]\b", r"\1", initializer)          # 0.5f -> 0.5
    python = re.sub(r"\b\w+_t\{([^}]*)\}", r"(\1)", python)      # int64_t{1} -> (1)
    python = python.replace("{", "[").replace("}", "]").replace("true", "True").replace("false", "False")
    tree = ast.parse(python, mode="eval")
    allowed = (ast.Expression, ast.Constant, ast.List, ast.BinOp, ast.UnaryOp, ast.Load, ast.Div, ast.Mult,
               ast.Add, ast.Sub, ast.LShift, ast.USub)
    assert all(isinstance(node, allowed) for node in ast.walk(tree)), initializer
    return eval(compile(tree, "<header>", "eval"))


def binding_members():
    """{option name: member path in LoaderOptions} from the UREC_LOADER_OPTION table."""
    table = {}
    for source in (ROOT / "python" / "src").glob("*.cc"):
        for name, member in re.findall(r'UREC_LOADER_OPTION\("(\w+)",\s*([\w.]+)\s*,', source.read_text()):
            table[name] = member
    return table


def cpp_loader_defaults():
    """{option name: default} read from the headers, as LoaderOptions{} holds them."""
    structs = header_structs()
    out = {}
    for name, path in binding_members().items():
        struct = "LoaderOptions"
        *outer, last = path.split(".")
        for member in outer:
            struct = structs[struct][member][0].split("::")[-1]
        member_type, initializer = structs[struct][last]
        out[name] = _evaluate(member_type, initializer)
    return out


def differences(python, cpp):
    """The names whose Python value is not the C++ default (floats to float32's precision)."""
    def same(a, b):
        if isinstance(b, CppEnum):
            return b == a
        if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
            return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
        if isinstance(a, float) or isinstance(b, float):
            return isinstance(a, (int, float)) and isinstance(b, (int, float)) and math.isclose(a, b, rel_tol=1e-6)
        return type(a) == type(b) and a == b
    return sorted(name for name in python if not same(python[name], cpp[name]))


def test_the_header_reader_reads_every_option_and_can_tell_a_difference():
    cpp = cpp_loader_defaults()
    assert set(cpp) == set(_core._loader_defaults)  # every option found in a header
    assert cpp["batch_size"] == 256 and cpp["max_pixels"] == 1 << 27 and cpp["ratio_min"] == 0.75
    assert cpp["transform"] == "random_resized_crop" and cpp["layout"] == "NHWC" and cpp["on_bad_record"] == "raise"
    assert cpp["cuda_mean"] == [123.675, 116.28, 103.53] and cpp["subset"] is None and cpp["boxes"] == ""
    assert differences({"seed": 1, "layout": "NCHW", "ratio_min": 0.7501, "drop_last": 0},
                       cpp) == ["drop_last", "layout", "ratio_min", "seed"]
    assert differences({"seed": 0, "layout": "NHWC", "ratio_min": 3 / 4, "drop_last": False}, cpp) == []


def test_the_bindings_table_is_the_headers_defaults():
    assert differences(dict(_core._loader_defaults), cpp_loader_defaults()) == []


def python_defaults(function):
    return {name: p.default for name, p in inspect.signature(function).parameters.items()
            if p.default is not inspect.Parameter.empty}


# The Loader's option groups whose attributes are native loader options
# (attribute -> option in _NATIVE); Remote's are Dataset's.
LOADER_GROUPS = (unirecord.Sampler, unirecord.Fields, unirecord.Decode, unirecord.Pack)


def loader_defaults():
    """{native option: default} of unirecord.Loader's keywords and of its groups' attributes."""
    out = python_defaults(unirecord.Loader)
    for group in LOADER_GROUPS:
        for f in dataclasses.fields(group):
            if f.name in group._NATIVE and f.default is not dataclasses.MISSING:
                out[group._NATIVE[f.name]] = f.default
    return out


def test_one_table_of_loader_options_is_what_python_passes():
    """Every option of the native table (_core._loader_defaults) is a keyword of
    unirecord.Loader, an attribute of one of its option groups or derived from
    its transform or device; ImageDataset's keywords among them reach the
    native reader too."""
    cpp = set(_core._loader_defaults)
    loader = set(inspect.signature(unirecord.Loader).parameters)
    from_groups = {key for group in LOADER_GROUPS for key in group._NATIVE.values()}
    from_transform = set(unirecord.RandomResizedCrop(8)._options()) | set(unirecord.CenterCrop(8, resize=9)._options())
    from_device = {name for name in cpp if name.startswith("cuda_")}
    assert from_groups <= cpp
    assert cpp == (cpp & loader) | from_groups | from_transform | from_device
    assert (cpp & loader) & (from_transform | from_device) == {"transform"}  # the keyword the crop comes from
    images = set(inspect.signature(unirecord.ImageDataset).parameters) & cpp
    assert images == {"transform", "seed", "image_field", "label_field", "path_field", "strict", "apply_exif",
                      "dct_scaling", "max_pixels", "subset"}
    # The library's enum names, as LoaderOptions' defaults show them.
    assert (_core._loader_defaults["layout"], _core._loader_defaults["on_bad_record"]) == ("NHWC", "raise")
    assert (_core._loader_defaults["transform"], _core._loader_defaults["cuda_dtype"]) == ("random_resized_crop", "float32")


def test_loader_and_image_dataset_defaults_are_loader_options():
    cpp = cpp_loader_defaults()  # not _core._loader_defaults, where DEFAULTS[...] comes from
    loader = loader_defaults()
    # transform: a crop object on the Python side, a name in the table; subset: None (all records) in both;
    # weights: None in Python, [] in C++ (both: proportional to the sizes).
    shared = set(loader) & set(cpp) - {"transform", "subset", "weights"}
    assert loader["weights"] is None and cpp["weights"] == []
    # None: resolved when the loader is made (LoaderOptions' threads and
    # prefetch unless num_workers/prefetch_factor say otherwise; the ranks from
    # torch.distributed; the order from the required shuffle).
    resolved = {"threads", "prefetch", "num_shards", "shard_id", "order"}
    assert shared == resolved | {"seed", "drop_last", "on_bad_record", "block_size", "window", "sampler_drop_last",
                                 "max_consecutive_bad", "image_field", "label_field", "path_field", "strict", "epoch_size",
                                 "apply_exif", "dct_scaling", "max_pixels", "layout", "fields", "ragged",
                                 "pad_value", "boxes", "box_format", "box_aligned", "masks", "pack", "coverage",
                                 "clip", "audio"}
    assert all(loader[name] is None for name in resolved)
    # None for "none of them": LoaderOptions' empty list / empty name.
    none_is_empty = {"fields", "boxes", "box_aligned", "masks", "pack", "clip", "audio"}
    assert all(loader[name] is None and not cpp[name] for name in none_is_empty)
    assert differences({name: loader[name] for name in shared - resolved - none_is_empty - {"layout"}}, cpp) == []
    # The one deliberate difference: torch's NCHW (C++'s default is NHWC, urec bench's NCHW).
    assert (loader["layout"], cpp["layout"]) == ("NCHW", "NHWC")
    images = python_defaults(unirecord.ImageDataset)
    assert differences({name: images[name] for name in set(images) & set(cpp) - {"transform", "subset"}}, cpp) == []
    crop = python_defaults(unirecord.RandomResizedCrop)
    assert crop["scale"] == (cpp["scale_min"], cpp["scale_max"])
    assert crop["ratio"] == (cpp["ratio_min"], cpp["ratio_max"])
    default = unirecord.transforms.default_crop()
    assert (default.size, default.flip_probability) == (cpp["size"], cpp["flip_probability"])


def test_the_literal_types_are_the_names_the_loader_parses(loader_records):
    """Each Literal of loader.py's signature is exactly the set of names the
    native parser accepts: every value makes a loader, a value outside is refused."""
    import typing

    from unirecord import options as groups

    options = dict(on_bad_record=("decode", groups.OnBadRecord), order=("sampler", groups.SampleOrder),
                   layout=("fields", groups.Layout), ragged=("fields", groups.Ragged),
                   box_format=("fields", groups.BoxFormat), coverage=("sampler", groups.CoverageDetail))
    for option, (group, literal) in options.items():
        values = typing.get_args(literal)
        cls = groups.GROUPS[group]
        default = {f.name: f.default for f in dataclasses.fields(cls)}[option]
        assert values and (default is None or default in values), option
        for value in values:
            unirecord.Loader(loader_records, 4, value != "sequential", threads=1, **{group: cls(**{option: value})})
        with pytest.raises(ValueError):
            cls(**{option: values[-1] + "x"})
