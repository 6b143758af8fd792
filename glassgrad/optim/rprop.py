"""``Rprop``: resilient backpropagation, steps from gradient signs (``torch.optim.Rprop``)."""

from __future__ import annotations

import numpy as np

from ..tensor import Tensor
from . import _differentiable
from .optimizer import (
    Optimizer,
    _check_capturable,
    _bump,
    _check_lr,
    _dense_grads,
    _evaluate_closure,
    _restore_state,
    _step_tensor,
    _to_float,
    _use_grad_for_differentiable,
    _zeros_like,
)

__all__ = ["Rprop"]


class Rprop(Optimizer):
    """Rprop (``torch.optim.Rprop``).

    Per parameter with a gradient ``g`` (negated when ``maximize``) and previous gradient
    ``prev`` (state["prev"]); ``s`` (state["step_size"]) starts at ``lr``::

        f = etaplus where g * prev > 0, etaminus where < 0, 1 where 0
        s = clamp(s * f, *step_sizes);  g = 0 where f == etaminus
        p = p - sign(g) * s;  prev = g

    Raises ValueError for a negative ``lr`` or unless 0 < etaminus < 1 < etaplus.

    Example::

        >>> opt = glassgrad.optim.Rprop(model.parameters(), lr=1e-2)
    """

    def __init__(
        self,
        params,
        lr: float | Tensor = 1e-2,
        etas: tuple = (0.5, 1.2),
        step_sizes: tuple = (1e-6, 50),
        *,
        capturable: bool = False,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        _check_lr(lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = {
            "lr": lr,
            "etas": etas,
            "step_sizes": step_sizes,
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
        """One Rprop update of every parameter whose ``.grad`` is not None; returns the closure's
        loss. RuntimeError for a sparse gradient, as PyTorch."""
        loss = _evaluate_closure(closure)
        for group in self.param_groups:
            if group["capturable"]:
                _check_capturable(group)
            if group["differentiable"]:  # NOTE [Differentiable updates]
                _differentiable.rprop(self, group)
                continue
            etaminus, etaplus = group["etas"]
            step_size_min, step_size_max = group["step_sizes"]
            for p in _dense_grads(group, "Rprop"):
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = _step_tensor()
                    state["prev"] = _zeros_like(p)
                    state["step_size"] = Tensor._make(
                        np.full_like(p._grad._array, _to_float(group["lr"])))
                g = p._grad._array
                if group["maximize"]:
                    g = -g
                step_t, prev, step_size = state["step"], state["prev"], state["step_size"]
                step_t._array += 1
                _bump(step_t)
                sign = np.sign(g * prev._array)
                # NOTE: the three writes in PyTorch's order (etaminus > 0 is never re-matched)
                sign[sign > 0] = etaplus
                sign[sign < 0] = etaminus
                sign[sign == 0] = 1
                s = step_size._array
                s *= sign
                np.clip(s, step_size_min, step_size_max, out=s)
                _bump(step_size, 2)
                g = g.copy()
                g[sign == etaminus] = 0
                p._array += -1 * np.sign(g) * s
                _bump(p)
                prev._array[...] = g
                _bump(prev)
        return loss
