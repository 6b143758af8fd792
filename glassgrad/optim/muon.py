"""``Muon``: momentum orthogonalized by a Newton-Schulz iteration, for 2-D parameters
(``torch.optim.Muon``)."""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np

from ..tensor import Tensor
from .optimizer import (
    Optimizer, _bump, _dense_grads, _evaluate_closure, _lerp_, _to_float, _zeros_like,
)

__all__ = ["Muon"]

_COEFFICIENTS = (3.4445, -4.7750, 2.0315)


def _bf16(x: np.ndarray) -> np.ndarray:
    """``x`` rounded to bfloat16, kept as float32 (the products below are exact in float32)."""
    return x.astype(ml_dtypes.bfloat16).astype(np.float32)


def _zeropower_via_newtonschulz(grad, ns_coefficients, ns_steps: int, eps: float) -> np.ndarray:
    """PyTorch's quintic Newton-Schulz orthogonalization of a 2-D ``grad``, in bfloat16 as
    PyTorch runs it: each matmul and addmm accumulates in float32 and rounds once."""
    if ns_steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if grad.ndim != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(ns_coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = ns_coefficients
    x = _bf16(grad)
    tall = grad.shape[0] > grad.shape[1]
    if tall:
        x = x.T
    norm = _bf16(np.sqrt(np.sum(x * x, dtype=np.float32)))
    x = _bf16(x / np.maximum(norm, _bf16(np.float32(eps))))
    for _ in range(ns_steps):
        gram = _bf16(x @ x.T)
        gram_update = _bf16(c * (gram @ gram) + b * gram)
        x = _bf16(a * x + gram_update @ x)
    return x.T if tall else x


def _adjust_lr(lr: float, adjust_lr_fn, shape) -> float:
    rows, cols = shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        return lr * math.sqrt(max(1, rows / cols))
    if adjust_lr_fn == "match_rms_adamw":
        return lr * 0.2 * math.sqrt(max(rows, cols))
    return lr


class Muon(Optimizer):
    """Muon (``torch.optim.Muon``), for the 2-D weights of hidden layers (use AdamW for the rest).

    Per parameter with a gradient ``g``::

        B = lerp(B, g, 1 - momentum)                         (state["momentum_buffer"])
        O = NewtonSchulz(lerp(g, B, momentum) if nesterov else B)     (bfloat16, ns_steps)
        p = p * (1 - lr * weight_decay) - lr * sqrt(max(1, rows / cols)) * O
            (adjust_lr_fn="match_rms_adamw": lr * 0.2 * sqrt(max(rows, cols)))

    Raises ValueError for a negative ``lr``, ``momentum`` or ``weight_decay``, an unknown
    ``adjust_lr_fn`` or a parameter that is not 2-D.

    Example::

        >>> opt = glassgrad.optim.Muon([p for p in model.parameters() if p.ndim == 2], lr=0.02)
    """

    def __init__(
        self,
        params,
        lr: float = 1e-3,
        weight_decay: float = 0.1,
        momentum: float = 0.95,
        nesterov: bool = True,
        ns_coefficients: tuple = _COEFFICIENTS,
        eps: float = 1e-7,
        ns_steps: int = 5,
        adjust_lr_fn: str | None = None,
    ) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in ("original", "match_rms_adamw"):
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        defaults = {
            "lr": lr,
            "weight_decay": weight_decay,
            "momentum": momentum,
            "nesterov": nesterov,
            "ns_coefficients": ns_coefficients,
            "eps": eps,
            "ns_steps": ns_steps,
            "adjust_lr_fn": adjust_lr_fn,
        }
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError(
                        "Muon only supports 2D parameters whereas we found a parameter with "
                        f"size: {p.size()}")

    def step(self, closure=None):
        """One Muon update of every parameter whose ``.grad`` is not None; returns the closure's
        loss. RuntimeError for a sparse gradient, as PyTorch."""
        loss = _evaluate_closure(closure)
        for group in self.param_groups:
            lr, momentum = _to_float(group["lr"]), group["momentum"]
            weight_decay = group["weight_decay"]
            for p in _dense_grads(group, "Muon"):
                state = self.state[p]
                if "momentum_buffer" not in state:
                    state["momentum_buffer"] = _zeros_like(p)
                g = p._grad._array
                buf = state["momentum_buffer"]
                _lerp_(buf._array, g, 1 - momentum)
                _bump(buf)
                if group["nesterov"]:
                    update = g.copy()
                    _lerp_(update, buf._array, momentum)
                else:
                    update = buf._array
                update = _zeropower_via_newtonschulz(
                    update, group["ns_coefficients"], group["ns_steps"], group["eps"])
                adjusted_lr = _adjust_lr(lr, group["adjust_lr_fn"], p.shape)
                x = p._array
                x *= 1 - lr * weight_decay
                x += -adjusted_lr * update.astype(x.dtype)
                _bump(p, 2)
        return loss
