"""``RMSprop``: gradient scaled by a running RMS, optionally centered and with momentum
(``torch.optim.RMSprop``)."""

from __future__ import annotations

import numpy as np

from ..tensor import Tensor
from . import _differentiable
from .optimizer import (
    Optimizer,
    _check_capturable,
    _bump,
    _evaluate_closure,
    _grad_view,
    _lerp_,
    _step_tensor,
    _to_float,
    _use_grad_for_differentiable,
    _zeros_like,
)

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    """RMSprop (``torch.optim.RMSprop``).

    Per parameter with a gradient ``g`` (negated when ``maximize``, plus ``weight_decay * p``)::

        v = alpha * v + (1 - alpha) * g * g                      (state["square_avg"])
        avg = sqrt(v - mean_g**2) if centered else sqrt(v), mean_g = lerp(mean_g, g, 1 - alpha)
        avg = avg + eps                                          (mean_g: state["grad_avg"])
        buf = momentum * buf + g / avg; p = p - lr * buf         (momentum > 0: "momentum_buffer")
        p = p - lr * g / avg                                     (otherwise)

    Raises ValueError for negative ``lr``, ``eps``, ``momentum``, ``weight_decay`` or ``alpha``.

    Example::

        >>> opt = glassgrad.optim.RMSprop(model.parameters(), lr=1e-2, centered=True)
    """

    def __init__(
        self,
        params,
        lr: float | Tensor = 1e-2,
        alpha: float = 0.99,
        eps: float = 1e-8,
        weight_decay: float = 0,
        momentum: float = 0,
        centered: bool = False,
        capturable: bool = False,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        defaults = {
            "lr": lr,
            "momentum": momentum,
            "alpha": alpha,
            "eps": eps,
            "centered": centered,
            "weight_decay": weight_decay,
            "capturable": capturable,
            "foreach": foreach,
            "maximize": maximize,
            "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    def __setstate__(self, state) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("momentum", 0)
            group.setdefault("centered", False)
            group.setdefault("foreach", None)
            group.setdefault("maximize", False)
            group.setdefault("differentiable", False)
            group.setdefault("capturable", False)
            for p in group["params"]:
                p_state = self.state.get(p, [])
                if len(p_state) != 0 and not isinstance(p_state["step"], Tensor):
                    p_state["step"] = _step_tensor(float(p_state["step"]))

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """One RMSprop update of every parameter whose ``.grad`` is not None; returns the
        closure's loss (the closure runs with grad enabled)."""
        loss = _evaluate_closure(closure)
        for group in self.param_groups:
            if group["capturable"]:
                _check_capturable(group)
            if group["differentiable"]:  # NOTE [Differentiable updates]
                _differentiable.rmsprop(self, group)
                continue
            lr = _to_float(group["lr"])
            alpha, eps, momentum = group["alpha"], group["eps"], group["momentum"]
            centered = group["centered"]
            for p in group["params"]:
                if p._grad is None:
                    continue
                if p._grad._sparse:
                    raise RuntimeError("RMSprop does not support sparse gradients")
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = _step_tensor()
                    state["square_avg"] = _zeros_like(p)
                    if momentum > 0:
                        state["momentum_buffer"] = _zeros_like(p)
                    if centered:
                        state["grad_avg"] = _zeros_like(p)
                g = _grad_view(p, group["maximize"], _to_float(group["weight_decay"]))
                step_t = state["step"]
                step_t._array += 1
                _bump(step_t)

                square_avg = state["square_avg"]
                v = square_avg._array
                v *= alpha
                v += (1 - alpha) * g * g
                _bump(square_avg, 2)
                if centered:
                    grad_avg = state["grad_avg"]
                    _lerp_(grad_avg._array, g, 1 - alpha)
                    _bump(grad_avg)
                    mean = grad_avg._array
                    avg = np.sqrt(v + -1 * mean * mean)
                else:
                    avg = np.sqrt(v)
                avg += eps
                if momentum > 0:
                    buf = state["momentum_buffer"]
                    b = buf._array
                    b *= momentum
                    b += g / avg
                    _bump(buf, 2)
                    p._array += -lr * b
                else:
                    p._array += -lr * g / avg
                _bump(p)
        return loss
