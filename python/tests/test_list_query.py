"""Queries on lists of values (docs/query.md): `urec convert coco` /
unirecord.convert_coco index `category_id` (a list index, format 1.2), and
`ds.query("category_id contains 3")` equals a plain Python loop over the
records; Loader(where=...) delivers exactly those records."""
import subprocess

import numpy as np
import pytest

import unirecord
from test_coco import CATEGORIES, UREC, make_coco

torch = pytest.importorskip("torch")


@pytest.fixture(scope="module")
def coco_out(tmp_path_factory):
    root = tmp_path_factory.mktemp("coco_lists")
    make_coco(root, count=30)
    unirecord.convert_coco(root / "instances.json", root / "images", root / "out", num_shards=3, sync=False, threads=2)
    return root / "out" / "instances"


def scan(ds, predicate):
    return np.array([i for i in range(len(ds)) if predicate(ds[i])], np.uint64)


def test_list_queries_equal_a_plain_scan(coco_out):
    ds = unirecord.Dataset(coco_out)
    assert ds.schema["category_id"].indexed
    cats = lambda r: r["category_id"].tolist()  # noqa: E731
    cases = {f"category_id contains {c['id']}": (lambda r, c=c: c["id"] in cats(r)) for c in CATEGORIES}
    cases.update({
        "category_id contains 42": lambda r: False,
        "any(category_id in [1, 3])": lambda r: 1 in cats(r) or 3 in cats(r),
        "not category_id contains 3": lambda r: 3 not in cats(r),
        "len(boxes) >= 2": lambda r: len(r["boxes"]) >= 2,
        "len(category_id) == 0": lambda r: len(cats(r)) == 0,
        "category_id contains 7 and width >= 100": lambda r: 7 in cats(r) and r["width"] >= 100,
    })
    for expression, predicate in cases.items():
        want = scan(ds, predicate)
        np.testing.assert_array_equal(ds.query(expression), want, err_msg=expression)
        assert ds.count(expression) == len(want), expression
    assert 0 < len(ds.query("category_id contains 3")) < len(ds)


def test_loader_where_delivers_exactly_the_matching_records(coco_out):
    ds = unirecord.Dataset(coco_out)
    expression = "category_id contains 3"
    want = [i for i in range(len(ds)) if 3 in ds[i]["category_id"].tolist()]
    loader = unirecord.Loader(coco_out, batch_size=4, shuffle=True, seed=2, threads=2,
                              transform=unirecord.CenterCrop(24, resize=24),
                              sampler=unirecord.Sampler(where=expression, num_shards=1, shard_id=0),
                              fields=unirecord.Fields(label_field=None, boxes="boxes", box_aligned=["category_id"]))
    seen = []
    for batch in loader:  # (the crop may drop boxes, and their category ids, from a batch: ids are what count)
        seen += batch["id"].tolist()
    assert sorted(seen) == want and len(seen) == len(want)


def test_urec_query_explains_the_list_index(coco_out):
    result = subprocess.run([UREC, "query", str(coco_out), "category_id contains 3", "--explain"],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "category_id contains 3  ->  list index: binary search of the distinct values" in result.stdout


def test_a_jsonl_schema_can_index_a_list_of_integers(tmp_path):
    (tmp_path / "schema.json").write_text(
        '{"fields": [{"name": "tags", "type": "int32", "shape": [-1], "indexed": true}]}')
    (tmp_path / "m.jsonl").write_text('{"tags": [3, 1, 3]}\n{"tags": []}\n{"tags": [-2147483648, 2147483647]}\n')
    unirecord.convert_jsonl(tmp_path / "m.jsonl", tmp_path / "out", schema=tmp_path / "schema.json", sync=False)
    ds = unirecord.Dataset(tmp_path / "out" / "m")
    assert ds.schema["tags"].indexed
    assert ds.query("tags contains 3").tolist() == [0]
    assert ds.query("any(tags in [2147483647, 1])").tolist() == [0, 2]
    assert ds.query("len(tags) == 0").tolist() == [1]
