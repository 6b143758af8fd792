"""``RAdam``: Adam with a rectified adaptive learning rate (``torch.optim.RAdam``)."""

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
    _restore_state,
    _step_tensor,
    _to_float,
    _update_moments,
    _use_grad_for_differentiable,
    _weight_decay,
    _zeros_like,
)

__all__ = ["RAdam"]


class RAdam(Optimizer):
    """RAdam (``torch.optim.RAdam``).

    Per parameter with a gradient ``g`` (negated when ``maximize``), at step ``t``::

        p = p * (1 - lr * weight_decay)  if decoupled_weight_decay  else  g = g + weight_decay * p
        m = lerp(m, g, 1 - beta1);  v = beta2 * v + (1 - beta2) * g * g
        rho_inf = 2 / (1 - beta2) - 1;  rho_t = rho_inf - 2 t beta2**t / (1 - beta2**t)
        p = p - m / (1 - beta1**t) * lr * sqrt(1 - beta2**t) / (sqrt(v) + eps) * r_t  (rho_t > 5)
        p = p - m / (1 - beta1**t) * lr                                               (otherwise)

    with ``r_t = sqrt((rho_t - 4)(rho_t - 2) rho_inf / ((rho_inf - 4)(rho_inf - 2) rho_t))``.
    Raises ValueError for a negative ``lr``, ``eps`` or ``weight_decay``, or betas outside
    [0, 1).

    Example::

        >>> opt = glassgrad.optim.RAdam(model.parameters(), lr=1e-3)
    """

    def __init__(
        self,
        params,
        lr: float | Tensor = 1e-3,
        betas: tuple = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        decoupled_weight_decay: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
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
            "maximize": maximize,
            "foreach": foreach,
            "capturable": capturable,
            "decoupled_weight_decay": decoupled_weight_decay,
            "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    def __setstate__(self, state) -> None:
        super().__setstate__(state)
        _restore_state(self, foreach=None, maximize=False, differentiable=False,
                       capturable=False, decoupled_weight_decay=False)

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """One RAdam update of every parameter whose ``.grad`` is not None; returns the closure's
        loss. RuntimeError for a sparse gradient, as PyTorch."""
        loss = _evaluate_closure(closure)
        for group in self.param_groups:
            if group["capturable"]:
                _check_capturable(group)
            if group["differentiable"]:  # NOTE [Differentiable updates]
                _differentiable.radam(self, group)
                continue
            beta1, beta2 = group["betas"]
            lr, eps, weight_decay = _to_float(group["lr"]), group["eps"], group["weight_decay"]
            for p in _dense_grads(group, "RAdam"):
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = _step_tensor()
                    state["exp_avg"] = _zeros_like(p)
                    state["exp_avg_sq"] = _zeros_like(p)
                x, g = p._array, p._grad._array
                if group["maximize"]:
                    g = -g
                step_t = state["step"]
                step_t._array += 1
                _bump(step_t)
                step = step_t.item()
                g = _weight_decay(p, g, lr, weight_decay, group["decoupled_weight_decay"])
                _update_moments(state, g, beta1, beta2)
                exp_avg, v = state["exp_avg"], state["exp_avg_sq"]._array
                bias_correction1 = 1 - beta1**step
                bias_correction2 = 1 - beta2**step
                update = exp_avg._array / bias_correction1 * lr
                rho_inf = 2 / (1 - beta2) - 1
                rho_t = rho_inf - 2 * step * (beta2**step) / bias_correction2
                if rho_t > 5.0:
                    rect = ((rho_t - 4) * (rho_t - 2) * rho_inf
                            / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
                    root = np.sqrt(v)
                    root += eps
                    update = update * ((bias_correction2**0.5) / root) * rect
                x -= update
                _bump(p)
        return loss
