"""``Adadelta``: learning rates from running averages of squared gradients and squared updates
(``torch.optim.Adadelta``)."""

from __future__ import annotations

import numpy as np

from ..tensor import Tensor
from . import _differentiable
from .optimizer import (
    Optimizer,
    _check_capturable,
    _bump,
    _check_lr,
    _check_nonnegative,
    _dense_grads,
    _evaluate_closure,
    _grad_view,
    _restore_state,
    _step_tensor,
    _to_float,
    _use_grad_for_differentiable,
    _zeros_like,
)

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    """Adadelta (``torch.optim.Adadelta``).

    Per parameter with a gradient ``g`` (negated when ``maximize``, plus ``weight_decay * p``)::

        v = rho * v + (1 - rho) * g * g                     (state["square_avg"])
        delta = sqrt(u + eps) / sqrt(v + eps) * g
        u = rho * u + (1 - rho) * delta * delta             (state["acc_delta"])
        p = p - lr * delta

    ``state["step"]`` is a 0-d float tensor like PyTorch's. Raises ValueError for a negative
    ``lr``, ``eps`` or ``weight_decay``, or ``rho`` outside [0, 1].

    Example::

        >>> opt = glassgrad.optim.Adadelta(model.parameters(), lr=1.0)
    """

    def __init__(
        self,
        params,
        lr: float | Tensor = 1.0,
        rho: float = 0.9,
        eps: float = 1e-6,
        weight_decay: float = 0,
        foreach: bool | None = None,
        *,
        capturable: bool = False,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        _check_lr(lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        _check_nonnegative(epsilon=eps)
        _check_nonnegative(weight_decay=weight_decay)
        defaults = {
            "lr": lr,
            "rho": rho,
            "eps": eps,
            "weight_decay": weight_decay,
            "maximize": maximize,
            "capturable": capturable,
            "foreach": foreach,
            "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    def __setstate__(self, state) -> None:
        super().__setstate__(state)
        _restore_state(self, foreach=None, maximize=False, differentiable=False, capturable=False)

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """One Adadelta update of every parameter whose ``.grad`` is not None; returns the
        closure's loss (the closure runs with grad enabled). Raises RuntimeError for a sparse
        gradient, as PyTorch does."""
        loss = _evaluate_closure(closure)
        for group in self.param_groups:
            if group["capturable"]:
                _check_capturable(group, xla=False)
            if group["differentiable"]:  # NOTE [Differentiable updates]
                _differentiable.adadelta(self, group)
                continue
            lr = _to_float(group["lr"])
            rho, eps = group["rho"], group["eps"]
            for p in _dense_grads(group, "Adadelta"):
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = _step_tensor()
                    state["square_avg"] = _zeros_like(p)
                    state["acc_delta"] = _zeros_like(p)
                step_t = state["step"]
                step_t._array += 1
                _bump(step_t)
                g = _grad_view(p, group["maximize"], _to_float(group["weight_decay"]))

                square_avg, acc_delta = state["square_avg"], state["acc_delta"]
                v, u = square_avg._array, acc_delta._array
                v *= rho
                v += (1 - rho) * g * g
                _bump(square_avg, 2)
                std = np.sqrt(v + eps)
                delta = np.sqrt(u + eps)
                delta /= std
                delta *= g
                u *= rho
                u += (1 - rho) * delta * delta
                _bump(acc_delta, 2)
                p._array += -lr * delta
                _bump(p)
        return loss
