"""Python's defaults are C++'s: the same records written with default options
give byte-identical files from `urec` (C++) and from the Python Writer, and
the Python signatures take their defaults from the C++ options structs."""
import inspect
import os
import subprocess

import pytest

import unirecord
from unirecord import _core
from urec_fixtures import image_folder  # noqa: F401 (pytest fixture)


def urec_binary():
    urec = os.environ.get("UREC")
    if not urec or not os.path.exists(urec):
        pytest.skip("UREC (the urec binary) is not set")
    return urec


def dataset_files(folder):
    """{file name: bytes} of a dataset's shards and indexes."""
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.suffix in (".urec", ".uidx")}


def rewrite(source, out, **options):
    """Every record of `source` written again by a Python Writer with default options."""
    with unirecord.Writer(out, source.schema, "d", classes=source.classes, sync=False, **options) as w:
        for i in range(len(source)):
            w.write(source[i])


def test_python_writer_defaults_write_the_bytes_cpp_writes(image_folder, tmp_path):
    # urec convert writes through C++'s Writer with a default WriterOptions
    # (only the shard split and sync set: here contiguous, 2 shards).
    urec = urec_binary()
    subprocess.run([urec, "convert", "imagefolder", image_folder, tmp_path / "cpp", "--name", "d", "--shards", "2"],
                   check=True, capture_output=True)
    source = unirecord.Dataset(tmp_path / "cpp")
    rewrite(source, tmp_path / "py", num_shards=2, expected_records=len(source))
    cpp, py = dataset_files(tmp_path / "cpp"), dataset_files(tmp_path / "py")
    assert len(cpp) == 4 and sorted(cpp) == sorted(py)
    for name in cpp:
        assert cpp[name] == py[name], name
    # The comparison sees page sizes: the old Python default (64 KiB scalar pages) differs.
    rewrite(source, tmp_path / "py64", num_shards=2, expected_records=len(source), scalar_page_bytes=64 << 10)
    assert dataset_files(tmp_path / "py64") != cpp


def test_convert_imagefolder_defaults_are_urecs(image_folder, tmp_path):
    urec = urec_binary()
    subprocess.run([urec, "convert", "imagefolder", image_folder, tmp_path / "cpp", "--name", "d"],
                   check=True, capture_output=True)
    unirecord.convert_imagefolder(image_folder, tmp_path / "py", name="d")
    cpp = sorted(p.name for p in (tmp_path / "cpp").iterdir())
    assert cpp == sorted(p.name for p in (tmp_path / "py").iterdir())
    for name in cpp:
        if not name.startswith("."):  # the lock file
            assert (tmp_path / "cpp" / name).read_bytes() == (tmp_path / "py" / name).read_bytes(), name


def python_defaults(function):
    return {name: p.default for name, p in inspect.signature(function).parameters.items()
            if p.default is not inspect.Parameter.empty}


def test_one_table_of_loader_options_is_what_python_passes():
    """Every option of the native table (_core._loader_defaults) is a keyword of
    unirecord.Loader or derived from its transform or device; ImageDataset's
    keywords among them reach the native reader too."""
    cpp = set(_core._loader_defaults)
    loader = set(inspect.signature(unirecord.Loader).parameters)
    from_transform = set(unirecord.RandomResizedCrop(8)._options()) | set(unirecord.CenterCrop(8, resize=9)._options())
    from_device = {name for name in cpp if name.startswith("cuda_")}
    assert cpp == (cpp & loader) | from_transform | from_device
    assert (cpp & loader) & (from_transform | from_device) == {"transform"}  # the keyword the crop comes from
    images = set(inspect.signature(unirecord.ImageDataset).parameters) & cpp
    assert images == {"transform", "seed", "image_field", "label_field", "path_field", "strict", "apply_exif",
                      "dct_scaling", "max_pixels", "subset"}
    # The library's enum names, as LoaderOptions' defaults show them.
    assert (_core._loader_defaults["layout"], _core._loader_defaults["on_error"]) == ("NHWC", "raise")
    assert (_core._loader_defaults["transform"], _core._loader_defaults["cuda_dtype"]) == ("random_resized_crop", "float32")


def test_loader_and_image_dataset_defaults_are_loader_options():
    cpp = _core._loader_defaults
    loader = python_defaults(unirecord.Loader)
    # transform: a crop object on the Python side, a name in the table; subset: None (all records) in both;
    # weights: None in Python, [] in C++ (both: proportional to the sizes).
    shared = set(loader) & set(cpp) - {"transform", "subset", "weights"}
    assert loader["weights"] is None and cpp["weights"] == []
    # None: resolved when the loader is made (LoaderOptions' threads and
    # prefetch unless num_workers/prefetch_factor say otherwise; the ranks from
    # torch.distributed; the order from the required shuffle).
    resolved = {"threads", "prefetch", "num_shards", "shard_id", "order"}
    assert shared == resolved | {"seed", "drop_last", "on_error", "block_size", "window", "sampler_drop_last",
                                 "max_consecutive_bad", "image_field", "label_field", "path_field", "strict", "epoch_size",
                                 "apply_exif", "dct_scaling", "max_pixels", "layout", "fields", "ragged",
                                 "pad_value", "boxes", "box_format", "box_aligned", "masks"}
    assert all(loader[name] is None for name in resolved)
    # None for "none of them": LoaderOptions' empty list / empty name.
    none_is_empty = {"fields", "boxes", "box_aligned", "masks"}
    assert all(loader[name] is None and not cpp[name] for name in none_is_empty)
    for name in shared - resolved - none_is_empty - {"layout"}:
        assert loader[name] == cpp[name], name
    # The one deliberate difference: torch's NCHW (C++'s default is NHWC, urec bench's NCHW).
    assert (loader["layout"], cpp["layout"]) == ("NCHW", "NHWC")
    images = python_defaults(unirecord.ImageDataset)
    for name in set(images) & set(cpp) - {"transform", "subset"}:
        assert images[name] == cpp[name], name
    crop = python_defaults(unirecord.RandomResizedCrop)
    assert crop["scale"] == (cpp["scale_min"], cpp["scale_max"])
    assert crop["ratio"] == (cpp["ratio_min"], cpp["ratio_max"])
    default = unirecord.transforms.default_crop()
    assert (default.size, default.flip_probability) == (cpp["size"], cpp["flip_probability"])
