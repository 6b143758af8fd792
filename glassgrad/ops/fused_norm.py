"""Training-mode batch normalisation as one op (``BatchNorm``), the fused form of the composite in
``nn/_functional_layers.py`` (~11 ops forward, ~15 backward, per call).

NOTE [Fused batch norm]: forward keeps the composite's arithmetic (mean, centred, biased variance,
``1 / sqrt(var + eps)``, affine), so values are unchanged, and also returns the batch mean and
variance (the caller updates the running statistics from them). Backward is the closed form,
written once over a small math namespace and run on arrays for a first-order backward or on
Tensors when the graph is being recorded, so every order of derivative differentiates the same
formula (as NOTE [Fused LSTM] in ops/rnn_fused.py). Gradients reaching the mean and variance
outputs are honoured.
"""

from __future__ import annotations

import numpy as np

from . import primitive
from .primitive import Primitive


class BatchNorm(Primitive):
    """``(x - mean) / sqrt(var + eps) * weight + bias`` per channel of ``x (N, C, *)`` with the
    batch's statistics over ``dims`` (all but dim 1); returns ``(out, mean, var)``, the statistics
    kept ``(1, C, 1...)``."""

    multi_output = True
    node_name = "NativeBatchNormBackward0"
    saves = ("x", "weight", "result1", "result2")
    wants_needs_input_grad = True

    @staticmethod
    def forward(xp, x, weight, bias, *, dims, eps):
        shape = _channel_shape(x)
        mean = xp.mean(x, axis=dims, keepdims=True, dtype=x.dtype)
        centred = x - mean
        var = xp.mean(centred * centred, axis=dims, keepdims=True, dtype=x.dtype)
        normed = centred * (1 / xp.sqrt(var + x.dtype.type(eps)))
        return normed * weight.reshape(shape) + bias.reshape(shape), mean, var

    @staticmethod
    def backward(grads, x, weight, mean, var, *, dims, eps, needs_input_grad):
        if primitive._state.enabled:  # recording (create_graph): the formula on Tensors
            return _bn_backward(_TensorMath, grads, x, weight, mean, var, dims, eps,
                                needs_input_grad)
        arrays = [None if g is None else g._array for g in grads]
        out = _bn_backward(_ArrayMath, arrays, x._array, weight._array, mean._array, var._array,
                           dims, eps, needs_input_grad)
        return tuple(None if a is None else primitive._make(a) for a in out)


def _channel_shape(x) -> tuple:
    return (1, x.shape[1]) + (1,) * (len(x.shape) - 2)


class _ArrayMath:
    @staticmethod
    def rsqrt(v, eps):
        return 1 / np.sqrt(v + v.dtype.type(eps))

    @staticmethod
    def sum(t, dims):
        return np.sum(t, axis=dims, dtype=t.dtype)

    @staticmethod
    def mean(t, dims):
        return np.mean(t, axis=dims, keepdims=True, dtype=t.dtype)

    @staticmethod
    def expand(t, like):
        return np.broadcast_to(t, like.shape)


class _TensorMath:
    @staticmethod
    def rsqrt(v, eps):
        return (v + eps).rsqrt()

    @staticmethod
    def sum(t, dims):
        return t.sum(dims)

    @staticmethod
    def mean(t, dims):
        return t.mean(dims, keepdim=True)

    @staticmethod
    def expand(t, like):
        return t.expand(like.shape)


def _bn_backward(m, grads, x, weight, mean, var, dims, eps, needs):
    """Gradients for (x, weight, bias) from those of (out, mean, var); arrays or Tensors."""
    grad_out, grad_mean, grad_var = grads
    n = 1
    for d in dims:
        n *= x.shape[d]
    r = m.rsqrt(var, eps)
    centred = x - mean
    normed = centred * r
    grad_x = grad_w = grad_b = None
    if grad_out is not None:
        if needs[1]:
            grad_w = m.sum(grad_out * normed, dims)
        if needs[2]:
            grad_b = m.sum(grad_out, dims)
        if needs[0]:
            g = grad_out * weight.reshape(_channel_shape(x))
            grad_x = r * (g - m.mean(g, dims) - normed * m.mean(g * normed, dims))
    if needs[0]:
        extra = None
        if grad_mean is not None:
            extra = grad_mean * (1 / n)
        if grad_var is not None:
            term = grad_var * centred * (2 / n)
            extra = term if extra is None else extra + term
        if extra is not None:
            grad_x = m.expand(extra, x) if grad_x is None else grad_x + extra
    return grad_x, grad_w, grad_b
