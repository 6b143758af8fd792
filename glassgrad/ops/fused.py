"""Fused primitives behind ``nn.functional``: ``linear`` (``x @ W.T + b``), ``log_softmax`` and
``nll_loss`` (so ``cross_entropy``), each one op with its own derivative where the composite took
3-8 ops. Their backward kernels are ops too (``LogSoftmaxBackwardData``, ``NllLossBackward``),
so double backward works; node names are PyTorch's (``AddmmBackward0``, ``LogSoftmaxBackward0``,
``NllLossBackward0``).

The public functions use them for the common case (the conditions are in ``nn/_functional_*``
and ``functional.py``) and keep their composites for the rest, so results do not change.
"""

from __future__ import annotations

import numpy as np

from . import primitive
from .linalg import matmul
from .primitive import Primitive


class Linear(Primitive):
    """``x @ weight.T + bias`` for ``x (N, in)``, ``weight (out, in)``, ``bias (out,)``."""

    node_name = "AddmmBackward0"
    saves = ("x", "weight")
    wants_needs_input_grad = True

    @staticmethod
    def forward(xp, x, weight, bias):
        out = _gemm(xp, x, weight.T)
        out += bias
        return out

    @staticmethod
    def backward(grad, x, weight, needs_input_grad):
        return (matmul(grad, weight) if needs_input_grad[0] else None,
                MatMulTN.apply(grad, x) if needs_input_grad[1] else None,
                grad.sum(0) if needs_input_grad[2] else None)


class MatMulNT(Primitive):
    """``a @ b.T`` for 2-D ``a (n, k)``, ``b (m, k)``: a product with a transposed operand in one
    op (no transpose op before it), as matmul's and linear's backward need."""

    node_name = "MmBackward0"
    saves = ("a", "b")
    wants_needs_input_grad = True

    @staticmethod
    def forward(xp, a, b):
        return _gemm(xp, a, b.T)

    @staticmethod
    def backward(grad, a, b, needs_input_grad):
        return (matmul(grad, b) if needs_input_grad[0] else None,
                MatMulTN.apply(grad, a) if needs_input_grad[1] else None)


class MatMulTN(Primitive):
    """``a.T @ b`` for 2-D ``a (k, n)``, ``b (k, m)`` (see ``MatMulNT``)."""

    node_name = "MmBackward0"
    saves = ("a", "b")
    wants_needs_input_grad = True

    @staticmethod
    def forward(xp, a, b):
        return _gemm(xp, a.T, b)

    @staticmethod
    def backward(grad, a, b, needs_input_grad):
        return (MatMulNT.apply(b, grad) if needs_input_grad[0] else None,
                matmul(a, grad) if needs_input_grad[1] else None)


def _gemm(xp, a, b):
    if a.dtype.itemsize == 2 and a.dtype.kind in "fV":  # as MatMul: 16-bit GEMMs in float32
        return xp.matmul(a.astype(xp.float32), b.astype(xp.float32)).astype(a.dtype)
    return xp.matmul(a, b)


class LogSoftmax(Primitive):
    """``x - logsumexp(x, dim)`` in one kernel (rows of ``-inf`` stay ``-inf``/NaN as there)."""

    saves = ("result",)

    @staticmethod
    def forward(xp, x, *, dim):
        m = xp.max(x, axis=dim, keepdims=True)
        m = xp.where(xp.isfinite(m), m, 0)
        shifted = x - m
        with np.errstate(divide="ignore"):
            return shifted - xp.log(xp.sum(xp.exp(shifted), axis=dim, keepdims=True))

    @staticmethod
    def backward(grad, result, *, dim):
        return (LogSoftmaxBackwardData.apply(grad, result, dim=dim),)


