"""Numerical composites (issue 15, lane ops): cov, corrcoef, trapezoid/trapz,
cumulative_trapezoid, gradient, renorm, cdist, pdist. Each is built from differentiable ops, so
first and higher derivatives come from them; no derivative code here."""

from __future__ import annotations

import numpy as np

from ._ops_construct import triu_indices
from .autograd.node_names import named_as
from .ops import elementwise as ew
from .ops import reduction as red
from .ops import shape as sh
from .ops._names import scalar_type
from .ops._util import is_tensor, wrap_dim
from .ops.diagonal import diagonal
from .ops.gather import index_select
from .ops.indexing import getitem, select
from .ops.linalg import matmul
from .ops.primitive import _make


def _check_2d(name, input):
    if input._array.ndim > 2:
        raise RuntimeError(f"{name}(): expected input to have two or fewer dimensions but got an "
                           f"input with {input._array.ndim} dimensions")


def _check_weights(x, w, name, integral):
    if w is None:
        return None
    kind_ok = w._array.dtype.kind in "iu" if integral else w.is_floating_point()
    if not kind_ok:
        want = "integral" if integral else "floating point"
        raise RuntimeError(f"cov(): expected {name} to have {want} dtype but got {name} with "
                           f"{scalar_type(w.dtype)} dtype")
    if w._array.ndim > 1:
        raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got "
                           f"{name} with {w._array.ndim} dimensions")
    if w._array.size != x._array.shape[1]:
        raise RuntimeError(f"cov(): expected {name} to have the same numel as there are "
                           f"observations in the input but got {w._array.size} != "
                           f"{x._array.shape[1]}")
    if np.any(w._array < 0):
        raise RuntimeError(f"cov(): {name} cannot be negative")
    return w


def cov(input, *, correction: int = 1, fweights=None, aweights=None):
    """Covariance of the rows (variables) over the columns (observations) (``torch.cov``); a
    1-D input is one variable (0-d result). ``fweights`` are integer frequencies, ``aweights``
    float importance weights; the normaliser is clamped at zero, as PyTorch's."""
    _check_2d("cov", input)
    x = sh.reshape(input, (1, -1)) if input._array.ndim < 2 else input
    if not x.is_floating_point():  # (floating aweights set the dtype, as PyTorch's promotion)
        fl = aweights is not None and aweights.is_floating_point()
        x = ew.to_dtype(x, aweights.dtype if fl else _default())
    fw = _check_weights(x, fweights, "fweights", integral=True)
    aw = _check_weights(x, aweights, "aweights", integral=False)
    w = fw if aw is None else aw if fw is None else ew.mul(fw, aw)
    if w is None:
        n = x._array.shape[1]
        mean = red.mean(x, 1, keepdim=True)
        norm = max(n - correction, 0)
        xm = ew.sub(x, mean)
        c = ew.div(matmul(xm, sh.t(xm)), norm)
    else:
        w = ew.to_dtype(w, x.dtype) if w.dtype != x.dtype else w
        w_sum = red.sum(w)
        mean = ew.div(red.sum(ew.mul(x, w), 1, keepdim=True), w_sum)
        if correction == 0:
            norm = w_sum
        elif aw is None:
            norm = ew.sub(w_sum, correction)
        else:
            norm = ew.sub(w_sum, ew.div(ew.mul(red.sum(ew.mul(w, aw)), correction), w_sum))
        norm = ew.clamp_min(norm, 0)
        xm = ew.sub(x, mean)
        c = ew.div(matmul(ew.mul(xm, w), sh.t(xm)), norm)
    return sh.squeeze(c) if input._array.ndim < 2 or x._array.shape[0] == 1 else c


def _default():
    from .dtypes import get_default_dtype

    return get_default_dtype()


