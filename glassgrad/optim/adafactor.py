"""``Adafactor``: Adam-like steps from factored (row and column) second moments
(``torch.optim.Adafactor``)."""

from __future__ import annotations

import numpy as np

from ..tensor import Tensor
from .optimizer import (
    Optimizer,
    _bump,
    _dense_grads,
    _evaluate_closure,
    _lerp_,
    _restore_state,
    _step_tensor,
    _to_float,
    _use_grad_for_differentiable,
)

__all__ = ["Adafactor"]


def _norm(x, axis=None, keepdims=False):
    return np.sqrt(np.sum(x * x, axis=axis, keepdims=keepdims))


class Adafactor(Optimizer):
    """Adafactor (``torch.optim.Adafactor``), PyTorch's variant.

    Per parameter with a gradient ``g`` (negated when ``maximize``) at step ``t``, with
    ``beta2_t = 1 - t**beta2_decay`` and ``eps1`` defaulting to the dtype's machine epsilon::

        alpha = max(eps2, rms(p)) * min(lr, 1 / sqrt(t));  p = p * (1 - lr * weight_decay)
        R = lerp(R, mean_last(g**2), t**beta2_decay); C likewise over dim -2   (row_var, col_var)
        V = R @ C / max(mean(R over dim -2), eps1)        (2-D and up; vectors keep "variance")
        U = g / sqrt(max(V, eps1**2));  p = p - alpha / max(1, rms(U) / d) * U

    Raises ValueError for ``lr < 0``, ``beta2_decay > 0``, negative epsilons or weight decay,
    ``d < 1``; RuntimeError for sparse gradients.

    Example::

        >>> opt = glassgrad.optim.Adafactor(model.parameters(), lr=1e-2)
    """

    def __init__(
        self,
        params,
        lr: float | Tensor = 1e-2,
        beta2_decay: float = -0.8,
        eps: tuple = (None, 1e-3),
        d: float = 1.0,
        weight_decay: float = 0.0,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
    ) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        checks = (
            (0.0 <= lr, f"Learning rate should be >= 0 but is: {lr}"),
            (0.0 >= beta2_decay, f"beta2_decay should be <= 0 but is: {beta2_decay}"),
            (eps[0] is None or 0.0 <= eps[0], f"epsilon1 should be >= 0 but is: {eps[0]}"),
            (0.0 <= eps[1], f"epsilon2 should be >= 0 but is: {eps[1]}"),
            (1.0 <= d, f"Clipping threshold d should be >= 1 but is: {d}"),
            (0.0 <= weight_decay, f"weight_decay should be >= 0 but is: {weight_decay}"),
        )
        for ok, message in checks:
            if not ok:
                raise ValueError(message)
        defaults = {
            "lr": lr,
            "beta2_decay": beta2_decay,
            "eps": eps,
            "d": d,
            "weight_decay": weight_decay,
            "foreach": foreach,
            "maximize": maximize,
        }
        super().__init__(params, defaults)

    def __setstate__(self, state) -> None:
        super().__setstate__(state)
        _restore_state(self, foreach=None)

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """One Adafactor update of every parameter whose ``.grad`` is not None; returns the
        closure's loss."""
        loss = _evaluate_closure(closure)
        for group in self.param_groups:
            eps1, eps2 = group["eps"]
            lr, d = _to_float(group["lr"]), group["d"]
            beta2_decay, weight_decay = group["beta2_decay"], group["weight_decay"]
            for p in _dense_grads(group, "Adafactor"):
                g = p._grad._array
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = _step_tensor()
                    if g.ndim > 1:
                        state["row_var"] = Tensor._make(np.zeros(g.shape[:-1] + (1,), g.dtype))
                        state["col_var"] = Tensor._make(
                            np.zeros(g.shape[:-2] + (1,) + g.shape[-1:], g.dtype))
                    else:
                        state["variance"] = Tensor._make(np.zeros_like(g))
                if group["maximize"]:
                    g = -g
                x = p._array
                if eps1 is None:  # NOTE: as PyTorch, the first parameter's dtype fixes it
                    eps1 = float(np.finfo(x.dtype).eps)
                step_t = state["step"]
                step_t._array += 1
                _bump(step_t)
                step = step_t.item()
                weight = step**beta2_decay
                rho_t = min(lr, 1 / (step**0.5))
                alpha = max(eps2, float(_norm(x)) / (x.size**0.5)) * rho_t
                if weight_decay != 0:
                    x *= 1 - lr * weight_decay
                    _bump(p)
                if g.ndim > 1:
                    row_var, col_var = state["row_var"], state["col_var"]
                    _lerp_(row_var._array, _norm(g, -1, True) ** 2 / g.shape[-1], weight)
                    _lerp_(col_var._array, _norm(g, -2, True) ** 2 / g.shape[-2], weight)
                    _bump(row_var)
                    _bump(col_var)
                    estimate = row_var._array @ col_var._array
                    estimate /= np.maximum(row_var._array.mean(axis=-2, keepdims=True), eps1)
                else:
                    variance = state["variance"]
                    _lerp_(variance._array, g * g, weight)
                    _bump(variance)
                    estimate = variance._array.copy()
                update = 1 / np.sqrt(np.maximum(estimate, eps1 * eps1))
                update *= g
                denom = max(1.0, float(_norm(update)) / ((update.size**0.5) * d))
                x += (-alpha / denom) * update
                _bump(p)
        return loss
