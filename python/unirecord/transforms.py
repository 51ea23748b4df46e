"""The native crops (as ``torchvision.transforms``): :class:`RandomResizedCrop`
and :class:`CenterCrop`, planned on the JPEG header and decoded crop-first by
:class:`~unirecord.ImageDataset` and :class:`~unirecord.Loader`, and the
mapping of a torchvision transform onto them."""

from __future__ import annotations

from typing import Any, Callable, Dict, Optional, Tuple, Union

from ._args import DEFAULTS, int_arg, import_torch

__all__ = ["CenterCrop", "RandomResizedCrop"]


def _check_size(size: Union[int, Tuple[int, int]]) -> int:
    if isinstance(size, (tuple, list)):
        if len(size) == 2 and size[0] == size[1]:
            size = size[0]
        else:
            raise ValueError(f"only square outputs are supported, got size={size!r}")
    return int_arg("size", size, 1)


class RandomResizedCrop:
    """torchvision's ``RandomResizedCrop(size, scale, ratio)`` (+ ``RandomHorizontalFlip``
    when ``flip``), planned by the native crop planner and decoded crop-first.

    ``flip``: ``False`` (no flip), ``True`` (probability 0.5) or a probability.
    The random numbers are keyed by ``(seed, epoch, record id)``: the same
    triple gives the same crop in every process, thread and run.
    """

    def __init__(
        self,
        size: Union[int, Tuple[int, int]],
        scale: Tuple[float, float] = (DEFAULTS["scale_min"], DEFAULTS["scale_max"]),
        ratio: Tuple[float, float] = (DEFAULTS["ratio_min"], DEFAULTS["ratio_max"]),
        flip: Union[bool, float] = False,
    ) -> None:
        self.size = _check_size(size)
        self.scale = (float(scale[0]), float(scale[1]))
        self.ratio = (float(ratio[0]), float(ratio[1]))
        if not (0.0 < self.scale[0] <= self.scale[1] <= 1.0):
            raise ValueError(f"RandomResizedCrop: scale must satisfy 0 < min <= max <= 1, got {scale}")
        if not (0.0 < self.ratio[0] <= self.ratio[1]):
            raise ValueError(f"RandomResizedCrop: ratio must satisfy 0 < min <= max, got {ratio}")
        p = 0.5 if flip is True else 0.0 if flip is False else float(flip)
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"RandomResizedCrop: flip probability must be in [0, 1], got {flip}")
        self.flip = flip
        self.flip_probability = p

    def _options(self) -> Dict[str, Any]:
        """This crop as options of the native reader and loader (keys of ``_core._loader_defaults``)."""
        return dict(
            transform="random_resized_crop",
            size=self.size,
            scale_min=self.scale[0],
            scale_max=self.scale[1],
            ratio_min=self.ratio[0],
            ratio_max=self.ratio[1],
            flip_probability=self.flip_probability,
        )

    def __repr__(self) -> str:
        return (
            f"unirecord.RandomResizedCrop({self.size}, scale={self.scale}, "
            f"ratio=({self.ratio[0]:.4g}, {self.ratio[1]:.4g}), flip={self.flip!r})"
        )


class CenterCrop:
    """torchvision's ``Resize(resize)`` + ``CenterCrop(size)`` (``resize`` = the
    shorter side after resizing, antialiased bilinear as ``Resize`` on PIL images),
    computed as one crop window of the original and decoded crop-first.

    ``resize=None``: no resize, only the center crop (as ``CenterCrop`` alone;
    an image smaller than ``size`` is scaled up instead of zero-padded).
    The evaluation transform for ImageNet is ``CenterCrop(224, resize=256)``.
    """

    def __init__(self, size: Union[int, Tuple[int, int]], resize: Optional[int] = None) -> None:
        self.size = _check_size(size)
        if resize is not None:
            resize = int_arg("resize", resize, self.size)
        self.resize = resize

    def _options(self) -> Dict[str, Any]:
        """This crop as options of the native reader and loader (keys of ``_core._loader_defaults``)."""
        # resize 0: the crop alone.
        return dict(transform="center_crop", size=self.size, resize=self.resize or 0)

    def __repr__(self) -> str:
        return f"unirecord.CenterCrop({self.size}, resize={self.resize})"


NativeCrop = Union[RandomResizedCrop, CenterCrop]


