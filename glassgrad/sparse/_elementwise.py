"""Elementwise ops on sparse COO tensors as torch 2.13 has them: the zero-preserving unary ops
(``abs``, ``sqrt``, ``tanh``, ``relu``, ...: f(0) = 0, so they act on the values of the coalesced
tensor and keep its pattern), ``add(other, alpha=)``, ``sub``, ``-``, and the functional forms
``torch.add``/``sub``/``mul``/``div``/``neg``/``transpose``/``t``/... , which reach the sparse
methods through ``sparse_aware`` (one flag test on their inputs; dense calls go straight through).
Ops with f(0) != 0 (``exp``, ``cos``, ``sigmoid``) keep raising NotImplementedError, as torch's
do. Unlike torch's (whose backward kernels refuse sparse inputs), the unary ops are
differentiable in the values."""

from __future__ import annotations

import functools

from .. import _layout
from ..tensor import Tensor
from ._coo import SparseCOOTensor
from ._csr import SparseCSRTensor
from ._ops import _add, _radd

__all__ = ["sparse_aware"]

ZERO_PRESERVING = (
    "abs sqrt tanh relu sin sign sgn square log1p expm1 asin atan sinh asinh atanh tan erf "
    "trunc floor ceil round frac deg2rad rad2deg signbit isnan isinf nan_to_num").split()


def _unary(name: str):
    def method(self, *args, **kwargs):
        sp = self.coalesce() if self.layout is _layout.sparse_coo else self  # CSR: in row order
        return sp._with_values(getattr(sp._values_t, name)(*args, **kwargs), coalesced=True)

    method.__name__ = name
    method.__doc__ = (f"``{name}`` of each specified entry (``torch.Tensor.{name}``): "
                      f"{name}(0) = 0, so the result has the coalesced input's pattern.")
    return method


def _pow(self, exponent):
    """``self ** exponent`` for a positive number (0 ** e = 0), on the coalesced entries."""
    if isinstance(exponent, (int, float)) and exponent == 0:
        raise RuntimeError("pow: cannot raise to zeroth power on sparse tensor; it would make "
                           "the result tensor dense")
    if not isinstance(exponent, (int, float)) or exponent <= 0:
        raise NotImplementedError(
            f"glassgrad: a sparse tensor to the power {exponent!r} is not implemented: only a "
            "positive number keeps the unspecified entries 0 (torch.pow(sparse, number > 0)).")
    sp = self.coalesce()
    return sp._with_values(sp._values_t ** exponent, coalesced=True)


def _add_alpha(self, other, *, alpha=1):
    """``self + alpha * other`` (``torch.Tensor.add``): sparse + sparse is sparse; a dense
    ``other`` raises torch's "add(sparse, dense) is not supported"."""
    if alpha != 1 and isinstance(other, SparseCOOTensor):
        other = other * alpha
    return _add(self, other)


def _sub(self, other, *, alpha=1):
    """``self - alpha * other`` for two sparse tensors (``torch.Tensor.sub``)."""
    if not isinstance(other, SparseCOOTensor):
        _add(self, other)  # torch's error for a dense other
    return _add(self, other * -alpha)


def _rsub(self, other):
    """``dense - sparse``: the dense difference."""
    return _radd(-self, other)


for _name in ZERO_PRESERVING:
    setattr(SparseCOOTensor, _name, _unary(_name))
SparseCOOTensor.pow = SparseCOOTensor.__pow__ = _pow
SparseCOOTensor.add = _add_alpha
SparseCOOTensor.sub = SparseCOOTensor.subtract = _sub
SparseCOOTensor.__sub__ = lambda self, other: _sub(self, other)
SparseCOOTensor.__rsub__ = _rsub
SparseCOOTensor.neg = SparseCOOTensor.negative = lambda self: -self
SparseCSRTensor.sub = SparseCSRTensor.subtract = SparseCSRTensor.__sub__ = (
    SparseCSRTensor.__truediv__)  # torch's "unsupported tensor layout: SparseCsr" (add works)


def sparse_aware(dense_fn, method: str, reflected: str | None = None):
    """``dense_fn`` (a public ``torch.X`` function) that hands a sparse first argument to its
    ``method`` (and a dense first with a sparse second to ``reflected``, as ``dense + sparse``)."""

    @functools.wraps(dense_fn)
    def fn(input, *args, **kwargs):
        if getattr(input, "_sparse", False):
            return getattr(input, method)(*args, **kwargs)
        if reflected is not None and args and getattr(args[0], "_sparse", False):
            if kwargs.get("alpha", 1) != 1:
                return getattr(args[0] * kwargs["alpha"], reflected)(input)
            return getattr(args[0], reflected)(input)
        try:
            return dense_fn(input, *args, **kwargs)
        except TypeError as exc:
            # NOTE: _arg_check's wrapper adds torch's out= only where the call it makes refuses
            # it; the call that refuses it is this one, so it is added here
            if "out" not in kwargs or exc.__traceback__.tb_next is not None:
                raise
            from .._arg_out import call

            return call(dense_fn, (input, *args), kwargs)

    return fn



# dense.add(sparse) / dense.sub(sparse) as dense + sparse, the way torch.add/sub reach it
Tensor.add = sparse_aware(Tensor.add, "add", "__radd__")
Tensor.sub = Tensor.subtract = sparse_aware(Tensor.sub, "sub", "__rsub__")
