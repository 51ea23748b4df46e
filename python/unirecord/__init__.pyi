"""Type stubs of the unirecord package."""

from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt
import torch

from ._core import CorruptRecordError as CorruptRecordError
from ._core import Dataset as Dataset
from ._core import Field as Field
from ._core import NotSupportedError as NotSupportedError
from ._core import Schema as Schema
from ._core import Writer as Writer
from ._core import convert_imagefolder as convert_imagefolder

__version__: str
IMAGENET_MEAN: Tuple[float, float, float]
IMAGENET_STD: Tuple[float, float, float]

class RandomResizedCrop:
    """torchvision's RandomResizedCrop (+ RandomHorizontalFlip when flip), keyed by (seed, epoch, record id)."""

    size: int
    scale: Tuple[float, float]
    ratio: Tuple[float, float]
    flip: Union[bool, float]
    flip_probability: float
    def __init__(
        self,
        size: Union[int, Tuple[int, int]],
        scale: Tuple[float, float] = (0.08, 1.0),
        ratio: Tuple[float, float] = (3.0 / 4.0, 4.0 / 3.0),
        flip: Union[bool, float] = False,
    ) -> None: ...

class CenterCrop:
    """torchvision's Resize(resize) + CenterCrop(size) as one crop window (resize=None: crop only)."""

    size: int
    resize: Optional[int]
    def __init__(self, size: Union[int, Tuple[int, int]], resize: Optional[int] = None) -> None: ...

_Transform = Union[RandomResizedCrop, CenterCrop]

class ImageDataset:
    """(uint8 CHW tensor, label) samples decoded crop-first; a drop-in for ImageFolder + transforms."""

    transform: _Transform
    seed: int
    image_field: str
    label_field: Optional[str]
    strict: bool
    apply_exif: bool
    dct_scaling: bool
    dataset: Dataset
    where: Optional[str]
    ids: Optional[Union[npt.NDArray[np.uint64], npt.NDArray[np.int64]]]
    def __init__(
        self,
        path: Any,
        transform: Optional[_Transform] = None,
        *,
        seed: int = 0,
        image_field: str = "image",
        label_field: Optional[str] = "label",
        strict: bool = False,
        apply_exif: bool = False,
        dct_scaling: bool = True,
        verify_checksums: bool = True,
        where: Optional[str] = None,
        subset: Optional[Sequence[int]] = None,
    ) -> None: ...
    def __len__(self) -> int: ...
    def __getitem__(self, index: int) -> Tuple[torch.Tensor, int]: ...
    def __getitems__(self, indices: Sequence[int]) -> List[Tuple[torch.Tensor, int]]: ...
    @property
    def epoch(self) -> int: ...
    def set_epoch(self, epoch: int) -> None: ...
    def crop_window(self, index: int, epoch: Optional[int] = None) -> Tuple[int, int, int, int, bool]: ...
    @property
    def classes(self) -> List[str]: ...
    @property
    def class_to_idx(self) -> Dict[str, int]: ...
    @property
    def targets(self) -> Any: ...

def cuda_available() -> bool: ...

class Loader:
    """The native multi-threaded loader: batches as torch tensors sharing its buffers (DLPack)."""

    dataset: Dataset
    num_shards: int
    shard_id: int
    transform: _Transform
    device: torch.device
    batch_size: int
    return_ids: bool
    def __init__(
        self,
        path: Any,
        batch_size: int,
        shuffle: bool = True,
        seed: int = 0,
        num_shards: Optional[int] = None,
        shard_id: Optional[int] = None,
        transform: Optional[_Transform] = None,
        device: Union[str, torch.device] = "cpu",
        dtype: Optional[torch.dtype] = None,
        mean: Optional[Sequence[float]] = None,
        std: Optional[Sequence[float]] = None,
        threads: int = 0,
        prefetch: int = 2,
        drop_last: bool = False,
        on_error: str = "raise",
        *,
        order: Optional[str] = None,
        layout: str = "NCHW",
        image_field: str = "image",
        label_field: Optional[str] = "label",
        path_field: str = "path",
        strict: bool = False,
        apply_exif: bool = False,
        dct_scaling: bool = True,
        subset: Optional[Sequence[int]] = None,
        return_ids: bool = False,
        verify_checksums: bool = True,
        where: Optional[str] = None,
    ) -> None: ...
    def __len__(self) -> int: ...
    def __iter__(self) -> Iterator[Tuple[torch.Tensor, ...]]: ...
    def next_batch(self) -> Optional[Tuple[torch.Tensor, ...]]: ...
    def set_epoch(self, epoch: int) -> None: ...
    @property
    def epoch(self) -> int: ...
    def state_dict(self) -> Dict[str, Any]: ...
    def load_state_dict(self, state: Dict[str, Any]) -> None: ...
    def stats(self) -> Dict[str, Any]: ...
    def reset_stats(self) -> None: ...
    @property
    def threads(self) -> int: ...
