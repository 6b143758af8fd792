"""Tensor methods of the special-function ops (issue 15, lane special): ``x.lgamma()``,
``x.digamma_()``, ``x.polygamma(n)``, ``x.i0_()``, ... One-line delegations to the public
functions; in-place forms through ``Primitive.apply_inplace`` (version bump, leaf check, history
rebase), as in _tensor_methods.py."""

from __future__ import annotations

from . import dtypes
from ._tensor_methods import _operand
from .ops import bessel_ops as _bessel
from .ops import gamma_ops as _gamma
from .ops import special_misc as _misc
from .ops import _scipy_kernel as _k
from .ops import special_ops as _sp
from .ops._names import cast_error
from .ops._util import cast
from .ops.fill import CopyFrom
from .tensor import Tensor


def _float_result(self, op):
    """PyTorch's error for an in-place op with a floating result on an integer/bool tensor."""
    if self._array.dtype.kind in "biu":
        raise cast_error(dtypes.get_default_dtype(), self.dtype, op)


def _unary_inplace(prim, op):
    def method(self):
        _float_result(self, op)
        return prim.apply_inplace(self)

    method.__name__ = op
    return method


def _binary_inplace(prim, op, kernel=None):
    def method(self, other):
        if kernel is not None:  # an integer kernel PyTorch has not: its NotImplementedError
            _k.float_pair(self, other, op, kernel, ints=False)
        _float_result(self, op)
        return prim.apply_inplace(self, _operand(self, other, op))

    method.__name__ = op
    return method


def composite_inplace(self, fn, op, *args, **kwargs):
    """``self.op_(...)`` for an op composed of primitives: ``fn`` of self's value (a snapshot
    carrying its history, so nothing fn saved is the tensor being written), copied back through
    ``copy_``, which checks the leaf and rebases the history as every in-place op."""
    src = fn(self._snapshot() if self._requires_grad else self, *args, **kwargs)
    if src._array.dtype != self._array.dtype:
        if dtypes._FROM_NP[src._array.dtype]._kind > self.dtype._kind:
            raise cast_error(src.dtype, self.dtype, op)
        src = cast(src, self._array.dtype)
    return CopyFrom.apply_inplace(self, src)


def polygamma_(self, n):
    _float_result(self, "polygamma_")
    _gamma.check_order(n)
    if n == 0:
        return _gamma.Digamma.apply_inplace(self)
    return _gamma.Polygamma.apply_inplace(self, n=int(n))


def logit_(self, eps=None):
    _float_result(self, "logit_")
    return _sp.Logit.apply_inplace(self, eps=None if eps is None else float(eps))


Tensor.lgamma = _gamma.lgamma
Tensor.digamma = _gamma.digamma
Tensor.polygamma = lambda self, n: _gamma.polygamma(n, self)
Tensor.mvlgamma = lambda self, p: _gamma.mvlgamma(self, p)
Tensor.igamma = _gamma.igamma
Tensor.igammac = _gamma.igammac
Tensor.i0 = _bessel.i0
Tensor.sinc = _misc.sinc
Tensor.exp2 = _misc.exp2
Tensor.polygamma_ = polygamma_
Tensor.mvlgamma_ = lambda self, p: composite_inplace(self, _gamma.mvlgamma, "mvlgamma_", p)
Tensor.logit_ = logit_
for _name, _prim in {
    "lgamma_": _gamma.Lgamma, "digamma_": _gamma.Digamma, "i0_": _bessel.I0, "sinc_": _misc.Sinc,
    "exp2_": _misc.Exp2, "erfc_": _sp.Erfc, "erfinv_": _sp.Erfinv,
}.items():
    setattr(Tensor, _name, _unary_inplace(_prim, _name))
Tensor.igamma_ = _binary_inplace(_gamma.Igamma, "igamma_", "igamma_cpu")
Tensor.igammac_ = _binary_inplace(_gamma.Igammac, "igammac_", "igammac_cpu")
Tensor.xlogy_ = _binary_inplace(_sp.Xlogy, "xlogy_")