class LogSoftmaxBackwardData(Primitive):
    """``grad - exp(y) * grad.sum(dim)``: the derivative of ``y = log_softmax(x, dim)``."""

    saves = ("grad", "y")
    wants_needs_input_grad = True

    @staticmethod
    def forward(xp, grad, y, *, dim):
        return grad - xp.exp(y) * xp.sum(grad, axis=dim, keepdims=True)

    @staticmethod
    def backward(grad_grad, grad, y, *, dim, needs_input_grad):
        p = y.exp()
        grad_grad_out = grad_y = None
        if needs_input_grad[0]:
            grad_grad_out = grad_grad - (grad_grad * p).sum(dim, keepdim=True)
        if needs_input_grad[1]:
            grad_y = -grad_grad * p * grad.sum(dim, keepdim=True)
        return grad_grad_out, grad_y


class NllLoss(Primitive):
    """``-x[n, index[n]] * weight[n]`` for ``x (N, C)``, reduced: 'none' (N,), 'sum', or 'mean'
    (divided by ``total``, the summed weights). ``weight`` (N,) already holds the class weights
    of the targets and zeros where the target is ignored; ``classes`` is C."""

    @staticmethod
    def forward(xp, x, *, index, weight, total, reduction, classes):
        loss = x[np.arange(x.shape[0]), index] * -weight
        if reduction == "none":
            return loss
        out = xp.sum(loss)
        if reduction == "mean":
            with np.errstate(divide="ignore", invalid="ignore"):
                out = out / total
        return out

    @staticmethod
    def backward(grad, *, index, weight, total, reduction, classes):
        return (NllLossBackward.apply(grad, index=index, weight=weight, total=total,
                                      reduction=reduction, classes=classes),)


class NllLossBackward(Primitive):
    """The derivative of ``NllLoss``: ``-grad * weight[n] (/ total)`` at ``[n, index[n]]``, zeros
    elsewhere (its own derivative is ``NllLoss`` again: the map is linear)."""

    node_name = "NllLossBackwardBackward0"

    @staticmethod
    def forward(xp, grad, *, index, weight, total, reduction, classes):
        n = index.shape[0]
        out = xp.zeros((n, classes), grad.dtype)
        scale = grad if reduction == "none" else (grad / total if reduction == "mean" else grad)
        out[np.arange(n), index] = -(weight * scale)
        return out

    @staticmethod
    def backward(grad_grad, *, index, weight, total, reduction, classes):
        return (NllLoss.apply(grad_grad, index=index, weight=weight, total=total,
                              reduction=reduction, classes=classes),)


class LeakyRelu(Primitive):
    """``x`` where ``x > 0`` else ``negative_slope * x``, for a floating ``x``. For a slope in
    (0, 1] that is ``maximum(x, slope * x)``, which NumPy runs ~4x faster than ``where``."""

    saves = ("x",)

    @staticmethod
    def forward(xp, x, *, negative_slope):
        scaled = x * x.dtype.type(negative_slope)
        if 0 < negative_slope <= 1:
            return xp.maximum(x, scaled)
        return xp.where(x > 0, x, scaled)

    @staticmethod
    def backward(grad, x, *, negative_slope):
        return (LeakyReluBackward.apply(grad, x, negative_slope=negative_slope),)


class LeakyReluBackward(Primitive):
    """``grad`` where ``x > 0`` else ``negative_slope * grad`` (zero derivative in ``x``)."""

    saves = ("x",)

    @staticmethod
    def forward(xp, grad, x, *, negative_slope):
        slope = grad.dtype.type(negative_slope)
        if 0 < negative_slope <= 1:
            # NOTE: (x > 0) * (1 - s) + s is exactly 1 or s for s in (0, 1] (s + fl(1 - s) == 1
            # in binary floating point), so this is where(x > 0, grad, grad * s) bit for bit
            return grad * ((x > 0) * (grad.dtype.type(1) - slope) + slope)
        return xp.where(x > 0, grad, grad * slope)

    @staticmethod
    def backward(grad_grad, x, *, negative_slope):
        zero = primitive._make(np.zeros(x._array.shape, dtype=x._array.dtype))
        return LeakyReluBackward.apply(grad_grad, x, negative_slope=negative_slope), zero