def corrcoef(input):
    """Pearson correlation coefficients of the rows (``torch.corrcoef``), clipped to [-1, 1]."""
    _check_2d("corrcoef", input)
    c = cov(input)
    if c._array.ndim == 0:
        return ew.div(c, c)
    std = ew.sqrt(diagonal(c))
    c = ew.div(ew.div(c, sh.unsqueeze(std, 1)), sh.unsqueeze(std, 0))
    return ew.clamp(c, -1, 1)


def _pieces(y, d):
    n = y._array.shape[d]
    lead = (slice(None),) * d
    return getitem(y, lead + (slice(1, n),)), getitem(y, lead + (slice(0, max(n - 1, 0)),))


def _trapezoid_terms(name, y, x, dx, dim):
    if y._array.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    d = wrap_dim(dim, y._array.ndim, name)
    upper, lower = _pieces(y, d)
    mids = ew.add(upper, lower)
    if x is None:
        return ew.mul(mids, dx / 2), d
    if x._array.ndim == 0:
        raise RuntimeError(f"The size of tensor a ({y._array.shape[d] - 1}) must match the size "
                           f"of tensor b (0) at non-singleton dimension {d}")
    if y._array.shape[d] == 0 and name == "trapezoid":  # PyTorch checks no x here
        return ew.mul(mids, 0.0), d
    if x._array.ndim == 1:
        if x._array.shape[0] != y._array.shape[d]:
            raise RuntimeError(f"{name}: There must be one `x` value for each sample point")
        dxs = sh.diff(x)
        dxs = sh.reshape(dxs, (-1,) + (1,) * (y._array.ndim - d - 1))
    else:
        xu, xl = _pieces(x, wrap_dim(dim, x._array.ndim, name))
        dxs = ew.sub(xu, xl)
    return ew.div(ew.mul(mids, dxs), 2), d


def trapezoid(y, x=None, *, dx=None, dim: int = -1):
    """The trapezoidal rule along ``dim`` (``torch.trapezoid``): sample points ``x`` (1-D, or
    broadcastable to ``y``) or a constant spacing ``dx`` (default 1)."""
    if x is not None and dx is not None:
        raise TypeError("trapezoid() received an invalid combination of arguments: give x or "
                        "dx, not both")
    if x is not None and not is_tensor(x):
        dx, x = x, None
    spacing = 1.0 if dx is None else dx
    if x is None and y._array.ndim:
        # NOTE: PyTorch's constant-spacing form (sum minus half the ends), so that Inf/NaN
        # inputs give its values
        d = wrap_dim(dim, y._array.ndim, "trapezoid")
        if y._array.shape[d] == 0:
            return red.sum(y, d)
        ends = ew.add(select(y, d, 0), select(y, d, -1))
        return ew.mul(ew.sub(red.sum(y, d), ew.mul(ends, 0.5)), spacing)
    terms, d = _trapezoid_terms("trapezoid", y, x, spacing, dim)
    return red.sum(terms, d)


def trapz(y, x=None, *, dx=None, dim: int = -1):
    """Alias of ``trapezoid`` (``torch.trapz``)."""
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y, x=None, *, dx=None, dim: int = -1):
    """The running trapezoidal integral along ``dim``, one element shorter than ``y``
    (``torch.cumulative_trapezoid``)."""
    if x is not None and not is_tensor(x):
        dx, x = x, None
    terms, d = _trapezoid_terms("cumulative_trapezoid", y, x, 1.0 if dx is None else dx, dim)
    return red.cumsum(terms, d)


