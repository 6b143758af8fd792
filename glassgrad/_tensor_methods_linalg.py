"""Tensor methods of the linear-algebra names (``x.det()``, ``x.cholesky()``, ``x.addmv_()``
...): delegations to ``glassgrad.linalg`` and glassgrad/_linalg_top.py, attached as
_tensor_methods.py attaches its own."""

from __future__ import annotations

from . import _linalg_top as _top
from ._tensor_methods import _composite_inplace
from .linalg import _factor
from .ops import linalg as _products
from .tensor import Tensor

_DELEGATED = {
    _top: "addbmm addmv addr cholesky cholesky_inverse det dist eig inverse logdet lstsq lu "
          "matrix_power orgqr pinverse qr slogdet solve svd symeig",
    _factor: "geqrf ormqr",
    _products: "vdot",
}

for _module, _names in _DELEGATED.items():
    for _name in _names.split():
        setattr(Tensor, _name, getattr(_module, _name))

for _fn, _name in ((_top.addbmm, "addbmm_"), (_top.addmv, "addmv_"), (_top.addr, "addr_"),
                   (_products.addmm, "addmm_"), (_products.baddbmm, "baddbmm_")):
    setattr(Tensor, _name, _composite_inplace(_fn, _name))


def _cholesky_solve(self, input2, upper=False):
    return _top.cholesky_solve(self, input2, upper)


def _lu_solve(self, LU_data, LU_pivots):
    return _top.lu_solve(self, LU_data, LU_pivots)


def _triangular_solve(self, A, upper=True, transpose=False, unitriangular=False):
    return _top.triangular_solve(self, A, upper, transpose, unitriangular)


def _matrix_exp(self):
    from .linalg import matrix_exp

    return matrix_exp(self)


Tensor.cholesky_solve = _cholesky_solve
Tensor.lu_solve = _lu_solve
Tensor.triangular_solve = _triangular_solve
Tensor.matrix_exp = _matrix_exp
