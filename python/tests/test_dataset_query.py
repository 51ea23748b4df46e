"""Dataset.query / Dataset.count and where= on Loader and ImageDataset.

The query's ids are checked against numpy over the indexed columns; a Loader
with where= must deliver exactly the query's records over an epoch across 4
ranks (padding aside), the same in two runs and after a mid-epoch resume."""
import math

import numpy as np
import pytest

import unirecord
from urec_fixtures import loader_records  # noqa: F401 (pytest fixtures)

torch = pytest.importorskip("torch")

EXPR = "label in [1, 3] and width >= 112 or height == 128 and label != 2"


def columns(path):
    ds = unirecord.Dataset(path)
    return ds, {f: ds.column(f) for f in ("label", "width", "height")}


def test_query_matches_numpy_over_the_columns(loader_records):
    ds, c = columns(loader_records)
    cases = {
        EXPR: (np.isin(c["label"], [1, 3]) & (c["width"] >= 112)) | ((c["height"] == 128) & (c["label"] != 2)),
        "not label == 0": c["label"] != 0,
        "width between 100 and 130 and not height in [80, 104]": (c["width"] >= 100) & (c["width"] <= 130)
        & ~np.isin(c["height"], [80, 104]),
        "label > 3": np.zeros(len(ds), bool),
        "path < 'class2'": c["label"] < 2,  # a scanned string field: paths are class<k>/NNN.jpg
    }
    for expression, mask in cases.items():
        ids = ds.query(expression)
        assert ids.dtype == np.uint64
        np.testing.assert_array_equal(ids, np.flatnonzero(mask).astype(np.uint64), err_msg=expression)
        assert ds.count(expression) == mask.sum()
    assert ds.count(f'label == "{ds.classes[2]}"') == (c["label"] == 2).sum()


def test_bad_expressions_raise_value_error_with_the_column(loader_records):
    ds = unirecord.Dataset(loader_records)
    with pytest.raises(ValueError, match=r"column 16: unknown field 'widht'") as e:
        ds.query("label == 1 and widht > 3")
    assert str(e.value).splitlines()[-1] == "  " + " " * 15 + "^"
    with pytest.raises(ValueError, match="bytes field"):
        ds.count("image == 1")
    with pytest.raises(ValueError, match="empty expression"):
        ds.query("")


def epoch_ids(path, **sampler):
    loader = unirecord.Loader(path, batch_size=5, shuffle=True, seed=3, threads=2,
                              transform=unirecord.RandomResizedCrop(32), fields=unirecord.Fields(return_ids=True),
                              sampler=unirecord.Sampler(**sampler))
    ids, images = [], []
    for im, _, rid in loader:
        ids += rid.tolist()
        images.append(im.clone())
    return ids, torch.cat(images)


def test_loader_where_delivers_exactly_the_query_across_ranks(loader_records):
    expected = unirecord.Dataset(loader_records).query(EXPR).tolist()
    n = len(expected)
    assert 0 < n < 90 and n % 4 != 0  # a real subset, and the ranks need padding
    per_rank = [epoch_ids(loader_records, num_shards=4, shard_id=r, where=EXPR)[0] for r in range(4)]
    assert [len(ids) for ids in per_rank] == [math.ceil(n / 4)] * 4
    delivered = [i for ids in per_rank for i in ids]
    assert sorted(set(delivered)) == expected  # every match, nothing else
    assert len(delivered) - n == 4 * math.ceil(n / 4) - n  # repeats only as padding
    # Two runs give the same ids and pixels; where= is subset= with the query's ids.
    again_ids, again_images = epoch_ids(loader_records, num_shards=4, shard_id=1, where=EXPR)
    first_ids, first_images = epoch_ids(loader_records, num_shards=4, shard_id=1, subset=expected)
    assert again_ids == first_ids == per_rank[1] and torch.equal(again_images, first_images)
    with pytest.raises(ValueError, match="not both"):
        unirecord.Loader(loader_records, batch_size=4, shuffle=False,
                         sampler=unirecord.Sampler(where=EXPR, subset=expected))


def test_loader_where_resumes_mid_epoch_exactly(loader_records):
    kwargs = dict(batch_size=4, shuffle=True, seed=9, threads=2, fields=unirecord.Fields(return_ids=True),
                  sampler=unirecord.Sampler(num_shards=4, shard_id=2, where=EXPR),
                  transform=unirecord.RandomResizedCrop(32))
    full = unirecord.Loader(loader_records, **kwargs)
    full.set_epoch(2)
    ids = torch.cat([rid for _, _, rid in full]).tolist()
    part = unirecord.Loader(loader_records, **kwargs)
    part.set_epoch(2)
    it = iter(part)
    next(it)
    next(it)
    state = part.state_dict()
    del it, part
    resumed = unirecord.Loader(loader_records, **kwargs)
    resumed.load_state_dict(state)
    assert torch.cat([rid for _, _, rid in resumed]).tolist() == ids[8:]


def test_image_dataset_where_indexes_the_matches(loader_records):
    everything = unirecord.ImageDataset(loader_records, unirecord.CenterCrop(32, resize=40))
    subset = unirecord.ImageDataset(loader_records, unirecord.CenterCrop(32, resize=40), where=EXPR)
    ids = everything.dataset.query(EXPR)
    assert len(subset) == len(ids)
    for i in (0, 5, len(ids) - 1, -1):
        image, label = subset[i]
        ref_image, ref_label = everything[int(ids[i])]
        assert torch.equal(image, ref_image) and label == ref_label
    assert subset.crop_window(3) == everything.crop_window(int(ids[3]))
    batch = subset.__getitems__([0, 2])
    assert torch.equal(batch[1][0], everything[int(ids[2])][0])
    assert subset.targets == [everything.targets[i] for i in ids]
    with pytest.raises(IndexError):
        subset[len(ids)]


def test_image_dataset_subset_takes_ids_from_anywhere(loader_records):
    everything = unirecord.ImageDataset(loader_records, unirecord.CenterCrop(32, resize=40))
    picked = [17, 3, 89, 3]
    subset = unirecord.ImageDataset(loader_records, unirecord.CenterCrop(32, resize=40), subset=picked)
    assert len(subset) == 4
    for i, record in enumerate(picked):
        assert torch.equal(subset[i][0], everything[record][0]) and subset[i][1] == everything[record][1]
    assert subset.targets == [everything.targets[i] for i in picked]
    # One check of a subset, the Loader's: an id past the end is an IndexError.
    with pytest.raises(IndexError, match=r"subset id 90 is out of range for a dataset of 90 records"):
        unirecord.ImageDataset(loader_records, subset=[0, 90])
    with pytest.raises(ValueError, match="not both"):
        unirecord.ImageDataset(loader_records, subset=[0], where=EXPR)
