"""Issue 44: the Loader's keywords in small typed groups (unirecord.Sampler,
Fields, Decode, Remote, Pack). Loader itself takes at most 20 parameters;
every keyword of before the groups still works for a release, with a
DeprecationWarning naming its new spelling, and gives exactly the batches
of the new spelling; one beside its group is a TypeError; the groups check
their values when made, are frozen, compare by value and pickle."""
import dataclasses
import inspect
import io
import pickle
import warnings

import numpy as np
import pytest

import unirecord
from unirecord import Decode, Field, Fields, Pack, Remote, Sampler
from unirecord.options import DEPRECATED, new_spelling

torch = pytest.importorskip("torch")
PIL = pytest.importorskip("PIL.Image")

RECORDS = 18


def jpeg_bytes(width, height, seed):
    rng = np.random.default_rng(seed)
    pixels = rng.integers(0, 256, (height, width, 3), dtype=np.uint8)
    out = io.BytesIO()
    PIL.fromarray(pixels).save(out, format="JPEG", quality=85)
    return out.getvalue()


@pytest.fixture(scope="module")
def records(tmp_path_factory):
    """Every kind of field a group option acts on: an image, a label, boxes
    with a value per box, a token sequence and a mask the image's size."""
    path = tmp_path_factory.mktemp("options")
    schema = unirecord.Schema([
        Field("image", "bytes"), Field("label", "int64", indexed=True), Field("path", "string"),
        Field("boxes", "float32", shape=(-1, 4)), Field("category_id", "int64", shape=(-1,)),
        Field("tokens", "int32", shape=(-1,)), Field("mask", "uint8", shape=(-1, -1)),
    ])
    with unirecord.Writer(path, schema, "d", num_shards=2, sync=False) as w:
        for i in range(RECORDS):
            rng = np.random.default_rng(i)
            width, height = 40 + 4 * i, 36 + 3 * (i % 5)
            n = i % 4
            w.write({
                "image": jpeg_bytes(width, height, i), "label": i % 3, "path": f"img_{i}.jpg",
                "boxes": rng.uniform(0, 30, (n, 4)).astype(np.float32),
                "category_id": np.arange(n, dtype=np.int64),
                "tokens": rng.integers(0, 100, i % 7).astype(np.int32),
                "mask": rng.integers(0, 4, (height, width)).astype(np.uint8),
            })
    return path


