"""unirecord.Loader: batches through DLPack, lifetime of the shared buffers,
epochs, exact resume, RSS over epochs and the CUDA path."""
import gc
import json
import os
import pathlib
import shutil
import sys

import numpy as np
import pytest

import unirecord
import cuda_check
from urec_fixtures import loader_records  # noqa: F401 (pytest fixtures)

torch = pytest.importorskip("torch")


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def collect(loader):
    ids, images, labels = [], [], []
    for im, lb, rid in loader:
        images.append(im.clone())
        labels.append(lb.clone())
        ids.append(rid.clone())
    return torch.cat(ids), torch.cat(images), torch.cat(labels)


def test_batches_match_image_dataset(loader_records):
    ds = unirecord.Dataset(loader_records)
    loader = unirecord.Loader(ds, batch_size=8, shuffle=True, seed=11, threads=2,
                              transform=unirecord.RandomResizedCrop(48, flip=True),
                              fields=unirecord.Fields(return_ids=True))
    assert len(loader) == 12  # ceil(90 / 8)
    ref = unirecord.ImageDataset(ds, unirecord.RandomResizedCrop(48, flip=True), seed=11)
    sizes = []
    for images, labels, ids in loader:
        sizes.append(len(ids))
        assert images.dtype == torch.uint8 and images.shape[1:] == (3, 48, 48) and images.is_contiguous()
        assert labels.dtype == torch.int64
        for k in range(len(ids)):
            img, label = ref[int(ids[k])]
            assert torch.equal(images[k], img)
            assert labels[k].item() == label
    assert sizes == [8] * 11 + [2]
    stats = loader.stats()
    assert stats["samples"] == 90 and stats["batches"] == 12 and stats["threads"] == 2


def test_sequential_center_crop_and_epochs(loader_records):
    loader = unirecord.Loader(loader_records, batch_size=16, shuffle=False, threads=2,
                              transform=unirecord.CenterCrop(32, resize=40), drop_last=True,
                              fields=unirecord.Fields(return_ids=True))
    assert len(loader) == 5
    ids, _, labels = collect(loader)
    assert ids.tolist() == list(range(80))
    np.testing.assert_array_equal(labels.numpy(), unirecord.Dataset(loader_records).column("label")[:80])
    # Iterating again without set_epoch repeats the epoch; set_epoch changes a shuffled order.
    shuffled = unirecord.Loader(loader_records, batch_size=16, shuffle=True, seed=2, threads=2,
                                transform=unirecord.CenterCrop(32, resize=40), fields=unirecord.Fields(return_ids=True))
    e0 = collect(shuffled)[0]
    assert sorted(e0.tolist()) == list(range(90)) and e0.tolist() != list(range(90))
    assert torch.equal(collect(shuffled)[0], e0)
    shuffled.set_epoch(1)
    e1 = collect(shuffled)[0]
    assert sorted(e1.tolist()) == list(range(90)) and not torch.equal(e0, e1)


@pytest.mark.parametrize("resize", [40, None], ids=["resize_then_crop", "crop_alone"])
def test_center_crop_matches_image_dataset(loader_records, resize):
    # Both run the one SampleDecoder: with resize, ImageDecoder::DecodeCenterCrop (torchvision's
    # Resize + CenterCrop byte for byte); without, torchvision's CenterCrop alone.
    ds = unirecord.Dataset(loader_records)
    for dct_scaling in (True, False):
        loader = unirecord.Loader(ds, batch_size=8, shuffle=False, threads=2,
                                  transform=unirecord.CenterCrop(32, resize=resize),
                                  fields=unirecord.Fields(return_ids=True),
                                  decode=unirecord.Decode(dct_scaling=dct_scaling))
        ref = unirecord.ImageDataset(ds, unirecord.CenterCrop(32, resize=resize), dct_scaling=dct_scaling)
        n = 0
        for images, labels, ids in loader:
            for k in range(len(ids)):
                img, label = ref[int(ids[k])]
                assert torch.equal(images[k], img), int(ids[k])
                assert labels[k].item() == label
                n += 1
        assert n == 90


