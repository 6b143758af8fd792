"""``Adam``: adaptive moment estimation, with AMSGrad and (decoupled) weight decay
(``torch.optim.Adam``)."""

from __future__ import annotations

import numpy as np

from ..tensor import Tensor
from . import _differentiable
from .optimizer import (
    Optimizer,
    _check_capturable,
    _check_fused,
    _bump,
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
        _check_fused(fused, foreach, differentiable)

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
            if group["capturable"]:
                _check_capturable(group)
            if group["differentiable"]:  # NOTE [Differentiable updates]
                _differentiable.adam(self, group)
                continue
            beta1, beta2 = (_to_float(b) for b in group["betas"])
            lr = _to_float(group["lr"])
            weight_decay = _to_float(group["weight_decay"])
            eps = group["eps"]
            amsgrad = group["amsgrad"]
            decoupled = group["decoupled_weight_decay"]
            maximize = group["maximize"]
            params, states = [], []
            for p in group["params"]:
                if p._grad is None:
                    continue
                if p._grad._sparse:
                    raise RuntimeError("Adam does not support sparse gradients, please consider "
                                       "SparseAdam instead")
                params.append(p)
                states.append(self._init_state(p, amsgrad))
            args = (lr, beta1, beta2, eps, weight_decay, amsgrad, maximize, decoupled)
            if len(params) > 1 and not amsgrad:
                params, states = _multi_tensor_update(params, states, *args)
            for p, state in zip(params, states):
                self._update(p, state, *args)
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
        tmp = np.multiply(g, 1 - beta2)  # NOTE: (1 - beta2) * g * g, in one scratch buffer
        tmp *= g
        v += tmp
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
        scratch = type(tmp) is np.ndarray and tmp.shape == v.shape and tmp.dtype == v.dtype
        denom = np.sqrt(v, out=tmp) if scratch else np.sqrt(v)  # (0-d: NumPy scalars)
        denom /= bias_correction2_sqrt
        denom += eps
        update = np.multiply(exp_avg._array, -step_size)
        update /= denom
        x += update
        _bump(p)


# NOTE [Multi-tensor Adam]: PyTorch's CPU default is the for-loop ("single tensor") update, ~12
# kernels per parameter; for small parameters their Python calls cost more than their arithmetic.
# The parameters below _FLAT_MAX elements that share a dtype and a step count are updated as one
# flat vector: their gradients and moments are gathered (one concatenate each), the update runs
# once with the same kernels in the same order (so every element gets the very same arithmetic),
# and the results are written back. Large parameters keep the per-parameter update, where the
# gather and scatter would only add memory traffic.
_FLAT_MAX = 1 << 15


def _multi_tensor_update(params, states, lr, beta1, beta2, eps, weight_decay, amsgrad, maximize,
                         decoupled):
    """Update the small parameters of one group together; returns the (params, states) left for
    the per-parameter update."""
    small, rest, rest_states = [], [], []
    dtype = step0 = None
    for p, state in zip(params, states):
        x, g = p._array, p._grad._array
        if (x.size < _FLAT_MAX and type(x) is np.ndarray and type(g) is np.ndarray
                and x.dtype.kind == "f" and (dtype is None or x.dtype == dtype)
                and g.dtype == x.dtype and g.shape == x.shape):
            step = state["step"]._array
            if step0 is None:
                dtype, step0 = x.dtype, step
            if step == step0 and step.dtype == step0.dtype:
                small.append((p, state))
                continue
        rest.append(p)
        rest_states.append(state)
    if len(small) < 2:
        return params, states
    sizes = [p._array.size for p, _ in small]
    g = np.concatenate([p._grad._array.reshape(-1) for p, _ in small])
    if maximize:
        np.negative(g, out=g)
    tmp = np.empty_like(g)
    for p, state in small:
        step_t = state["step"]
        step_t._array += 1
        _bump(step_t)
    if weight_decay != 0:
        if decoupled:
            for p, _ in small:
                p._array *= 1 - lr * weight_decay
                _bump(p)
        else:  # g + weight_decay * x
            np.multiply(np.concatenate([p._array.reshape(-1) for p, _ in small]), weight_decay,
                        out=tmp)
            g += tmp
    m = np.concatenate([state["exp_avg"]._array.reshape(-1) for _, state in small])
    v = np.concatenate([state["exp_avg_sq"]._array.reshape(-1) for _, state in small])
    _lerp_(m, g, 1 - beta1)
    v *= beta2
    np.multiply(g, 1 - beta2, out=tmp)
    tmp *= g
    v += tmp

    step = small[0][1]["step"].item()
    bias_correction1 = 1 - beta1**step
    bias_correction2 = 1 - beta2**step
    step_size = lr / bias_correction1
    bias_correction2_sqrt = bias_correction2**0.5
    denom = np.sqrt(v, out=tmp)
    denom /= bias_correction2_sqrt
    denom += eps
    update = np.multiply(m, -step_size, out=g)
    update /= denom
    start = 0
    for (p, state), n in zip(small, sizes):
        end = start + n
        shape = p._array.shape
        p._array += update[start:end].reshape(shape)
        state["exp_avg"]._array[...] = m[start:end].reshape(shape)
        state["exp_avg_sq"]._array[...] = v[start:end].reshape(shape)
        _bump(p)
        _bump(state["exp_avg"])
        _bump(state["exp_avg_sq"], 2)
        start = end
    return rest, rest_states
