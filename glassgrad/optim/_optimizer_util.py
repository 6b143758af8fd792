"""The helpers every optimizer's update shares (gradient views, moment updates, argument checks,
the differentiable-step wrapper): split from ``optimizer.py``, which re-exports them."""

from __future__ import annotations

import functools

import numpy as np

from .. import dtypes
from ..autograd.grad_mode import _state, enable_grad
from ..tensor import Tensor

# --- helpers shared by the concrete optimizers ------------------------------------------------
def _bump(t: Tensor, n: int = 1) -> None:
    """Count ``n`` in-place writes on ``t`` (see NOTE [Optimizer updates])."""
    t._vc[0] += n


def _scalar_dtype():
    """The dtype of ``state['step']``: float64 when that is the default dtype, else float32."""
    return dtypes.float64 if dtypes.get_default_dtype() == dtypes.float64 else dtypes.float32


def _step_tensor(value: float = 0.0) -> Tensor:
    """A 0-d step counter on the CPU, as PyTorch keeps ``state['step']``."""
    return Tensor._make(np.array(value, dtype=_scalar_dtype().np))


def _zeros_like(p: Tensor) -> Tensor:
    return Tensor._make(np.zeros_like(p._array))


def _to_float(x):
    """A hyperparameter as a Python number (a 1-element Tensor ``lr`` is read with ``item()``)."""
    return x.item() if isinstance(x, Tensor) else x


def _lerp_(x, end, weight: float) -> None:
    """``x.lerp_(end, weight)`` on arrays with PyTorch's two-branch formula (exact at both ends)."""
    if abs(weight) < 0.5:
        x += weight * (end - x)
    else:
        np.subtract(end, (end - x) * (1.0 - weight), out=x)


def _grad_view(p: Tensor, maximize: bool, weight_decay: float):
    """The gradient PyTorch's update uses: negated under ``maximize``, plus ``weight_decay * p``.

    Never the ``.grad`` array itself when modified, so ``p.grad`` stays untouched."""
    g = p._grad._array
    if maximize:
        g = -g
    if weight_decay != 0:
        g = g + weight_decay * p._array
    return g


def _sparse_grad_view(p: Tensor, maximize: bool, weight_decay: float, decay_error: str):
    """A sparse ``.grad`` of a dense parameter (``Embedding(sparse=True)``) as the dense array
    of its summed entries, for the updates torch also runs on sparse gradients (SGD, Adagrad):
    zero off the entries, so the dense update equals torch's sparse one. RuntimeError
    ``decay_error`` (torch's) with weight decay; NotImplementedError for a sparse parameter."""
    if p._sparse:
        raise NotImplementedError(
            "glassgrad: an optimizer step on a sparse parameter (a sparse COO leaf) is not "
            "implemented; optimize a dense tensor and build the sparse one from it each step.")
    if weight_decay != 0:
        raise RuntimeError(decay_error)
    g = p._grad.to_dense()._array
    return -g if maximize else g


def _dense_grads(group: dict, name: str):
    """The parameters of ``group`` that have a gradient, in order; torch's RuntimeError
    "<name> does not support sparse gradients" for a sparse one."""
    for p in group["params"]:
        if p._grad is None:
            continue
        if p._grad.is_sparse:
            raise RuntimeError(f"{name} does not support sparse gradients")
        yield p


def _check_lr(lr) -> None:
    """PyTorch's checks of ``lr``: ValueError for a Tensor of more than one element or a negative
    value."""
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")


def _check_betas(betas) -> None:
    for i in (0, 1):
        if not 0.0 <= betas[i] < 1.0:
            raise ValueError(f"Invalid beta parameter at index {i}: {betas[i]}")


def _check_nonnegative(**values) -> None:
    """ValueError ``Invalid {name} value: {value}`` for the first negative one, in order."""
    for name, value in values.items():
        if not 0.0 <= value:
            raise ValueError(f"Invalid {name} value: {value}")


def _weight_decay(p: Tensor, g, lr: float, weight_decay: float, decoupled: bool):
    """The gradient after (coupled) weight decay, ``g + weight_decay * p``; decoupled, ``p`` is
    scaled by ``1 - lr * weight_decay`` in place instead (AdamW's rule)."""
    if weight_decay == 0:
        return g
    if decoupled:
        p._array *= 1 - lr * weight_decay
        _bump(p)
        return g
    return g + weight_decay * p._array


def _update_moments(state: dict, g, beta1: float, beta2: float) -> None:
    """Adam's moments in PyTorch's kernel order: ``exp_avg.lerp_(g, 1 - beta1)``,
    ``exp_avg_sq.mul_(beta2).addcmul_(g, g, value=1 - beta2)``."""
    exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
    _lerp_(exp_avg._array, g, 1 - beta1)
    v = exp_avg_sq._array
    v *= beta2
    v += (1 - beta2) * g * g
    _bump(exp_avg)
    _bump(exp_avg_sq, 2)


def _restore_state(optimizer: "Optimizer", **group_defaults) -> None:
    """After ``__setstate__``: fill group options an older state dict lacks and turn a numeric
    ``state['step']`` into PyTorch's 0-d tensor."""
    for group in optimizer.param_groups:
        for key, value in group_defaults.items():
            group.setdefault(key, value)
        for p in group["params"]:
            p_state = optimizer.state.get(p, [])
            if len(p_state) != 0 and not isinstance(p_state.get("step", 0), Tensor):
                p_state["step"] = _step_tensor(float(p_state["step"]))


def _use_grad_for_differentiable(step):
    """Run ``step`` with grad mode on exactly when the optimizer was built with
    ``differentiable=True`` (PyTorch's decorator of the same name; see NOTE [Differentiable
    updates] in ``_differentiable.py``)."""

    @functools.wraps(step)
    def wrapper(self, *args, **kwargs):
        prev = _state.enabled
        _state.enabled = bool(self.defaults.get("differentiable", False))
        try:
            return step(self, *args, **kwargs)
        finally:
            _state.enabled = prev

    return wrapper


def _evaluate_closure(closure):
    if closure is None:
        return None
    with enable_grad():
        return closure()


def _check_fused(fused, foreach, differentiable: bool) -> None:
    """PyTorch's constructor checks of ``fused`` (which runs the for-loop update here)."""
    if fused and differentiable:
        raise RuntimeError("`fused` does not support `differentiable`")
    if fused and foreach:
        raise RuntimeError("`fused` and `foreach` cannot be `True` together.")


_CAPTURABLE_DEVICES = ["cuda", "xpu", "hpu", "privateuseone", "xla"]


def _check_capturable(group: dict, tensors: str = "params and state_steps",
                      xla: bool = True) -> None:
    """PyTorch's AssertionError for ``capturable=True`` with a parameter off the devices CUDA
    graphs capture on (on the CPU, every one); ``tensors`` names what the message lists. Called
    only when the group's ``capturable`` is set."""
    devices = _CAPTURABLE_DEVICES if xla else _CAPTURABLE_DEVICES[:-1]
    for p in group["params"]:
        if p._grad is not None and p.device.type not in devices:
            raise AssertionError(
                f"If capturable=True, {tensors} must be on supported devices: {devices}.\n"
                f"glassgrad: this parameter is on {p.device.type}; capturable is for CUDA graph "
                "capture, so leave it False off the GPU."
            )


def _typename(obj) -> str:
    if isinstance(obj, Tensor):
        return dtypes.type_name(obj.dtype)
    module = type(obj).__module__
    name = type(obj).__qualname__
    return name if module in ("", "builtins") else f"{module}.{name}"
