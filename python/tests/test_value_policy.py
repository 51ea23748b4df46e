"""One policy for the values every writer stores (issue 47): a float is
rounded to the nearest value of its field's type and a finite one that would
become an infinity is refused, the same through JSON, numpy arrays, Python
numbers and lists, add_fields, Writer and write_dataset; names and values
quoted in errors are escaped and bounded; a file given as a converter's
input must be a regular file."""
import json
import os

import numpy as np
import pytest

import unirecord
from unirecord import Field

N = 6


@pytest.fixture
def dataset(tmp_path):
    with unirecord.Writer(tmp_path, {"x": "int64"}, "d", sync=False) as w:
        for k in range(N):
            w.write({"x": k})
    return tmp_path / "d"


def version(path):
    return unirecord.Dataset(path).version


# Before: add_fields stored inf for 1e39 from a numpy float64 array, a list or
# a function, where the JSON path refused it.
@pytest.mark.parametrize("given", ["array", "list", "function", "float16 array"])
def test_add_fields_refuses_a_finite_float_past_the_fields_type_naming_field_and_record(dataset, given):
    values = np.zeros(N)
    values[3] = 1e39
    kind = "float32"
    if given == "list":
        values = values.tolist()
    elif given == "function":
        values = lambda r: 1e39 if r["x"] == 3 else 0.0  # noqa: E731
    elif given == "float16 array":
        kind, values[3] = "float16", 70000.0
    with pytest.raises(ValueError) as raised:
        unirecord.add_fields(dataset, {"v": values}, schema=[Field("v", kind)])
    message = str(raised.value)
    shown = "1e+39" if kind == "float32" else "70000.0"
    assert "record 3" in message and f"field 'v' ({kind}): {shown} is out of {kind}'s range" in message, message
    assert version(dataset) == 1  # nothing committed


def test_writer_and_write_dataset_refuse_it_for_scalars_lists_and_arrays(tmp_path):
    schema = [Field("s", "float32"), Field("a", "float32", shape=(-1,)), Field("h", "float16")]
    good = {"s": 0.0, "a": [0.0], "h": 0.0}
    bad = [({"s": 1e39}, "field 's' (float32): 1e+39 is out of float32's range"),
           ({"s": -10 ** 400}, "is out of float32's range"),
           ({"a": [1.0, -1e39]}, "field 'a' (float32): -1e+39 (element 1 in C order) is out of float32's range"),
           ({"a": np.array([[5e38]])[0]}, "5e+38 (element 0 in C order) is out of float32's range"),
           ({"h": 65520.0}, "field 'h' (float16): 65520.0 is out of float16's range"),
           ({"h": 70000}, "field 'h' (float16): 70000.0 is out of float16's range")]
    with unirecord.Writer(tmp_path, schema, "w", sync=False) as w:
        for change, words in bad:
            with pytest.raises(ValueError) as raised:
                w.write({**good, **change})
            assert words in str(raised.value), (change, str(raised.value))
        w.write(good)  # the writer stays usable
    assert len(unirecord.Dataset(tmp_path / "w")) == 1

    def samples(i):
        return {**good, "s": 1e39} if i == 1 else good
    with pytest.raises(ValueError, match=r"1e\+39 is out of float32's range"):
        unirecord.write_dataset(samples, [0, 1], tmp_path, schema=schema, num_shards=1, name="wd", sync=False)
    assert not (tmp_path / "wd.uset").exists()


