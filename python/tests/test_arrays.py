"""Issue 17: variable-shape arrays and the element types of format 1.1,
written from numpy arrays or nested lists and read back as numpy arrays."""
import gc

import numpy as np
import pytest

import unirecord
from unirecord import Field

TYPES = ["uint8", "int8", "uint16", "int16", "uint32", "int32", "int64", "float16", "float32", "float64", "bool"]
PATTERNS = [(-1,), (-1, 4), (-1, -1), (2, 3)]


def values(dtype, shape, seed):
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.integers(0, 2, size=shape).astype(bool)
    if np.dtype(dtype).kind == "f":
        return (rng.standard_normal(size=shape) * 1000).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)


def shape_for(pattern, k):
    extents = [0, 1, 5, 3000, 2]
    out, v = [], 0
    for d in pattern:
        if d == -1:
            e = extents[(k + 2 * v) % len(extents)]
            out.append(e if len(pattern) == 1 or e < 100 else 40)
            v += 1
        else:
            out.append(d)
    return tuple(out)


def schema():
    fields = []
    for t in TYPES:
        fields.append(Field(t + "_scalar", t))
        for i, p in enumerate(PATTERNS):
            fields.append(Field(f"{t}_{i}", t, shape=p))
    return unirecord.Schema(fields)


def test_every_type_and_shape_pattern_round_trips(tmp_path):
    s = schema()
    written = []
    with unirecord.Writer(tmp_path, s, "a", sync=False) as w:
        for k in range(11):
            rec = {}
            for t in TYPES:
                rec[t + "_scalar"] = values(t, (), k)[()].item()
                for i, p in enumerate(PATTERNS):
                    rec[f"{t}_{i}"] = values(t, shape_for(p, k), k * 31 + i)
            w.write(rec)
            written.append(rec)
    ds = unirecord.Dataset(tmp_path)
    assert ds.shards[0]["format_version"] == "1.1"
    for k, rec in enumerate(written):
        got = ds[k]
        for t in TYPES:
            assert got[t + "_scalar"] == rec[t + "_scalar"]
            assert type(got[t + "_scalar"]) is type(rec[t + "_scalar"])
            for i, p in enumerate(PATTERNS):
                a, want = got[f"{t}_{i}"], rec[f"{t}_{i}"]
                assert a.dtype == np.dtype(t), (t, p)
                assert a.shape == want.shape, (t, p, k)
                np.testing.assert_array_equal(a, want)


def test_variable_shape_arrays_are_zero_copy_read_only_views(tmp_path):
    with unirecord.Writer(tmp_path, [Field("boxes", "float32", shape=(-1, 4))], "z", sync=False) as w:
        w.write({"boxes": [[1, 2, 3, 4], [5, 6, 7, 8.5]]})
        w.write({"boxes": np.zeros((0, 4), np.float32)})
    ds = unirecord.Dataset(tmp_path)
    boxes = ds[0]["boxes"]
    assert boxes.dtype == np.float32 and boxes.shape == (2, 4)
    assert boxes[1, 3] == 8.5
    assert not boxes.flags.writeable
    assert not boxes.flags.owndata and boxes.base is not None  # a view of the mapped shard
    assert boxes.ctypes.data % 4 == 0
    empty = ds[1]["boxes"]
    assert empty.shape == (0, 4) and empty.dtype == np.float32
    del ds
    gc.collect()
    assert boxes.sum() == 36.5  # the view keeps the dataset mapped


def test_nested_lists_and_exact_casts_are_accepted(tmp_path):
    fields = [Field("ids", "int64", shape=(-1,)), Field("mask", "bool", shape=(-1, -1)),
              Field("small", "uint8", shape=(-1,)), Field("half", "float16", shape=(-1, 2))]
    with unirecord.Writer(tmp_path, fields, "c", sync=False) as w:
        w.write({"ids": [1, 2, 3], "mask": [[1, 0], [0, 1]], "small": np.array([0, 255], np.int64),
                 "half": [[0.5, -2.0]]})
        w.write({"ids": [], "mask": np.zeros((3, 0), bool), "small": [], "half": np.zeros((0, 2))})
    ds = unirecord.Dataset(tmp_path)
    r = ds[0]
    np.testing.assert_array_equal(r["ids"], [1, 2, 3])
    assert r["mask"].dtype == bool and r["mask"].tolist() == [[True, False], [False, True]]
    assert r["small"].tolist() == [0, 255]
    assert r["half"].dtype == np.float16 and r["half"].tolist() == [[0.5, -2.0]]
    assert ds[1]["ids"].shape == (0,) and ds[1]["mask"].shape == (3, 0)


@pytest.mark.parametrize(
    "value, words",
    [
        (np.zeros((3,), np.float32), "takes shape (-1, 4)"),          # wrong rank
        (np.zeros((3, 5), np.float32), "got (3, 5)"),                # wrong fixed dimension
        (np.array([[1.5, 2, 3, 4]]), None),                           # float64 -> float32: rounds, accepted
        ("boxes", "needs numbers"),
    ],
)
def test_writer_checks_values_against_the_pattern(tmp_path, value, words):
    fields = [Field("boxes", "float32", shape=(-1, 4)), Field("n", "uint8", shape=(-1,))]
    with unirecord.Writer(tmp_path, fields, "e", sync=False) as w:
        w.write({"boxes": np.zeros((1, 4), np.float32), "n": [1]})
        if words is None:
            w.write({"boxes": value, "n": [2]})
            return
        with pytest.raises(ValueError) as e:
            w.write({"boxes": value, "n": [2]})
        assert "record 1: field 'boxes'" in str(e.value)
        assert words in str(e.value)


@pytest.mark.parametrize(
    "value, dtype",
    [([256], "int64"), ([-1], "int64"), ([1.5], "float64"), ([2], None)],
)
def test_inexact_casts_are_refused(tmp_path, value, dtype):
    fields = [Field("n", "uint8", shape=(-1,)), Field("flag", "bool", shape=(-1,))]
    with unirecord.Writer(tmp_path, fields, "x", sync=False) as w:
        with pytest.raises(ValueError) as e:
            if dtype is None:
                w.write({"n": [1], "flag": value})  # 2 is not a bool
            else:
                w.write({"n": np.array(value, dtype), "flag": [True]})
        assert "record 0: field" in str(e.value)
        assert "cannot be cast exactly" in str(e.value)


def test_scalars_of_new_types_are_range_checked(tmp_path):
    fields = [Field("u8", "uint8", indexed=True), Field("b", "bool"), Field("h", "float16")]
    with unirecord.Writer(tmp_path, fields, "s", sync=False) as w:
        w.write({"u8": 200, "b": True, "h": 0.25})
        with pytest.raises(ValueError, match="does not fit uint8"):
            w.write({"u8": 256, "b": False, "h": 1.0})
    ds = unirecord.Dataset(tmp_path)
    assert ds[0] == {"u8": 200, "b": True, "h": 0.25}
    assert ds.column("u8").tolist() == [200]
