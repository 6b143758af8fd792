"""Real data sets that need no download: scikit-learn's 8x8 digits, and IDX files (MNIST's format)
read from a folder you give.

Images are float32 ``(N, 1, H, W)`` tensors, labels int64 ``(N,)``. ``scale="unit"`` maps pixels to
[0, 1]; ``scale="tanh"`` maps them to [-1, 1] (the range of a GAN generator ending in tanh).
Every data set here is a ``TensorDataset``, so a ``DataLoader`` batches it with one fancy index.
"""

from __future__ import annotations

import functools
import gzip
import os
from typing import ClassVar

import numpy as np

from ...tensor import Tensor
from .dataset import TensorDataset

__all__ = ["MNIST", "Digits", "IDXDataset", "load_digits", "read_idx"]

_SCALES = ("unit", "tanh")

# NOTE [Digits split]: the split is fixed forever. Take the permutation
# np.random.RandomState(0).permutation(1797) (RandomState's stream is frozen by NumPy's policy);
# each class gives its first k_c members in that order to the test split, where k_c is its share of
# 360 test images (360 * n_c / 1797, rounded by largest remainder so the shares sum to 360). The
# other 1,437 images are the train split. Both keep scikit-learn's original order.
_DIGITS_TEST_SIZE = 360
_DIGITS_SPLIT_SEED = 0


def _scale_pixels(pixels: np.ndarray, max_value: float, scale: str | None) -> np.ndarray:
    if scale is None:
        return pixels
    if scale not in _SCALES:
        raise ValueError(f"glassgrad: scale must be 'unit', 'tanh' or None, got {scale!r}")
    x = pixels.astype(np.float32)
    if scale == "unit":
        return x / np.float32(max_value)
    return x / np.float32(max_value / 2) - np.float32(1.0)


@functools.lru_cache(maxsize=1)
def _digits_raw() -> tuple[np.ndarray, np.ndarray]:
    try:
        from sklearn.datasets import load_digits as sk_load_digits
    except ImportError as e:
        raise ImportError(
            "glassgrad's digits data set is the copy scikit-learn ships, and scikit-learn is not "
            "installed. Install the examples extra: pip install 'glassgrad[examples]' (or pip "
            "install scikit-learn)."
        ) from e
    bunch = sk_load_digits()
    pixels = bunch.images.astype(np.uint8)
    labels = bunch.target.astype(np.int64)
    pixels.flags.writeable = False
    labels.flags.writeable = False
    return pixels, labels


