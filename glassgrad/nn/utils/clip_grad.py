"""Gradient clipping (``torch.nn.utils.clip_grad_norm_``, ``clip_grad_value_``)."""

from __future__ import annotations

import math

from ...autograd.grad_mode import no_grad
from ...ops.reduction import norm
from ...ops.shape import stack
from ...tensor import Tensor
from ..._user_warning import warn_user


def _grads(parameters) -> list:
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    return [p.grad for p in parameters if p.grad is not None]


def get_total_norm(tensors, norm_type: float = 2.0, error_if_nonfinite: bool = False,
                   foreach=None) -> Tensor:
    """The ``norm_type``-norm of all ``tensors`` together, as if concatenated
    (``torch.nn.utils.get_total_norm``)."""
    if isinstance(tensors, Tensor):
        tensors = [tensors]
    tensors = list(tensors)
    norm_type = float(norm_type)
    if not tensors:
        from ..._factories import tensor

        return tensor(0.0)
    with no_grad():
        per = [norm(t.detach(), norm_type) for t in tensors]
        total = norm(stack([p.to(per[0].dtype) for p in per]), norm_type)
    if error_if_nonfinite and not math.isfinite(float(total)):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, "
            "so it cannot be clipped. To disable this error and scale the gradients by the "
            "non-finite norm anyway, set `error_if_nonfinite=False`"
        )
    return total


def clip_grads_with_norm_(parameters, max_norm: float, total_norm: Tensor, foreach=None) -> None:
    """Scale gradients in place by ``max_norm / (total_norm + 1e-6)`` when that is below 1."""
    grads = _grads(parameters)
    if not grads:
        return
    coef = float(max_norm) / (float(total_norm) + 1e-6)
    # NOTE: PyTorch clamps the coefficient at 1: gradients are never scaled up; a NaN norm
    # (error_if_nonfinite=False) scales them by NaN, as there
    if not coef >= 1.0:
        with no_grad():
            for g in grads:
                g.mul_(coef)


def clip_grad_norm_(parameters, max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False, foreach=None) -> Tensor:
    """Rescale the gradients of ``parameters`` in place so that their total ``norm_type``-norm
    (inf allowed) is at most ``max_norm``; returns the total norm before clipping
    (``torch.nn.utils.clip_grad_norm_``). RuntimeError for a non-finite norm with
    ``error_if_nonfinite``."""
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    parameters = list(parameters)
    grads = _grads(parameters)
    total = get_total_norm(grads, norm_type, error_if_nonfinite)
    clip_grads_with_norm_(parameters, max_norm, total)
    return total


def clip_grad_norm(parameters, max_norm: float, norm_type: float = 2.0,
                   error_if_nonfinite: bool = False, foreach=None) -> Tensor:
    """Deprecated alias of ``clip_grad_norm_``."""
    warn_user("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
              "`torch.nn.utils.clip_grad_norm_`.", FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters, clip_value: float, foreach=None) -> None:
    """Clamp every gradient of ``parameters`` to ``[-clip_value, clip_value]`` in place
    (``torch.nn.utils.clip_grad_value_``)."""
    clip_value = float(clip_value)
    with no_grad():
        for g in _grads(parameters):
            g.clamp_(min=-clip_value, max=clip_value)
