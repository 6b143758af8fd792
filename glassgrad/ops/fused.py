"""Fused primitives behind ``nn.functional``: ``linear`` (``x @ W.T + b``), ``log_softmax`` and
``nll_loss`` (so ``cross_entropy``), each one op with its own derivative where the composite took
3-8 ops. Their backward kernels are ops too (``LogSoftmaxBackwardData``, ``NllLossBackward``),
so double backward works; node names are PyTorch's (``AddmmBackward0``, ``LogSoftmaxBackward0``,
``NllLossBackward0``).

The public functions use them for the common case (the conditions are in ``nn/_functional_*``
and ``functional.py``) and keep their composites for the rest, so results do not change.
"""

from __future__ import annotations

import os

import numpy as np

from . import primitive
from ._util import half, widened
from .linalg import matmul
from .primitive import Primitive


class Linear(Primitive):
    """``x @ weight.T + bias`` for ``x (N, in)``, ``weight (out, in)``, ``bias (out,)``."""

    node_name = "AddmmBackward0"
    saves = ("x", "weight")
    saved_for = {"x": ("weight",), "weight": ("x",)}  # NOTE [Saved when needed] in primitive.py
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

    @staticmethod
    def backward_np(grad, x, weight, needs_input_grad):
        if not _plain(grad, x, weight):
            return _tensor_rule(Linear, grad, (x, weight), {"needs_input_grad": needs_input_grad})
        if _all_zero(grad):  # NOTE [Zero gradients]
            return (_zero_product(grad, weight, (grad.shape[0], weight.shape[1]))
                    if needs_input_grad[0] else None,
                    _zero_product(grad.T, x, (grad.shape[1], x.shape[1]))
                    if needs_input_grad[1] else None,
                    np.zeros(grad.shape[1:], grad.dtype) if needs_input_grad[2] else None)
        return (_gemm(np, grad, weight) if needs_input_grad[0] else None,
                _gemm(np, grad.T, x) if needs_input_grad[1] else None,
                _sum_rows(grad) if needs_input_grad[2] else None)


def _sum_rows(grad):
    """The bias gradient ``grad.sum(0)`` (NOTE [16-bit accumulation] in ops/_util.py)."""
    if half(grad.dtype):
        return np.add.reduce(grad, axis=0, dtype=np.float32).astype(grad.dtype)
    return np.add.reduce(grad, axis=0, dtype=grad.dtype)


class MatMulNT(Primitive):
    """``a @ b.T`` for 2-D ``a (n, k)``, ``b (m, k)``: a product with a transposed operand in one
    op (no transpose op before it), as matmul's and linear's backward need."""

    node_name = "MmBackward0"
    saves = ("a", "b")
    saved_for = {"a": ("b",), "b": ("a",)}  # NOTE [Saved when needed] in primitive.py
    wants_needs_input_grad = True

    @staticmethod
    def forward(xp, a, b):
        return _gemm(xp, a, b.T)

    @staticmethod
    def backward(grad, a, b, needs_input_grad):
        return (matmul(grad, b) if needs_input_grad[0] else None,
                MatMulTN.apply(grad, a) if needs_input_grad[1] else None)

    @staticmethod
    def backward_np(grad, a, b, needs_input_grad):
        if not _plain(grad, a, b):
            return _tensor_rule(MatMulNT, grad, (a, b), {"needs_input_grad": needs_input_grad})
        return (_gemm(np, grad, b) if needs_input_grad[0] else None,
                _gemm(np, grad.T, a) if needs_input_grad[1] else None)


class MatMulTN(Primitive):
    """``a.T @ b`` for 2-D ``a (k, n)``, ``b (k, m)`` (see ``MatMulNT``)."""

    node_name = "MmBackward0"
    saves = ("a", "b")
    saved_for = {"a": ("b",), "b": ("a",)}  # NOTE [Saved when needed] in primitive.py
    wants_needs_input_grad = True

    @staticmethod
    def forward(xp, a, b):
        return _gemm(xp, a.T, b)

    @staticmethod
    def backward(grad, a, b, needs_input_grad):
        return (MatMulNT.apply(b, grad) if needs_input_grad[0] else None,
                matmul(a, grad) if needs_input_grad[1] else None)

    @staticmethod
    def backward_np(grad, a, b, needs_input_grad):
        if not _plain(grad, a, b):
            return _tensor_rule(MatMulTN, grad, (a, b), {"needs_input_grad": needs_input_grad})
        return (_gemm(np, b, grad.T) if needs_input_grad[0] else None,
                _gemm(np, a, grad) if needs_input_grad[1] else None)


