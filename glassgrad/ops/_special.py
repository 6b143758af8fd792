"""Vectorised ``erf`` and ``erfc`` on NumPy arrays, accurate to float64 rounding, without SciPy.

NOTE [Cody's erf]: W. J. Cody, "Rational Chebyshev approximations for the error function",
Math. Comp. 23 (1969) 631-637, with the coefficients of his SPECFUN routine CALERF. For y = |x|:

    y <= 0.46875         erf(x)  = x * A(x^2) / B(x^2)
    0.46875 < y <= 4     erfc(y) = exp(-y^2) * C(y) / D(y)
    4 < y                erfc(y) = exp(-y^2) / y * (1/sqrt(pi) + P(1/y^2) / (y^2 Q(1/y^2)))

and erf(x) = sign(x) (1 - erfc(y)), erfc(-y) = 2 - erfc(y) outside the first range. exp(-y^2) is
taken as exp(-s^2) exp(-(y - s)(y + s)) with s = y truncated to a multiple of 1/16: s^2 is exact,
so the rounding error of y*y is not multiplied by y^2 in the exponent (the tails stay a few ulp).
"""

from __future__ import annotations

import numpy as np

# Cody's coefficients, highest power first (the denominators' leading coefficient is 1)
_A = (
    1.85777706184603153e-1,
    3.16112374387056560e00,
    1.13864154151050156e02,
    3.77485237685302021e02,
    3.20937758913846947e03,
)
_B = (
    1.0,
    2.36012909523441209e01,
    2.44024637934444173e02,
    1.28261652607737228e03,
    2.84423683343917062e03,
)
_C = (
    2.15311535474403846e-8,
    5.64188496988670089e-1,
    8.88314979438837594e00,
    6.61191906371416295e01,
    2.98635138197400131e02,
    8.81952221241769090e02,
    1.71204761263407058e03,
    2.05107837782607147e03,
    1.23033935479799725e03,
)
_D = (
    1.0,
    1.57449261107098347e01,
    1.17693950891312499e02,
    5.37181101862009858e02,
    1.62138957456669019e03,
    3.29079923573345963e03,
    4.36261909014324716e03,
    3.43936767414372164e03,
    1.23033935480374942e03,
)
_P = (
    1.63153871373020978e-2,
    3.05326634961232344e-1,
    3.60344899949804439e-1,
    1.25781726111229246e-1,
    1.60837851487422766e-2,
    6.58749161529837803e-4,
)
_Q = (
    1.0,
    2.56852019228982242e00,
    1.87295284992346725e00,
    5.27905102951428412e-1,
    6.05183413124413191e-2,
    2.33520497626869185e-3,
)
_ONE_OVER_SQRT_PI = 5.6418958354775628695e-1
_THRESH = 0.46875
# NOTE: erfc(y) underflows to 0.0 for y > 27.3; clamping there keeps inf out of the exp split
# (inf - inf would be nan) and leaves nan as nan (np.minimum propagates it)
_Y_MAX = 40.0


def _poly(t, coeffs):
    """Horner's rule on a float64 array, in place after the first step (a leading 1 costs no
    product)."""
    result = t + coeffs[1] if coeffs[0] == 1.0 else t * coeffs[0] + coeffs[1]
    for c in coeffs[2:]:
        result *= t
        result += c
    return result


def _erf_small(x):
    """``erf(x)``, Cody's first range; ``x`` must already be clipped to ``|x| <= 0.46875``."""
    t = x * x
    return x * _poly(t, _A) / _poly(t, _B)


def _erfc_large(y):
    """``erfc(y)``, Cody's second and third ranges, for ``0 <= y <= _Y_MAX`` or nan."""
    ratio = _poly(y, _C)
    ratio /= _poly(y, _D)
    tail = y > 4.0
    count = np.count_nonzero(tail)
    if count:
        # few tail elements (the usual case): gather them; many: evaluate the whole block
        sparse = count * 16 < y.size
        yt = y[tail] if sparse else np.maximum(y, 4.0)  # (no 1/0 where the form isn't kept)
        t = 1.0 / (yt * yt)
        asymptotic = _ONE_OVER_SQRT_PI - t * _poly(t, _P) / _poly(t, _Q)
        asymptotic /= yt
        if sparse:
            ratio[tail] = asymptotic
        else:
            np.copyto(ratio, asymptotic, where=tail)
    s = y * 16.0
    np.trunc(s, out=s)
    s *= 1.0 / 16.0
    split = s - y
    split *= y + s  # -(y^2 - s^2), to a rounding of its own small size
    np.exp(split, out=split)
    ratio *= split
    s *= s
    np.negative(s, out=s)
    np.exp(s, out=s)
    ratio *= s
    return ratio


