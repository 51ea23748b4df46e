"""unirecord.ImageDataset against torchvision's ImageFolder pipeline, in
DataLoader workers, and its epoch/crop determinism."""
import os
import pickle

import numpy as np
import pytest

import unirecord
from urec_fixtures import image_folder, image_records  # noqa: F401 (pytest fixtures)

torch = pytest.importorskip("torch")
datasets = pytest.importorskip("torchvision.datasets")
T = pytest.importorskip("torchvision.transforms")
F = pytest.importorskip("torchvision.transforms.functional")

# The decode layer's stated tolerance for a crop window resized in one step
# (tests/cli/test_decode.py, docs/image.md): mean abs difference <= 2.5 and
# 99th percentile <= 24 (of 255) per image. Resize + CenterCrop is exact
# unless DCT scaling applies (ImageDecoder::DecodeCenterCrop).
MEAN_TOL = 2.5
P99_TOL = 24


def pil_to_tensor():
    return T.PILToTensor() if hasattr(T, "PILToTensor") else T.Lambda(lambda im: torch.as_tensor(np.asarray(im)).permute(2, 0, 1))


def test_center_crop_matches_torchvision_imagefolder(image_folder, image_records):
    ours = unirecord.ImageDataset(image_records, unirecord.CenterCrop(224, resize=256))
    theirs = datasets.ImageFolder(str(image_folder), T.Compose([T.Resize(256), T.CenterCrop(224), pil_to_tensor()]))
    assert ours.classes == theirs.classes
    assert ours.class_to_idx == theirs.class_to_idx
    assert len(ours) == len(theirs)
    assert list(ours.targets) == theirs.targets
    worst = []
    for i in range(len(ours)):
        a, la = ours[i]
        b, lb = theirs[i]
        assert la == lb
        assert a.dtype == torch.uint8 and a.shape == (3, 224, 224) and a.is_contiguous()
        diff = (a.int() - b.int()).abs().numpy()
        worst.append((diff.mean(), np.percentile(diff, 99)))
        assert diff.mean() <= MEAN_TOL and np.percentile(diff, 99) <= P99_TOL, (i, worst[-1])
    print("center crop vs torchvision: worst mean %.3f, worst p99 %.1f" % (max(w[0] for w in worst), max(w[1] for w in worst)))


def test_center_crop_without_dct_scaling_equals_torchvision(image_folder, image_records):
    """ImageDecoder::DecodeCenterCrop reproduces Resize + CenterCrop byte for byte
    when DCT scaling does not apply (include/unirecord/image.h)."""
    ours = unirecord.ImageDataset(image_records, unirecord.CenterCrop(224, resize=256), dct_scaling=False)
    theirs = datasets.ImageFolder(str(image_folder), T.Compose([T.Resize(256), T.CenterCrop(224), pil_to_tensor()]))
    for i in range(len(ours)):
        assert torch.equal(ours[i][0], theirs[i][0]), i


def test_random_resized_crop_is_the_planned_window(image_folder, image_records):
    ds = unirecord.ImageDataset(image_records, unirecord.RandomResizedCrop(160, flip=True), seed=7)
    ref = datasets.ImageFolder(str(image_folder))
    flips = 0
    for i in range(len(ds)):
        x, y, w, h, flip = ds.crop_window(i)
        flips += flip
        img = ref[i][0].convert("RGB")
        want = F.resized_crop(img, y, x, h, w, [160, 160])
        if flip:
            want = F.hflip(want)
        want = torch.as_tensor(np.array(want)).permute(2, 0, 1)
        got, label = ds[i]
        assert label == ref[i][1]
        diff = (got.int() - want.int()).abs().numpy()
        assert diff.mean() <= MEAN_TOL and np.percentile(diff, 99) <= P99_TOL, (i, diff.mean())
    assert 0 < flips < len(ds)


