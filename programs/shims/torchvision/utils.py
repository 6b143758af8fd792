"""torchvision.utils.make_grid and save_image (PNG through PIL)."""

from __future__ import annotations

import math

import torch
from PIL import Image

__all__ = ["make_grid", "save_image"]


def make_grid(tensor, nrow=8, padding=2, normalize=False, value_range=None, scale_each=False,
              pad_value=0.0):
    """A (B, C, H, W) batch (or list of CxHxW images) tiled into one CxH'xW' image."""
    if isinstance(tensor, (list, tuple)):
        tensor = torch.stack(list(tensor), dim=0)
    tensor = tensor.detach()
    if tensor.dim() == 2:
        tensor = tensor.unsqueeze(0)
    if tensor.dim() == 3:
        tensor = tensor.unsqueeze(0)
    if tensor.size(1) == 1:
        tensor = torch.cat((tensor, tensor, tensor), 1)
    if normalize:
        tensor = tensor.clone()

        def norm(t):
            low, high = value_range if value_range is not None else (float(t.min()), float(t.max()))
            t.clamp_(min=low, max=high)
            t.sub_(low).div_(max(high - low, 1e-5))

        if scale_each:
            for t in tensor:
                norm(t)
        else:
            norm(tensor)
    nmaps = tensor.size(0)
    xmaps = min(nrow, nmaps)
    ymaps = int(math.ceil(float(nmaps) / xmaps))
    height, width = int(tensor.size(2) + padding), int(tensor.size(3) + padding)
    grid = torch.full((tensor.size(1), height * ymaps + padding, width * xmaps + padding),
                      pad_value, dtype=tensor.dtype)
    k = 0
    for y in range(ymaps):
        for x in range(xmaps):
            if k >= nmaps:
                break
            top, left = y * height + padding, x * width + padding
            grid[:, top:top + height - padding, left:left + width - padding] = tensor[k]
            k += 1
    return grid


def save_image(tensor, fp, format=None, **kwargs):
    """make_grid(tensor, **kwargs) written as an 8-bit image file."""
    grid = make_grid(tensor, **kwargs)
    ndarr = grid.mul(255).add(0.5).clamp(0, 255).permute(1, 2, 0).to(torch.uint8).numpy()
    Image.fromarray(ndarr).save(fp, format=format)
