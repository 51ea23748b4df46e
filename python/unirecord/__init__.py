"""unirecord: record files for deep-learning training, from Python.

* :class:`Dataset` - map-style access to any unirecord dataset (picklable,
  zero-copy ``bytes`` fields), usable in ``torch.utils.data.DataLoader``.
* :class:`ImageDataset` (``unirecord.image_dataset``) - ``(uint8 CHW tensor,
  label)`` samples decoded by the native crop-before-decode JPEG decoder; a
  drop-in for torchvision's ``ImageFolder`` + ``RandomResizedCrop``/``Resize``
  + ``CenterCrop`` + ``PILToTensor``.
* :class:`RandomResizedCrop`, :class:`CenterCrop` (``unirecord.transforms``) -
  the native crops.
* :class:`Loader` (``unirecord.loader``) - the native multi-threaded loader:
  whole batches as torch tensors that share the loader's buffers (DLPack, no
  copy), no worker processes.
* :class:`Writer`, :func:`convert_imagefolder`, :func:`convert_videofolder`,
  :func:`convert_audiofolder`, :func:`convert_coco`,
  :func:`convert_jsonl`, :func:`convert_csv` - create datasets;
  :class:`StagedWrite` + :class:`PartWriter` - one dataset written as parts
  by any processes (Dask, Spark, Ray), committed by one;
  ``unirecord.distributed.convert_imagefolder`` - the conversion on Dask.
* :class:`Sampler`, :class:`Fields` (with :class:`Clip` and :class:`AudioClip`
  for video and audio), :class:`Decode`, :class:`Remote`
  (``unirecord.options``) - the Loader's options in typed groups:
  ``Loader(path, 256, True, sampler=Sampler(order="block"), fields=Fields(["boxes"]))``.
* :class:`Pack` (``unirecord.packing``) - ``Loader(pack=Pack(seq_len))``
  packs documents into rows for language models, natively.
* :func:`write_dataset` (``unirecord.write``) - any source converted by a
  function of the user's, in this process, local processes or on Dask.
* :func:`versions`, :func:`tag`, :func:`untag`, :func:`gc` - every commit is a
  kept version; ``Dataset(path, version=G)`` or ``tag=T`` opens one;
  :func:`compact` rewrites the latest as one segment.
* :func:`add_fields`, :func:`drop_fields` (``unirecord.fields``) - add, replace
  or drop fields as a new version without rewriting the shards.
* :func:`check_coverage` - whether the ranks' ``Loader.coverage()`` digests
  together delivered each record of the epoch exactly once.
* :func:`serve` (``unirecord.viewer``) - the dataset in the browser: overview,
  distributions, a filtered grid of records, a record's values and crops.

Everything is a thin layer over the C++ library (``unirecord._core``).
See docs/python.md for the full guide.
"""

from ._core import (
    CorruptRecordError,
    Coverage,
    CoverageCheck,
    Dataset,
    Field,
    NotSupportedError,
    PartWriter,
    Schema,
    Server,
    StagedWrite,
    AudioStream,
    VideoStream,
    Writer,
    check_coverage,
    compact,
    convert_coco,
    convert_csv,
    convert_audiofolder,
    convert_imagefolder,
    convert_jsonl,
    convert_videofolder,
    demux,
    gc,
    merge_coverage,
    tag,
    untag,
    versions,
)
from .fields import add_fields, drop_fields
from .image_dataset import ImageDataset
from .loader import IMAGENET_MEAN, IMAGENET_STD, Loader, cuda_available
from .options import AudioClip, Clip, Decode, Fields, Remote, Sampler
from .packing import Pack
from .viewer import serve
from .transforms import CenterCrop, RandomResizedCrop
from .write import write_dataset

__version__ = "0.1.0"

__all__ = [
    "AudioStream",
    "CenterCrop",
    "CorruptRecordError",
    "Coverage",
    "CoverageCheck",
    "Dataset",
    "Decode",
    "Field",
    "Fields",
    "IMAGENET_MEAN",
    "IMAGENET_STD",
    "ImageDataset",
    "Loader",
    "NotSupportedError",
    "Pack",
    "RandomResizedCrop",
    "PartWriter",
    "Remote",
    "Sampler",
    "Clip",
    "AudioClip",
    "Schema",
    "Server",
    "StagedWrite",
    "VideoStream",
    "Writer",
    "add_fields",
    "check_coverage",
    "compact",
    "convert_coco",
    "convert_csv",
    "convert_audiofolder",
    "convert_imagefolder",
    "convert_jsonl",
    "convert_videofolder",
    "cuda_available",
    "demux",
    "drop_fields",
    "gc",
    "merge_coverage",
    "serve",
    "tag",
    "untag",
    "versions",
    "write_dataset",
]
