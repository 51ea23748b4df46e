"""Issue 17: the Loader batches every field. Dict batches against a torch
DataLoader over the same records read with unirecord.Dataset, the images
decoded per sample by unirecord.ImageDataset (the same crops, from its
crop_window), the boxes mapped by the plain-Python reference below and a
padding collate; jagged offsets; datasets without images; determinism,
resume, ranks, where= and on_bad_record with the extra fields."""
import io
from dataclasses import replace

import numpy as np
import pytest

import unirecord
from unirecord import Field

torch = pytest.importorskip("torch")
PIL = pytest.importorskip("PIL.Image")
import cuda_check  # noqa: E402 (needs torch)

SIZE = 48
RECORDS = 41  # not a multiple of 4 ranks x batch 6


def jpeg_bytes(width, height, seed):
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:height, 0:width]
    base = np.stack([xx * 255 // width, yy * 255 // height, (xx + 2 * yy + seed * 37) % 256], -1)
    img = np.clip(base + rng.normal(0, 12, base.shape), 0, 255).astype(np.uint8)
    out = io.BytesIO()
    PIL.fromarray(img).save(out, format="JPEG", quality=90)
    return out.getvalue()


def detection_record(i):
    """Record i: a JPEG, COCO-style xywh boxes (some partly or wholly outside
    the image), a category per box, a token sequence, a caption."""
    rng = np.random.default_rng(1000 + i)
    width, height = int(rng.integers(50, 160)), int(rng.integers(40, 150))
    n = int(rng.integers(0, 6))
    x = rng.uniform(-20, width, n)
    y = rng.uniform(-20, height, n)
    boxes = np.stack([x, y, rng.uniform(1, width / 2, n), rng.uniform(1, height / 2, n)], -1).astype(np.float32)
    return {
        "image": jpeg_bytes(width, height, i),
        "label": i % 7,
        "boxes": boxes.reshape(n, 4),
        "category_id": rng.integers(1, 91, n).astype(np.int64),
        "tokens": rng.integers(0, 50000, int(rng.integers(0, 20))).astype(np.int32),
        "caption": f"picture {i}",
        "path": f"img_{i:03d}.jpg",
    }


SCHEMA = [
    Field("image", "bytes"),
    Field("label", "int64", indexed=True),
    Field("boxes", "float32", shape=(-1, 4)),
    Field("category_id", "int64", shape=(-1,)),
    Field("tokens", "int32", shape=(-1,)),
    Field("caption", "string"),
    Field("path", "string"),
]


@pytest.fixture(scope="module")
def detection(tmp_path_factory):
    path = tmp_path_factory.mktemp("detection")
    with unirecord.Writer(path, unirecord.Schema(SCHEMA), "det", num_shards=2, sync=False) as w:
        for i in range(RECORDS):
            w.write(detection_record(i))
    return path


# --- the reference: plain Python -------------------------------------------

def map_boxes(boxes, crop, size, box_format):
    """docs/loader.md "Boxes": shift by the window's origin, scale to the
    output, mirror when flipped, clip; a box left without area is dropped."""
    x, y, w, h, flip = (int(v) for v in crop)
    kept, out = [], []
    for k, (a, b, c, d) in enumerate(boxes.tolist()):
        if box_format == "xywh":
            c, d = a + c, b + d
        x0, x1 = (a - x) * size / w, (c - x) * size / w
        y0, y1 = (b - y) * size / h, (d - y) * size / h
        if flip:
            x0, x1 = size - x1, size - x0
        x0, x1 = min(max(x0, 0.0), size), min(max(x1, 0.0), size)
        y0, y1 = min(max(y0, 0.0), size), min(max(y1, 0.0), size)
        if x1 - x0 > 0 and y1 - y0 > 0:
            kept.append(k)
            out.append([x0, y0, x1 - x0, y1 - y0] if box_format == "xywh" else [x0, y0, x1, y1])
    return np.array(out, dtype=np.float32).reshape(-1, 4), kept


class Reference(torch.utils.data.Dataset):
    """Sample `record id` as the Loader's dict batch holds it, from
    unirecord.Dataset and unirecord.ImageDataset (one sample at a time)."""

    def __init__(self, path, seed, epoch, box_format, with_boxes=True):
        self.ds = unirecord.Dataset(path)
        self.images = unirecord.ImageDataset(path, unirecord.RandomResizedCrop(SIZE, flip=True), seed=seed, label_field=None)
        self.images.set_epoch(epoch)
        self.box_format = box_format
        self.with_boxes = with_boxes

    def __len__(self):
        return len(self.ds)

    def __getitem__(self, rid):
        rec = self.ds[rid]
        image, _ = self.images[rid]
        crop = self.images.crop_window(rid)
        out = {"image": image, "label": torch.tensor(rec["label"]), "tokens": torch.from_numpy(rec["tokens"].copy()),
               "caption": rec["caption"], "id": torch.tensor(rid), "crop": torch.tensor([int(v) for v in crop], dtype=torch.int32)}
        if self.with_boxes:
            boxes, kept = map_boxes(rec["boxes"], crop, SIZE, self.box_format)
            out["boxes"] = torch.from_numpy(boxes)
            out["category_id"] = torch.from_numpy(rec["category_id"][kept].copy())
        return out


def pad_collate(samples, pad_value=0, ragged=("boxes", "category_id", "tokens")):
    """Stacks tensors; pads the `ragged` ones along dim 0 and adds NAME_lengths."""
    batch = {}
    for key in samples[0]:
        values = [s[key] for s in samples]
        if isinstance(values[0], str):
            batch[key] = values
        elif key in ragged:
            longest = max(v.shape[0] for v in values)
            out = torch.full((len(values), longest) + tuple(values[0].shape[1:]), pad_value, dtype=values[0].dtype)
            for i, v in enumerate(values):
                out[i, : v.shape[0]] = v
            batch[key] = out
            batch[key + "_lengths"] = torch.tensor([v.shape[0] for v in values])
        else:
            batch[key] = torch.stack(values)
    return batch


def assert_batches_equal(ours, theirs):
    assert set(ours) == set(theirs), (sorted(ours), sorted(theirs))
    for key, want in theirs.items():
        got = ours[key]
        if isinstance(want, list):
            assert got == want, key
        elif key == "boxes":
            assert got.dtype == want.dtype and got.shape == want.shape, (key, got.shape, want.shape)
            assert torch.allclose(got, want, atol=1e-4, rtol=0), key
        else:
            assert got.dtype == want.dtype, (key, got.dtype, want.dtype)
            assert torch.equal(got, want), key


# What the detection loader batches (a test changes it with dataclasses.replace).
FIELDS = unirecord.Fields(["tokens", "caption"], boxes="boxes", box_aligned=["category_id"])


def loader(path, **kw):
    # prefetch 12: a test may hold a whole epoch of batches (7) at once.
    options = dict(batch_size=6, shuffle=False, seed=5, transform=unirecord.RandomResizedCrop(SIZE, flip=True), threads=3, prefetch=12,
                   fields=FIELDS, sampler=unirecord.Sampler(num_shards=1, shard_id=0))
    options.update(kw)
    return unirecord.Loader(path, **options)


# --- dict batches against the DataLoader ------------------------------------

@pytest.mark.parametrize("box_format", ["xywh", "xyxy"])
def test_dict_batches_equal_a_dataloader_with_a_padding_collate(detection, box_format):
    ours = loader(detection, fields=replace(FIELDS, box_format=box_format, pad_value=-1))
    ours.set_epoch(2)
    ref = Reference(detection, seed=5, epoch=2, box_format=box_format)
    theirs = torch.utils.data.DataLoader(ref, batch_size=6, collate_fn=lambda s: pad_collate(s, -1))
    got = list(ours)
    want = list(theirs)
    assert len(got) == len(want) == len(ours)
    for a, b in zip(got, want):
        assert a["image"].dtype == torch.uint8 and a["image"].shape[1:] == (3, SIZE, SIZE)
        assert_batches_equal(a, b)
    kept = sum(int(b["boxes_lengths"].sum()) for b in want)
    stored = sum(len(ref.ds[i]["boxes"]) for i in range(RECORDS))
    assert 0 < kept < stored  # boxes were kept, and some dropped by the crops


def test_four_ranks_with_where_and_extra_fields(detection):
    """num_shards/shard_id over a where= subset: each rank's batches equal a
    DataLoader with DistributedSampler(shuffle=False) over the same ids."""
    ds = unirecord.Dataset(detection)
    ids = ds.query("label != 3").tolist()
    ref = Reference(detection, seed=5, epoch=0, box_format="xywh")
    seen = []
    for rank in range(4):
        ours = loader(detection, sampler=unirecord.Sampler(where="label != 3", num_shards=4, shard_id=rank))
        positions = list(torch.utils.data.DistributedSampler(range(len(ids)), num_replicas=4, rank=rank, shuffle=False))
        theirs = torch.utils.data.DataLoader(ref, batch_size=6, sampler=[ids[p] for p in positions], collate_fn=pad_collate)
        got, want = list(ours), list(theirs)
        assert len(got) == len(want)
        for a, b in zip(got, want):
            assert_batches_equal(a, b)
            seen += a["id"].tolist()
    assert sorted(set(seen)) == ids


def test_jagged_offsets(detection):
    ours = loader(detection, fields=replace(FIELDS, ragged="jagged"))
    ds = unirecord.Dataset(detection)
    for batch in ours:
        offsets = batch["tokens_offsets"]
        assert offsets.dtype == torch.int64 and offsets.shape == (len(batch["id"]) + 1,) and offsets[0] == 0
        assert batch["tokens"].shape == (int(offsets[-1]),)
        for i, rid in enumerate(batch["id"].tolist()):
            want = ds[rid]["tokens"]
            assert batch["tokens"][offsets[i]:offsets[i + 1]].numpy().tolist() == want.tolist()
        boxes, box_offsets = batch["boxes"], batch["boxes_offsets"]
        assert boxes.shape == (int(box_offsets[-1]), 4)
        for i, crop in enumerate(batch["crop"]):
            want, kept = map_boxes(ds[int(batch["id"][i])]["boxes"], crop.tolist(), SIZE, "xywh")
            np.testing.assert_allclose(boxes[box_offsets[i]:box_offsets[i + 1]].numpy(), want, atol=1e-4, rtol=0)
            cats = batch["category_id"][batch["category_id_offsets"][i]:batch["category_id_offsets"][i + 1]]
            assert cats.tolist() == ds[int(batch["id"][i])]["category_id"][kept].tolist()


@pytest.mark.parametrize("device", cuda_check.DEVICES)
def test_device_fields(detection, device):
    cuda_check.require(device)
    cuda_check.run_fields(detection, device, batch_size=6, shuffle=True, seed=5, threads=2,
                          transform=unirecord.RandomResizedCrop(SIZE, flip=True), fields=FIELDS)


def write_token_dataset(path):
    """30 records of variable-length tokens and mask and a score, no image."""
    rng = np.random.default_rng(0)
    lengths = rng.integers(0, 40, 30)
    with unirecord.Writer(path, {"tokens": Field("tokens", "int32", shape=(-1,)),
                                 "mask": Field("mask", "bool", shape=(-1,)), "score": "float32"}, "t", sync=False) as w:
        for i, n in enumerate(lengths):
            w.write({"tokens": np.arange(n, dtype=np.int32) + i, "mask": np.arange(n) % 2 == 0, "score": i / 4})


def test_token_dataset_without_images(tmp_path):
    write_token_dataset(tmp_path)
    ours = unirecord.Loader(tmp_path, batch_size=8, shuffle=False, prefetch=4,
                            sampler=unirecord.Sampler(num_shards=1, shard_id=0),
                            fields=unirecord.Fields(["tokens", "mask", "score"], image_field=None, label_field=None,
                                                    pad_value=0))
    ds = unirecord.Dataset(tmp_path)
    theirs = torch.utils.data.DataLoader(
        [{"tokens": torch.from_numpy(ds[i]["tokens"].copy()), "mask": torch.from_numpy(ds[i]["mask"].copy()),
          "score": torch.tensor(ds[i]["score"], dtype=torch.float32), "id": torch.tensor(i)} for i in range(len(ds))],
        batch_size=8, collate_fn=lambda s: pad_collate(s, 0, ("tokens", "mask")))
    got, want = list(ours), list(theirs)
    assert len(got) == len(want) == 4
    for a, b in zip(got, want):
        assert "crop" not in a and "image" not in a and a["mask"].dtype == torch.bool
        assert_batches_equal(a, b)
    # dtype= converts images only: without images it changes nothing.
    converted = unirecord.Loader(tmp_path, batch_size=8, shuffle=False, dtype=torch.float32,
                                 sampler=unirecord.Sampler(num_shards=1, shard_id=0),
                                 fields=unirecord.Fields(["score"], image_field=None, label_field=None))
    assert torch.equal(next(iter(converted))["score"], want[0]["score"])


@pytest.mark.parametrize("device", cuda_check.DEVICES)
def test_token_fields_without_images_on_the_device(tmp_path, device):
    """The fields alone go up to the device."""
    cuda_check.require(device)
    write_token_dataset(tmp_path)
    cuda_check.run_fields(tmp_path, device, batch_size=8, shuffle=True, seed=1,
                          fields=unirecord.Fields(["tokens", "mask", "score"], image_field=None, label_field=None))


def test_threads_determinism_and_exact_resume(detection):
    one = [b for b in loader(detection, shuffle=True, threads=1)]
    many = [b for b in loader(detection, shuffle=True, threads=4)]
    for a, b in zip(one, many):
        assert_batches_equal(a, b)
    first = loader(detection, shuffle=True)
    first.set_epoch(1)
    it = iter(first)
    next(it), next(it)
    state = first.state_dict()
    rest = [b for b in it]
    resumed = loader(detection, shuffle=True)
    resumed.load_state_dict(state)
    again = list(resumed)
    assert len(again) == len(rest) > 0
    for a, b in zip(again, rest):
        assert_batches_equal(a, b)


def test_bad_records_with_fields_raise_or_skip(tmp_path):
    with unirecord.Writer(tmp_path, unirecord.Schema(SCHEMA), "det", sync=False) as w:
        for i in range(8):
            rec = detection_record(i)
            if i == 3:
                rec["image"] = b"GIF89a not an image"
            w.write(rec)
    with pytest.raises(ValueError, match=r"record 3 \(img_003.jpg\)"):
        list(loader(tmp_path, batch_size=4))
    batches = list(loader(tmp_path, batch_size=4, decode=unirecord.Decode(on_bad_record="skip")))
    ids = torch.cat([b["id"] for b in batches]).tolist()
    assert ids == [0, 1, 2, 4, 4, 5, 6, 7]
    ds = unirecord.Dataset(tmp_path)
    assert batches[0]["caption"][3] == ds[4]["caption"]  # the fields follow the replacement


def test_field_option_bad_records(detection):
    with pytest.raises(KeyError, match="nope"):
        loader(detection, fields=replace(FIELDS, names=["nope"]))
    with pytest.raises(ValueError, match="'id'"):
        loader(detection, fields=replace(FIELDS, names=["id"]))
    with pytest.raises(TypeError, match="list of field names"):
        loader(detection, fields="tokens")
    with pytest.raises(ValueError, match="ragged"):
        replace(FIELDS, ragged="nested")
    with pytest.raises(ValueError, match="box format"):
        replace(FIELDS, box_format="cxcywh")
    with pytest.raises(ValueError, match="float32 \\(-1, 4\\)"):
        loader(detection, fields=replace(FIELDS, boxes="tokens", box_aligned=[]))
    with pytest.raises(ValueError, match="'tokens_lengths' collides with the lengths of field 'tokens'"):
        loader(detection, fields=replace(FIELDS, names=["tokens", "tokens_lengths"]))
    # Without fields the batch is still the (images, labels) tuple.
    images, labels = next(iter(unirecord.Loader(detection, batch_size=4, shuffle=False,
                                                sampler=unirecord.Sampler(num_shards=1, shard_id=0))))
    ds = unirecord.Dataset(detection)
    assert images.shape == (4, 3, 224, 224) and labels.tolist() == [ds[i]["label"] for i in range(4)]


def check_masks_follow_crops(path, seed, mask_of):
    """Loads `path` with masks=["mask"] and checks every sample's mask against
    torchvision's resized_crop(NEAREST) + hflip of mask_of(record id) with the
    window ImageDataset.crop_window gives. Returns the number of flips seen."""
    F = pytest.importorskip("torchvision.transforms.functional")
    from torchvision.transforms import InterpolationMode

    images = unirecord.ImageDataset(path, unirecord.RandomResizedCrop(SIZE, flip=True), seed=seed, label_field=None)
    ours = unirecord.Loader(path, batch_size=4, shuffle=True, seed=seed, threads=2,
                            transform=unirecord.RandomResizedCrop(SIZE, flip=True),
                            sampler=unirecord.Sampler(num_shards=1, shard_id=0),
                            fields=unirecord.Fields(label_field=None, masks=["mask"]))
    flips = seen = 0
    for batch in ours:
        assert batch["mask"].shape == (len(batch["id"]), SIZE, SIZE) and batch["mask"].dtype == torch.uint8
        for i, rid in enumerate(batch["id"].tolist()):
            x, y, w, h, flip = images.crop_window(rid)
            assert batch["crop"][i].tolist() == [x, y, w, h, int(flip)]
            want = F.resized_crop(mask_of(rid)[None], y, x, h, w, [SIZE, SIZE], interpolation=InterpolationMode.NEAREST)
            if flip:
                want = F.hflip(want)
            assert torch.equal(batch["mask"][i], want[0]), rid
            flips += flip
            seen += 1
    assert seen == len(images)
    return flips


def test_masks_follow_the_crop_as_torchvision_nearest(tmp_path):
    """A uint8 (height, width) mask gets the image's window, a nearest resize
    and the flip: equal to torchvision's resized_crop(NEAREST) + hflip on the
    mask tensor with the window ImageDataset.crop_window gives."""
    sizes = [(64, 48), (37, 91), (120, 80), (50, 50), (203, 101)]
    with unirecord.Writer(tmp_path / "seg", unirecord.Schema([Field("image", "bytes"),
                                                             Field("mask", "uint8", shape=(-1, -1))]),
                          "seg", sync=False) as w:
        for k, (width, height) in enumerate(sizes * 3):
            mask = np.random.default_rng(k).integers(0, 21, (height, width), dtype=np.uint8)
            w.write({"image": jpeg_bytes(width, height, k), "mask": mask})
    path = tmp_path / "seg"
    ds = unirecord.Dataset(path)
    flips = check_masks_follow_crops(path, 2, lambda rid: torch.from_numpy(ds[rid]["mask"].copy()))
    assert flips > 0
    # A mask of another size than its image is a bad record, named.
    with unirecord.Writer(tmp_path / "bad", ds.schema, "bad", sync=False) as w:
        w.write({"image": jpeg_bytes(40, 30, 0), "mask": np.zeros((30, 41), np.uint8)})
    with pytest.raises(ValueError, match=r"record 0: mask field 'mask' is 30x41 .* the image is 30x40"):
        next(iter(unirecord.Loader(tmp_path / "bad", batch_size=1, shuffle=False,
                                   sampler=unirecord.Sampler(num_shards=1, shard_id=0),
                                   fields=unirecord.Fields(label_field=None, masks=["mask"]))))
    with pytest.raises(ValueError, match="needs an image field"):
        unirecord.Loader(path, batch_size=1, shuffle=False,
                         fields=unirecord.Fields(label_field=None, image_field=None, masks=["mask"]))


def png_mask_bytes(labels, mode):
    """`labels` (uint8 height x width) as a PNG: a palette image (VOC's
    segmentation format; 4-bit when the labels fit) or an 8-bit gray one."""
    image = PIL.fromarray(labels, "L")
    if mode == "P":
        image = image.convert("P")
        image.putpalette([v for i in range(256) for v in ((i * 37) % 256, (i * 91) % 256, (i * 13) % 256)])
    out = io.BytesIO()
    image.save(out, "PNG", bits=4 if mode == "P" and labels.max() < 16 else 8)
    return out.getvalue()


@pytest.mark.parametrize("mode", ["P", "L"])
def test_png_masks_follow_the_crop_as_torchvision_nearest(tmp_path, mode):
    """A mask stored as PNG bytes (palette indices or gray values) batches as
    numpy.array(PIL.Image.open(png)) would, cropped, resized NEAREST and
    flipped with the image as torchvision does."""
    sizes = [(64, 48), (37, 91), (120, 80), (203, 101)]
    with unirecord.Writer(tmp_path / "seg", unirecord.Schema([Field("image", "bytes"), Field("mask", "bytes")]),
                          "seg", sync=False) as w:
        for k, (width, height) in enumerate(sizes * 3):
            labels = np.random.default_rng(k).integers(0, 12 if k % 2 else 200, (height, width), dtype=np.uint8)
            w.write({"image": jpeg_bytes(width, height, k), "mask": png_mask_bytes(labels, mode)})
    path = tmp_path / "seg"
    ds = unirecord.Dataset(path)

    def mask_of(rid):
        decoded = PIL.open(io.BytesIO(ds[rid]["mask"]))
        assert decoded.mode == mode
        return torch.from_numpy(np.array(decoded))

    check_masks_follow_crops(path, 3, mask_of)


def test_png_masks_that_are_not_labels_or_are_damaged_are_named(tmp_path):
    """An RGB PNG mask is NotSupported and a truncated one Corruption, each
    naming the record and the field."""
    schema = unirecord.Schema([Field("image", "bytes"), Field("mask", "bytes")])
    rgb = io.BytesIO()
    PIL.new("RGB", (40, 30), (1, 2, 3)).save(rgb, "PNG")
    cases = {"rgb": (rgb.getvalue(), unirecord.NotSupportedError, "a mask PNG must be a palette or an 8-bit gray image"),
             "cut": (png_mask_bytes(np.zeros((30, 40), np.uint8), "L")[:-30], unirecord.CorruptRecordError, "PNG")}
    for name, (mask, error, message) in cases.items():
        with unirecord.Writer(tmp_path / name, schema, name, sync=False) as w:
            w.write({"image": jpeg_bytes(40, 30, 0), "mask": mask})
        with pytest.raises(error, match=rf"record 0.*mask field 'mask'.*{message}"):
            next(iter(unirecord.Loader(tmp_path / name, batch_size=1, shuffle=False,
                                       sampler=unirecord.Sampler(num_shards=1, shard_id=0),
                                       fields=unirecord.Fields(label_field=None, masks=["mask"]))))


def test_no_label_field_means_no_labels_and_the_image_may_be_named(tmp_path):
    """A dataset without a label field (as `urec convert coco` writes) loads
    with the defaults, and `fields` may name the image field; a label field
    named explicitly must exist."""
    schema = [f for f in SCHEMA if f.name != "label"]
    with unirecord.Writer(tmp_path, {f.name: f for f in schema}, "nolabel", sync=False) as w:
        for i in range(10):
            record = detection_record(i)
            del record["label"]
            w.write(record)
    loader = unirecord.Loader(tmp_path, batch_size=4, shuffle=False, fields=["image", "boxes"],
                              transform=unirecord.CenterCrop(SIZE, resize=SIZE),
                              sampler=unirecord.Sampler(num_shards=1, shard_id=0))
    batches = list(loader)
    assert [len(b["id"]) for b in batches] == [4, 4, 2]
    for batch in batches:
        assert "label" not in batch and batch["image"].shape[1:] == (3, SIZE, SIZE)
        assert batch["boxes"].shape[0] == len(batch["id"])
    images, labels = next(iter(unirecord.Loader(tmp_path, batch_size=4, shuffle=False,
                                                sampler=unirecord.Sampler(num_shards=1, shard_id=0))))
    assert labels is None and images.shape[0] == 4
    with pytest.raises(KeyError, match="labels"):
        unirecord.Loader(tmp_path, batch_size=4, shuffle=False, fields=unirecord.Fields(label_field="labels"))
