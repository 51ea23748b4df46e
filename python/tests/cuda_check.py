"""Checks of unirecord.Loader(device="cuda"); test_loader.py::test_cuda_loader runs
them, and they run without pytest on a GPU machine:

    python python/tests/cuda_check.py RECORDS   # RECORDS: any JPEG dataset, e.g. 90 small images

(run_fields: test_loader_fields.py::test_cuda_fields, with its detection records.)

Run on an H100 with torch 2.11 (cu130, Python 3.12) against the binding built
with CUDA: everything passed (docs/python.md)."""
import gc
import sys

import torch

import unirecord


def run(records):
    assert unirecord.cuda_available()
    kw = dict(batch_size=8, shuffle=True, seed=3, threads=2, transform=unirecord.CenterCrop(32, resize=40), return_ids=True)
    n_records = len(unirecord.Dataset(records))
    m = torch.tensor(unirecord.IMAGENET_MEAN).view(1, 3, 1, 1) * 255
    s = torch.tensor(unirecord.IMAGENET_STD).view(1, 3, 1, 1) * 255
    # Default: float32 NCHW normalised on the device == the CPU batch normalised.
    n = 0
    for (gi, gl, gid), (ci, cl, cid) in zip(unirecord.Loader(records, device="cuda", **kw), unirecord.Loader(records, **kw)):
        assert gi.is_cuda and gl.is_cuda and gi.dtype == torch.float32 and gi.shape == ci.shape
        assert torch.equal(gid, cid) and torch.equal(gl.cpu(), cl)
        assert (gi.cpu() - (ci.float() - m) / s).abs().max().item() < 1e-4
        n += len(gid)
    assert n == n_records
    # uint8 NHWC is the raw pixels; float16 NCHW normalised.
    for dtype, layout in ((torch.uint8, "NHWC"), (torch.float16, "NCHW")):
        pairs = zip(unirecord.Loader(records, device="cuda", dtype=dtype, layout=layout, **kw),
                    unirecord.Loader(records, layout=layout, **kw))
        for (gi, _, gid), (ci, _, cid) in pairs:
            assert gi.dtype == dtype and torch.equal(gid, cid)
            if dtype == torch.uint8:
                assert torch.equal(gi.cpu(), ci)
            else:
                assert (gi.float().cpu() - (ci.float() - m) / s).abs().max().item() < 2e-2
    # Lifetime: a batch kept through the whole next epoch (its host and device
    # buffers are not refilled meanwhile) stays unchanged; plain loops work.
    loader = unirecord.Loader(records, device="cuda", **dict(kw, batch_size=9))
    prev = None
    for epoch in range(4):
        loader.set_epoch(epoch)
        for images, _labels, _ids in loader:
            pass
        torch.cuda.synchronize()
        if prev is not None:
            assert torch.equal(prev[0], prev[1])
        prev = (images, images.clone())
    del prev, images
    gc.collect()
    # A side stream as the consumer (the loader makes the current stream wait).
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        total = sum(images.sum().item() for images, _, _ in unirecord.Loader(records, device="cuda", **kw))
    assert total != 0


def run_fields(records, **loader_kw):
    """Dict batches on the device: every numeric field (padded and jagged,
    with its _lengths/_offsets) arrives on the device with the images and
    equals the CPU loader's; strings, id and crop stay on the CPU."""
    for ragged in ("pad", "jagged"):
        kw = dict(loader_kw, ragged=ragged)
        batches = 0
        for g, c in zip(unirecord.Loader(records, device="cuda", dtype=torch.uint8, layout="NHWC", **kw),
                        unirecord.Loader(records, layout="NHWC", **kw)):
            assert g.keys() == c.keys(), (g.keys(), c.keys())
            for key, want in c.items():
                got = g[key]
                if isinstance(want, list):
                    assert got == want, key
                elif key in ("id", "crop"):
                    assert not got.is_cuda and torch.equal(got, want), key
                else:
                    assert got.is_cuda and got.dtype == want.dtype and torch.equal(got.cpu(), want), key
            batches += 1
        assert batches > 0


if __name__ == "__main__":
    run(sys.argv[1])
    print("cuda_check: all passed")
