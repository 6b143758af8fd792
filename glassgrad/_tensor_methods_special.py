"""Tensor methods of the special-function ops (issue 15, lane special): ``x.lgamma()``,
``x.digamma_()``, ``x.polygamma(n)``, ``x.i0_()``, ... One-line delegations to the public
functions; in-place forms through ``Primitive.apply_inplace`` (version bump, leaf check, history
rebase), as in _tensor_methods.py."""

from __future__ import annotations

from . import _integer_math as _int
from . import dtypes
from ._tensor_methods import _operand
from .ops import bessel_ops as _bessel
from .ops import binary_math as _bm
from .ops import gamma_ops as _gamma
from .ops import special_misc as _misc
from .ops import _scipy_kernel as _k
from .ops import special_ops as _sp
from .ops._names import cast_error, scalar_type
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


def heaviside_(self, values):
    _bm.check_heaviside(self, values)
    return _bm.Heaviside.apply_inplace(self, values)


def nan_to_num_(self, nan=0.0, posinf=None, neginf=None):
    return _bm.NanToNum.apply_inplace(self, nan=float(nan), posinf=posinf, neginf=neginf)


def float_power_(self, exponent):
    if self._array.dtype != dtypes.float64.np:
        raise RuntimeError(
            f"the base given to float_power_ has dtype {scalar_type(self.dtype)} but the "
            "operation's result requires dtype Double\nglassgrad: float_power_ computes in "
            "float64; convert the tensor with .double() first, or use float_power.")
    return composite_inplace(self, _bm.float_power, "float_power_", exponent)


def ldexp_(self, other):
    if self._array.dtype.kind in "biu":
        raise RuntimeError(f"ldexp can't be cast to the desired output type "
                           f"{scalar_type(self.dtype)}\nglassgrad: ldexp's result is floating; "
                           "convert the tensor with .float() first, or use ldexp.")
    return composite_inplace(self, _bm.ldexp, "ldexp_", other)


def _angle_inplace(fn, op):
    def method(self):
        _float_result(self, op)
        return composite_inplace(self, fn, op)

    method.__name__ = op
    return method


def _integer_inplace(fn, op):
    def method(self, other):
        return composite_inplace(self, fn, op, other)

    method.__name__ = op
    return method


for _name in ("logaddexp logaddexp2 hypot copysign heaviside float_power nextafter gcd lcm frexp "
              "ldexp deg2rad rad2deg fmax fmin nan_to_num positive").split():
    setattr(Tensor, _name, getattr(_int if _name in ("gcd", "lcm") else _bm, _name))
Tensor.hypot_ = _binary_inplace(_bm.Hypot, "hypot_", "hypot_cpu")
Tensor.nextafter_ = _binary_inplace(_bm.Nextafter, "nextafter_", "nextafter_cpu")
Tensor.copysign_ = _binary_inplace(_bm.Copysign, "copysign_")
Tensor.heaviside_ = heaviside_
Tensor.nan_to_num_ = nan_to_num_
Tensor.float_power_ = float_power_
Tensor.ldexp_ = ldexp_
Tensor.deg2rad_ = _angle_inplace(_bm.deg2rad, "deg2rad_")
Tensor.rad2deg_ = _angle_inplace(_bm.rad2deg, "rad2deg_")
Tensor.gcd_ = _integer_inplace(_int.gcd, "gcd_")
Tensor.lcm_ = _integer_inplace(_int.lcm, "lcm_")

# torch's top-level in-place forms (torch.i0_(x) is x.i0_())
i0_, sinc_, exp2_, erfc_, logit_, xlogy_ = (Tensor.i0_, Tensor.sinc_, Tensor.exp2_, Tensor.erfc_,
                                            Tensor.logit_, Tensor.xlogy_)
gcd_, lcm_, ldexp_, deg2rad_, rad2deg_, nan_to_num_ = (Tensor.gcd_, Tensor.lcm_, Tensor.ldexp_,
                                                       Tensor.deg2rad_, Tensor.rad2deg_,
                                                       Tensor.nan_to_num_)