def test_resume_mid_epoch_is_exact(loader_records):
    kwargs = dict(batch_size=8, shuffle=True, seed=5, fields=unirecord.Fields(return_ids=True), threads=2,
                  transform=unirecord.RandomResizedCrop(40))
    full = unirecord.Loader(loader_records, **kwargs)
    full.set_epoch(3)
    ids, images, labels = collect(full)
    part = unirecord.Loader(loader_records, **kwargs)
    part.set_epoch(3)
    it = iter(part)
    for _ in range(4):
        next(it)
    state = part.state_dict()
    assert state["epoch"] == 3 and state["position"] == 32
    del it, part
    resumed = unirecord.Loader(loader_records, **kwargs)
    resumed.load_state_dict(state)
    rids, rimages, rlabels = collect(resumed)
    assert torch.equal(rids, ids[32:]) and torch.equal(rimages, images[32:]) and torch.equal(rlabels, labels[32:])


def test_tensors_stay_valid_after_the_loader_moves_on(loader_records):
    """The documented rule: a batch's tensors keep their buffer until they are
    freed, unchanged however many batches the loader hands out meanwhile (the
    loader fills its other buffers); asking for a batch while tensors of
    every one of the prefetch + 1 buffers are still referenced raises
    RuntimeError (never a silent overwrite, never a deadlock). A tensor also
    outlives its loader."""
    loader = unirecord.Loader(loader_records, batch_size=8, shuffle=True, seed=1, prefetch=2, threads=2,
                              transform=unirecord.RandomResizedCrop(32), fields=unirecord.Fields(return_ids=True))
    assert len(loader) == 12
    it = iter(loader)
    kept = next(it)
    copy = tuple(t.clone() for t in kept)
    for _ in range(6):  # many more than prefetch + 1 batches go by while `kept` lives
        next(it)
    for t, c in zip(kept, copy):
        assert torch.equal(t, c)
    later = [next(it), next(it)]  # now all 3 buffers are held
    with pytest.raises(RuntimeError, match="holds all 3 batch buffers"):
        next(it)
    for t, c in zip(kept, copy):
        assert torch.equal(t, c)
    del later, t, c
    gc.collect()
    rest = sum(1 for _ in loader)  # continues where it stopped
    assert rest == len(loader) - 9
    for t, c in zip(kept, copy):
        assert torch.equal(t, c)
    del kept
    # Iterating normally (only the loop variable alive) never trips the rule.
    loader.set_epoch(1)
    assert sum(1 for _ in loader) == len(loader)
    # A tensor outlives its loader.
    loader.set_epoch(2)
    images, labels, ids = next(iter(loader))
    want = images.clone()
    del loader
    gc.collect()
    assert torch.equal(images, want)


def test_plain_loop_over_epochs_keeps_the_last_batch_alive(loader_records):
    # The loop variable still holds the previous epoch's last batch when the
    # next epoch starts (whichever buffer it sits in); here it is also kept
    # in `prev` through the whole next epoch. One native loader throughout.
    loader = unirecord.Loader(loader_records, batch_size=9, shuffle=True, seed=2, threads=2, prefetch=2,
                              transform=unirecord.RandomResizedCrop(24), fields=unirecord.Fields(return_ids=True))
    assert len(loader) == 10
    prev = None
    for epoch in range(4):
        loader.set_epoch(epoch)
        ids = []
        for images, labels, rid in loader:
            ids += rid.tolist()
        assert sorted(ids) == list(range(90))
        if prev is not None:
            assert torch.equal(prev[0], prev[1])  # unchanged by a whole epoch of batches
        prev = (images, images.clone())
    assert loader.stats()["samples"] == 360
    # Holding every buffer (prefetch + 1 = 3) is the one thing that fails.
    loader.set_epoch(4)
    it = iter(loader)
    held = [next(it), next(it)]  # plus epoch 3's last batch
    with pytest.raises(RuntimeError, match="holds all 3 batch buffers"):
        next(it)
    assert torch.equal(prev[0], prev[1])
    del held, it
    gc.collect()
    assert sum(1 for _ in loader) == 8  # the rest of epoch 4, with epoch 3's last batch still held
    assert torch.equal(prev[0], prev[1])
    del prev, images, labels, rid
    gc.collect()
    # A restore while a batch is held works too.
    loader.set_epoch(5)
    held = [next(iter(loader)) for _ in range(1)]
    copy = held[0][0].clone()
    loader.load_state_dict(loader.state_dict())
    assert sum(1 for _ in loader) == 9 and torch.equal(held[0][0], copy)


