"""``Flatten`` and ``Unflatten`` (``torch.nn.Flatten``, ``torch.nn.Unflatten``)."""

from __future__ import annotations

from ..module import Module


class Flatten(Module):
    """Merge dims ``start_dim..end_dim`` into one: ``(N, C, H, W) -> (N, C*H*W)`` by default
    (``torch.nn.Flatten``)."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input):
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Split dim ``dim`` into ``unflattened_size``: ``(N, 50) -> (N, 2, 5, 5)``
    (``torch.nn.Unflatten``)."""

    def __init__(self, dim: int, unflattened_size) -> None:
        super().__init__()
        if isinstance(dim, str):
            raise NotImplementedError("glassgrad: named tensors (a str dim) are not supported")
        if not isinstance(unflattened_size, (tuple, list)):
            raise TypeError(
                "unflattened_size must be tuple of ints, but found type "
                f"{type(unflattened_size).__name__}"
            )
        self.dim = dim
        self.unflattened_size = unflattened_size

    def forward(self, input):
        return input.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
