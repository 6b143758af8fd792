"""The gamma family: ``torch.lgamma``, ``digamma``, ``polygamma``, ``mvlgamma``, ``igamma``,
``igammac`` and ``torch.special.zeta``.

Forwards are scipy.special's kernels (NOTE in _scipy_kernel.py); backwards are PyTorch's rules
(tools/autograd/derivatives.yaml) written in glassgrad ops, so every order is differentiable:
lgamma' = digamma, digamma' = polygamma(1), polygamma(n)' = polygamma(n + 1).
"""

from __future__ import annotations

import math

import numpy as np

from . import _scipy_kernel as _k
from ._scipy_kernel import sc
from . import primitive
from ._util import is_tensor
from .elementwise import _unary, exp, log
from .primitive import Primitive


def _lgamma(x):
    out = sc.gammaln(x)
    return np.where(x == -np.inf, np.inf, out)  # NOTE: torch's lgamma(-inf) is +inf


Lgamma = _unary("Lgamma", lambda xp, x: _k.run(_lgamma, x),
                lambda g, x: (g * Digamma.apply(x),))
Digamma = _unary("Digamma", lambda xp, x: _k.run(sc.psi, x),
                 lambda g, x: (g * Polygamma.apply(x, n=1),))


def _polygamma(n, x):
    out = sc.polygamma(n, x)
    # NOTE: torch's trigamma is nan at -inf, its polygamma (through its zeta) nan at +inf
    return np.where(((x == -np.inf) & (n == 1)) | ((x == np.inf) & (n >= 2)), np.nan, out)


def _zeta(x, q):
    # NOTE: torch's zeta(x, inf) is nan, but inf at its pole x = 1 (tested first)
    return np.where((q == np.inf) & (x != 1), np.nan, sc.zeta(x, q))


def _incomplete(kernel, at_zero):
    """scipy's regularized incomplete gamma with PyTorch's special cases, taken in its order so
    that a nan operand gives torch's value (P(nan, 0) = 0): a or x < 0 -> nan; a = 0 -> the
    value at x > 0, else nan; x = 0 -> P = 0 (Q = 1); a = inf -> nan for x = inf, else the
    value at 0; x = inf -> 1 - the value at 0."""
    def fn(a, x):  # (the last case first: np.where, not np.select, which vmap cannot batch)
        out = np.where(np.isinf(x), 1.0 - at_zero, kernel(a, x))
        out = np.where(np.isinf(a), np.where(np.isinf(x), np.nan, at_zero), out)
        out = np.where(x == 0, at_zero, out)
        out = np.where(a == 0, np.where(x > 0, 1.0 - at_zero, np.nan), out)
        return np.where((x < 0) | (a < 0), np.nan, out)

    return fn


_gammainc = _incomplete(sc.gammainc, 0.0)
_gammaincc = _incomplete(sc.gammaincc, 1.0)


class Polygamma(Primitive):
    saves = ("x",)

    @staticmethod
    def forward(xp, x, *, n):
        return _k.run(lambda a: _polygamma(n, a), x)

    @staticmethod
    def backward(grad, x, *, n):
        return (grad * Polygamma.apply(x, n=n + 1),)


def _mvlgamma(x, p):
    shifts = x[..., None] - np.arange(p, dtype=x.dtype) / 2  # x, x - 1/2, ..., x - (p - 1)/2
    return _lgamma(shifts).sum(-1) + p * (p - 1) / 4 * math.log(math.pi)


class Mvlgamma(Primitive):
    saves = ("x",)

    @staticmethod
    def forward(xp, x, *, p):
        return _k.run(lambda a: _mvlgamma(a, p), x)

    @staticmethod
    def backward(grad, x, *, p):
        # PyTorch's mvlgamma_backward: the sum of digamma over the p shifts
        offsets = primitive._make(np.arange(p, dtype=x._array.dtype) / -2.0)
        return (grad * Digamma.apply(x.unsqueeze(-1) + offsets).sum(-1),)


def _not_implemented_grad(what: str) -> NotImplementedError:
    return NotImplementedError(
        f"the derivative for '{what}' is not implemented.\nglassgrad: as in PyTorch; detach "
        "that argument (or pass it without requires_grad).")


class Igamma(Primitive):
    """The regularized lower incomplete gamma function P(a, x)."""

    saves = ("a", "x")
    wants_needs_input_grad = True
    sign = 1.0

    @staticmethod
    def forward(xp, a, x):
        return _k.run(_gammainc, a, x)

    @classmethod
    def _backward(cls, grad, a, x, needs_input_grad, name):
        if needs_input_grad[0]:
            raise _not_implemented_grad(f"{name}: input")
        # d/dx P(a, x) = x^(a-1) e^-x / Gamma(a)
        return None, cls.sign * grad * exp((a - 1) * log(x) - x - lgamma(a))

    @staticmethod
    def backward(grad, a, x, needs_input_grad):
        return Igamma._backward(grad, a, x, needs_input_grad, "igamma")