def _gradient_along(f, d, coords, h, edge_order):
    """One dim of ``torch.gradient``: second-order central differences inside, one-sided
    differences of ``edge_order`` at the ends; ``coords`` (1-D tensor) or a uniform ``h``."""
    n = f._array.shape[d]
    lead = (slice(None),) * d

    def part(a, b):
        return getitem(f, lead + (slice(a, b),))

    def cut(a, b):
        return sh.reshape(getitem(coords, (slice(a, b),)), (-1,) + (1,) * (f._array.ndim - d - 1))

    if coords is None:
        inner = ew.div(ew.sub(part(2, n), part(0, n - 2)), 2 * h)
        if edge_order == 1:
            first = ew.div(ew.sub(part(1, 2), part(0, 1)), h)
            last = ew.div(ew.sub(part(n - 1, n), part(n - 2, n - 1)), h)
        else:
            first = ew.div(ew.add(ew.add(ew.mul(part(0, 1), -1.5), ew.mul(part(1, 2), 2.0)),
                                  ew.mul(part(2, 3), -0.5)), h)
            last = ew.div(ew.add(ew.add(ew.mul(part(n - 3, n - 2), 0.5),
                                        ew.mul(part(n - 2, n - 1), -2.0)),
                                 ew.mul(part(n - 1, n), 1.5)), h)
        from .ops.joins import cat

        return cat([first, inner, last], d)
    hd = ew.sub(cut(1, n - 1), cut(0, n - 2))
    hs = ew.sub(cut(2, n), cut(1, n - 1))
    a = ew.div(ew.neg(hs), ew.mul(hd, ew.add(hd, hs)))
    b = ew.div(ew.sub(hs, hd), ew.mul(hd, hs))
    c = ew.div(hd, ew.mul(hs, ew.add(hd, hs)))
    inner = ew.add(ew.add(ew.mul(a, part(0, n - 2)), ew.mul(b, part(1, n - 1))),
                   ew.mul(c, part(2, n)))
    if edge_order == 1:
        first = ew.div(ew.sub(part(1, 2), part(0, 1)), ew.sub(cut(1, 2), cut(0, 1)))
        last = ew.div(ew.sub(part(n - 1, n), part(n - 2, n - 1)),
                      ew.sub(cut(n - 1, n), cut(n - 2, n - 1)))
    else:
        first = _edge2(part(0, 1), part(1, 2), part(2, 3), ew.sub(cut(1, 2), cut(0, 1)),
                       ew.sub(cut(2, 3), cut(1, 2)), 1)
        last = _edge2(part(n - 1, n), part(n - 2, n - 1), part(n - 3, n - 2),
                      ew.sub(cut(n - 1, n), cut(n - 2, n - 1)),
                      ew.sub(cut(n - 2, n - 1), cut(n - 3, n - 2)), -1)
    from .ops.joins import cat

    return cat([first, inner, last], d)


def _edge2(f0, f1, f2, h1, h2, sign):
    """Second-order one-sided difference at an end from its two neighbours (spacings h1, h2)."""
    a = ew.div(ew.neg(ew.add(ew.mul(h1, 2.0), h2)), ew.mul(h1, ew.add(h1, h2)))
    b = ew.div(ew.add(h1, h2), ew.mul(h1, h2))
    c = ew.div(ew.neg(h1), ew.mul(h2, ew.add(h1, h2)))
    out = ew.add(ew.add(ew.mul(a, f0), ew.mul(b, f1)), ew.mul(c, f2))
    return out if sign > 0 else ew.neg(out)


def gradient(input, *, spacing=1, dim=None, edge_order: int = 1):
    """Estimates of the partial derivatives of ``input`` along ``dim`` (every dim when None),
    one tensor per dim (``torch.gradient``): ``spacing`` a number, a list of numbers (one per
    dim) or a list of 1-D coordinate tensors; ``edge_order`` 1 or 2 at the boundaries."""
    nd = input._array.ndim
    dims = list(range(nd)) if dim is None else (
        [wrap_dim(dim, nd, "gradient")] if isinstance(dim, (int, np.integer))
        else [wrap_dim(d, nd, "gradient") for d in dim])
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    if isinstance(spacing, (list, tuple)):
        if len(spacing) != len(dims):
            what = ("since dim argument was not given" if dim is None
                    else "since dim argument was given")
            raise RuntimeError(
                "torch.gradient expected spacing to be unspecified, a scalar, or a list of "
                f"length equal to 'self.dim() = {len(dims) if dim is not None else nd}', "
                f"{what}, but got a list of length {len(spacing)}")
        spacings = list(spacing)
    else:
        spacings = [spacing] * len(dims)
    f = input if input.is_floating_point() else ew.to_dtype(input, _default())
    out = []
    for d, s in zip(dims, spacings):
        if f._array.shape[d] < edge_order + 1:
            raise RuntimeError(
                "torch.gradient expected each dimension size to be at least edge_order+1")
        if is_tensor(s):
            if s._array.ndim != 1:
                raise RuntimeError("torch.gradient expected each element of spacing to have one "
                                   f"dimension, but got an element with {s._array.ndim} "
                                   "dimensions!")
            if s._array.shape[0] != f._array.shape[d]:
                raise RuntimeError(f"The size of tensor a ({s._array.shape[0]}) must match the "
                                   f"size of tensor b ({f._array.shape[d]}) at non-singleton "
                                   "dimension 0")
            out.append(_gradient_along(f, d, s, None, edge_order))
        else:
            out.append(_gradient_along(f, d, None, float(s), edge_order))
    return tuple(out)