def _digits_split(labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(train, test) indices of NOTE [Digits split]."""
    n = len(labels)
    order = np.random.RandomState(_DIGITS_SPLIT_SEED).permutation(n)
    counts = np.bincount(labels)
    exact = counts * _DIGITS_TEST_SIZE / n
    quota = np.floor(exact).astype(np.int64)
    extra = _DIGITS_TEST_SIZE - int(quota.sum())
    quota[np.argsort(-(exact - quota), kind="stable")[:extra]] += 1
    permuted = labels[order]
    test = np.concatenate([order[permuted == c][: quota[c]] for c in range(len(counts))])
    is_test = np.zeros(n, dtype=bool)
    is_test[test] = True
    return np.flatnonzero(~is_test), np.flatnonzero(is_test)


class Digits(TensorDataset):
    """scikit-learn's 1,797 handwritten digits (8x8, 16 grey levels) as ``(image, label)`` pairs.

    ``split`` is "train" (1,437 images), "test" (360) or "all" (1,797); without it ``train``
    picks train or test. The split is fixed and stratified (NOTE [Digits split]). Images are float32
    ``(N, 1, 8, 8)`` in [0, 1] (``scale="unit"``: pixel / 16) or [-1, 1] (``"tanh"``:
    pixel / 8 - 1), or the raw uint8 levels 0..16 with ``scale=None``; labels int64 ``(N,)``.
    Attributes ``data``, ``targets``, ``classes``. Needs scikit-learn (ImportError names the
    ``examples`` extra); never downloads. The counterpart of torchvision-style data sets.

    Example::

        >>> ds = Digits(train=True); x, y = ds[0]; x.shape, len(ds)
        (glassgrad.Size([1, 8, 8]), 1437)
    """

    classes: ClassVar[list[str]] = [str(i) for i in range(10)]

    def __init__(self, train: bool = True, *, split: str | None = None,
                 scale: str | None = "unit") -> None:
        if split is None:
            split = "train" if train else "test"
        if split not in ("train", "test", "all"):
            raise ValueError(
                f"glassgrad: Digits split must be 'train', 'test' or 'all', got {split!r}"
            )
        pixels, labels = _digits_raw()
        if split != "all":
            train_idx, test_idx = _digits_split(labels)
            keep = train_idx if split == "train" else test_idx
            pixels, labels = pixels[keep], labels[keep]
        images = _scale_pixels(pixels[:, None, :, :], 16.0, scale)
        self.split, self.scale = split, scale
        self.data = Tensor._make(np.array(images))
        self.targets = Tensor._make(np.array(labels))
        super().__init__(self.data, self.targets)


def load_digits(split: str = "train", scale: str | None = "unit", *, return_X_y: bool = False):
    """The digits data set as a ``Digits`` dataset, or ``(images, labels)`` tensors with
    ``return_X_y=True``. See ``Digits`` for the split, shapes, dtypes and scales.

    Example::

        >>> images, labels = load_digits("test", scale="tanh", return_X_y=True)
        >>> images.shape, labels.dtype
        (glassgrad.Size([360, 1, 8, 8]), glassgrad.int64)
    """
    ds = Digits(split=split, scale=scale)
    return (ds.data, ds.targets) if return_X_y else ds


_IDX_TYPES = {
    0x08: np.dtype(np.uint8), 0x09: np.dtype(np.int8), 0x0B: np.dtype(">i2"),
    0x0C: np.dtype(">i4"), 0x0D: np.dtype(">f4"), 0x0E: np.dtype(">f8"),
}


def read_idx(path: str | os.PathLike) -> Tensor:
    """Read an IDX file (MNIST's format), plain or gzip-compressed, into a tensor of the file's
    dtype (uint8, int8, int16, int32, float32 or float64) and shape.

    Raises ValueError naming the file for a bad magic number, an unknown type code or a size that
    does not match the header; FileNotFoundError when the file is missing.
    """
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0:
        magic = raw[:4].hex() or "empty"
        raise ValueError(
            f"glassgrad: {os.fspath(path)!r} is not an IDX file: bad magic number 0x{magic} "
            "(an IDX file starts with two zero bytes, a type code and the number of dimensions)."
        )
    code, ndim = raw[2], raw[3]
    if code not in _IDX_TYPES:
        raise ValueError(
            f"glassgrad: {os.fspath(path)!r} has an unknown IDX type code 0x{code:02x} in its "
            "magic number (known: 0x08 uint8, 0x09 int8, 0x0b int16, 0x0c int32, 0x0d float32, "
            "0x0e float64)."
        )
    start = 4 + 4 * ndim
    if len(raw) < start:
        raise ValueError(f"glassgrad: {os.fspath(path)!r} is truncated inside its IDX header.")
    shape = tuple(int(d) for d in np.frombuffer(raw, ">u4", count=ndim, offset=4))
    dtype = _IDX_TYPES[code]
    count = int(np.prod(shape, dtype=np.int64))
    if len(raw) - start != count * dtype.itemsize:
        raise ValueError(
            f"glassgrad: {os.fspath(path)!r} holds {len(raw) - start} bytes of data but its IDX "
            f"header says shape {list(shape)} of {dtype.name} ({count * dtype.itemsize} bytes)."
        )
    arr = np.frombuffer(raw, dtype, count=count, offset=start).reshape(shape)
    return Tensor._make(arr.astype(dtype.newbyteorder("=")))


_IDX_PREFIXES = {"train": ("train",), "test": ("t10k", "test")}


def _find_idx(root: str, prefixes, kind: str, rank: int, subfolder: str) -> str:
    folders = [root, os.path.join(root, "raw"), os.path.join(root, subfolder, "raw")]
    names = [f"{p}-{kind}{sep}idx{rank}-ubyte{gz}" for p in prefixes for sep in ("-", ".")
             for gz in ("", ".gz")]
    for folder in folders:
        for name in names:
            path = os.path.join(folder, name)
            if os.path.isfile(path):
                return path
    raise FileNotFoundError(
        f"glassgrad: no {kind} file found under {root!r} (looked for {', '.join(names[::2])}, "
        f"each also as .gz, in {', '.join(repr(f) for f in folders)}). glassgrad never downloads: "
        "fetch the IDX files yourself and pass their folder as root."
    )


class IDXDataset(TensorDataset):
    """Images and labels from IDX files in ``root`` (MNIST, Fashion-MNIST, KMNIST use this layout).

    ``split="train"`` reads ``train-images-idx3-ubyte`` and ``train-labels-idx1-ubyte``,
    ``split="test"`` the ``t10k-`` (or ``test-``) pair; each may be gzipped (``.gz``) and may sit in
    ``root``, ``root/raw`` or ``root/<ClassName>/raw``. Nothing is downloaded. Images are float32
    ``(N, 1, H, W)`` scaled to [0, 1] (``scale="unit"``: pixel / 255) or [-1, 1] (``"tanh"``:
    pixel / 127.5 - 1), or kept uint8 with ``scale=None``; labels int64 ``(N,)``. Raises
    FileNotFoundError when a file is missing and ValueError for malformed or mismatched files.
    """

    def __init__(self, root: str | os.PathLike, split: str = "train",
                 scale: str | None = "unit") -> None:
        if split not in _IDX_PREFIXES:
            raise ValueError(f"glassgrad: split must be 'train' or 'test', got {split!r}")
        root = os.fspath(root)
        prefixes = _IDX_PREFIXES[split]
        images_path = _find_idx(root, prefixes, "images", 3, type(self).__name__)
        labels_path = _find_idx(root, prefixes, "labels", 1, type(self).__name__)
        images, labels = read_idx(images_path)._array, read_idx(labels_path)._array
        if images.ndim != 3 or labels.ndim != 1 or images.shape[0] != labels.shape[0]:
            raise ValueError(
                f"glassgrad: expected images (N, H, W) and labels (N,), got {list(images.shape)} "
                f"from {images_path!r} and {list(labels.shape)} from {labels_path!r}."
            )
        self.root, self.split, self.scale = root, split, scale
        self.data = Tensor._make(np.ascontiguousarray(
            _scale_pixels(images[:, None, :, :], 255.0, scale)))
        self.targets = Tensor._make(labels.astype(np.int64))
        super().__init__(self.data, self.targets)


class MNIST(IDXDataset):
    """MNIST from its four IDX files in ``root`` (``torchvision.datasets.MNIST`` without
    downloading): ``train=True`` gives 60,000 images, ``False`` 10,000. See ``IDXDataset`` for
    the file names, shapes and scales. ``download=True`` raises RuntimeError."""

    classes: ClassVar[list[str]] = [
        "0 - zero", "1 - one", "2 - two", "3 - three", "4 - four", "5 - five", "6 - six",
        "7 - seven", "8 - eight", "9 - nine",
    ]

    def __init__(self, root: str | os.PathLike, train: bool = True, scale: str | None = "unit",
                 download: bool = False) -> None:
        if download:
            raise RuntimeError(
                "glassgrad never downloads data sets: fetch the MNIST IDX files yourself and pass "
                "their folder as root."
            )
        self.train = train
        super().__init__(root, "train" if train else "test", scale)