def test_cpu_dtype_and_normalisation(loader_records):
    kwargs = dict(batch_size=8, shuffle=False, threads=1, transform=unirecord.CenterCrop(32, resize=32))
    raw, _ = next(iter(unirecord.Loader(loader_records, **kwargs)))
    norm, _ = next(iter(unirecord.Loader(loader_records, dtype=torch.float32,
                                         mean=unirecord.IMAGENET_MEAN, std=unirecord.IMAGENET_STD, **kwargs)))
    m = torch.tensor(unirecord.IMAGENET_MEAN).view(1, 3, 1, 1)
    s = torch.tensor(unirecord.IMAGENET_STD).view(1, 3, 1, 1)
    assert torch.allclose(norm, (raw.float() / 255 - m) / s, atol=1e-5)


def test_rss_is_flat_over_ten_epochs(loader_records):
    loader = unirecord.Loader(loader_records, batch_size=16, shuffle=True, seed=0, threads=2,
                              transform=unirecord.RandomResizedCrop(64, flip=True))
    samples = []
    for epoch in range(10):
        loader.set_epoch(epoch)
        n = 0
        for images, labels in loader:
            n += images.shape[0]
            images.float().mean()  # touch the data
        assert n == 90
        gc.collect()
        samples.append(rss_bytes())
    growth = samples[-1] - samples[2]
    assert growth < 4 << 20, [s >> 20 for s in samples]


def test_errors(loader_records, tmp_path):
    with pytest.raises(FileNotFoundError):
        unirecord.Loader(tmp_path / "nope", batch_size=4, shuffle=False)
    with pytest.raises(ValueError):
        unirecord.Loader(loader_records, batch_size=0, shuffle=False)
    with pytest.raises(ValueError, match="resize"):
        unirecord.Loader(loader_records, batch_size=4, shuffle=False, transform=unirecord.CenterCrop(32, resize=16))
    with pytest.raises(ValueError):
        unirecord.Loader(loader_records, batch_size=4, shuffle=False, fields=unirecord.Fields(image_field="label"))
    with pytest.raises(KeyError, match="no field named 'nope'"):
        unirecord.Loader(loader_records, batch_size=4, shuffle=False, fields=unirecord.Fields(image_field="nope"))
    with pytest.raises(KeyError, match="no field named 'nope'"):
        unirecord.ImageDataset(loader_records, label_field="nope")
    with pytest.raises(ValueError):
        unirecord.Loader(loader_records, batch_size=4, shuffle=False, device="mps")


def test_bad_records_raise_or_skip(tmp_path, loader_records):
    good = unirecord.Dataset(loader_records, fields=["image"])
    with unirecord.Writer(tmp_path, {"image": "bytes", "label": "int64", "path": "string"}, sync=False) as w:
        for i in range(20):
            image = b"GIF89a not a jpeg" if i == 13 else bytes(good[i]["image"])
            w.write({"image": image, "label": i % 2, "path": f"img{i}.jpg"})
    kwargs = dict(batch_size=4, shuffle=False, threads=2, transform=unirecord.CenterCrop(16, resize=16))
    with pytest.raises(ValueError, match="img13.jpg"):
        for _ in unirecord.Loader(tmp_path, **kwargs):
            pass
    skipping = unirecord.Loader(tmp_path, fields=unirecord.Fields(return_ids=True),
                                decode=unirecord.Decode(on_bad_record="skip"), **kwargs)
    ids = [i for _, _, rid in skipping for i in rid.tolist()]
    assert len(ids) == 20 and 13 not in ids
    assert skipping.stats()["skipped"] == 1 and "img13.jpg" in skipping.stats()["last_bad_record"]


@pytest.mark.parametrize("device", cuda_check.DEVICES)
def test_device_loader(loader_records, device):
    cuda_check.require(device)
    cuda_check.run(loader_records, device)


@pytest.mark.parametrize("device", cuda_check.DEVICES)
def test_device_loader_over_http(loader_records, tmp_path, device):
    """A remote dataset (nginx on 127.0.0.1) to the device: the batches of
    the local CPU loader, normalised."""
    cuda_check.require(device)
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tests"))
    from remote_servers import Nginx

    for name in ("http_proxy", "HTTP_PROXY", "ALL_PROXY", "all_proxy"):
        os.environ.pop(name, None)  # 127.0.0.1 must not go through a proxy
    shutil.copytree(loader_records, tmp_path / "www" / "ds")
    nginx = Nginx(tmp_path / "www")
    try:
        kw = dict(batch_size=8, shuffle=True, seed=3, threads=2, transform=unirecord.CenterCrop(32, resize=40),
                  fields=unirecord.Fields(return_ids=True))
        url = f"http://127.0.0.1:{nginx.port}/ds/train.uset"
        remote = unirecord.Loader(url, device=device, remote=unirecord.Remote(cache_dir=tmp_path / "cache"), **kw)
        assert cuda_check.compare_normalised(remote, unirecord.Loader(loader_records, **kw), device) == 90
    finally:
        nginx.stop()


