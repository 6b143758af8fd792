"""Lane ops' Tensor methods (issue 15): attached with setattr, as _tensor_methods.py does, so
tensor.py stays small. The in-place and *_copy variants are made in _ops_variants.py."""

from __future__ import annotations

from . import _ops_variants  # noqa: F401 - X_ and X_copy methods
from . import _ops_construct as _con
from .tensor import Tensor

for _name in ("diagflat dsplit hsplit vsplit kron ravel is_same_size is_signed "
              "nonzero_static").split():
    setattr(Tensor, _name, getattr(_con, _name))
Tensor.fill_diagonal_ = _con.fill_diagonal_
Tensor.where = _con.where_method

from . import _ops_stats as _stats

for _name in "median nanmedian mode quantile nanquantile nanmean cummax cummin".split():
    setattr(Tensor, _name, getattr(_stats, _name))

from . import _ops_hist as _hist
from . import _ops_numeric as _num

for _module, _names in ((_hist, "histc histogram bincount"), (_num, "cov corrcoef renorm")):
    for _name in _names.split():
        setattr(Tensor, _name, getattr(_module, _name))
Tensor.renorm_ = _ops_variants.inplace_of(_num.renorm, "renorm_")

from . import _ops_scatter as _sc

for _name in ("scatter_reduce index_reduce put diagonal_scatter select_scatter "
              "slice_scatter").split():
    setattr(Tensor, _name, getattr(_sc, _name))
    if _name in ("scatter_reduce", "index_reduce", "put"):
        setattr(Tensor, _name + "_", _ops_variants.inplace_of(getattr(_sc, _name), _name + "_"))