def test_crops_are_keyed_by_seed_epoch_and_record(image_records):
    ds = unirecord.ImageDataset(image_records, seed=3)
    a = [ds.crop_window(i) for i in range(len(ds))]
    assert a == [unirecord.ImageDataset(image_records, seed=3).crop_window(i) for i in range(len(ds))]
    assert a != [unirecord.ImageDataset(image_records, seed=4).crop_window(i) for i in range(len(ds))]
    ds.set_epoch(1)
    assert ds.epoch == 1
    b = [ds.crop_window(i) for i in range(len(ds))]
    assert a != b
    assert b == [ds.crop_window(i, epoch=1) for i in range(len(ds))]
    assert torch.equal(ds[2][0], ds[2][0])


def test_crop_window_indexes_like_getitem(image_records):
    ds = unirecord.ImageDataset(image_records, seed=3)
    assert ds.crop_window(-1) == ds.crop_window(len(ds) - 1)
    for bad in (len(ds), -len(ds) - 1):
        with pytest.raises(IndexError):
            ds.crop_window(bad)
        with pytest.raises(IndexError):
            ds[bad]


def test_dataloader_workers_match_direct_indexing(image_records):
    ds = unirecord.ImageDataset(image_records, unirecord.RandomResizedCrop(64, flip=True), seed=1)
    ds.set_epoch(2)
    loader = torch.utils.data.DataLoader(ds, batch_size=4, num_workers=2, shuffle=False)
    images = torch.cat([b[0] for b in loader])
    labels = torch.cat([b[1] for b in loader])
    for i in range(len(ds)):
        img, label = ds[i]
        assert torch.equal(images[i], img), i
        assert labels[i].item() == label


@pytest.mark.parametrize("transform", [unirecord.RandomResizedCrop(64, flip=True), unirecord.CenterCrop(48, resize=56)],
                         ids=["random_resized_crop", "center_crop"])
def test_getitems_equals_getitem(image_records, transform):
    ds = unirecord.ImageDataset(image_records, transform, seed=11)
    ds.set_epoch(3)
    indices = [5, 0, len(ds) - 1, 5, -2, 7]
    batch = ds.__getitems__(indices)
    assert len(batch) == len(indices)
    for i, (image, label) in zip(indices, batch):
        want, want_label = ds[i]
        assert type(label) is int and label == want_label
        assert image.dtype == torch.uint8 and image.shape == want.shape and image.is_contiguous()
        assert torch.equal(image, want), i
    collated = torch.utils.data.default_collate(batch)
    per_item = torch.utils.data.default_collate([ds[i] for i in indices])
    assert torch.equal(collated[0], per_item[0]) and torch.equal(collated[1], per_item[1])
    assert collated[1].dtype == per_item[1].dtype == torch.int64
    assert ds.__getitems__([]) == []
    with pytest.raises(IndexError):
        ds.__getitems__([0, len(ds)])


@pytest.mark.parametrize("batch_size", [1, 5, 16])
def test_dataloader_batches_through_getitems_match_direct_indexing(image_records, batch_size):
    ds = unirecord.ImageDataset(image_records, unirecord.RandomResizedCrop(40, flip=True), seed=2)
    ds.set_epoch(1)
    order = torch.randperm(len(ds), generator=torch.Generator().manual_seed(3)).tolist()
    loader = torch.utils.data.DataLoader(ds, batch_size=batch_size, sampler=order, num_workers=2)
    calls = []
    fetched = []
    for images, labels in loader:
        assert images.shape[1:] == (3, 40, 40) and labels.dtype == torch.int64
        fetched += list(zip(images, labels.tolist()))
    assert len(fetched) == len(ds)
    for i, (image, label) in zip(order, fetched):
        want, want_label = ds[i]
        assert torch.equal(image, want), i
        assert label == want_label
    # the fetcher uses __getitems__ when it is defined (torch >= 1.13)
    ds.__getitems__ = lambda indices: calls.append(list(indices)) or [ds[i] for i in indices]
    next(iter(torch.utils.data.DataLoader(ds, batch_size=batch_size, sampler=order)))
    assert calls == [order[:batch_size]]


def test_set_epoch_reaches_persistent_workers(image_records):
    ds = unirecord.ImageDataset(image_records, unirecord.RandomResizedCrop(32), seed=5)
    loader = torch.utils.data.DataLoader(ds, batch_size=len(ds), num_workers=2, persistent_workers=True)
    per_epoch = []
    for epoch in range(2):
        ds.set_epoch(epoch)
        (images, _), = list(loader)
        per_epoch.append(images)
        for i in (0, 5, len(ds) - 1):
            assert torch.equal(images[i], ds[i][0])
    assert not torch.equal(per_epoch[0], per_epoch[1])


