"""Training-mode batch normalisation as one op (``BatchNorm``), the fused form of the composite in
``nn/_functional_layers.py`` (~11 ops forward, ~15 backward, per call).

NOTE [Fused batch norm]: forward keeps the composite's arithmetic (mean, centred, biased variance,
``1 / sqrt(var + eps)``, affine), so values are unchanged, and also returns the batch mean and
variance (the caller updates the running statistics from them). Backward is PyTorch's closed form
(``batch_norm_backward``: two reductions, ``sum(g)`` and ``sum(g * (x - mean))``, then one
expression per element), written twice with the same operations in the same order: on Tensors
when the graph is being recorded (so every order of derivative differentiates that formula) and
on arrays for a first-order backward (``backward_np``, NOTE [Array backward] in
autograd/engine_arrays.py), in place in two buffers. The two give the same numbers
(tests/test_perf_norm_matmul.py). Gradients reaching the mean and variance outputs are honoured.

NOTE [Fast reductions]: ``np.mean``/``np.sum`` are Python wrappers (~5 us each) around
``np.add.reduce``; the array code calls the ufunc directly and divides in place, bit for bit
as ``np.mean`` does (see ``_mean``).
"""

from __future__ import annotations

import numpy as np

from .fused import _plain, _tensor_rule
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
        if not _plain(x, weight, bias):  # vmap's batched arrays: the same arithmetic, plainly
            mean = xp.mean(x, axis=dims, keepdims=True, dtype=x.dtype)
            centred = x - mean
            var = xp.mean(centred * centred, axis=dims, keepdims=True, dtype=x.dtype)
            normed = centred * (1 / xp.sqrt(var + x.dtype.type(eps)))
            return normed * weight.reshape(shape) + bias.reshape(shape), mean, var
        mean = _mean(x, dims)
        centred = x - mean
        var = _mean(np.multiply(centred, centred), dims)
        if not np.isfinite(weight).all():  # torch's x * alpha + beta, whose Infs meet as NaN
            with np.errstate(invalid="ignore"):
                alpha = (1 / np.sqrt(var + x.dtype.type(eps))) * weight.reshape(shape)
                return x * alpha + (bias.reshape(shape) - mean * alpha), mean, var
        out = np.multiply(centred, 1 / np.sqrt(var + x.dtype.type(eps)), out=centred)
        out *= weight.reshape(shape)
        out += bias.reshape(shape)
        return out, mean, var

    @staticmethod
    def backward(grads, x, weight, mean, var, *, dims, eps, needs_input_grad):
        grad_out, grad_mean, grad_var = grads
        n = _count(x.shape, dims)
        r = (var + eps).rsqrt()
        centred = x - mean
        grad_x = grad_w = grad_b = None
        if grad_out is not None:
            needs_x = needs_input_grad[0]
            if needs_x or needs_input_grad[2]:
                sum_g = grad_out.sum(dims, keepdim=True)
                if needs_input_grad[2]:
                    grad_b = sum_g.reshape(-1)
            if needs_x or needs_input_grad[1]:
                dotp_r = (grad_out * centred).sum(dims, keepdim=True) * r
                if needs_input_grad[1]:
                    grad_w = dotp_r.reshape(-1)
            if needs_x:
                k = dotp_r * r / n
                grad_x = (grad_out - centred * k - sum_g / n) * (r * weight.reshape(r.shape))
        if needs_input_grad[0]:
            extra = _stat_grads(grad_mean, grad_var, centred, n)
            if extra is not None:
                grad_x = extra.expand(x.shape) if grad_x is None else grad_x + extra
        return grad_x, grad_w, grad_b

    @staticmethod
    def backward_np(grads, x, weight, mean, var, *, dims, eps, needs_input_grad):
        grad_out, grad_mean, grad_var = grads
        if not _plain(x, weight, mean, var, *[g for g in grads if g is not None]):
            return _tensor_rule(BatchNorm, grads, (x, weight, mean, var),
                                {"dims": dims, "eps": eps, "needs_input_grad": needs_input_grad})
        dt = x.dtype
        n = _count(x.shape, dims)
        r = 1 / np.sqrt(var + dt.type(eps))
        centred = x - mean
        extra = _stat_grads(grad_mean, grad_var, centred, n) if needs_input_grad[0] else None
        grad_x = grad_w = grad_b = None
        if grad_out is not None:
            needs_x = needs_input_grad[0]
            if needs_x or needs_input_grad[2]:
                sum_g = np.add.reduce(grad_out, axis=dims, keepdims=True, dtype=dt)
                if needs_input_grad[2]:
                    grad_b = sum_g.reshape(-1)
            if needs_x or needs_input_grad[1]:
                dotp = np.add.reduce(np.multiply(grad_out, centred), axis=dims, keepdims=True,
                                     dtype=dt)
                dotp_r = dotp * r
                if needs_input_grad[1]:
                    grad_w = dotp_r.reshape(-1)
            if needs_x:
                k = np.multiply(dotp_r, r, out=dotp_r) if grad_w is None else dotp_r * r
                k /= dt.type(n)
                grad_x = np.multiply(centred, k, out=centred)
                np.subtract(grad_out, grad_x, out=grad_x)
                grad_x -= sum_g / dt.type(n)
                grad_x *= r * weight.reshape(r.shape)
        if extra is not None:
            grad_x = np.broadcast_to(extra, x.shape) if grad_x is None else grad_x + extra
        return grad_x, grad_w, grad_b


def _channel_shape(x) -> tuple:
    return (1, x.shape[1]) + (1,) * (len(x.shape) - 2)


def _count(shape, dims) -> int:
    n = 1
    for d in dims:
        n *= shape[d]
    return n


def _mean(a, dims):
    """``np.mean(a, axis=dims, keepdims=True, dtype=a.dtype)`` bit for bit (NOTE [Fast
    reductions])."""
    s = np.add.reduce(a, axis=dims, keepdims=True, dtype=a.dtype)
    n = _count(a.shape, dims)
    if a.dtype.type in _EXACT_COUNT and n < 1 << 24:
        # NOTE: np.mean divides in float64 and rounds; for float32 that is float32's own
        # (correctly rounded) division: double rounding is harmless at 53 >= 2 * 24 + 2 bits
        return np.true_divide(s, a.dtype.type(n), out=s)
    return np.true_divide(s, np.intp(n), out=s, casting="unsafe")


_EXACT_COUNT = (np.float32, np.float64)


def _stat_grads(grad_mean, grad_var, centred, n):
    """The input gradient from those of the mean and variance outputs (None without them);
    arrays or Tensors alike."""
    extra = None
    if grad_mean is not None:
        extra = grad_mean * (1 / n)
    if grad_var is not None:
        term = grad_var * centred * (2 / n)
        extra = term if extra is None else extra + term
    return extra