class Igammac(Igamma):
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x)."""

    sign = -1.0

    @staticmethod
    def forward(xp, a, x):
        return _k.run(_gammaincc, a, x)

    @staticmethod
    def backward(grad, a, x, needs_input_grad):
        return Igammac._backward(grad, a, x, needs_input_grad, "igammac")


class Zeta(Primitive):
    """The Hurwitz zeta function sum_k (k + q)^-x."""

    node_name = "SpecialZetaBackward0"
    saves = ("x", "q")
    wants_needs_input_grad = True

    @staticmethod
    def forward(xp, x, q):
        return _k.run(_zeta, x, q)

    @staticmethod
    def backward(grad, x, q, needs_input_grad):
        if needs_input_grad[0]:
            raise _not_implemented_grad("zeta")
        return None, grad * -x * Zeta.apply(x + 1.0, q)


def lgamma(input, *, out=None):
    """``log|Gamma(x)|`` elementwise; any shape, integer/bool input -> default float dtype
    (``torch.lgamma``, ``torch.special.gammaln``). Raises NotImplementedError for complex input."""
    x = _k.float_input(input, "lgamma", "lgamma_vml_cpu")
    return _k.with_out(Lgamma.apply(x), out, "lgamma")


def digamma(input, *, out=None):
    """``d/dx log Gamma(x)`` elementwise (-inf at 0, nan at negative integers); integer input ->
    default float dtype (``torch.digamma``, ``torch.special.digamma``/``psi``)."""
    x = _k.float_input(input, "digamma", "digamma")
    return _k.with_out(Digamma.apply(x), out, "digamma")


def check_order(n) -> None:
    """polygamma's ``n``: an int, not negative (PyTorch's TypeError and RuntimeError)."""
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool):
        raise TypeError(f"polygamma(): argument 'n' (position 1) must be int, not "
                        f"{type(n).__name__}")
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.\nglassgrad: n counts "
                           "derivatives of digamma; use lgamma for the antiderivative.")


def polygamma(n, input, *, out=None):
    """The n-th derivative of digamma elementwise, ``n >= 0`` an int (``torch.polygamma``).
    Raises RuntimeError for a negative ``n``, as PyTorch."""
    check_order(n)
    x = _k.float_input(input, "polygamma", "polygamma" if n > 1 else ("digamma", "trigamma")[n])
    result = Digamma.apply(x) if n == 0 else Polygamma.apply(x, n=int(n))
    return _k.with_out(result, out, "polygamma")


def mvlgamma(input, p, *, out=None):
    """The multivariate log-gamma function of dimension ``p`` elementwise:
    ``sum_i lgamma(x - i/2) + p(p-1)/4 log(pi)`` (``torch.mvlgamma``, ``special.multigammaln``).
    Raises RuntimeError for ``p < 1`` or a bool tensor, as PyTorch."""
    if is_tensor(input) and input._array.dtype == np.bool_:
        raise RuntimeError("The input tensor may not be a boolean tensor.\nglassgrad: mvlgamma "
                           "takes numbers; convert with .float().")
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1\nglassgrad: p is the "
                           f"dimension of the multivariate gamma function, got {p}.")
    x = _k.float_input(input, "mvlgamma", "arange_cpu")
    return _k.with_out(Mvlgamma.apply(x, p=int(p)), out, "mvlgamma")


def _incomplete_gamma(prim, op, kernel, doc):
    def fn(input, other, *, out=None):
        _k.tensors(input, other, op)
        a, x = _k.float_pair(input, other, op, kernel, ints=False)
        return _k.with_out(prim.apply(a, x), out, op)

    fn.__name__ = fn.__qualname__ = op
    fn.__doc__ = doc
    return fn


_IGAMMA_DOC = ("The regularized {} incomplete gamma function {}, broadcast; floating Tensor "
               "operands only, as PyTorch (``torch.{}``). Differentiable in ``other`` only: the "
               "derivative for ``input`` raises torch's NotImplementedError.")
igamma = _incomplete_gamma(Igamma, "igamma", "igamma_cpu",
                           _IGAMMA_DOC.format("lower", "P(a, x)", "igamma"))
igammac = _incomplete_gamma(Igammac, "igammac", "igammac_cpu",
                            _IGAMMA_DOC.format("upper", "Q(a, x) = 1 - P(a, x)", "igammac"))
gammainc = _incomplete_gamma(Igamma, "special_gammainc", "igamma_cpu",
                             _IGAMMA_DOC.format("lower", "P(a, x)", "special.gammainc"))
gammaincc = _incomplete_gamma(Igammac, "special_gammaincc", "igammac_cpu",
                              _IGAMMA_DOC.format("upper", "Q(a, x)", "special.gammaincc"))


def zeta(input, other, *, out=None):
    """The Hurwitz zeta function ``sum_k (k + other)^-input``, broadcast, integers -> default
    float (``torch.special.zeta``); no float16. Differentiable in ``other`` only."""
    x, q = _k.float_pair(input, other, "zeta", "zeta_cpu", half_ok=False)
    return _k.with_out(Zeta.apply(x, q), out, "zeta")
