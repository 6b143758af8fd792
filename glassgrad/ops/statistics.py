"""Order statistics' primitives: ``median()``/``nanmedian()`` of all elements (the gradient is
shared by the elements equal to the result, PyTorch's evenly_distribute rule: Amax's backward),
and the values of ``median``/``nanmedian``/``mode`` along a dim and of ``cummax``/``cummin``
(a gather at the chosen index: the gradient goes to that one element)."""

from __future__ import annotations

import numpy as np

from .gather import Gather
from .reduction import Amax
from .selection import MaxDim


def _lower_median(xp, x, ignore_nan):
    flat = xp.sort(x.reshape(-1))
    n = int(np.count_nonzero(~np.isnan(flat))) if ignore_nan and flat.dtype.kind == "f" else None
    if n is None:
        if flat.size and flat.dtype.kind == "f" and np.isnan(flat[-1]):
            return flat[-1:].reshape(())  # a NaN anywhere: the median is NaN
        n = flat.size
    if flat.size == 0:
        return xp.asarray(np.nan, dtype=flat.dtype)
    return flat[max(n - 1, 0) // 2].reshape(())


class MedianAll(Amax):
    node_name = "MedianBackward0"

    @staticmethod
    def forward(xp, x, *, dims, keepdim, evenly=True):
        return _lower_median(xp, x, ignore_nan=False)


class NanMedianAll(Amax):
    node_name = "NanmedianBackward0"

    @staticmethod
    def forward(xp, x, *, dims, keepdim, evenly=True):
        return _lower_median(xp, x, ignore_nan=True)


class MedianDim(MaxDim):
    node_name = "MedianBackward1"


class NanMedianDim(MaxDim):
    node_name = "NanmedianBackward1"


class ModeDim(MaxDim):
    node_name = "ModeBackward0"


class CummaxValues(Gather):
    node_name = "CummaxBackward0"


class CumminValues(Gather):
    node_name = "CumminBackward0"
