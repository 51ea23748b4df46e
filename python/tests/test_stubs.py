"""The type information matches the code: _core.pyi (the native module's stub)
names every attribute of unirecord._core and nothing else, with each
function's parameters (names, order, keyword-only) as pybind11 reports them,
and properties as properties; the pure-Python package carries its types
inline (no stub to drift), annotated throughout."""
import ast
import inspect
import pathlib
import typing

import pytest

import unirecord
from unirecord import _core

STUB = pathlib.Path(__file__).resolve().parents[1] / "unirecord" / "_core.pyi"
# Attributes every extension module or pybind11 class has, which no stub lists.
MODULE_IMPLICIT = {"__doc__", "__file__", "__loader__", "__name__", "__package__", "__spec__"}
CLASS_IMPLICIT = {"__doc__", "__module__", "__dict__", "__weakref__", "__repr__", "__str__", "__getstate__",
                  "__setstate__", "__buffer__", "__release_buffer__"}


def split_top_level(text):
    """`a: int, b: List[int] = [1, 2], c: str = 'x, y'` -> the three parameters."""
    parts, depth, quote, start = [], 0, None, 0
    for i, ch in enumerate(text):
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    if text[start:].strip():
        parts.append(text[start:].strip())
    return parts


def native_parameters(function, name):
    """(parameter names in order, keyword-only names) from pybind11's signature line."""
    line = (function.__doc__ or "").lstrip().splitlines()[0]
    assert line.startswith(name + "("), f"{name}: no pybind11 signature in {line!r}"
    inner = line[len(name) + 1:line.rindex(") ->")]
    names, keyword_only, after_star = [], set(), False
    for part in split_top_level(inner):
        if part == "*":
            after_star = True
            continue
        param = part.split(":")[0].split("=")[0].strip()
        names.append(param)
        if after_star:
            keyword_only.add(param)
    return names, keyword_only


def stub_parameters(node):
    args = node.args
    names = [a.arg for a in args.posonlyargs + args.args]
    if args.vararg:
        names.append("*" + args.vararg.arg)
    names += [a.arg for a in args.kwonlyargs]
    if args.kwarg:
        names.append("**" + args.kwarg.arg)
    return names, {a.arg for a in args.kwonlyargs}


def is_property(node):
    return any(isinstance(d, ast.Name) and d.id == "property" for d in node.decorator_list)


def stub_tree():
    tree = ast.parse(STUB.read_text())
    functions, classes, attributes = {}, {}, set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            functions[node.name] = node
        elif isinstance(node, ast.ClassDef):
            classes[node.name] = node
        elif isinstance(node, ast.AnnAssign):
            attributes.add(node.target.id)
    return functions, classes, attributes


def test_the_stub_names_every_attribute_of_the_module_and_no_other():
    functions, classes, attributes = stub_tree()
    module = set(vars(_core)) - MODULE_IMPLICIT
    assert module == set(functions) | set(classes) | attributes
    for name in functions:
        assert callable(getattr(_core, name)), name
    for name in classes:
        assert isinstance(getattr(_core, name), type), name


@pytest.mark.parametrize("name", sorted(stub_tree()[0]))
def test_module_functions_have_the_stubs_parameters(name):
    node = stub_tree()[0][name]
    assert native_parameters(getattr(_core, name), name) == stub_parameters(node)


def class_members():
    for class_name, node in sorted(stub_tree()[1].items()):
        cls = getattr(_core, class_name)
        if issubclass(cls, BaseException):
            continue  # plain Python exception types: nothing native to compare
        yield class_name, cls, node


@pytest.mark.parametrize("class_name, cls, node", list(class_members()), ids=lambda v: v if isinstance(v, str) else "")
def test_classes_have_the_stubs_members_and_parameters(class_name, cls, node):
    stubbed = {m.name: m for m in node.body if isinstance(m, ast.FunctionDef)}
    # __hash__ is None beside __eq__; pybind11's __init__ of a class without a
    # constructor (it raises TypeError) has no signature.
    native = {k: v for k, v in vars(cls).items() if k not in CLASS_IMPLICIT and v is not None
              and not (k == "__init__" and not (v.__doc__ or "").startswith("__init__("))}
    assert set(native) == set(stubbed), class_name
    for name, member in stubbed.items():
        value = native[name]
        if is_property(member):
            assert isinstance(value, property), f"{class_name}.{name} is not a property"
            continue
        assert not isinstance(value, property), f"{class_name}.{name} is a property"
        assert native_parameters(value, name) == stub_parameters(member), f"{class_name}.{name}"


