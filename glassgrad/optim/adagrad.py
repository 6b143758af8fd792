"""``Adagrad``: per-coordinate learning rates from the sum of squared gradients
(``torch.optim.Adagrad``)."""

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
    _step_tensor,
    _to_float,
    _use_grad_for_differentiable,
)

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    """Adagrad (``torch.optim.Adagrad``).

    Per parameter with a gradient ``g`` (negated when ``maximize``, plus ``weight_decay * p``),
    at step ``t``::

        clr = lr / (1 + (t - 1) * lr_decay)
        s = s + g * g                       (state["sum"], starts at initial_accumulator_value)
        p = p - clr * g / (sqrt(s) + eps)

    State (``step`` and ``sum``) is created for every parameter at construction, as in PyTorch.
    Raises ValueError for negative hyperparameters.

    Example::

        >>> opt = glassgrad.optim.Adagrad(model.parameters(), lr=1e-2)
    """

    def __init__(
        self,
        params,
        lr: float | Tensor = 1e-2,
        lr_decay: float = 0,
        weight_decay: float = 0,
        initial_accumulator_value: float = 0,
        eps: float = 1e-10,
        foreach: bool | None = None,
        *,
        maximize: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= lr_decay:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= initial_accumulator_value:
            raise ValueError(
                f"Invalid initial_accumulator_value value: {initial_accumulator_value}"
            )
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        defaults = {
            "lr": lr,
            "lr_decay": lr_decay,
            "eps": eps,
            "weight_decay": weight_decay,
            "initial_accumulator_value": initial_accumulator_value,
            "foreach": foreach,
            "maximize": maximize,
            "differentiable": differentiable,
            "fused": fused,
        }
        super().__init__(params, defaults)
        _check_fused(fused, foreach, differentiable)
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(p, initial_accumulator_value)

    def _init_state(self, p: Tensor, initial_accumulator_value: float) -> dict:
        state = self.state[p]
        state["step"] = _step_tensor()
        state["sum"] = Tensor._make(np.full_like(p._array, initial_accumulator_value))
        return state

    def __setstate__(self, state) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("foreach", None)
            group.setdefault("maximize", False)
            group.setdefault("differentiable", False)
            group.setdefault("fused", None)
        for s in self.state.values():
            if "step" in s and not isinstance(s["step"], Tensor):
                s["step"] = _step_tensor(float(s["step"]))

    def share_memory(self) -> None:
        """No-op kept for PyTorch compatibility (state lives in this process)."""

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """One Adagrad update of every parameter whose ``.grad`` is not None; returns the
        closure's loss (the closure runs with grad enabled)."""
        loss = _evaluate_closure(closure)
        for group in self.param_groups:
            if group["differentiable"]:  # NOTE [Differentiable updates]
                _differentiable.adagrad(self, group)
                continue
            lr = _to_float(group["lr"])
            lr_decay, eps = group["lr_decay"], group["eps"]
            for p in group["params"]:
                if p._grad is None:
                    continue
                state = self.state[p]
                if len(state) == 0:  # NOTE: a group added later: torch uses the defaults' value
                    state = self._init_state(p, self.defaults["initial_accumulator_value"])
                step_t = state["step"]
                step_t._array += 1
                _bump(step_t)
                step = step_t.item()
                g = _sparse_grad_view(
                    p, group["maximize"], _to_float(group["weight_decay"]),
                    "weight_decay option is not compatible with sparse gradients",
                ) if p._grad._sparse else _grad_view(
                    p, group["maximize"], _to_float(group["weight_decay"]))
                clr = lr / (1 + (step - 1) * lr_decay)
                state_sum = state["sum"]
                s = state_sum._array
                s += 1 * g * g
                _bump(state_sum)
                std = np.sqrt(s)
                std += eps
                p._array += -clr * g / std
                _bump(p)
        return loss