def test_pickle_keeps_options_and_epoch(image_records):
    ds = unirecord.ImageDataset(image_records, unirecord.CenterCrop(100, resize=120), seed=9)
    ds.set_epoch(4)
    ds2 = pickle.loads(pickle.dumps(ds))
    assert ds2.epoch == 4 and ds2.seed == 9 and len(ds2) == len(ds)
    assert torch.equal(ds2[3][0], ds[3][0])


def test_bad_record_names_the_record(tmp_path, image_folder):
    jpeg = (image_folder / "cat" / "img_000.jpg").read_bytes()
    with unirecord.Writer(tmp_path, {"image": "bytes", "label": "int64", "path": "string"}, sync=False) as w:
        w.write({"image": jpeg, "label": 0, "path": "good.jpg"})
        w.write({"image": b"GIF89a" + b"0" * 64, "label": 1, "path": "bad.gif"})
        w.write({"image": jpeg[: len(jpeg) // 3], "label": 2, "path": "cut.jpg"})
    ds = unirecord.ImageDataset(tmp_path, unirecord.CenterCrop(64))
    assert ds[0][1] == 0
    with pytest.raises(ValueError, match=r"record 1 \(bad.gif\).*not a JPEG or PNG: GIF"):
        ds[1]
    ds[2]  # lenient (default): a truncated JPEG decodes what it has, like PIL with LOAD_TRUNCATED_IMAGES
    strict = unirecord.ImageDataset(tmp_path, unirecord.CenterCrop(64), strict=True)
    # a truncated JPEG is damaged data: Corruption (libjpeg's warning, strict mode)
    with pytest.raises(unirecord.CorruptRecordError, match=r"record 2 \(cut.jpg\)") as one:
        strict[2]
    # a batch raises what the first bad record in it raises alone, naming it
    assert [label for _, label in ds.__getitems__([0, 2, 0])] == [0, 2, 0]
    with pytest.raises(ValueError, match=r"record 1 \(bad.gif\).*not a JPEG or PNG: GIF"):
        ds.__getitems__([0, 1, 2])
    with pytest.raises(unirecord.CorruptRecordError, match=r"record 2 \(cut.jpg\)") as many:
        strict.__getitems__([0, 2, 1])
    assert str(many.value) == str(one.value)
    # the DataLoader's fetcher goes through __getitems__ (in-process here: a worker
    # would re-raise it wrapped by torch, and tearing workers down after an error
    # races in multiprocessing's queue feeder threads)
    with pytest.raises(ValueError, match=r"record 1 \(bad.gif\).*not a JPEG or PNG: GIF"):
        list(torch.utils.data.DataLoader(ds, batch_size=3))


def test_transforms_validate():
    with pytest.raises(ValueError):
        unirecord.CenterCrop(224, resize=200)
    with pytest.raises(ValueError):
        unirecord.RandomResizedCrop(224, scale=(0.5, 0.1))
    with pytest.raises(ValueError):
        unirecord.RandomResizedCrop((224, 100))
    assert unirecord.RandomResizedCrop((64, 64)).size == 64
    assert unirecord.RandomResizedCrop(8, flip=True).flip_probability == 0.5


def test_rss_is_flat_over_ten_epochs(image_records):
    import gc

    def rss():
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * 4096

    ds = unirecord.ImageDataset(image_records, unirecord.RandomResizedCrop(96, flip=True))
    raw = unirecord.Dataset(image_records)
    samples = []
    for epoch in range(10):
        ds.set_epoch(epoch)
        for i in range(len(ds)):
            image, _ = ds[i]
            view = raw[i]["image"]
            assert image.shape == (3, 96, 96) and len(view) > 0
        del image, view
        gc.collect()
        samples.append(rss())
    assert samples[-1] - samples[2] < 2 << 20, [s >> 10 for s in samples]


def test_a_drop_in_for_imagefolder(image_folder, image_records):
    """The same transform and target_transform given to ImageFolder and to
    ImageDataset: the same classes, samples, targets and items (the leading
    Resize + CenterCrop runs natively, exact without DCT scaling; ToTensor and
    Normalize run on the native uint8 tensor)."""
    def transform():
        return T.Compose([T.Resize(64), T.CenterCrop(56), T.ToTensor(), T.Normalize((0.5, 0.4, 0.3), (0.2, 0.3, 0.25))])

    def target_transform(label):
        return 100 + label

    theirs = datasets.ImageFolder(str(image_folder), transform(), target_transform=target_transform)
    ours = unirecord.ImageDataset(image_records, transform(), target_transform, root=image_folder, dct_scaling=False)
    assert isinstance(ours.crop, unirecord.CenterCrop) and (ours.crop.size, ours.crop.resize) == (56, 64)
    assert ours.classes == theirs.classes and ours.class_to_idx == theirs.class_to_idx
    assert ours.targets == theirs.targets and type(ours.targets[0]) is int
    assert ours.samples == theirs.samples and ours.imgs == theirs.imgs
    assert unirecord.ImageDataset(image_records).samples == [
        (os.path.relpath(path, image_folder), label) for path, label in theirs.samples]
    for i in range(len(theirs)):
        (a, la), (b, lb) = ours[i], theirs[i]
        assert la == lb == 100 + theirs.targets[i]
        assert a.dtype == b.dtype == torch.float32 and torch.equal(a, b), i
    batch = ours.__getitems__([3, 0])
    assert torch.equal(batch[0][0], theirs[3][0]) and batch[1][1] == theirs[0][1]


def test_which_torchvision_transforms_run_natively(image_records):
    lifted = unirecord.ImageDataset(image_records, T.Compose([T.RandomResizedCrop(48, scale=(0.3, 0.9)),
                                                             T.RandomHorizontalFlip(0.25), T.PILToTensor()]), seed=4)
    native = unirecord.ImageDataset(image_records, unirecord.RandomResizedCrop(48, scale=(0.3, 0.9), flip=0.25), seed=4)
    assert lifted.transform is None and lifted.crop.flip_probability == 0.25
    assert all(torch.equal(lifted[i][0], native[i][0]) for i in range(len(native)))
    # A callable that is not torchvision's runs whole on the output of the native crop.
    flipped = unirecord.ImageDataset(image_records, lambda image: image.flip(-1), crop=unirecord.CenterCrop(40, resize=48))
    plain = unirecord.ImageDataset(image_records, unirecord.CenterCrop(40, resize=48))
    assert torch.equal(flipped[2][0], plain[2][0].flip(-1))
    # ToTensor without a crop before it: the native crop= then a uint8 -> float conversion.
    scaled = unirecord.ImageDataset(image_records, T.Compose([T.ToTensor(), T.Normalize((0.0,) * 3, (2.0,) * 3)]),
                                    crop=unirecord.CenterCrop(40, resize=48))
    assert torch.equal(scaled[2][0], plain[2][0].float() / 255 / 2)
    with pytest.raises(ValueError, match="bilinear interpolation only"):
        unirecord.ImageDataset(image_records, T.Compose([T.RandomResizedCrop(48, interpolation=T.InterpolationMode.NEAREST)]))
    with pytest.raises(ValueError, match="Resize\\(int\\) followed by CenterCrop only"):
        unirecord.ImageDataset(image_records, T.Compose([T.Resize((48, 64)), T.CenterCrop(40)]))
    with pytest.raises(ValueError, match="give the crop once"):
        unirecord.ImageDataset(image_records, T.CenterCrop(40), crop=unirecord.CenterCrop(40))
    # The Loader takes the native part only.
    loader = unirecord.Loader(image_records, 4, False, transform=T.Compose([T.Resize(48), T.CenterCrop(40)]), threads=1)
    images, _ = next(iter(loader))
    assert torch.equal(images[0], plain[0][0])
    with pytest.raises(TypeError, match="Loader runs native transforms only"):
        unirecord.Loader(image_records, 4, False, transform=T.Compose([T.CenterCrop(40), T.Normalize((0.5,) * 3, (0.2,) * 3)]))