# keyword -> (the old call's keywords, the same with the groups). Each case
# sets its keyword to something other than the default where it can, with
# the other old keywords it needs (of its group), so that the batches show it.
CASES = {
    "num_shards": (dict(num_shards=2), dict(sampler=Sampler(num_shards=2))),
    "shard_id": (dict(num_shards=2, shard_id=1), dict(sampler=Sampler(num_shards=2, shard_id=1))),
    "sampler_drop_last": (dict(num_shards=4, sampler_drop_last=True), dict(sampler=Sampler(num_shards=4, drop_last=True))),
    "order": (dict(order="block"), dict(sampler=Sampler(order="block"))),
    "block_size": (dict(order="block", block_size=3), dict(sampler=Sampler(order="block", block_size=3))),
    "window": (dict(order="block", window=4), dict(sampler=Sampler(order="block", window=4))),
    "weights": (dict(weights=[0.25, 0.75]), dict(sampler=Sampler(weights=[0.25, 0.75]))),
    "epoch_size": (dict(epoch_size=10), dict(sampler=Sampler(epoch_size=10))),
    "subset": (dict(subset=[5, 3, 1, 0, 9]), dict(sampler=Sampler(subset=[5, 3, 1, 0, 9]))),
    "where": (dict(where="label == 1"), dict(sampler=Sampler(where="label == 1"))),
    "image_field": (dict(image_field=None, fields=["tokens"]), dict(fields=Fields(["tokens"], image_field=None))),
    "label_field": (dict(label_field=None), dict(fields=Fields(label_field=None))),
    "path_field": (dict(path_field="path"), dict(fields=Fields(path_field="path"))),
    "layout": (dict(layout="NHWC"), dict(fields=Fields(layout="NHWC"))),
    "ragged": (dict(fields=["tokens"], ragged="jagged"), dict(fields=Fields(["tokens"], ragged="jagged"))),
    "pad_value": (dict(fields=["tokens"], pad_value=-1), dict(fields=Fields(["tokens"], pad_value=-1))),
    "boxes": (dict(boxes="boxes"), dict(fields=Fields(boxes="boxes"))),
    "box_format": (dict(boxes="boxes", box_format="xyxy"), dict(fields=Fields(boxes="boxes", box_format="xyxy"))),
    "box_aligned": (dict(boxes="boxes", box_aligned=["category_id"]),
                    dict(fields=Fields(boxes="boxes", box_aligned=["category_id"]))),
    "masks": (dict(masks=["mask"]), dict(fields=Fields(masks=["mask"]))),
    "return_ids": (dict(return_ids=True), dict(fields=Fields(return_ids=True))),
    "strict": (dict(strict=True), dict(decode=Decode(strict=True))),
    "apply_exif": (dict(apply_exif=True), dict(decode=Decode(apply_exif=True))),
    "dct_scaling": (dict(dct_scaling=False), dict(decode=Decode(dct_scaling=False))),
    "max_pixels": (dict(max_pixels=10**6), dict(decode=Decode(max_pixels=10**6))),
    "on_bad_record": (dict(on_bad_record="skip"), dict(decode=Decode(on_bad_record="skip"))),
    "max_consecutive_bad": (dict(on_bad_record="skip", max_consecutive_bad=2),
                            dict(decode=Decode(on_bad_record="skip", max_consecutive_bad=2))),
    "verify_checksums": (dict(verify_checksums=False), dict(decode=Decode(verify_checksums=False))),
    "cache_dir": (dict(cache_dir="CACHE"), dict(remote=Remote(cache_dir="CACHE"))),
    "cache_limit": (dict(cache_limit=1 << 30), dict(remote=Remote(cache_limit=1 << 30))),
    "remote_options": (dict(remote_options={"attempts": 2, "s3_addressing": "path"}),
                       dict(remote=Remote(attempts=2, s3_addressing="path"))),
}


def test_the_cases_are_every_deprecated_keyword():
    assert set(CASES) == set(DEPRECATED)


def test_loader_takes_at_most_20_parameters():
    parameters = inspect.signature(unirecord.Loader).parameters
    assert len(parameters) <= 20, list(parameters)  # the catch-all of the deprecated keywords counted
    assert not set(parameters) & set(DEPRECATED)


def batches(loader):
    out = []
    for batch in loader:
        items = batch.items() if isinstance(batch, dict) else enumerate(batch)
        out.append({k: v.clone() if isinstance(v, torch.Tensor) else v for k, v in items})
    return out


def assert_same_batches(a, b):
    assert len(a) == len(b) > 0
    for x, y in zip(a, b):
        assert x.keys() == y.keys()
        for key in x:
            if isinstance(x[key], torch.Tensor):
                assert torch.equal(x[key], y[key]), key
            else:
                assert x[key] == y[key], key