def _erf_block(x):
    """``erf`` of a 1-D float64 block."""
    y = np.abs(x)
    np.minimum(y, _Y_MAX, out=y)  # NOTE: keeps nan (np.minimum propagates it)
    result = _erf_small(np.clip(x, -_THRESH, _THRESH))  # exact where |x| <= _THRESH; -0.0 kept
    big = y > _THRESH
    count = np.count_nonzero(big)
    if count:
        where = _large_range(big, count)
        ones = _erfc_large(y[where])
        np.subtract(1.0, ones, out=ones)
        np.copysign(ones, x[where], out=ones)
        _put(result, ones, where, big)
    return result


def _erfc_block(x):
    """``erfc`` of a 1-D float64 block."""
    y = np.abs(x)
    np.minimum(y, _Y_MAX, out=y)
    result = _erf_small(np.clip(x, -_THRESH, _THRESH))
    np.subtract(1.0, result, out=result)
    big = y > _THRESH
    count = np.count_nonzero(big)
    if count:
        where = _large_range(big, count)
        tail = _erfc_large(y[where])
        np.copyto(tail, 2.0 - tail, where=x[where] < 0)
        _put(result, tail, where, big)
    return result


# NOTE [Gathered range]: Cody's second and third ranges (~45 array passes) are evaluated only on
# the block's elements that need them, gathered by index, when those are at most 3/4 of the
# block; beyond that the gather and scatter cost more than the passes they save, and the ranges
# run on the whole block, kept by the mask. The arithmetic per element is the same either way,
# so the results are bit for bit those of the whole-block evaluation (tests/test_erf_gathered.py).
# Measured on 524,288 float32 values, one thread: GELU's inputs (x / sqrt(2), x ~ N(0, 1): 35%
# in the large ranges) 23.4 -> 13.8 ms; 60% 25.1 -> 14.2 ms, 74% 23.9 -> 21.6 ms, 79% 27.1 ->
# 31.0 ms (so the cut at 3/4).
_GATHER_AT_MOST = 0.75


def _large_range(big, count):
    """Where the large ranges run: the indices of ``big`` (NOTE [Gathered range]) or, for a
    block mostly in them, the whole block (``slice(None)``)."""
    return np.flatnonzero(big) if count <= _GATHER_AT_MOST * big.size else slice(None)


def _put(result, values, where, big):
    """``result`` takes ``values`` at ``where`` (indices), or where ``big`` for the whole block."""
    if isinstance(where, slice):
        np.copyto(result, values, where=big)
    else:
        result[where] = values


# NOTE [Blockwise special functions]: each range of NOTE [Cody's erf] is evaluated on the whole
# block (its input clamped into the range, so nothing overflows or turns nan) and the right one
# kept with copyto(where=): boolean gathers/scatters on random masks cost more than the
# arithmetic. Blocks of _BLOCK elements keep the ~20 float64 temporaries in cache and small
# enough that malloc reuses them, instead of faulting in fresh pages for every full-size one.
_BLOCK = 16384


def _blockwise(block_fn, x):
    """Apply ``block_fn`` (1-D float64 -> 1-D float64) to ``x`` in blocks; the result has ``x``'s
    shape and floating dtype (float64 for integers), a NumPy scalar for a scalar ``x``."""
    array = np.asarray(x)
    if array.dtype.kind == "c":
        raise TypeError(f"erf/erfc: complex input ({array.dtype}) is not supported")
    dtype = array.dtype if array.dtype.kind not in "biu" else np.dtype(np.float64)
    flat = array.reshape(-1)  # (a copy only when x is not contiguous)
    result = np.empty(flat.shape, dtype)
    for start in range(0, flat.size, _BLOCK):
        block = flat[start : start + _BLOCK].astype(np.float64, copy=False)  # (only read)
        result[start : start + _BLOCK] = block_fn(block)
    result = result.reshape(array.shape)
    return result if isinstance(x, np.ndarray) else result[()]


def erf(x):
    """``erf(x)`` elementwise on a NumPy array (any shape) or scalar, float64 accurate to a few ulp.

    Float32/float16/bfloat16 are computed in float64 and rounded; integers give float64; complex
    raises TypeError. NumPy counterpart of ``torch.erf`` (NOTE [Cody's erf]).
    """
    return _blockwise(_erf_block, x)


def erfc(x):
    """``erfc(x) = 1 - erf(x)`` elementwise, accurate to a few ulp also in the tails
    (``erfc(26) ~ 6e-296``); shapes and dtypes as :func:`erf`; ``torch.erfc``."""
    return _blockwise(_erfc_block, x)
