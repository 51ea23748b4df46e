"""Checks of unirecord.Loader(device="cuda"), on a CUDA device or on the host
device (device="emulated": the same path in ordinary memory, which every
machine runs). test_loader.py::test_device_loader runs them on both, and they
run without pytest on a GPU machine (bench/run_gpu.sh does):

    python python/tests/cuda_check.py RECORDS   # RECORDS: any JPEG dataset, e.g. 90 small images

(run_fields: test_loader_fields.py::test_device_fields, with its detection records.)"""
import dataclasses
import gc
import os
import sys

import pytest
import torch

import unirecord


# The devices a test runs the loader's device path on: the host device always,
# CUDA where there is one. Each carries the `device` marker, so a test
# parametrized over them is one that bench/run_gpu.sh selects (-m device),
# whatever its name.
DEVICES = tuple(pytest.param(device, marks=pytest.mark.device, id=device) for device in ("emulated", "cuda"))


def require(device):
    """In a pytest test: skips the CUDA case without a CUDA device, or fails it
    when UNIRECORD_REQUIRE_GPU=1 (bench/run_gpu.sh sets it: there a skip would
    hide a broken GPU path)."""
    if device == "cuda" and not unirecord.cuda_available():
        if os.environ.get("UNIRECORD_REQUIRE_GPU") == "1":
            pytest.fail("UNIRECORD_REQUIRE_GPU=1 but no CUDA device is usable (unirecord built without CUDA, or torch sees none)")
        pytest.skip("no CUDA device, or unirecord built without CUDA")


def _on_device(tensor, device):
    """Whether `tensor` is where the loader's device puts batches (the host
    device's memory is the CPU's)."""
    return tensor.is_cuda if device == "cuda" else tensor.device.type == "cpu"


def _synchronize(device):
    if device == "cuda":
        torch.cuda.synchronize()


def _imagenet_scale():
    """The default mean and std on the 0..255 scale, shaped for NCHW batches."""
    return (torch.tensor(unirecord.IMAGENET_MEAN).view(1, 3, 1, 1) * 255,
            torch.tensor(unirecord.IMAGENET_STD).view(1, 3, 1, 1) * 255)


def compare_normalised(device_loader, cpu_loader, device):
    """Default batches (float32 NCHW normalised) of a device loader against the
    CPU loader's uint8 batches normalised, pair by pair (both return_ids=True);
    returns the samples compared."""
    m, s = _imagenet_scale()
    n = 0
    for (gi, gl, gid), (ci, cl, cid) in zip(device_loader, cpu_loader, strict=True):
        assert _on_device(gi, device) and _on_device(gl, device) and gi.dtype == torch.float32 and gi.shape == ci.shape
        assert gi.data_ptr() != ci.data_ptr()
        assert torch.equal(gid, cid) and torch.equal(gl.cpu(), cl)
        assert (gi.cpu() - (ci.float() - m) / s).abs().max().item() < 1e-4
        n += len(gid)
    return n


def run(records, device="cuda"):
    if device == "cuda":
        assert unirecord.cuda_available()
    kw = dict(batch_size=8, shuffle=True, seed=3, threads=2, transform=unirecord.CenterCrop(32, resize=40),
              fields=unirecord.Fields(return_ids=True))
    assert compare_normalised(unirecord.Loader(records, device=device, **kw), unirecord.Loader(records, **kw),
                              device) == len(unirecord.Dataset(records))
    m, s = _imagenet_scale()
    # uint8 NHWC is the raw pixels; float16 NCHW normalised.
    for dtype, layout in ((torch.uint8, "NHWC"), (torch.float16, "NCHW")):
        laid_out = dict(kw, fields=unirecord.Fields(layout=layout, return_ids=True))
        pairs = zip(unirecord.Loader(records, device=device, dtype=dtype, **laid_out),
                    unirecord.Loader(records, **laid_out), strict=True)
        compared = 0
        for (gi, _, gid), (ci, _, cid) in pairs:
            compared += len(gid)
            assert gi.dtype == dtype and torch.equal(gid, cid)
            if dtype == torch.uint8:
                assert torch.equal(gi.cpu(), ci)
            else:
                assert (gi.float().cpu() - (ci.float() - m) / s).abs().max().item() < 2e-2
        assert compared == len(unirecord.Dataset(records))
    # Lifetime: a batch kept through the whole next epoch (its host and device
    # buffers are not refilled meanwhile) stays unchanged; plain loops work.
    loader = unirecord.Loader(records, device=device, **dict(kw, batch_size=9))
    prev = None
    for epoch in range(4):
        loader.set_epoch(epoch)
        for images, _labels, _ids in loader:
            pass
        _synchronize(device)
        if prev is not None:
            assert torch.equal(prev[0], prev[1])
        prev = (images, images.clone())
    del prev, images
    gc.collect()
    # A batch held across load_state_dict: unchanged, and the batches after the
    # restore are those that followed the saved state.
    loader = unirecord.Loader(records, device=device, **dict(kw, batch_size=4))
    it = iter(loader)
    held = next(it)
    held_copy = held[0].clone()
    next(it)
    state = loader.state_dict()
    want = [ids.clone() for _, _, ids in it]
    loader.load_state_dict(state)
    got = [ids.clone() for _, _, ids in loader]
    _synchronize(device)
    assert len(got) == len(want) > 0 and all(torch.equal(a, b) for a, b in zip(got, want, strict=True))
    assert torch.equal(held[0], held_copy)
    del held, held_copy, it
    gc.collect()
    if device != "cuda":
        return
    # A side stream as the consumer (the loader makes the current stream
    # wait): its batches equal the CPU loader's, read on that stream.
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        assert compare_normalised(unirecord.Loader(records, device=device, **kw), unirecord.Loader(records, **kw),
                                  device) == len(unirecord.Dataset(records))


def run_fields(records, device="cuda", fields=None, **loader_kw):
    """Dict batches on the device: every numeric field (padded and jagged,
    with its _lengths/_offsets) arrives on the device with the images and
    equals the CPU loader's; strings, id and crop stay on the CPU. `fields`:
    the unirecord.Fields batched (its ragged and layout are set here)."""
    for ragged in ("pad", "jagged"):
        kw = dict(loader_kw, fields=dataclasses.replace(fields, ragged=ragged, layout="NHWC"))
        batches = 0
        host = unirecord.Loader(records, **kw)
        for g, c in zip(unirecord.Loader(records, device=device, dtype=torch.uint8, **kw), host, strict=True):
            assert g.keys() == c.keys(), (g.keys(), c.keys())
            for key, want in c.items():
                got = g[key]
                if isinstance(want, list):
                    assert got == want, key
                elif key in ("id", "crop"):
                    assert not got.is_cuda and torch.equal(got, want), key
                else:
                    assert _on_device(got, device) and got.dtype == want.dtype and torch.equal(got.cpu(), want), key
                    assert got.data_ptr() != want.data_ptr(), key
            batches += 1
        assert batches == len(host) > 0


if __name__ == "__main__":
    run(sys.argv[1], *sys.argv[2:3])
    print("cuda_check: all passed")
