"""Lane ops' Tensor methods (issue 15): attached with setattr, as _tensor_methods.py does, so
tensor.py stays small. The in-place and *_copy variants are made in _ops_variants.py."""

from __future__ import annotations

import numpy as np

from . import _ops_construct as _con
from . import _ops_hist as _hist
from . import _ops_numeric as _num
from . import _ops_scatter as _sc
from . import _ops_stats as _stats
from . import _ops_variants  # X_ and X_copy methods
from . import dtypes
from .ops.fill import CopyFrom
from .tensor import Tensor

_METHODS = {
    _con: "diagflat dsplit hsplit vsplit kron ravel is_same_size is_signed nonzero_static "
          "fill_diagonal_",
    _stats: "median nanmedian mode quantile nanquantile nanmean cummax cummin",
    _hist: "histc histogram bincount",
    _num: "cov corrcoef renorm",
    _sc: "scatter_reduce index_reduce put diagonal_scatter select_scatter slice_scatter",
}
for _module, _names in _METHODS.items():
    for _name in _names.split():
        setattr(Tensor, _name, getattr(_module, _name))
for _module, _name in ((_num, "renorm"), (_sc, "scatter_reduce"), (_sc, "index_reduce"),
                       (_sc, "put")):
    setattr(Tensor, _name + "_", _ops_variants.inplace_of(getattr(_module, _name), _name + "_"))
Tensor.where = _con.where_method


def _per_element(self, op, fn, others):
    """Write ``fn(self_i, *others_i)`` into self, element by element in Python (CPU), with
    PyTorch's checks: nothing may require grad, the others must have self's dtype and broadcast
    to its shape; results are converted as PyTorch does (truncated into integers)."""
    if self._requires_grad or any(o._requires_grad for _, o in others):
        raise RuntimeError(f"Can't call {op}() on Variable that requires grad. Use "
                           f"var.detach().{op}() instead.")
    for name, o in others:
        if o.dtype != self.dtype:
            what = f"'{name}'" if op == "map_" else f"argument '{name}'"
            raise TypeError(f"{op}: expected {dtypes.type_name(self.dtype)} for {what} "
                            f"(got {dtypes.type_name(o.dtype)})")
    arrays = [o.expand(self.shape)._array for _, o in others]
    if not callable(fn):
        raise TypeError(f"'{type(fn).__name__}' object is not callable")
    kind = self._array.dtype.kind
    convert = bool if kind == "b" else int if kind in "iu" else float
    values = []
    for items in zip(self._array.reshape(-1).tolist(), *(a.reshape(-1).tolist() for a in arrays)):
        v = fn(*items)
        if isinstance(v, str) or v is None or not isinstance(v, (int, float, bool, np.number)):
            raise TypeError(f"must be real number, not {type(v).__name__}")
        values.append(convert(v))
    new = np.asarray(values, dtype=self._array.dtype).reshape(self._array.shape)
    return CopyFrom.apply_inplace(self, Tensor._make(new))


def apply_(self, callable):  # noqa: A002 - torch's parameter name
    """``fn(element)`` for every element, in place (``torch.Tensor.apply_``; CPU, slow)."""
    return _per_element(self, "apply_", callable, ())


def map_(self, tensor, callable):  # noqa: A002
    """``fn(self_i, tensor_i)`` for every element, in place; ``tensor`` broadcasts to self
    (``torch.Tensor.map_``)."""
    return _per_element(self, "map_", callable, (("other", tensor),))


def map2_(self, x, y, callable):  # noqa: A002
    """``fn(self_i, x_i, y_i)`` for every element, in place (``torch.Tensor.map2_``)."""
    return _per_element(self, "map2_", callable, (("x", x), ("y", y)))


Tensor.apply_, Tensor.map_, Tensor.map2_ = apply_, map_, map2_
