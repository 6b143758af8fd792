"""``ASGD``: averaged stochastic gradient descent (``torch.optim.ASGD``)."""

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
    _scalar_dtype,
    _step_tensor,
    _to_float,
    _use_grad_for_differentiable,
    _zeros_like,
)

__all__ = ["ASGD"]


class ASGD(Optimizer):
    """Averaged SGD (``torch.optim.ASGD``).

    Per parameter with a gradient ``g`` (negated when ``maximize``, plus ``weight_decay * p``),
    at step ``t``, with ``eta`` and ``mu`` 0-d tensors of the step's dtype (so rounded as in
    PyTorch)::

        p = p * (1 - lambd * eta) - eta * g
        ax = ax + (p - ax) * mu   if mu != 1   else   p               (state["ax"])
        eta = lr / (1 + lambd * lr * t) ** alpha;  mu = 1 / max(1, t - t0)

    Raises ValueError for a negative ``lr`` or ``weight_decay``.

    Example::

        >>> opt = glassgrad.optim.ASGD(model.parameters(), lr=1e-2, t0=100)
    """

    def __init__(
        self,
        params,
        lr: float | Tensor = 1e-2,
        lambd: float = 1e-4,
        alpha: float = 0.75,
        t0: float = 1e6,
        weight_decay: float = 0,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
        capturable: bool = False,
    ) -> None:
        _check_lr(lr)
        _check_nonnegative(weight_decay=weight_decay)
        defaults = {
            "lr": lr,
            "lambd": lambd,
            "alpha": alpha,
            "t0": t0,
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
        for p_state in self.state.values():
            for key in ("eta", "mu"):
                if key in p_state and not isinstance(p_state[key], Tensor):
                    p_state[key] = _step_tensor(float(p_state[key]))

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """One ASGD update of every parameter whose ``.grad`` is not None; returns the closure's
        loss. RuntimeError for a sparse gradient, as PyTorch."""
        loss = _evaluate_closure(closure)
        for group in self.param_groups:
            if group["capturable"]:
                _check_capturable(group, "params, mus, etas, and state_steps")
            if group["differentiable"]:  # NOTE [Differentiable updates]
                _differentiable.asgd(self, group)
                continue
            lr = _to_float(group["lr"])
            lambd, alpha, t0 = group["lambd"], group["alpha"], group["t0"]
            for p in _dense_grads(group, "ASGD"):
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = _step_tensor()
                    state["eta"] = _step_tensor(lr)
                    state["mu"] = _step_tensor(1.0)
                    state["ax"] = _zeros_like(p)
                g = _grad_view(p, group["maximize"], _to_float(group["weight_decay"]))
                step_t, eta, mu, ax = state["step"], state["eta"], state["mu"], state["ax"]
                step_t._array += 1
                _bump(step_t)
                if group["foreach"]:
                    _foreach_update(p, g, step_t, eta, mu, ax, lr, lambd, alpha, t0)
                    continue
                eta_value = eta.item()
                x = p._array
                x *= 1 - lambd * eta_value
                x += -eta_value * g
                _bump(p, 2)
                if mu.item() != 1:
                    # NOTE: mu multiplies as a 0-d tensor: its rounded value, in p's dtype
                    ax._array += (x - ax._array) * mu._array.astype(x.dtype)
                else:
                    ax._array[...] = x
                _bump(ax)
                step = step_t.item()
                scalar = _scalar_dtype().np
                eta._array[...] = np.asarray(lr / ((1 + lambd * lr * step) ** alpha), scalar)
                mu._array[...] = np.asarray(1 / max(1, step - t0), scalar)
                _bump(eta)
                _bump(mu)
        return loss


def _foreach_update(p, g, step_t, eta, mu, ax, lr, lambd, alpha, t0) -> None:
    """PyTorch's ``foreach=True`` ASGD, whose rounding differs from the for-loop's: the decay is
    folded into the gradient, ``p -= (g + lambd * p) * eta`` with the 0-d ``eta`` tensor, ``ax``
    always moves by ``mu``, and the new ``eta`` is computed in the step counter's dtype."""
    x = p._array
    x -= (g + lambd * x) * eta._array.astype(x.dtype)
    ax._array += (x - ax._array) * mu._array.astype(x.dtype)
    _bump(p)
    _bump(ax)
    step = step_t._array
    kind = step.dtype.type
    # NOTE: a Number divided by a Tensor is reciprocal() times the Number in PyTorch
    eta._array[...] = kind(1) / (kind(1) + kind(lambd * lr) * step) ** kind(alpha) * kind(lr)
    mu._array[...] = np.asarray(1 / max(1, step.item() - t0), step.dtype)
    _bump(eta)
    _bump(mu)
