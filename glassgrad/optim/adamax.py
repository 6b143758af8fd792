"""``Adamax``: Adam with the infinity norm of past gradients (``torch.optim.Adamax``)."""

from __future__ import annotations

import numpy as np

from ..tensor import Tensor
from . import _differentiable
from .optimizer import (
    Optimizer,
    _check_capturable,
    _bump,
    _check_betas,
    _check_lr,
    _check_nonnegative,
    _dense_grads,
    _evaluate_closure,
    _grad_view,
    _lerp_,
    _restore_state,
    _step_tensor,
    _to_float,
    _use_grad_for_differentiable,
    _zeros_like,
)

__all__ = ["Adamax"]


class Adamax(Optimizer):
    """Adamax (``torch.optim.Adamax``).

    Per parameter with a gradient ``g`` (negated when ``maximize``, plus ``weight_decay * p``),
    at step ``t``::

        m = lerp(m, g, 1 - beta1)                     (state["exp_avg"])
        u = max(beta2 * u, |g| + eps)                 (state["exp_inf"])
        p = p - lr / (1 - beta1**t) * m / u

    Raises ValueError for a negative ``lr``, ``eps`` or ``weight_decay``, or betas outside [0, 1).

    Example::

        >>> opt = glassgrad.optim.Adamax(model.parameters(), lr=2e-3)
    """

    def __init__(
        self,
        params,
        lr: float | Tensor = 2e-3,
        betas: tuple = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        foreach: bool | None = None,
        *,
        maximize: bool = False,
        differentiable: bool = False,
        capturable: bool = False,
    ) -> None:
        _check_lr(lr)
        _check_nonnegative(epsilon=eps)
        _check_betas(betas)
        _check_nonnegative(weight_decay=weight_decay)
        defaults = {
            "lr": lr,
            "betas": betas,
            "eps": eps,
            "weight_decay": weight_decay,
            "foreach": foreach,
            "maximize": maximize,
            "differentiable": differentiable,
            "capturable": capturable,
        }
        super().__init__(params, defaults)

    def __setstate__(self, state) -> None:
        super().__setstate__(state)
        _restore_state(self, foreach=None, maximize=False, differentiable=False, capturable=False)

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """One Adamax update of every parameter whose ``.grad`` is not None; returns the
        closure's loss. RuntimeError for a sparse gradient, as PyTorch."""
        loss = _evaluate_closure(closure)
        for group in self.param_groups:
            if group["capturable"]:
                _check_capturable(group)
            if group["differentiable"]:  # NOTE [Differentiable updates]
                _differentiable.adamax(self, group)
                continue
            beta1, beta2 = group["betas"]
            lr, eps = _to_float(group["lr"]), group["eps"]
            for p in _dense_grads(group, "Adamax"):
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = _step_tensor()
                    state["exp_avg"] = _zeros_like(p)
                    state["exp_inf"] = _zeros_like(p)
                g = _grad_view(p, group["maximize"], _to_float(group["weight_decay"]))
                step_t = state["step"]
                step_t._array += 1
                _bump(step_t)
                exp_avg, exp_inf = state["exp_avg"], state["exp_inf"]
                _lerp_(exp_avg._array, g, 1 - beta1)
                _bump(exp_avg)
                u = exp_inf._array
                u *= beta2
                norm = np.abs(g)
                norm += eps
                np.maximum(u, norm, out=u)
                _bump(exp_inf, 2)
                clr = lr / (1 - beta1 ** step_t.item())
                p._array += -clr * exp_avg._array / u  # NOTE: addcdiv's order: (v * a) / b
                _bump(p)
        return loss