@pytest.mark.parametrize("keyword", sorted(CASES))
def test_a_deprecated_keyword_warns_and_gives_the_batches_of_its_new_spelling(records, tmp_path, keyword):
    old, new = CASES[keyword]
    cache = str(tmp_path / "cache")
    fix = lambda v: cache if v == "CACHE" else v  # noqa: E731
    old = {k: fix(v) for k, v in old.items()}
    if "remote" in new:
        new = dict(remote=dataclasses.replace(new["remote"], cache_dir=fix(new["remote"].cache_dir)))
    path = [records, records] if keyword == "weights" else records
    common = dict(seed=3, threads=1, transform=unirecord.RandomResizedCrop(32, flip=True))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ours = unirecord.Loader(path, 4, True, **common, **old)
    deprecated = [str(w.message) for w in caught if issubclass(w.category, DeprecationWarning)]
    expected = sorted(f"Loader({k}=...) is deprecated: use {new_spelling(k)}" for k in old if k in DEPRECATED)
    assert sorted(deprecated) == expected
    assert all(w.filename == __file__ for w in caught)  # the warning points at the caller
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        theirs = unirecord.Loader(path, 4, True, **common, **new)
    assert (ours.sampler, ours.fields, ours.decode, ours.remote) == (
        theirs.sampler, theirs.fields, theirs.decode, theirs.remote)
    assert_same_batches(batches(ours), batches(theirs))


def test_the_messages_name_the_new_spelling():
    assert new_spelling("block_size") == "Loader(sampler=unirecord.Sampler(block_size=...))"
    assert new_spelling("sampler_drop_last") == "Loader(sampler=unirecord.Sampler(drop_last=...))"
    assert new_spelling("image_field") == "Loader(fields=unirecord.Fields(image_field=...))"
    assert new_spelling("remote_options") == "Loader(remote=unirecord.Remote(...))"


def test_an_old_keyword_beside_its_group_is_a_type_error(records):
    with pytest.raises(TypeError, match=r"Loader\(block_size=\.\.\.\) and Loader\(sampler=\.\.\.\) both given"):
        unirecord.Loader(records, 4, True, block_size=4, sampler=Sampler())
    with pytest.raises(TypeError, match=r"Loader\(ragged=\.\.\.\) and Loader\(fields=\.\.\.\)"):
        unirecord.Loader(records, 4, True, ragged="jagged", fields=Fields(["tokens"]))
    with pytest.raises(TypeError, match=r"Loader\(remote_options=\.\.\.\) and Loader\(remote=\.\.\.\)"):
        unirecord.Loader(records, 4, True, remote_options={}, remote=Remote())
    # A list of names is not the group: the old keywords of Fields join it.
    with pytest.warns(DeprecationWarning):
        loader = unirecord.Loader(records, 4, True, fields=["tokens"], ragged="jagged")
    assert loader.fields == Fields(["tokens"], ragged="jagged")
    with pytest.raises(TypeError, match="unexpected keyword argument 'shufle'"):
        unirecord.Loader(records, 4, True, shufle=True)


def test_groups_of_the_wrong_type_are_type_errors(records):
    with pytest.raises(TypeError, match="sampler must be a unirecord.Sampler, not"):
        unirecord.Loader(records, 4, True, sampler={"block_size": 4})
    with pytest.raises(TypeError, match="decode must be a unirecord.Decode, not"):
        unirecord.Loader(records, 4, True, decode=Fields())
    with pytest.raises(TypeError, match="remote must be a unirecord.Remote, not"):
        unirecord.Loader(records, 4, True, remote={"attempts": 2})
    with pytest.raises(TypeError, match="fields must be a list of field names, not 'tokens'"):
        unirecord.Loader(records, 4, True, fields="tokens")
    with pytest.raises(TypeError, match="pack must be a unirecord.Pack"):
        unirecord.Loader(records, 4, True, pack={"seq_len": 8})


