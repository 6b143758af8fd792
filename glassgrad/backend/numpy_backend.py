"""NumPy as the array namespace ``xp`` and the ``device`` object for the CPU."""

from __future__ import annotations

import numpy as np

xp = np


class device:
    """A device, like ``torch.device``: ``device("cpu")``; compares equal to its string.

    glassgrad computes on the CPU; ``"cuda"`` is accepted as a name so that article code that moves
    tensors with ``.to(device)`` runs, and maps to the CPU (there is no GPU backend yet).
    """

    __slots__ = ("type", "index")

    def __init__(self, type: str = "cpu", index: int | None = None):  # noqa: A002 - torch's name
        if isinstance(type, device):
            type, index = type.type, type.index
        name, _, idx = str(type).partition(":")
        if name not in ("cpu", "cuda", "mps"):
            raise RuntimeError(
                f"Expected one of cpu, cuda, mps device type at start of device string: {type}"
            )
        self.type = "cpu"
        self.index = int(idx) if idx else index

    def __repr__(self) -> str:
        return f"device(type='{self.type}')"

    def __str__(self) -> str:
        return self.type

    def __eq__(self, other) -> bool:
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, device) and other.type == self.type

    def __hash__(self) -> int:
        return hash(self.type)


CPU = device("cpu")


def to_array(obj, np_dtype=None):
    """Convert nested lists, scalars or arrays to an ndarray (one copy at most)."""
    return np.asarray(obj, dtype=np_dtype)


def is_array(obj) -> bool:
    return isinstance(obj, np.ndarray)