def test_shuffle_has_no_default_and_order_must_agree(loader_records):
    with pytest.raises(TypeError, match="shuffle"):
        unirecord.Loader(loader_records, batch_size=4)
    with pytest.raises(TypeError, match="shuffle must be True or False, not 1"):
        unirecord.Loader(loader_records, 4, 1)
    with pytest.raises(ValueError, match="order='block' contradicts shuffle=False"):
        unirecord.Loader(loader_records, 4, False, sampler=unirecord.Sampler(order="block"))
    with pytest.raises(ValueError, match="order='sequential' contradicts shuffle=True"):
        unirecord.Loader(loader_records, 4, True, sampler=unirecord.Sampler(order="sequential"))


def test_dataloader_spellings_are_aliases(loader_records):
    kwargs = dict(batch_size=8, shuffle=False, transform=unirecord.CenterCrop(16, resize=16))
    assert unirecord.Loader(loader_records, num_workers=3, **kwargs).threads == 3
    assert unirecord.Loader(loader_records, num_workers=0, **kwargs).threads == 1  # DataLoader's "no workers"
    assert unirecord.Loader(loader_records, threads=2, num_workers=2, **kwargs).threads == 2
    with pytest.raises(ValueError, match="threads=2 and num_workers=3 disagree"):
        unirecord.Loader(loader_records, threads=2, num_workers=3, **kwargs)
    with pytest.raises(ValueError, match="prefetch=2 and prefetch_factor=4: give prefetch .* not both"):
        unirecord.Loader(loader_records, prefetch=2, prefetch_factor=4, **kwargs)
    # prefetch_factor is DataLoader's, batches ahead per worker: prefetch =
    # prefetch_factor * threads, a pool of prefetch + 1 buffers; holding that
    # many batches trips the rule.
    for threads, factor in [(1, 1), (2, 1), (2, 2)]:
        loader = unirecord.Loader(loader_records, threads=threads, prefetch_factor=factor, **kwargs)
        pool = threads * factor + 1
        it = iter(loader)
        held = [next(it) for _ in range(pool)]
        with pytest.raises(RuntimeError, match=f"holds all {pool} batch buffers"):
            next(it)
        del held


def test_sampler_options_reach_the_sampler(loader_records):
    """block_size, window and sampler_drop_last give the ids `urec sample` prints
    for the same options (the same sampler driven from the command line)."""
    import subprocess

    urec = os.environ.get("UREC")
    if not urec:
        pytest.skip("UREC (the urec binary) is not set")
    for rank in range(4):
        loader = unirecord.Loader(loader_records, batch_size=5, shuffle=True, seed=3, threads=1,
                                  transform=unirecord.CenterCrop(16, resize=16),
                                  sampler=unirecord.Sampler(order="block", block_size=8, window=0, drop_last=True,
                                                            num_shards=4, shard_id=rank),
                                  fields=unirecord.Fields(return_ids=True))
        ids = [i for _, _, rid in loader for i in rid.tolist()]
        want = subprocess.run([urec, "sample", "--records", "90", "--order", "block", "--block-size", "8",
                               "--window", "0", "--seed", "3", "--num-shards", "4", "--shard-id", str(rank),
                               "--drop-last"], capture_output=True, text=True, check=True).stdout.split()
        assert ids == [int(i) for i in want]
        assert len(ids) == 90 // 4  # dropped, not padded to 23


def test_max_consecutive_bad_is_the_skip_limit(tmp_path, loader_records):
    good = unirecord.Dataset(loader_records, fields=["image"])
    with unirecord.Writer(tmp_path, {"image": "bytes", "label": "int64", "path": "string"}, sync=False) as w:
        for i in range(8):
            image = b"GIF89a not a jpeg" if i in (3, 4) else bytes(good[i]["image"])
            w.write({"image": image, "label": 0, "path": f"img{i}.jpg"})
    kwargs = dict(batch_size=4, shuffle=False, threads=1, transform=unirecord.CenterCrop(16, resize=16))
    skip = lambda limit: unirecord.Decode(on_bad_record="skip", max_consecutive_bad=limit)  # noqa: E731
    loader = unirecord.Loader(tmp_path, fields=unirecord.Fields(return_ids=True), decode=skip(3), **kwargs)
    assert sum(len(rid) for _, _, rid in loader) == 8
    with pytest.raises(ValueError, match=r"2 bad records in a row \(on_bad_record=skip\), the last: .*img4.jpg"):
        list(unirecord.Loader(tmp_path, decode=skip(2), **kwargs))


