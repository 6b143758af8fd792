"""``affine_grid_generator``'s op: the base grid (constant pixel positions, an attribute) times
each affine matrix. Like PyTorch's ``AffineGridGeneratorBackward0`` it saves no tensor, so a
second backward through it needs no ``retain_graph``; the backward is one matmul, whose own
derivative gives double backward."""

from __future__ import annotations

from . import primitive
from .primitive import Primitive


class AffineGridGenerator(Primitive):
    """``theta`` (N, nd, nd + 1) -> grid (N, *spatial, nd); ``base`` is (prod(spatial), nd + 1)."""

    node_name = "AffineGridGeneratorBackward0"

    @staticmethod
    def forward(xp, theta, *, base, spatial):
        grid = xp.matmul(base.astype(theta.dtype), theta.transpose(0, 2, 1))
        return grid.reshape(theta.shape[0], *spatial, theta.shape[1])

    @staticmethod
    def backward(grad, *, base, spatial):
        n, nd = grad.shape[0], grad.shape[-1]
        rows = grad.reshape(n, -1, nd).transpose(1, 2)  # (N, nd, prod(spatial))
        return (rows.matmul(primitive._make(base.astype(grad._array.dtype))),)