@pytest.mark.parametrize("make, error, message", [
    (lambda: Sampler(block_size="4"), TypeError, r"Sampler.block_size must be an int, not str"),
    (lambda: Sampler(block_size=0), ValueError, r"Sampler.block_size=0 is out of range \(1\.\."),
    (lambda: Sampler(order="zigzag"), ValueError, r"Sampler.order: .*zigzag"),
    (lambda: Sampler(drop_last=1), TypeError, r"Sampler.drop_last must be True or False"),
    (lambda: Sampler(num_shards=0), ValueError, r"Sampler.num_shards=0 is out of range"),
    (lambda: Sampler(num_shards=2, shard_id=2), ValueError, r"Sampler.shard_id=2 is out of range \(0..1\)"),
    (lambda: Sampler(weights=["a"]), TypeError, r"Sampler.weights must be a number"),
    (lambda: Sampler(weights="ab"), TypeError, r"Sampler.weights must be a sequence of numbers"),
    (lambda: Sampler(subset="12"), TypeError, r"Sampler.subset must be a sequence of ints"),
    (lambda: Sampler(where=3), TypeError, r"Sampler.where must be a str"),
    (lambda: Sampler(where="label == 1", subset=[1]), ValueError, r"where= or subset=, not both"),
    (lambda: Fields("tokens"), TypeError, r"Fields.names must be a list of field names, not 'tokens'"),
    (lambda: Fields([1]), TypeError, r"Fields.names must be a str, not int"),
    (lambda: Fields(layout="CHW"), ValueError, r"Fields.layout: .*CHW"),
    (lambda: Fields(pad_value="0"), TypeError, r"Fields.pad_value must be a number"),
    (lambda: Fields(box_aligned="category_id"), TypeError, r"Fields.box_aligned must be a list of field names"),
    (lambda: Fields(return_ids="yes"), TypeError, r"Fields.return_ids must be True or False"),
    (lambda: Decode(strict=1), TypeError, r"Decode.strict must be True or False"),
    (lambda: Decode(max_pixels=0), ValueError, r"Decode.max_pixels=0 is out of range"),
    (lambda: Decode(on_bad_record="ignore"), ValueError, r"Decode.on_bad_record: .*ignore"),
    (lambda: Decode(verify_checksums=None), TypeError, r"Decode.verify_checksums must be True or False"),
    (lambda: Remote(attempts="5"), TypeError, r"Remote.attempts must be an int"),
    (lambda: Remote(cache_limit=-1), ValueError, r"Remote.cache_limit=-1 is out of range"),
    (lambda: Remote(cache_dir=3), TypeError, r"Remote.cache_dir must be a path"),
    (lambda: Remote(s3_endpoint=None), TypeError, r"Remote.s3_endpoint must be a str"),
    (lambda: Pack(0), ValueError, r"Pack.seq_len=0 is out of range"),
    (lambda: Pack(8, strategy="greedy"), ValueError, r"Pack.strategy: unknown packing strategy 'greedy'"),
    (lambda: Pack(8, fields="tokens"), TypeError, r"Pack.fields must be a list of field names"),
])
def test_a_group_checks_its_values_when_made(make, error, message):
    with pytest.raises(error, match=message):
        make()


@pytest.mark.parametrize("group", [
    Sampler(num_shards=2, order="block", weights=[1, 2], subset=np.array([3, 1])),
    Fields(["tokens"], boxes="boxes", box_aligned=["category_id"], masks=["mask"]),
    Decode(strict=True, on_bad_record="skip"),
    Remote(cache_dir="/tmp/c", attempts=2),
    Pack(16, fields=["tokens"], eos=1),
], ids=lambda g: type(g).__name__)
def test_groups_are_frozen_compared_by_value_printed_and_pickled(group):
    with pytest.raises(dataclasses.FrozenInstanceError):
        group.window = 3
    assert pickle.loads(pickle.dumps(group)) == group
    assert hash(pickle.loads(pickle.dumps(group))) == hash(group)  # lists were made tuples
    assert repr(group).startswith(type(group).__name__ + "(")
    assert eval(repr(group), {**vars(unirecord), "np": np}) == group


def test_the_group_defaults_are_the_loaders(records):
    """Loader(...) without groups and with default-made ones are one loader."""
    plain = unirecord.Loader(records, 4, True, seed=1, threads=1)
    assert (plain.sampler, plain.fields, plain.decode, plain.remote) == (Sampler(), Fields(), Decode(), Remote())
    assert list(unirecord.options.REMOTE_DEFAULTS) == [f.name for f in dataclasses.fields(Remote)][2:]
