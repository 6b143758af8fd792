"""``parameters_to_vector`` / ``vector_to_parameters`` (``torch.nn.utils``)."""

from __future__ import annotations

from ...autograd.grad_mode import no_grad
from ...ops.shape import cat
from ...tensor import Tensor


def parameters_to_vector(parameters) -> Tensor:
    """All parameters flattened and concatenated into one 1-D tensor (differentiable)."""
    return cat([p.reshape(-1) for p in parameters])


def vector_to_parameters(vec: Tensor, parameters) -> None:
    """Copy consecutive slices of the 1-D ``vec`` into ``parameters`` in place (their ``.data``)."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    pointer = 0
    for param in parameters:
        n = param.numel()
        with no_grad():
            param.copy_(vec.detach()[pointer:pointer + n].reshape(param.shape))
        pointer += n