def default_crop() -> RandomResizedCrop:
    """LoaderOptions' default: RandomResizedCrop(224) + RandomHorizontalFlip(0.5)."""
    return RandomResizedCrop(DEFAULTS["size"], flip=DEFAULTS["flip_probability"])


def native_options(crop: NativeCrop) -> Dict[str, Any]:
    if not isinstance(crop, (RandomResizedCrop, CenterCrop)):
        raise TypeError(
            "the native crop must be unirecord.RandomResizedCrop or unirecord.CenterCrop, "
            f"not {type(crop).__name__}"
        )
    return crop._options()


def _is_torchvision(t: Any, name: str) -> bool:
    cls = type(t)
    return cls.__name__ == name and cls.__module__.startswith("torchvision.transforms")


def _shorter_side(t: Any) -> Optional[int]:
    """The shorter side of a torchvision Resize(int) or Resize([int]); None for an exact (h, w) size."""
    size = t.size
    if isinstance(size, (list, tuple)):
        if len(size) != 1:
            return None
        size = size[0]
    return int(size)


def _check_bilinear(t: Any) -> None:
    mode = getattr(t.interpolation, "value", t.interpolation)
    if mode not in ("bilinear", 2):  # 2: PIL.Image.BILINEAR in older torchvision
        raise ValueError(f"{type(t).__name__} runs natively with bilinear interpolation only, not {mode!r}")
    if getattr(t, "antialias", None) is False:
        raise ValueError(f"{type(t).__name__} runs natively antialiased (as on PIL images), not antialias=False")
    if getattr(t, "max_size", None) is not None:
        raise ValueError("Resize(max_size=...) does not run natively")


def split_transform(transform: Any) -> Tuple[Optional[NativeCrop], Optional[Callable[[Any], Any]]]:
    """``transform`` as (the native crop it starts with, the callable for the rest).

    A unirecord crop is all native. A torchvision transform (or ``Compose``) has
    its leading ``RandomResizedCrop`` [+ ``RandomHorizontalFlip``], or
    ``Resize(int)`` + ``CenterCrop``, or ``CenterCrop`` taken over by the native
    decoder, then a ``PILToTensor`` (nothing left to do: the native output is
    its layout) or ``ToTensor`` (becomes ``ConvertImageDtype(float32)``, the same
    values), also without a crop before them; what follows runs on the uint8 CHW
    tensor. Any other callable runs whole on the native output."""
    if transform is None:
        return None, None
    if isinstance(transform, (RandomResizedCrop, CenterCrop)):
        return transform, None
    if not callable(transform):
        raise TypeError(f"transform must be a unirecord crop or a callable, not {type(transform).__name__}")
    steps = list(transform.transforms) if _is_torchvision(transform, "Compose") else [transform]
    crop: Optional[NativeCrop] = None
    k = 0
    if k < len(steps) and _is_torchvision(steps[k], "RandomResizedCrop"):
        t = steps[k]
        _check_bilinear(t)
        flip: Union[bool, float] = False
        k += 1
        if k < len(steps) and _is_torchvision(steps[k], "RandomHorizontalFlip"):
            flip = float(steps[k].p)
            k += 1
        crop = RandomResizedCrop(tuple(t.size), scale=tuple(t.scale), ratio=tuple(t.ratio), flip=flip)
    elif k < len(steps) and _is_torchvision(steps[k], "Resize"):
        t = steps[k]
        _check_bilinear(t)
        shorter = _shorter_side(t)
        if shorter is None or k + 1 >= len(steps) or not _is_torchvision(steps[k + 1], "CenterCrop"):
            raise ValueError("a leading torchvision Resize runs natively as Resize(int) followed by CenterCrop only")
        crop = CenterCrop(tuple(steps[k + 1].size), resize=shorter)
        k += 2
    elif k < len(steps) and _is_torchvision(steps[k], "CenterCrop"):
        crop = CenterCrop(tuple(steps[k].size))
        k += 1
    if k < len(steps):
        if _is_torchvision(steps[k], "PILToTensor"):
            k += 1
        elif _is_torchvision(steps[k], "ToTensor"):
            import torchvision.transforms as T

            steps[k] = T.ConvertImageDtype(import_torch().float32)
    rest = steps[k:]
    if not rest:
        return crop, None
    return crop, rest[0] if len(rest) == 1 else type(transform)(rest)
