"""``torch.finfo`` and ``torch.iinfo``: the numeric limits of a floating or integer dtype, with
PyTorch's fields (Python floats and ints) and repr; NumPy's and ml_dtypes' tables underneath."""

from __future__ import annotations

import builtins

import ml_dtypes
import numpy as np

from . import dtypes


class _Info:
    """Equal (and hashed) by dtype, as PyTorch's finfo/iinfo objects compare."""

    dtype = ""

    def __eq__(self, other):
        return type(other) is type(self) and other.dtype == self.dtype

    def __hash__(self):
        return hash((type(self).__name__, self.dtype))


class finfo(_Info):
    """Limits of a floating dtype (``torch.finfo``): ``bits eps max min tiny smallest_normal
    resolution dtype`` (``dtype`` is the name, a str). No argument: the default dtype; Python's
    ``float`` is float64. TypeError for a non-floating dtype."""

    def __init__(self, type=None):  # noqa: A002 - torch's parameter name
        d = dtypes.get_default_dtype() if type is None else type
        if d is builtins.float:
            d = dtypes.float64
        if not isinstance(d, dtypes.dtype) or not d.is_floating_point:
            raise TypeError("torch.finfo() requires a floating point input type. Use torch.iinfo "
                            "to handle 'torch.finfo'")
        info = ml_dtypes.finfo(d.np)
        self.bits = builtins.int(info.bits)
        self.eps = builtins.float(info.eps)
        self.max = builtins.float(info.max)
        self.min = builtins.float(info.min)
        self.tiny = self.smallest_normal = builtins.float(info.smallest_normal)
        self.resolution = builtins.float(10.0 ** -builtins.int(info.precision))
        self.dtype = d.name

    def __repr__(self):
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
                f"eps={self.eps:g}, smallest_normal={self.smallest_normal:g}, "
                f"tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo(_Info):
    """Limits of an integer dtype (``torch.iinfo``): ``bits max min dtype`` (the name, a str).
    TypeError for bool or a floating dtype."""

    def __init__(self, type):  # noqa: A002 - torch's parameter name
        if type == dtypes.bool:
            raise TypeError("torch.bool is not supported by torch.iinfo")
        if not isinstance(type, dtypes.dtype) or type._kind != 1:
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo to "
                            "handle 'torch.iinfo'")
        info = np.iinfo(type.np)
        self.bits = builtins.int(info.bits)
        self.max = builtins.int(info.max)
        self.min = builtins.int(info.min)
        self.dtype = type.name

    def __repr__(self):
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"
