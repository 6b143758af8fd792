"""torchvision.transforms, the part the example programs use, with torchvision's arithmetic
(ToTensor divides uint8 by 255 in the default float dtype; Normalize is (x - mean) / std per
channel; ToPILImage turns floats into bytes as ``x.mul(255).byte()`` does)."""

from __future__ import annotations

import numpy as np
import torch
from PIL import Image

__all__ = ["CenterCrop", "Compose", "Lambda", "Normalize", "Resize", "ToPILImage", "ToTensor"]


class Compose:
    """Apply transforms one after another (torchvision.transforms.Compose)."""

    def __init__(self, transforms):
        self.transforms = list(transforms)

    def __call__(self, img):
        for t in self.transforms:
            img = t(img)
        return img


class Lambda:
    """Wrap a function as a transform."""

    def __init__(self, lambd):
        self.lambd = lambd

    def __call__(self, img):
        return self.lambd(img)


class ToTensor:
    """PIL image or HxWxC ndarray -> CxHxW tensor; uint8 becomes float in [0, 1]."""

    def __call__(self, pic):
        array = np.array(pic, copy=True)
        if array.ndim == 2:
            array = array[:, :, None]
        img = torch.from_numpy(np.ascontiguousarray(array.transpose(2, 0, 1)))
        if img.dtype == torch.uint8:
            return img.to(dtype=torch.get_default_dtype()).div(255)
        return img


class ToPILImage:
    """CxHxW tensor -> PIL image; float tensors are scaled by 255 and cast to bytes with wrap-around
    (torch's float -> uint8 conversion truncates to int64 first)."""

    def __call__(self, pic):
        array = pic.detach().cpu().numpy()
        if np.issubdtype(array.dtype, np.floating):
            array = (array * np.float32(255)).astype(np.int64).astype(np.uint8)
        array = array.transpose(1, 2, 0)
        if array.shape[2] == 1:
            return Image.fromarray(array[:, :, 0], mode="L")
        return Image.fromarray(array, mode="RGB")


class Normalize:
    """(tensor - mean) / std per channel, on a copy unless ``inplace``."""

    def __init__(self, mean, std, inplace=False):
        self.mean, self.std, self.inplace = mean, std, inplace

    def __call__(self, tensor):
        mean = torch.as_tensor(self.mean, dtype=tensor.dtype).view(-1, 1, 1)
        std = torch.as_tensor(self.std, dtype=tensor.dtype).view(-1, 1, 1)
        if not self.inplace:
            tensor = tensor.clone()
        return tensor.sub_(mean).div_(std)


def _size_of(size, width, height):
    if isinstance(size, int):
        short, long = (width, height) if width <= height else (height, width)
        new_long = int(size * long / short)
        return (size, new_long) if width <= height else (new_long, size)
    return size[1], size[0]


class Resize:
    """Resize a PIL image (bilinear); an int size matches the shorter edge."""

    def __init__(self, size, interpolation=Image.BILINEAR):
        self.size, self.interpolation = size, interpolation

    def __call__(self, img):
        return img.resize(_size_of(self.size, *img.size), self.interpolation)


class CenterCrop:
    """Crop the centre of a PIL image to ``size`` (int or (h, w))."""

    def __init__(self, size):
        self.size = (size, size) if isinstance(size, int) else tuple(size)

    def __call__(self, img):
        width, height = img.size
        crop_h, crop_w = self.size
        top = int(round((height - crop_h) / 2.0))
        left = int(round((width - crop_w) / 2.0))
        return img.crop((left, top, left + crop_w, top + crop_h))