def test_urec_bench_on_bad_record_is_the_loaders_option(tmp_path, loader_records):
    """One name for the bad-record policy: urec bench --on-bad-record raise|skip
    does what Loader(on_bad_record=...) does on the same records."""
    import subprocess

    urec = os.environ.get("UREC")
    if not urec:
        pytest.skip("UREC (the urec binary) is not set")
    good = unirecord.Dataset(loader_records, fields=["image"])
    with unirecord.Writer(tmp_path, {"image": "bytes", "label": "int64", "path": "string"}, sync=False) as w:
        for i in range(8):
            image = b"GIF89a not a jpeg" if i == 3 else bytes(good[i]["image"])
            w.write({"image": image, "label": 0, "path": f"img{i}.jpg"})
    bench = [urec, "bench", str(tmp_path), "--batch", "4", "--threads", "1", "--size", "16", "--json"]
    raised = subprocess.run(bench, capture_output=True, text=True)
    assert raised.returncode != 0 and "img3.jpg" in raised.stderr
    skipped = subprocess.run(bench + ["--on-bad-record", "skip"], capture_output=True, text=True, check=True)
    loader = unirecord.Loader(tmp_path, batch_size=4, shuffle=True, threads=1,
                              transform=unirecord.RandomResizedCrop(16), decode=unirecord.Decode(on_bad_record="skip"))
    samples = sum(len(labels) for _, labels in loader)
    assert json.loads(skipped.stdout)["skipped"] == loader.stats()["skipped"] == 1
    assert json.loads(skipped.stdout)["samples"] == samples == 8


def test_a_state_with_or_without_its_descriptive_keys_resumes(loader_records):
    """The keys beside sampler_state may be given (as state_dict returns them) or left
    out; test_hostile_inputs.py has the states whose keys disagree with it."""
    kwargs = dict(batch_size=4, shuffle=True, threads=1, fields=unirecord.Fields(return_ids=True),
                  transform=unirecord.CenterCrop(16, resize=16))
    loader = unirecord.Loader(loader_records, **kwargs)
    it = iter(loader)
    next(it)
    state = loader.state_dict()
    assert set(state) == {"sampler_state", "seed", "epoch", "position", "coverage"} and state["position"] == 4
    rest = [ids.tolist() for _, _, ids in it]
    for given in (state, {"sampler_state": state["sampler_state"]}):
        again = unirecord.Loader(loader_records, **kwargs)
        again.load_state_dict(given)
        assert [ids.tolist() for _, _, ids in again] == rest


def test_a_loader_freed_in_a_forked_child_does_not_wait_for_threads_it_lacks(loader_records):
    """A DataLoader worker is a fork of a process that may hold a Loader (or a
    cycle holding one): when the child's garbage collector frees its copy, the
    decode threads exist only in the parent; the copy must not wait for them."""
    import signal
    import time

    loader = unirecord.Loader(loader_records, batch_size=4, shuffle=True, threads=2,
                              transform=unirecord.CenterCrop(16, resize=16))
    next(iter(loader))
    time.sleep(0.5)  # the decode threads have filled the free buffers and wait on the loader's condition
    pid = os.fork()
    if pid == 0:
        try:
            del loader
            gc.collect()
        finally:
            os._exit(0)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            assert os.waitstatus_to_exitcode(status) == 0
            break
        time.sleep(0.05)
    else:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        pytest.fail("the forked child hung freeing its copy of the Loader")
    assert sum(1 for _ in loader) == len(loader) - 1  # the parent's loader is untouched


def test_every_parameter_has_an_args_entry():
    """Loader's docstring documents each parameter in its Args: block, one
    entry per parameter, in the signature's order."""
    import inspect
    import re

    params = [p for p in inspect.signature(unirecord.Loader.__init__).parameters if p != "self"]
    args = unirecord.Loader.__doc__.split("\n    Args:\n", 1)[1]
    documented = re.findall(r"^        (\w+):", args, flags=re.M)
    assert documented == params