_AVX512_CORES = ("skylakex", "cooperlake", "sapphirerapids")


def _openblas_avx512_kernels() -> bool:
    """Whether NumPy's BLAS is OpenBLAS running its AVX-512 GEMM kernels: as threadpoolctl
    reports the loaded library, else (without threadpoolctl) the core ``OPENBLAS_CORETYPE``
    names or, unset, whether the CPU has AVX-512 (OpenBLAS's own rule)."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return _avx512_by_environment()
    for info in threadpool_info():
        if info.get("user_api") == "blas":
            return (info.get("internal_api") == "openblas"
                    and str(info.get("architecture", "")).lower() in _AVX512_CORES)
    return False


def _avx512_by_environment() -> bool:
    core = os.environ.get("OPENBLAS_CORETYPE", "").strip().lower()
    if core:
        return core in _AVX512_CORES
    try:
        from numpy._core._multiarray_umath import __cpu_features__
    except ImportError:  # NumPy 1.x
        from numpy.core._multiarray_umath import __cpu_features__
    return bool(__cpu_features__.get("AVX512F"))


_AVX512_KERNELS: list = []  # NOTE [GEMM shapes]: found at the first GEMM of a shape it concerns


def _avx512_kernels() -> bool:
    if not _AVX512_KERNELS:
        _AVX512_KERNELS.append(_openblas_avx512_kernels())
    return _AVX512_KERNELS[0]


def _gemm(xp, a, b):
    """``a @ b`` for 2-D arrays, as ``MatMul``'s forward computes it (16-bit types in float32).

    NOTE [GEMM shapes]: two layouts NumPy hands to a slow loop instead of BLAS are rewritten, with
    the same numbers: an operand with a zero stride (a broadcast gradient, e.g. ``mean``'s) is
    made contiguous (~20x faster), and an inner dim of 1 is the outer product ``a * b`` (one
    rounding per element either way, ~6x faster). And one layout OpenBLAS runs slowly: ``x @ W.T``
    (``b`` a transposed weight) for a batch of at most a quarter of the output features and an
    inner dim of 256 or more, e.g. (64, 784) @ (784, 256), is 7-50% faster computed as
    ``(W @ x.T).T`` and copied back to C order (the same products, summed in another order:
    rounding-level differences). Measured on OpenBLAS 0.3.31, one thread: (64, 256) @ (256, 256)
    0.93x, (16, 512) @ (512, 512) 0.51x, (64, 300) @ (300, 512) 0.87x. A batch of up to half
    the features gains from an inner dim of 512 while the batch is at most 128 rows ((128, 784) @
    (784, 256) 0.97x, (64, 784) @ (784, 128) 0.92x) and loses beyond ((256, 784) @ (784, 512)
    1.05x, (192, 784) @ (784, 384) 0.99x), so larger ones keep NumPy's call. That is OpenBLAS's
    AVX-512 (SkylakeX) kernels, which it picks on any CPU with AVX-512; its AVX2 ones (Haswell,
    Zen) run ``x @ W.T`` at full speed and lose 3-13% to the rewrite, so it is off for them
    (``_avx512_kernels``)."""
    if a.dtype.itemsize == 2 and a.dtype.kind in "fV":  # as MatMul: 16-bit GEMMs in float32
        return xp.matmul(a.astype(xp.float32), b.astype(xp.float32)).astype(a.dtype)
    if type(a) is np.ndarray and type(b) is np.ndarray and a.ndim == 2 and b.ndim == 2:
        m, k = a.shape
        n = b.shape[1]
        if k == 1 and b.shape[0] == 1 and a.dtype == b.dtype:
            return np.multiply(a, b)
        if 0 in a.strides and a.size > 1:
            a = np.ascontiguousarray(a)
        if 0 in b.strides and b.size > 1:
            b = np.ascontiguousarray(b)
        if ((k >= 256 and 4 * m <= n or k >= 512 and 2 * m <= n and m <= 128)
                and a.flags.c_contiguous and b.flags.f_contiguous and a.dtype == b.dtype
                and _avx512_kernels()):
            out = np.empty((m, n), a.dtype)
            np.copyto(out, np.matmul(b.T, a.T).T)
            return out
    return xp.matmul(a, b)


def _zero_product(zero, other, shape):
    """``zero @ other`` for an all-zero ``zero``: zeros, unless ``other`` holds an inf or NaN
    (``0 * inf`` is NaN, so then the product is computed, as PyTorch computes it)."""
    if np.isfinite(np.add.reduce(other, axis=None)):  # (a finite sum: every term finite)
        return np.zeros(shape, zero.dtype)
    return _gemm(np, zero, other)


def _all_zero(a) -> bool:
    """NOTE [Zero gradients]: a gradient that is all zeros gives all-zero input gradients, so the
    GEMMs behind it can be skipped. They arrive in WGAN-GP's double backward: the derivative of
    ``leaky_relu``'s backward in its saved input is zero (PyTorch's ``zeros_like(grad)``, kept here
    so the values and the set of gradients are PyTorch's), and it flows back through the forward
    layers of the interpolated batch. One element is read first: a live gradient costs ~0.1 us."""
    return a.size > 0 and not a.flat[0] and not a.any()


def _plain(*arrays) -> bool:
    """True when every operand is a NumPy ndarray (no ``vmap`` duck array)."""
    for a in arrays:
        if type(a) is not np.ndarray and a is not None:  # (None: not saved, not needed)
            return False
    return True


def _tensor_rule(cls, grad, saved, attrs):
    """NOTE [Array backward]: ``cls.backward`` on arrays wrapped as Tensors, for duck arrays
    (``vmap``'s batched arrays) that the array rules' BLAS fast paths do not take."""
    make = primitive._make
    grads = grad if type(grad) is tuple else make(grad)
    out = cls.backward(grads, *[s if s is None else make(s) for s in saved], **attrs)
    return tuple(None if g is None else g._array for g in out)


class LogSoftmax(Primitive):
    """``x - logsumexp(x, dim)`` in one kernel: a row whose max is not finite (a NaN, a ``+inf``,
    all ``-inf``) is NaN throughout, as in PyTorch's kernel (``x - max`` is NaN there)."""

    saves = ("result",)

    @staticmethod
    def forward(xp, x, *, dim):
        if half(x.dtype):  # NOTE [16-bit accumulation] in ops/_util.py
            return widened(LogSoftmax.forward, xp, x, dim=dim)
        with np.errstate(divide="ignore", invalid="ignore"):
            shifted = x - xp.max(x, axis=dim, keepdims=True)
            return shifted - xp.log(xp.sum(xp.exp(shifted), axis=dim, keepdims=True))

    @staticmethod
    def backward(grad, result, *, dim):
        return (LogSoftmaxBackwardData.apply(grad, result, dim=dim),)

    @staticmethod
    def backward_np(grad, result, *, dim):
        if not _plain(grad, result):
            return _tensor_rule(LogSoftmax, grad, (result,), {"dim": dim})
        return (LogSoftmaxBackwardData.forward(np, grad, result, dim=dim),)


class Softmax(Primitive):
    """``exp(x - max) / sum(exp(x - max), dim)`` in one kernel (PyTorch's ``SoftmaxBackward0``):
    rows of ``-inf``, or with a ``+inf`` or NaN, give NaN, as there."""

    saves = ("result",)

    @staticmethod
    def forward(xp, x, *, dim):
        if half(x.dtype):  # NOTE [16-bit accumulation] in ops/_util.py
            return widened(Softmax.forward, xp, x, dim=dim)
        with np.errstate(invalid="ignore"):  # an inf max makes the row NaN, as in PyTorch
            e = xp.exp(x - xp.max(x, axis=dim, keepdims=True))
            e /= xp.sum(e, axis=dim, keepdims=True)
        return e

    @staticmethod
    def backward(grad, result, *, dim):
        return (SoftmaxBackwardData.apply(grad, result, dim=dim),)

    @staticmethod
    def backward_np(grad, result, *, dim):
        if not _plain(grad, result):
            return _tensor_rule(Softmax, grad, (result,), {"dim": dim})
        return (SoftmaxBackwardData.forward(np, grad, result, dim=dim),)


class SoftmaxBackwardData(Primitive):
    """``y * (grad - sum(grad * y, dim))``: the derivative of ``y = softmax(x, dim)``."""

    saves = ("grad", "y")
    wants_needs_input_grad = True

    @staticmethod
    def forward(xp, grad, y, *, dim):
        if half(grad.dtype):  # NOTE [16-bit accumulation] in ops/_util.py
            return widened(SoftmaxBackwardData.forward, xp, grad, y, dim=dim)
        gy = grad * y
        return gy - y * xp.sum(gy, axis=dim, keepdims=True)

    @staticmethod
    def backward(grad_grad, grad, y, *, dim, needs_input_grad):
        # d/dgrad: y * (gg - sum(gg * y)); d/dy: gg * (grad - s) - y * sum(gg * grad),
        # with s = sum(grad * y) (y's own dependence through s, term by term)
        s = (grad * y).sum(dim, keepdim=True)
        grad_grad_out = grad_y = None
        if needs_input_grad[0]:
            grad_grad_out = SoftmaxBackwardData.apply(grad_grad, y, dim=dim)
        if needs_input_grad[1]:
            grad_y = grad_grad * (grad - s) - grad * (grad_grad * y).sum(dim, keepdim=True)
        return grad_grad_out, grad_y


class LogSoftmaxBackwardData(Primitive):
    """``grad - exp(y) * grad.sum(dim)``: the derivative of ``y = log_softmax(x, dim)``."""

    saves = ("grad", "y")
    wants_needs_input_grad = True

    @staticmethod
    def forward(xp, grad, y, *, dim):
        if half(grad.dtype):  # NOTE [16-bit accumulation] in ops/_util.py
            return widened(LogSoftmaxBackwardData.forward, xp, grad, y, dim=dim)
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
    of the targets and zeros where the target is ignored; ``classes`` is C; ``ignored`` (N,) bool
    marks the ignored targets (None: none is), whose rows get no gradient at all."""

    frees_attrs = True  # NOTE [Freed attributes] in primitive.py

    @staticmethod
    def forward(xp, x, *, index, weight, total, reduction, classes, ignored=None):
        loss = x[np.arange(x.shape[0]), index] * -weight
        if ignored is not None:  # an ignored row adds nothing, even a NaN (PyTorch skips it)
            loss = xp.where(ignored, loss.dtype.type(0), loss)
        if reduction == "none":
            return loss
        # NOTE [16-bit accumulation] in ops/_util.py: ``total`` is then float32 too
        wide = half(loss.dtype)
        out = xp.sum(loss, dtype=np.float32) if wide else xp.sum(loss)
        if reduction == "mean":
            with np.errstate(divide="ignore", invalid="ignore"):
                out = out / total
        return out.astype(loss.dtype) if wide else out

    @staticmethod
    def backward(grad, *, index, weight, total, reduction, classes, ignored=None):
        return (NllLossBackward.apply(grad, index=index, weight=weight, total=total,
                                      reduction=reduction, classes=classes, ignored=ignored),)

    @staticmethod
    def backward_np(grad, *, index, weight, total, reduction, classes, ignored=None):
        if type(grad) is not np.ndarray:
            return _tensor_rule(NllLoss, grad, (), {"index": index, "weight": weight,
                                                   "total": total, "reduction": reduction,
                                                   "classes": classes, "ignored": ignored})
        return (NllLossBackward.forward(np, grad, index=index, weight=weight, total=total,
                                        reduction=reduction, classes=classes, ignored=ignored),)


class NllLossBackward(Primitive):
    """The derivative of ``NllLoss``: ``-grad * weight[n] (/ total)`` at ``[n, index[n]]``, zeros
    elsewhere (its own derivative is ``NllLoss`` again: the map is linear)."""

    frees_attrs = True  # NOTE [Freed attributes] in primitive.py

    node_name = "NllLossBackwardBackward0"

    @staticmethod
    def forward(xp, grad, *, index, weight, total, reduction, classes, ignored=None):
        n = index.shape[0]
        out = xp.zeros((n, classes), grad.dtype)
        scale = grad if reduction == "none" else (grad / total if reduction == "mean" else grad)
        if ignored is None:
            out[np.arange(n), index] = -(weight * scale)
        else:  # NOTE: PyTorch writes no ignored row: 0 there, not 0 * (grad / 0) = nan
            rows = np.flatnonzero(~ignored)
            out[rows, index[rows]] = -(weight * scale)[rows]
        return out

    @staticmethod
    def backward(grad_grad, *, index, weight, total, reduction, classes, ignored=None):
        return (NllLoss.apply(grad_grad, index=index, weight=weight, total=total,
                              reduction=reduction, classes=classes, ignored=ignored),)


class LeakyRelu(Primitive):
    """``x`` where ``x > 0`` else ``negative_slope * x``, for a floating ``x``. For a slope in
    (0, 1] that is ``maximum(x, slope * x)``, which NumPy runs ~4x faster than ``where``."""

    saves = ("x",)

    @staticmethod
    def forward(xp, x, *, negative_slope):
        scaled = x * x.dtype.type(negative_slope)
        if 0 < negative_slope <= 1:
            return xp.maximum(x, scaled, out=scaled) if type(scaled) is np.ndarray \
                else xp.maximum(x, scaled)
        return xp.where(x > 0, x, scaled)

    @staticmethod
    def backward(grad, x, *, negative_slope):
        return (LeakyReluBackward.apply(grad, x, negative_slope=negative_slope),)

    @staticmethod
    def backward_np(grad, x, *, negative_slope):
        if type(grad) is np.ndarray and _all_zero(grad):  # NOTE [Zero gradients]
            return (np.zeros(x.shape, grad.dtype),)
        return (LeakyReluBackward.forward(np, grad, x, negative_slope=negative_slope),)


class LeakyReluBackward(Primitive):
    """``grad`` where ``x > 0`` else ``negative_slope * grad`` (zero derivative in ``x``)."""

    saves = ("x",)

    @staticmethod
    def forward(xp, grad, x, *, negative_slope):
        slope = grad.dtype.type(negative_slope)
        if 0 < negative_slope <= 1:
            # NOTE: (x > 0) * (1 - s) + s is exactly 1 or s for s in (0, 1] (s + fl(1 - s) == 1
            # in binary floating point), so this is where(x > 0, grad, grad * s) bit for bit
            if type(grad) is np.ndarray and type(x) is np.ndarray:  # (one buffer, in place)
                factor = np.multiply(x > 0, grad.dtype.type(1) - slope, dtype=grad.dtype)
                factor += slope
                # NOTE: a 0-d x gives a NumPy scalar factor, which cannot be an out= buffer
                return np.multiply(grad, factor, out=factor) if factor.shape == grad.shape \
                    and type(factor) is np.ndarray else grad * factor
            return grad * ((x > 0) * (grad.dtype.type(1) - slope) + slope)
        return xp.where(x > 0, grad, grad * slope)

    @staticmethod
    def backward(grad_grad, x, *, negative_slope):
        zero = primitive._make(np.zeros(x._array.shape, dtype=x._array.dtype))
        return LeakyReluBackward.apply(grad_grad, x, negative_slope=negative_slope), zero

    @staticmethod
    def backward_np(grad_grad, x, *, negative_slope):
        return (LeakyReluBackward.forward(np, grad_grad, x, negative_slope=negative_slope),
                np.zeros(x.shape, dtype=x.dtype))
