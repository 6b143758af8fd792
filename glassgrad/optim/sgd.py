"""``SGD``: stochastic gradient descent with momentum, dampening, Nesterov and weight decay
(``torch.optim.SGD``)."""

from __future__ import annotations

import numpy as np

from ..tensor import Tensor
from . import _differentiable
from .optimizer import (
    Optimizer,
    _check_fused,
    _bump,
    _evaluate_closure,
    _grad_view,
    _sparse_grad_view,
    _to_float,
    _use_grad_for_differentiable,
)

# torch's SGD adds weight_decay * param to the gradient, which it cannot do to a sparse one
_SPARSE_DECAY = "add(sparse, dense) is not supported. Use add(dense, sparse) instead."

__all__ = ["SGD"]


class SGD(Optimizer):
    """Stochastic gradient descent, optionally with momentum (``torch.optim.SGD``).

    Per parameter with a gradient ``g`` (negated when ``maximize``)::

        g = g + weight_decay * p
        buf = g (first step) | momentum * buf + (1 - dampening) * g      (state["momentum_buffer"])
        g = g + momentum * buf if nesterov else buf                       (when momentum != 0)
        p = p - lr * g

    Raises ValueError for a negative ``lr``/``momentum``/``weight_decay`` and for ``nesterov``
    without momentum or with dampening.

    Example::

        >>> opt = glassgrad.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    """

    def __init__(
        self,
        params,
        lr: float | Tensor = 1e-3,
        momentum: float = 0,
        dampening: float = 0,
        weight_decay: float | Tensor = 0,
        nesterov: bool = False,
        *,
        maximize: bool = False,
        foreach: bool | None = None,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {
            "lr": lr,
            "momentum": momentum,
            "dampening": dampening,
            "weight_decay": weight_decay,
            "nesterov": nesterov,
            "maximize": maximize,
            "foreach": foreach,
            "differentiable": differentiable,
            "fused": fused,
        }
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)
        _check_fused(fused, foreach, differentiable)

    def __setstate__(self, state) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("nesterov", False)
            group.setdefault("maximize", False)
            group.setdefault("foreach", None)
            group.setdefault("differentiable", False)
            group.setdefault("fused", False)

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """One SGD update of every parameter whose ``.grad`` is not None; returns the closure's
        loss (the closure runs with grad enabled)."""
        loss = _evaluate_closure(closure)
        for group in self.param_groups:
            if group["differentiable"]:  # NOTE [Differentiable updates]
                _differentiable.sgd(self, group)
                continue
            lr = _to_float(group["lr"])
            momentum = group["momentum"]
            dampening = group["dampening"]
            nesterov = group["nesterov"]
            weight_decay = _to_float(group["weight_decay"])
            for p in group["params"]:
                if p._grad is None:
                    continue
                g = _sparse_grad_view(
                    p, group["maximize"], weight_decay, _SPARSE_DECAY
                ) if p._grad._sparse else _grad_view(p, group["maximize"], weight_decay)
                if momentum != 0:
                    state = self.state[p]
                    buf = state.get("momentum_buffer")
                    if buf is None:
                        buf = Tensor._make(np.array(g, copy=True, order="K"))
                        state["momentum_buffer"] = buf
                    else:
                        b = buf._array
                        b *= momentum
                        b += (1 - dampening) * g
                        _bump(buf, 2)
                    g = g + momentum * buf._array if nesterov else buf._array
                p._array += -lr * g
                _bump(p)
        return loss