def renorm(input, p, dim: int, maxnorm):
    """Each slice along ``dim`` whose ``p``-norm exceeds ``maxnorm`` is scaled down to norm
    ``maxnorm`` (``torch.renorm``); RuntimeError for p <= 0, maxnorm < 0 or a 1-D input."""
    nd = input._array.ndim
    if nd < 2:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {nd} dimensions")
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    d = wrap_dim(dim, nd, "renorm")
    others = tuple(k for k in range(nd) if k != d)
    norm = red.norm(input, p, others, keepdim=True)
    big = norm._array > maxnorm
    # NOTE: PyTorch's 1e-7 guard in the factor, so that values match its to the last digit
    factor = ew.where(big, ew.div(maxnorm, ew.add(norm, 1e-7)), 1.0)
    return ew.mul(input, factor)


_MODES = ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist",
          "donot_use_mm_for_euclid_dist")


def _pnorm(diff, p):
    return red.norm(diff, p, -1)


def cdist(x1, x2, p: float = 2.0, compute_mode: str = "use_mm_for_euclid_dist_if_necessary"):
    """The ``p``-norm distance between each row of ``x1`` (..., P, M) and each row of ``x2``
    (..., R, M) (``torch.cdist``), shape (..., P, R). ``compute_mode`` is accepted (glassgrad
    always takes the direct difference, PyTorch's 'donot_use_mm' path, within a float's
    rounding of its matmul path)."""
    if compute_mode not in _MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    for name, t in (("X1", x1), ("X2", x2)):
        if t._array.ndim < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: "
                               f"{t._array.ndim}D")
        if not t.is_floating_point():
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: "
                               f"{scalar_type(t.dtype)}")
    if x1._array.shape[-1] != x2._array.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: "
                           f"{x1._array.shape[-1]} X2: {x2._array.shape[-1]}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    out = _pnorm(ew.sub(sh.unsqueeze(x1, -2), sh.unsqueeze(x2, -3)), p)
    # torch's direct kernel (CdistBackward0) unless it takes its matmul path for p = 2
    rows = max(x1._array.shape[-2], x2._array.shape[-2])
    if p != 2 or compute_mode == "donot_use_mm_for_euclid_dist" or (
            compute_mode == _MODES[0] and rows <= 25):
        out = named_as(out, "CdistBackward0", x1, x2)
    return out


def pdist(input, p: float = 2):
    """The ``p``-norm distances between the rows of ``input`` (N, M), pairs i < j in row-major
    order (``torch.pdist``), shape (N (N - 1) / 2,)."""
    if input._array.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input._array.ndim}D")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    n = input._array.shape[0]
    pairs = triu_indices(n, n, 1)._array
    rows_i = index_select(input, 0, _make(pairs[0]))
    rows_j = index_select(input, 0, _make(pairs[1]))
    return named_as(_pnorm(ew.sub(rows_i, rows_j), p), "PdistBackward0", input)
