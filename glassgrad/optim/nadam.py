"""``NAdam``: Adam with Nesterov momentum (``torch.optim.NAdam``)."""

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

__all__ = ["NAdam"]


class NAdam(Optimizer):
    """NAdam (``torch.optim.NAdam``).

    Per parameter with a gradient ``g`` (negated when ``maximize``), at step ``t``::

        p = p * (1 - lr * weight_decay)  if decoupled_weight_decay  else  g = g + weight_decay * p
        mu_t = beta1 * (1 - 0.5 * 0.96 ** (t * momentum_decay));  P = P * mu_t  (mu_product)
        m = lerp(m, g, 1 - beta1);  v = beta2 * v + (1 - beta2) * g * g
        d = sqrt(v / (1 - beta2**t)) + eps
        p = p - lr * (1 - mu_t) / (1 - P) * g / d - lr * mu_{t+1} / (1 - P * mu_{t+1}) * m / d

    ``state["mu_product"]`` is a 0-d tensor of the step's dtype, rounded as PyTorch's. Raises
    ValueError for a negative ``lr``, ``eps``, ``weight_decay`` or ``momentum_decay``, or betas
    outside [0, 1).

    Example::

        >>> opt = glassgrad.optim.NAdam(model.parameters(), lr=2e-3)
    """

    def __init__(
        self,
        params,
        lr: float | Tensor = 2e-3,
        betas: tuple = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        momentum_decay: float = 4e-3,
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
        _check_nonnegative(weight_decay=weight_decay, momentum_decay=momentum_decay)
        defaults = {
            "lr": lr,
            "betas": betas,
            "eps": eps,
            "weight_decay": weight_decay,
            "momentum_decay": momentum_decay,
            "decoupled_weight_decay": decoupled_weight_decay,
            "maximize": maximize,
            "foreach": foreach,
            "capturable": capturable,
            "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    def __setstate__(self, state) -> None:
        super().__setstate__(state)
        _restore_state(self, maximize=False, foreach=None, capturable=False,
                       differentiable=False, decoupled_weight_decay=False)
        for p_state in self.state.values():
            if "mu_product" in p_state and not isinstance(p_state["mu_product"], Tensor):
                p_state["mu_product"] = _step_tensor(float(p_state["mu_product"]))

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """One NAdam update of every parameter whose ``.grad`` is not None; returns the closure's
        loss. RuntimeError for a sparse gradient, as PyTorch."""
        loss = _evaluate_closure(closure)
        for group in self.param_groups:
            if group["capturable"]:
                _check_capturable(group, "params, mu_products and state_steps")
            if group["differentiable"]:  # NOTE [Differentiable updates]
                _differentiable.nadam(self, group)
                continue
            beta1, beta2 = group["betas"]
            lr, eps = _to_float(group["lr"]), group["eps"]
            weight_decay, momentum_decay = _to_float(group["weight_decay"]), group["momentum_decay"]
            for p in _dense_grads(group, "NAdam"):
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = _step_tensor()
                    state["mu_product"] = _step_tensor(1.0)
                    state["exp_avg"] = _zeros_like(p)
                    state["exp_avg_sq"] = _zeros_like(p)
                x, g = p._array, p._grad._array
                if group["maximize"]:
                    g = -g
                step_t = state["step"]
                step_t._array += 1
                _bump(step_t)
                step = step_t.item()
                bias_correction2 = 1 - beta2**step
                g = _weight_decay(p, g, lr, weight_decay, group["decoupled_weight_decay"])
                mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
                mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
                mu_product = state["mu_product"]
                mu_product._array *= mu
                _bump(mu_product)
                _update_moments(state, g, beta1, beta2)
                exp_avg, v = state["exp_avg"], state["exp_avg_sq"]._array
                denom = np.sqrt(v / bias_correction2)
                denom += eps
                product = mu_product.item()
                x += (-lr * (1.0 - mu) / (1.0 - product)) * g / denom
                x += ((-lr * mu_next) / (1.0 - product * mu_next)) * exp_avg._array / denom
                _bump(p, 2)
        return loss
