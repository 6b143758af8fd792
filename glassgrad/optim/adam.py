"""``Adam``: adaptive moment estimation, with AMSGrad and (decoupled) weight decay
(``torch.optim.Adam``)."""

from __future__ import annotations

import numpy as np

from ..tensor import Tensor
from .optimizer import (
    Optimizer,
    _bump,
    _check_differentiable,
    _evaluate_closure,
    _lerp_,
    _step_tensor,
    _to_float,
    _use_grad_for_differentiable,
    _zeros_like,
)

__all__ = ["Adam"]


def _check_adam_args(lr, betas, eps, weight_decay) -> None:
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")
    if not 0.0 <= eps:
        raise ValueError(f"Invalid epsilon value: {eps}")
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
    if not 0.0 <= weight_decay:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")
    if not (
        (isinstance(betas[0], float) and isinstance(betas[1], float))
        or (isinstance(betas[0], Tensor) and isinstance(betas[1], Tensor))
    ):
        raise ValueError("betas must be either both floats or both Tensors")  # noqa: TRY004


class Adam(Optimizer):
    """Adam (``torch.optim.Adam``); ``decoupled_weight_decay=True`` is AdamW.

    Per parameter with a gradient ``g`` (negated when ``maximize``), at step ``t``::

        p = p * (1 - lr * weight_decay)  if decoupled_weight_decay  else  g = g + weight_decay * p
        m = lerp(m, g, 1 - beta1);  v = beta2 * v + (1 - beta2) * g * g     (exp_avg, exp_avg_sq)
        v_max = max(v_max, v) when amsgrad                                   (max_exp_avg_sq)
        p = p - lr / (1 - beta1**t) * m / (sqrt(v or v_max) / sqrt(1 - beta2**t) + eps)

    ``state["step"]`` is a 0-d float tensor like PyTorch's. Raises ValueError for out-of-range
    hyperparameters (``betas`` must both be floats).

    Example::

        >>> opt = glassgrad.optim.Adam(model.parameters(), lr=1e-3)
    """

    def __init__(
        self,
        params,
        lr: float | Tensor = 1e-3,
        betas: tuple = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        amsgrad: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
        decoupled_weight_decay: bool = False,
    ) -> None:
        _check_adam_args(lr, betas, eps, weight_decay)
        _check_differentiable(differentiable)
        betas = tuple(b.squeeze() if isinstance(b, Tensor) and b.dim() else b for b in betas)
        defaults = {
            "lr": lr,
            "betas": betas,
            "eps": eps,
            "weight_decay": weight_decay,
            "amsgrad": amsgrad,
            "maximize": maximize,
            "foreach": foreach,
            "capturable": capturable,
            "differentiable": differentiable,
            "fused": fused,
            "decoupled_weight_decay": decoupled_weight_decay,
        }
        super().__init__(params, defaults)
        if fused and foreach:
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")

    def __setstate__(self, state) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("amsgrad", False)
            group.setdefault("maximize", False)
            group.setdefault("foreach", None)
            group.setdefault("capturable", False)
            group.setdefault("differentiable", False)
            group.setdefault("decoupled_weight_decay", False)
            group.setdefault("fused", None)
            for p in group["params"]:
                p_state = self.state.get(p, [])
                if len(p_state) != 0 and not isinstance(p_state["step"], Tensor):
                    p_state["step"] = _step_tensor(float(p_state["step"]))

    def _init_state(self, p: Tensor, amsgrad: bool) -> dict:
        state = self.state[p]
        if len(state) == 0:
            state["step"] = _step_tensor()
            state["exp_avg"] = _zeros_like(p)
            state["exp_avg_sq"] = _zeros_like(p)
            if amsgrad:
                state["max_exp_avg_sq"] = _zeros_like(p)
        return state

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """One Adam update of every parameter whose ``.grad`` is not None; returns the closure's
        loss (the closure runs with grad enabled)."""
        loss = _evaluate_closure(closure)
        for group in self.param_groups:
            beta1, beta2 = (_to_float(b) for b in group["betas"])
            lr = _to_float(group["lr"])
            weight_decay = _to_float(group["weight_decay"])
            eps = group["eps"]
            amsgrad = group["amsgrad"]
            decoupled = group["decoupled_weight_decay"]
            for p in group["params"]:
                if p._grad is None:
                    continue
                state = self._init_state(p, amsgrad)
                self._update(
                    p,
                    state,
                    lr,
                    beta1,
                    beta2,
                    eps,
                    weight_decay,
                    amsgrad,
                    group["maximize"],
                    decoupled,
                )
        return loss

    @staticmethod
    def _update(p, state, lr, beta1, beta2, eps, weight_decay, amsgrad, maximize, decoupled):
        x = p._array
        g = p._grad._array
        if maximize:
            g = -g
        step_t = state["step"]
        step_t._array += 1
        _bump(step_t)
        if weight_decay != 0:
            if decoupled:
                x *= 1 - lr * weight_decay
                _bump(p)
            else:
                g = g + weight_decay * x
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        _lerp_(exp_avg._array, g, 1 - beta1)
        v = exp_avg_sq._array
        v *= beta2
        v += (1 - beta2) * g * g
        _bump(exp_avg)
        _bump(exp_avg_sq, 2)

        step = step_t.item()
        bias_correction1 = 1 - beta1**step
        bias_correction2 = 1 - beta2**step
        step_size = lr / bias_correction1
        bias_correction2_sqrt = bias_correction2**0.5
        if amsgrad:
            max_sq = state["max_exp_avg_sq"]
            np.maximum(max_sq._array, v, out=max_sq._array)
            _bump(max_sq)
            v = max_sq._array
        denom = np.sqrt(v) / bias_correction2_sqrt
        denom += eps
        x += -step_size * exp_avg._array / denom
        _bump(p)