def test_stub_defaults_are_the_modules():
    """Where the stub writes a default, it is the one pybind11 reports."""
    functions, classes, _ = stub_tree()
    checked, written = 0, 0
    for owner, node in [(_core, f) for f in functions.values()] + [
            (getattr(_core, c.name), m) for c in classes.values() for m in c.body if isinstance(m, ast.FunctionDef)]:
        written += len(node.args.defaults) + sum(d is not None for d in node.args.kw_defaults)
        target = getattr(owner, node.name)
        if not callable(target) or isinstance(target, type) or not (target.__doc__ or "").startswith(node.name + "("):
            continue
        line = target.__doc__.splitlines()[0]
        native = {}
        for part in split_top_level(line[len(node.name) + 1:line.rindex(") ->")]):
            if "=" in part:
                native[part.split(":")[0].strip()] = part.split("=", 1)[1].strip()
        args = node.args
        positional = args.posonlyargs + args.args
        pairs = list(zip(positional[len(positional) - len(args.defaults):], args.defaults))
        pairs += [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None]
        for arg, default in pairs:
            value = ast.literal_eval(default)
            if value is None:
                assert native[arg.arg] == "None", (node.name, arg.arg)
            else:
                assert native[arg.arg] == repr(value), (node.name, arg.arg, native[arg.arg])
            checked += 1
    assert checked == written  # every default the stub writes out was compared


def test_the_converters_stubs_are_the_table_of_their_keywords():
    """python/src/convert_py.cc has one table of the keywords every converter
    takes (_core._convert_keywords): each converter's stub lists them all, one
    after another in the table's order, with the table's defaults."""
    functions = stub_tree()[0]
    table = dict(_core._convert_keywords)
    assert list(table)[:3] == ["name", "num_shards", "target_shard_bytes"] and len(table) >= 12
    for name in ("convert_imagefolder", "convert_jsonl", "convert_csv", "convert_coco", "convert_videofolder",
                 "convert_audiofolder"):
        args = functions[name].args
        keywords = [a.arg for a in args.kwonlyargs]
        first = keywords.index("name")
        assert keywords[first:first + len(table)] == list(table), name
        defaults = {a.arg: ast.literal_eval(d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None}
        assert {k: defaults[k] for k in table} == table, name


def public_callables():
    for name in unirecord.__all__:
        obj = getattr(unirecord, name)
        if not getattr(obj, "__module__", "").startswith("unirecord.") or obj.__module__ == "unirecord._core":
            continue  # from _core: the stub test above
        if inspect.isclass(obj):
            for member_name, member in vars(obj).items():
                if member_name.startswith("_") and member_name not in ("__init__", "__getitem__", "__getitems__", "__len__", "__iter__"):
                    continue
                if isinstance(member, property):
                    yield f"{name}.{member_name}", member.fget
                elif inspect.isfunction(member):
                    yield f"{name}.{member_name}", member
        else:
            yield name, obj


@pytest.mark.parametrize("name, function", list(public_callables()), ids=lambda v: v if isinstance(v, str) else "")
def test_the_python_api_is_annotated_inline(name, function):
    import torch  # the annotations name torch types (imported only for type checkers)

    hints = typing.get_type_hints(function, localns={"torch": torch})
    for param in list(inspect.signature(function).parameters)[1 if "." in name else 0:]:
        assert param in hints, f"{name}: parameter {param} has no annotation"
    assert "return" in hints, f"{name}: no return annotation"


def test_all_is_what_the_package_exports():
    exported = {n for n, v in vars(unirecord).items() if not n.startswith("_") and not inspect.ismodule(v)}
    assert set(unirecord.__all__) == exported
    # Split as torchvision is: each module's __all__ is re-exported.
    for module in (unirecord.transforms, unirecord.image_dataset, unirecord.loader, unirecord.packing,
                   unirecord.write):
        assert set(module.__all__) <= set(unirecord.__all__), module.__name__
        for name in module.__all__:
            assert getattr(unirecord, name) is getattr(module, name)


def public_names():
    for name in unirecord.__all__:
        obj = getattr(unirecord, name)
        if not callable(obj):
            continue
        yield name, obj
        if inspect.isclass(obj):
            for member_name, member in vars(obj).items():
                if not member_name.startswith("_") or member_name in ("__init__", "__getitem__", "__len__", "__iter__"):
                    if callable(member) or isinstance(member, property):
                        yield f"{name}.{member_name}", member


@pytest.mark.parametrize("name, obj", list(public_names()), ids=lambda v: v if isinstance(v, str) else "")
def test_every_public_name_has_a_docstring(name, obj):
    doc = obj.__doc__ if not isinstance(obj, property) else obj.fget.__doc__
    if name.endswith(".__init__") and getattr(obj, "__module__", "").startswith("unirecord."):
        return  # a Python class documents itself in its class docstring
    assert doc and doc.strip(), name
    assert not (STUB.parent / "__init__.pyi").exists()  # the inline annotations are the one source
