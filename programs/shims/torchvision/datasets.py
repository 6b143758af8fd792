"""torchvision.datasets.MNIST and FakeData without downloads.

MNIST here is scikit-learn's 1,797 bundled 8x8 digits drawn at MNIST's size: each 8x8 image (16
grey levels) is scaled bilinearly to 20x20 and centred in a 28x28 frame, as MNIST centres its 20x20
digits, with levels mapped to 0..255. ``train=True`` gives glassgrad's fixed 1,437-image train split,
``False`` the 360-image test split (NOTE [Digits split] in glassgrad/utils/data/datasets.py).
``data`` is uint8 (N, 28, 28), ``targets`` int64 (N,), items are (PIL 'L' image, int) as
torchvision gives them to transforms. ``download`` and ``root`` are accepted and ignored.
"""

from __future__ import annotations

import functools

import numpy as np
import torch
from PIL import Image

from . import transforms as _transforms

__all__ = ["FakeData", "MNIST"]


def _bilinear_matrix(n_out: int, n_in: int) -> np.ndarray:
    """(n_out, n_in) weights sampling pixel centres (align_corners=False)."""
    centres = (np.arange(n_out) + 0.5) * n_in / n_out - 0.5
    centres = np.clip(centres, 0, n_in - 1)
    low = np.floor(centres).astype(np.int64)
    high = np.minimum(low + 1, n_in - 1)
    frac = centres - low
    weights = np.zeros((n_out, n_in))
    weights[np.arange(n_out), low] += 1 - frac
    weights[np.arange(n_out), high] += frac
    return weights


@functools.lru_cache(maxsize=2)
def _mnist_sized_digits(train: bool):
    # glassgrad's numpy-only loader of the bundled digits; it imports no tensors, so the data are
    # identical whichever library the program runs on.
    from glassgrad.utils.data.datasets import _digits_raw, _digits_split

    pixels, labels = _digits_raw()
    keep = _digits_split(labels)[0 if train else 1]
    scale = _bilinear_matrix(20, 8)
    big = np.einsum("ij,njk,lk->nil", scale, pixels[keep].astype(np.float64), scale)
    frame = np.zeros((len(keep), 28, 28), dtype=np.uint8)
    frame[:, 4:24, 4:24] = np.clip(np.rint(big * 255.0 / 16.0), 0, 255).astype(np.uint8)
    return frame, labels[keep].astype(np.int64)


class MNIST:
    """MNIST-shaped digits (see the module docstring); torchvision.datasets.MNIST's signature."""

    classes = ["0 - zero", "1 - one", "2 - two", "3 - three", "4 - four", "5 - five", "6 - six",
               "7 - seven", "8 - eight", "9 - nine"]

    def __init__(self, root, train=True, transform=None, target_transform=None, download=False):
        self.root, self.train = root, train
        self.transform, self.target_transform = transform, target_transform
        images, labels = _mnist_sized_digits(bool(train))
        self.data = torch.from_numpy(images.copy())
        self.targets = torch.from_numpy(labels.copy())

    def __len__(self):
        return len(self.data)

    def __getitem__(self, index):
        img = Image.fromarray(self.data[index].numpy(), mode="L")
        target = int(self.targets[index])
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target


class FakeData:
    """Random images, torchvision.datasets.FakeData exactly: item i is ``randn(*image_size)`` and a
    ``randint`` class drawn after ``manual_seed(i + random_offset)``, with the global RNG state
    restored afterwards, returned as a PIL image."""

    def __init__(self, size=1000, image_size=(3, 224, 224), num_classes=10, transform=None,
                 target_transform=None, random_offset=0):
        self.size, self.image_size, self.num_classes = size, image_size, num_classes
        self.transform, self.target_transform = transform, target_transform
        self.random_offset = random_offset

    def __len__(self):
        return self.size

    def __getitem__(self, index):
        if index >= len(self):
            raise IndexError(f"{self.__class__.__name__} index out of range")
        rng_state = torch.get_rng_state()
        torch.manual_seed(index + self.random_offset)
        img = torch.randn(*self.image_size)
        target = torch.randint(0, self.num_classes, size=(1,), dtype=torch.long)[0]
        torch.set_rng_state(rng_state)
        img = _transforms.ToPILImage()(img)
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target.item()
