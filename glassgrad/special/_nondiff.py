"""The special functions PyTorch computes without a derivative: Bessel functions of the first
and second kind, the modified Bessel functions' ``modified_bessel_*``/``scaled_modified_bessel_*``
kernels, ``airy_ai``, ``spherical_bessel_j0`` and the orthogonal polynomials.

PyTorch returns these as results that do not require grad, whatever the input (so ``backward``
through them is torch's "element 0 of tensors does not require grad" error); glassgrad does the
same, which is why they live here and not in ops/ (no backward). Kernels: scipy.special.
"""

from __future__ import annotations

import numpy as np

from ..ops import _scipy_kernel as _k
from ..ops._scipy_kernel import sc
from ..ops import primitive
from ..ops._forward_errors import broadcast_shapes
from ..ops._util import half, is_tensor, promote
from ._vmap import constant_forward


def _constant(result, out, op):
    """A result that records no history (PyTorch's non-differentiable special functions)."""
    return _k.with_out(primitive._make(result), out, op)


def _unary(fn, name, doc):
    op = f"special_{name}"

    def special_fn(input, *, out=None):
        x = _k.float_input(input, op, f"{name}_cpu", half_ok=False)
        return _constant(constant_forward(lambda a: _k.run(fn, a), x._array), out, op)

    special_fn.__name__ = special_fn.__qualname__ = name
    special_fn.__doc__ = (f"{doc} elementwise (``torch.special.{name}``); integer/bool input -> "
                          "default float dtype, float16/bfloat16 raise NotImplementedError as in "
                          "PyTorch. The result does not require grad (PyTorch has no derivative).")
    return special_fn


def _spherical_j0(x):
    return sc.spherical_jn(0, x)


bessel_j0 = _unary(sc.j0, "bessel_j0", "The Bessel function of the first kind of order 0")
bessel_j1 = _unary(sc.j1, "bessel_j1", "The Bessel function of the first kind of order 1")
bessel_y0 = _unary(sc.y0, "bessel_y0", "The Bessel function of the second kind of order 0")
bessel_y1 = _unary(sc.y1, "bessel_y1", "The Bessel function of the second kind of order 1")
modified_bessel_i0 = _unary(sc.i0, "modified_bessel_i0", "The modified Bessel function I0")
modified_bessel_i1 = _unary(sc.i1, "modified_bessel_i1", "The modified Bessel function I1")
modified_bessel_k0 = _unary(sc.k0, "modified_bessel_k0", "The modified Bessel function K0")
modified_bessel_k1 = _unary(sc.k1, "modified_bessel_k1", "The modified Bessel function K1")
scaled_modified_bessel_k0 = _unary(sc.k0e, "scaled_modified_bessel_k0", "``exp(x) K0(x)``")
scaled_modified_bessel_k1 = _unary(sc.k1e, "scaled_modified_bessel_k1", "``exp(x) K1(x)``")
airy_ai = _unary(lambda x: sc.airy(x)[0], "airy_ai", "The Airy function Ai")
spherical_bessel_j0 = _unary(_spherical_j0, "spherical_bessel_j0",
                             "The spherical Bessel function of the first kind of order 0, "
                             "``sin(x) / x``")


# NOTE [Polynomials of degree n]: PyTorch reads n as an integer (truncated) and gives 0 for a
# negative n. V and W come from U: V_n = U_n - U_{n-1}, W_n = U_n + U_{n-1} (U_{-1} = 0).
def _cheb_v(n, x):
    return sc.eval_chebyu(n, x) - np.where(n > 0, sc.eval_chebyu(np.maximum(n - 1, 0), x), 0)


def _cheb_w(n, x):
    return sc.eval_chebyu(n, x) + np.where(n > 0, sc.eval_chebyu(np.maximum(n - 1, 0), x), 0)


def _shifted(fn):
    return lambda n, x: fn(n, 2 * x - 1)


# NOTE [Polynomials at Inf/NaN]: PyTorch's kernels return 1 for n == 0 before reading x, then
# its first-degree term, then run the three-term recurrence, so a non-finite x gives what that
# arithmetic gives (Inf for a low degree, NaN once Infs meet) where SciPy's give NaN: those
# entries are recomputed here by the same recurrence, (first(x), step(k, x, p, q)).
_X2 = lambda x: x + x
_RECURRENCES = {
    "chebyshev_polynomial_t": (lambda x: x, lambda k, x, p, q: _X2(x) * q - p),
    "chebyshev_polynomial_u": (_X2, lambda k, x, p, q: _X2(x) * q - p),
    "chebyshev_polynomial_v": (lambda x: _X2(x) - 1, lambda k, x, p, q: _X2(x) * q - p),
    "chebyshev_polynomial_w": (lambda x: _X2(x) + 1, lambda k, x, p, q: _X2(x) * q - p),
    "hermite_polynomial_h": (_X2, lambda k, x, p, q: _X2(x) * q - 2 * k * p),
    "hermite_polynomial_he": (lambda x: x, lambda k, x, p, q: x * q - k * p),
    "laguerre_polynomial_l": (lambda x: 1 - x,
                              lambda k, x, p, q: ((k + k + (1 - x)) * q - k * p) / (k + 1)),
    "legendre_polynomial_p": (lambda x: x,
                              lambda k, x, p, q: ((k + k + 1) * x * q - k * p) / (k + 1)),
}