def test_rounding_is_to_the_nearest_and_explicit_nan_and_inf_are_kept(tmp_path):
    """docs/python.md, "How numbers are stored": the documented rounding, pinned."""
    schema = [Field("s", "float32"), Field("a", "float32", shape=(5,)), Field("h", "float16")]
    with unirecord.Writer(tmp_path, schema, "w", sync=False) as w:
        # FLT_MAX as numpy prints it (3.4028235e+38, above FLT_MAX as a double) rounds to FLT_MAX.
        w.write({"s": 3.4028235e38, "a": np.array([1e-46, -1e-46, 1e-45, 0.1, float("inf")]), "h": 65519.0})
        w.write({"s": float("nan"), "a": [float("-inf"), 2.0 ** -150, 3e-45, 1.0, 0.0], "h": 1e-8})
    ds = unirecord.Dataset(tmp_path / "w")
    first, second = ds[0], ds[1]
    assert first["s"] == np.finfo(np.float32).max
    a = first["a"]
    assert a[0] == 0 and not np.signbit(a[0]) and a[1] == 0 and np.signbit(a[1])  # underflow: a zero of its sign
    assert a[2] == np.float32(2.0 ** -149) and a[3] == np.float32(0.1) and a[4] == np.inf
    assert first["h"] == np.float16(65504)
    assert np.isnan(second["s"])
    assert second["a"].tolist() == [-np.inf, 0.0, np.float32(2.0 ** -148), 1.0, 0.0]
    assert second["h"] == 0 and np.float16(1e-8) == 0  # below half the smallest subnormal half, as numpy has it
    # The same values through numpy's own cast give the same floats.
    np.testing.assert_array_equal(a, np.array([1e-46, -1e-46, 1e-45, 0.1, np.inf]).astype(np.float32))


def test_json_and_python_refuse_the_same_value_with_the_same_words(tmp_path, dataset):
    (tmp_path / "s.json").write_text(json.dumps({"fields": [{"name": "v", "type": "float32"}]}))
    (tmp_path / "m.jsonl").write_text('{"v": 1}\n{"v": 1e39}\n')
    report = unirecord.convert_jsonl(tmp_path / "m.jsonl", tmp_path / "out", schema=tmp_path / "s.json", sync=False)
    assert report["not_written"] == [("line 2", "field 'v': 1e+39 is out of float32's range")]
    with pytest.raises(ValueError, match=r"field 'v' \(float32\): 1e\+39 is out of float32's range"):
        unirecord.add_fields(dataset, {"v": [0.0] * (N - 1) + [1e39]}, schema=[Field("v", "float32")])


# Before: the message ended at the NUL where urec printed it, and a 2 MB name
# was echoed whole.
def test_field_names_in_errors_are_escaped_and_bounded(tmp_path):
    with pytest.raises(ValueError) as raised:
        unirecord.Writer(tmp_path, [Field("a\0b", "int64")], "n")
    assert "schema field 'a\\x00b': name contains a NUL byte" in str(raised.value)
    with pytest.raises(ValueError) as raised:
        unirecord.Writer(tmp_path, [Field("n" * (2 << 20), "int64")], "n")
    message = str(raised.value)
    assert len(message) < 400 and "... (2097152 bytes)': name longer than 255 bytes" in message, message[:400]
    with unirecord.Writer(tmp_path, {"x": "int64"}, "k", sync=False) as w:
        with pytest.raises(ValueError) as raised:
            w.write({"x": 1, "y" * (2 << 20): 2})
        assert len(str(raised.value)) < 600 and "... (2097152 bytes)" in str(raised.value)
        with pytest.raises(ValueError) as raised:
            w.write({"x": "z" * (2 << 20)})
        assert len(str(raised.value)) < 400 and "needs an integer" in str(raised.value)


@pytest.mark.parametrize("kind", ["directory", "fifo", "device"])
def test_a_converter_input_that_is_no_regular_file_is_a_value_error_naming_it(tmp_path, kind):
    (tmp_path / "s.json").write_text(json.dumps({"fields": [{"name": "v", "type": "float32"}]}))
    path = {"directory": tmp_path, "fifo": tmp_path / "m.jsonl", "device": "/dev/zero"}[kind]
    if kind == "fifo":
        os.mkfifo(path)  # no writer: a read would wait forever
    with pytest.raises(ValueError) as raised:
        unirecord.convert_jsonl(path, tmp_path / "out", schema=tmp_path / "s.json")
    assert f"manifest {path}: not a regular file" in str(raised.value), str(raised.value)
