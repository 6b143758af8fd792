"""Tensor methods of the linear-algebra names (``x.det()``, ``x.cholesky()``, ``x.addmv_()``
...): delegations to ``glassgrad.linalg`` and glassgrad/_linalg_top.py, attached as
_tensor_methods.py attaches its own."""

from __future__ import annotations

from . import _linalg_top as _top
from .tensor import Tensor

_DELEGATED = (
    "cholesky cholesky_inverse det inverse logdet slogdet symeig eig lstsq solve"
)

for _name in _DELEGATED.split():
    setattr(Tensor, _name, getattr(_top, _name))


def _cholesky_solve(self, input2, upper=False):
    return _top.cholesky_solve(self, input2, upper)


Tensor.cholesky_solve = _cholesky_solve