def _recurrence(name, x, degree):
    """PyTorch's recurrence of ``name`` at the (non-finite) points ``x`` (NOTE above)."""
    shifted = name.startswith("shifted_")
    first, step = _RECURRENCES[name[len("shifted_"):] if shifted else name]
    if shifted:
        x = 2 * x - 1
    p, q = np.ones_like(x), first(x)
    value = np.where(degree == 0, p, q)
    for k in range(1, min(int(degree.max(initial=0)), 64)):  # NaN well before 64 steps
        p, q = q, step(k, x, p, q)
        value = np.where(degree > k, q, value)
    return value


def _degree_n(fn, name):
    def kernel(x, n):
        degree = np.trunc(np.nan_to_num(n)).astype(np.int64)
        value = fn(np.maximum(degree, 0), x)
        bad = ~np.isfinite(x)
        if bad.any():
            x_b, degree_b = np.broadcast_arrays(x, degree)
            value = np.array(np.broadcast_to(value, x_b.shape))
            bad = np.broadcast_to(bad, x_b.shape)
            value[bad] = _recurrence(name, x_b[bad], degree_b[bad])
        return np.where(degree < 0, np.zeros((), value.dtype), value)

    return kernel


def _polynomial(fn, name, doc):
    op = f"special_{name}"
    kernel = _degree_n(fn, name)

    def special_fn(input, n, *, out=None):
        if not (is_tensor(input) or is_tensor(n)):
            raise TypeError(f"{op}(): expected a Tensor as input or n, got "
                            f"{type(input).__name__} and {type(n).__name__}")
        x, degree = promote(input, n, op, float_only=True)
        broadcast_shapes(op, x.shape, degree.shape)
        dt = x._array.dtype
        if dt.kind == "c" or half(dt):
            raise _k.not_implemented(f"{name}_cpu", dt, op)
        result = constant_forward(lambda a, n: _k.run(kernel, a, n), x._array, degree._array)
        return _constant(result, out, op)

    special_fn.__name__ = special_fn.__qualname__ = name
    special_fn.__doc__ = (f"{doc} of degree ``n`` at ``input`` (``torch.special.{name}``): Tensor "
                          "or number operands broadcast, integers -> default float dtype; n is "
                          "truncated to an integer, a negative n gives 0. The result does not "
                          "require grad (PyTorch has no derivative).")
    return special_fn


chebyshev_polynomial_t = _polynomial(lambda n, x: sc.eval_chebyt(n, x), "chebyshev_polynomial_t",
                                     "The Chebyshev polynomial of the first kind T_n")
chebyshev_polynomial_u = _polynomial(lambda n, x: sc.eval_chebyu(n, x), "chebyshev_polynomial_u",
                                     "The Chebyshev polynomial of the second kind U_n")
chebyshev_polynomial_v = _polynomial(_cheb_v, "chebyshev_polynomial_v",
                                     "The Chebyshev polynomial of the third kind V_n")
chebyshev_polynomial_w = _polynomial(_cheb_w, "chebyshev_polynomial_w",
                                     "The Chebyshev polynomial of the fourth kind W_n")
shifted_chebyshev_polynomial_t = _polynomial(
    lambda n, x: sc.eval_sh_chebyt(n, x), "shifted_chebyshev_polynomial_t",
    "The shifted Chebyshev polynomial T*_n(x) = T_n(2x - 1)")
shifted_chebyshev_polynomial_u = _polynomial(
    lambda n, x: sc.eval_chebyu(n, 2 * x - 1), "shifted_chebyshev_polynomial_u",
    "The shifted Chebyshev polynomial U*_n(x) = U_n(2x - 1)")
shifted_chebyshev_polynomial_v = _polynomial(
    _shifted(_cheb_v), "shifted_chebyshev_polynomial_v",
    "The shifted Chebyshev polynomial V*_n(x) = V_n(2x - 1)")
shifted_chebyshev_polynomial_w = _polynomial(
    _shifted(_cheb_w), "shifted_chebyshev_polynomial_w",
    "The shifted Chebyshev polynomial W*_n(x) = W_n(2x - 1)")
hermite_polynomial_h = _polynomial(lambda n, x: sc.eval_hermite(n, x), "hermite_polynomial_h",
                                   "The physicists' Hermite polynomial H_n")
hermite_polynomial_he = _polynomial(lambda n, x: sc.eval_hermitenorm(n, x),
                                    "hermite_polynomial_he",
                                    "The probabilists' Hermite polynomial He_n")
laguerre_polynomial_l = _polynomial(lambda n, x: sc.eval_laguerre(n, x), "laguerre_polynomial_l",
                                    "The Laguerre polynomial L_n")
legendre_polynomial_p = _polynomial(lambda n, x: sc.eval_legendre(n, x), "legendre_polynomial_p",
                                    "The Legendre polynomial P_n")
